#pragma once
// The knowledge index's database: opening, the schema and its version. Private to knowledge/.
//
// Schema (version 2, PRAGMA user_version; PRAGMA application_id 'D0KI'):
//   folders(id, path UNIQUE, indexed_at)
//   files(id, folder_id -> folders ON DELETE CASCADE, path relative to the folder, size,
//         mtime_ns, sha256 of the extracted text, kind, language, text_bytes; UNIQUE(folder_id, path))
//   chunks(id, file_id -> files ON DELETE CASCADE, seq, first_line, last_line, page)
//   chunks_fts: FTS5 (title, path, body, words), rowid = chunks.id, porter over unicode61;
//               the chunk's text lives only here. A trigger deletes the FTS row with its chunk.
// Version 1 had the same tables; its `words` lacked the CJK character pairs (query.h), which
// opening recomputes once.
#include <filesystem>
#include <string>

#include "knowledge/sqlite_util.h"

namespace day0::knowledge {

constexpr int kIndexSchemaVersion = 2;

// Opens `path`, creating the schema in a new file; false with a sentence in `error` for a file
// that is damaged, another kind of database, or from a newer version.
bool open_index_db(Db& db, const std::filesystem::path& path, std::string* error);

}  // namespace day0::knowledge
