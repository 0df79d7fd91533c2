#include "knowledge/index_db.h"

#include <utility>
#include <vector>

#include "knowledge/query.h"

namespace day0::knowledge {

namespace {

constexpr std::int64_t kApplicationId = 0x44304B49;  // "D0KI"

constexpr const char* kSchema = R"sql(
CREATE TABLE folders(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  indexed_at INTEGER NOT NULL DEFAULT 0);
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  kind TEXT NOT NULL,
  language TEXT NOT NULL,
  text_bytes INTEGER NOT NULL,
  UNIQUE(folder_id, path));
CREATE INDEX files_by_hash ON files(folder_id, sha256);
CREATE TABLE chunks(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  first_line INTEGER NOT NULL,
  last_line INTEGER NOT NULL,
  page INTEGER NOT NULL);
CREATE INDEX chunks_by_file ON chunks(file_id, seq);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  title, path, body, words, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TRIGGER chunks_delete AFTER DELETE ON chunks BEGIN
  DELETE FROM chunks_fts WHERE rowid = old.id;
END;
)sql";

bool read_int(Db& db, const char* sql, std::int64_t* out, std::string* error) {
  Stmt s(db, sql);
  if (!s.ok() || !s.step()) {
    *error = s.error().empty() ? db.message() : s.error();
    return false;
  }
  *out = s.integer(0);
  return true;
}

// Version 1 -> 2: the `words` column gains the CJK character pairs. Inside the write
// transaction, after checking that no other connection migrated first.
bool migrate_from_1(Db& db, std::string* error) {
  Transaction t(db);
  std::int64_t now = 0;
  if (!t.begun() || !read_int(db, "PRAGMA user_version", &now, error)) {
    if (error->empty()) *error = db.message();
    return false;
  }
  if (now == 1) {
    std::vector<std::pair<std::int64_t, std::string>> changed;
    {
      Stmt rows(db, "SELECT rowid, title, path, body, words FROM chunks_fts");
      while (rows.step()) {
        std::string words = chunk_words(rows.text(1), rows.text(3), rows.text(2));
        if (words != rows.text(4)) changed.emplace_back(rows.integer(0), std::move(words));
      }
      if (rows.failed() || !rows.ok()) return *error = rows.error(), false;
    }
    Stmt update(db, "UPDATE chunks_fts SET words = ?2 WHERE rowid = ?1");
    for (const auto& [id, words] : changed) {
      update.reset();
      update.bind(1, id).bind(2, words);
      if (!update.run()) return *error = update.error(), false;
    }
    if (!db.exec("PRAGMA user_version=2", error)) return false;
  }
  return t.commit(error);
}

}  // namespace

bool open_index_db(Db& db, const std::filesystem::path& path, std::string* error) {
  const std::string name = path.string();
  std::string why;
  if (!db.open(name, &why)) {
    *error =
        "cannot open the knowledge index " + name + ": " + why + " (does its folder exist, and may it be written?)";
    return false;
  }
  // One statement, so the three come from one snapshot: read one by one, another connection
  // creating the schema in between would make a new index look like someone else's database.
  std::int64_t version = 0, application = 0, objects = 0;
  {
    Stmt s(db,
           "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id), "
           "(SELECT count(*) FROM sqlite_schema)");
    if (!s.ok() || !s.step()) {
      why = s.error().empty() ? db.message() : s.error();
      *error = "cannot read the knowledge index " + name + ": " + why + " (the file is damaged or not a database)";
      return false;
    }
    version = s.integer(0);
    application = s.integer(1);
    objects = s.integer(2);
  }
  if (version == 0 && objects > 0) {
    *error = name + " is another SQLite database, not a Day0 knowledge index";
    return false;
  }
  if (version > 0 && application != kApplicationId) {
    *error = name + " is another SQLite database, not a Day0 knowledge index";
    return false;
  }
  if (version > kIndexSchemaVersion) {
    *error = "the knowledge index " + name + " was made by a newer Day0 (schema " + std::to_string(version) +
             "; this one reads " + std::to_string(kIndexSchemaVersion) + ")";
    return false;
  }
  if (!db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", &why)) {
    *error = "cannot use the knowledge index " + name + ": " + why;
    return false;
  }
  if (version == 1 && !migrate_from_1(db, &why)) {
    *error = "cannot bring the knowledge index " + name + " up to date: " + why;
    return false;
  }
  if (version == 0) {
    // Another connection may have created the schema since the check above: look again
    // inside the write transaction, which only one connection holds at a time.
    Transaction t(db);
    std::int64_t now = 0;
    if (!t.begun() || !read_int(db, "PRAGMA user_version", &now, &why)) {
      *error = "cannot create the knowledge index " + name + ": " + (why.empty() ? db.message() : why);
      return false;
    }
    if (now != 0) {
      if (t.commit(&why)) return true;
      *error = "cannot open the knowledge index " + name + ": " + why;
      return false;
    }
    if (!db.exec(kSchema, &why) ||
        !db.exec("PRAGMA application_id=" + std::to_string(kApplicationId) +
                     "; PRAGMA user_version=" + std::to_string(kIndexSchemaVersion),
                 &why) ||
        !t.commit(&why)) {
      *error = "cannot create the knowledge index " + name + ": " + why;
      return false;
    }
  }
  return true;
}

}  // namespace day0::knowledge
