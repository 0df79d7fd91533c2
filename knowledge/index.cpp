// KnowledgeIndex: folders, incremental indexing and search over the FTS5 table.
#include "knowledge/index.h"

#include <sys/stat.h>

#include <chrono>
#include <map>
#include <unordered_map>

#include "knowledge/index_db.h"
#include "knowledge/query.h"
#include "knowledge/sqlite_util.h"
#include "knowledge/text_util.h"
#include "knowledge/walker.h"

namespace day0::knowledge {

namespace {

// Column weights for bm25(): a word in a heading or function signature counts most, then the
// file's path, then the text; split identifier parts count least (they repeat the text).
constexpr const char* kRank = "bm25(chunks_fts, 4.0, 3.0, 1.0, 0.5)";

template <typename T>
IndexResult<T> failure(std::string message) {
  IndexResult<T> r;
  r.error.message = std::move(message);
  return r;
}

template <typename T>
IndexResult<T> success(T value) {
  IndexResult<T> r;
  r.value = std::move(value);
  return r;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct StoredFile {
  std::int64_t id = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;
  std::string path;
  bool seen = false;  // found by this walk (or taken over by a renamed file)
};

}  // namespace

struct KnowledgeIndex::Impl {
  Db db;
  std::string path;

  std::string fail_message(const std::string& what, const std::string& why) const {
    return "knowledge index " + path + ": cannot " + what + ": " + why;
  }

  IndexResult<std::string> folder_path(std::int64_t id) {
    Stmt s(db, "SELECT path FROM folders WHERE id = ?1");
    s.bind(1, id);
    if (s.step()) return success(s.text(0));
    if (s.failed()) return failure<std::string>(fail_message("read the folders", s.error()));
    return failure<std::string>("knowledge index " + path + ": no folder with id " + std::to_string(id));
  }

  bool insert_chunks(std::int64_t file_id, const std::string& relative, const std::vector<Chunk>& chunks,
                     std::string* error) {
    Stmt meta(db, "INSERT INTO chunks(file_id, seq, first_line, last_line, page) VALUES(?1, ?2, ?3, ?4, ?5)");
    Stmt fts(db, "INSERT INTO chunks_fts(rowid, title, path, body, words) VALUES(?1, ?2, ?3, ?4, ?5)");
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const Chunk& c = chunks[i];
      meta.reset();
      meta.bind(1, file_id).bind(2, static_cast<std::int64_t>(i)).bind(3, c.first_line).bind(4, c.last_line);
      meta.bind(5, c.page);
      if (!meta.run()) return *error = meta.error(), false;
      const std::int64_t id = sqlite3_last_insert_rowid(db.get());
      fts.reset();
      fts.bind(1, id).bind(2, c.title).bind(3, relative).bind(4, c.text);
      fts.bind(5, chunk_words(c.title, c.text, relative));
      if (!fts.run()) return *error = fts.error(), false;
    }
    return true;
  }

  bool exec_bound(const char* sql, std::int64_t a, std::string* error) {
    Stmt s(db, sql);
    s.bind(1, a);
    if (!s.run()) return *error = s.error(), false;
    return true;
  }
};

KnowledgeIndex::KnowledgeIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KnowledgeIndex::~KnowledgeIndex() = default;

IndexResult<std::unique_ptr<KnowledgeIndex>> KnowledgeIndex::open(const std::filesystem::path& db_path) {
  auto impl = std::make_unique<Impl>();
  impl->path = db_path.string();
  std::string error;
  if (!open_index_db(impl->db, db_path, &error)) return failure<std::unique_ptr<KnowledgeIndex>>(error);
  return success(std::unique_ptr<KnowledgeIndex>(new KnowledgeIndex(std::move(impl))));
}

IndexResult<Folder> KnowledgeIndex::add_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(folder, ec);
  if (ec) return failure<Folder>("cannot add " + folder.string() + ": " + ec.message());
  if (!std::filesystem::is_directory(canonical, ec))
    return failure<Folder>("cannot add " + folder.string() + ": it is not a folder");
  const std::string path = canonical.string();
  if (!is_valid_utf8(path)) return failure<Folder>("cannot add " + sanitize_utf8(path) + ": the path is not UTF-8");
  Stmt insert(impl_->db, "INSERT OR IGNORE INTO folders(path) VALUES(?1)");
  insert.bind(1, path);
  if (!insert.run()) return failure<Folder>(impl_->fail_message("add the folder " + path, insert.error()));
  auto all = folders();
  if (!all.ok()) return failure<Folder>(all.error.message);
  for (const Folder& f : *all.value)
    if (f.path == path) return success(f);
  return failure<Folder>(impl_->fail_message("add the folder " + path, "it was not stored"));
}

IndexResult<bool> KnowledgeIndex::remove_folder(std::int64_t folder_id) {
  Transaction t(impl_->db);
  Stmt s(impl_->db, "DELETE FROM folders WHERE id = ?1");
  s.bind(1, folder_id);
  std::string error;
  if (!s.run()) return failure<bool>(impl_->fail_message("remove the folder", s.error()));
  const bool removed = sqlite3_changes(impl_->db.get()) > 0;
  if (!t.commit(&error)) return failure<bool>(impl_->fail_message("remove the folder", error));
  return success(removed);
}

IndexResult<std::vector<Folder>> KnowledgeIndex::folders() {
  Stmt s(impl_->db,
         "SELECT fo.id, fo.path, fo.indexed_at,"
         " (SELECT count(*) FROM files f WHERE f.folder_id = fo.id),"
         " (SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.folder_id = fo.id),"
         " (SELECT coalesce(sum(text_bytes), 0) FROM files f WHERE f.folder_id = fo.id)"
         " FROM folders fo ORDER BY fo.id");
  std::vector<Folder> out;
  while (s.step()) {
    Folder f;
    f.id = s.integer(0);
    f.path = s.text(1);
    f.indexed_at = s.integer(2);
    f.files = s.integer(3);
    f.chunks = s.integer(4);
    f.text_bytes = s.integer(5);
    out.push_back(std::move(f));
  }
  if (s.failed() || !s.ok()) return failure<std::vector<Folder>>(impl_->fail_message("read the folders", s.error()));
  return success(std::move(out));
}

IndexResult<IndexReport> KnowledgeIndex::index_folder(std::int64_t folder_id, const WalkOptions& options,
                                                      const std::function<void(const IndexProgress&)>& progress,
                                                      const std::atomic<bool>* cancel) {
  auto root = impl_->folder_path(folder_id);
  if (!root.ok()) return failure<IndexReport>(root.error.message);
  Db& db = impl_->db;
  struct stat st {};
  if (::stat(root.value->c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return failure<IndexReport>("cannot index " + *root.value + ": the folder is missing");

  IndexReport report;
  IndexProgress p;
  if (progress) progress(p);
  WalkResult walked = walk_folder(*root.value, options, cancel);
  report.skipped = std::move(walked.skipped);
  report.files_ignored = walked.ignored;
  report.files_seen = static_cast<std::int64_t>(walked.files.size());
  if (walked.cancelled) {
    report.cancelled = true;
    return success(std::move(report));
  }

  std::unordered_map<std::string, StoredFile> stored;  // by relative path
  {
    Stmt s(db, "SELECT id, path, size, mtime_ns, sha256 FROM files WHERE folder_id = ?1");
    s.bind(1, folder_id);
    while (s.step()) stored[s.text(1)] = {s.integer(0), s.integer(2), s.integer(3), s.text(4), s.text(1), false};
    if (s.failed()) return failure<IndexReport>(impl_->fail_message("read the indexed files", s.error()));
  }
  for (const auto& f : walked.files)
    if (auto it = stored.find(f.relative); it != stored.end()) it->second.seen = true;
  // Files gone from their old path, by content: a new path with the same hash is a rename.
  std::multimap<std::string, StoredFile*> vanished;
  for (auto& [path, f] : stored)
    if (!f.seen) vanished.emplace(f.sha256, &f);

  p.files_total = report.files_seen;
  std::string error;
  for (const WalkedFile& f : walked.files) {
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      report.cancelled = true;
      break;
    }
    p.current = f.relative;
    if (progress) progress(p);
    ++p.files_done;
    auto existing = stored.find(f.relative);
    StoredFile* old = existing != stored.end() ? &existing->second : nullptr;
    if (old && old->size == f.size && old->mtime_ns == f.mtime_ns) {
      ++report.files_unchanged;
      continue;
    }
    DocumentResult doc = read_document(f.absolute, options.limits);
    Transaction t(db);
    if (!doc.ok) {
      report.skipped.push_back({f.relative, doc.reason});
      // A file that can no longer be read leaves the index.
      if (old && !impl_->exec_bound("DELETE FROM files WHERE id = ?1", old->id, &error))
        return failure<IndexReport>(impl_->fail_message("drop " + f.relative, error));
      if (!t.commit(&error)) return failure<IndexReport>(impl_->fail_message("drop " + f.relative, error));
      continue;
    }
    const std::string hash = sha256_hex(doc.document.text);
    if (old && old->sha256 == hash) {
      Stmt s(db, "UPDATE files SET size = ?2, mtime_ns = ?3 WHERE id = ?1");
      s.bind(1, old->id).bind(2, f.size).bind(3, f.mtime_ns);
      if (!s.run() || !t.commit(&error))
        return failure<IndexReport>(impl_->fail_message("update " + f.relative, s.error() + error));
      ++report.files_unchanged;
      continue;
    }
    if (!old) {
      if (auto moved = vanished.find(hash); moved != vanished.end()) {
        StoredFile* from = moved->second;
        vanished.erase(moved);
        from->seen = true;
        Stmt s(db, "UPDATE files SET path = ?2, size = ?3, mtime_ns = ?4 WHERE id = ?1");
        s.bind(1, from->id).bind(2, f.relative).bind(3, f.size).bind(4, f.mtime_ns);
        Stmt fts(db, "UPDATE chunks_fts SET path = ?2 WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?1)");
        fts.bind(1, from->id).bind(2, f.relative);
        if (!s.run() || !fts.run() || !t.commit(&error))
          return failure<IndexReport>(impl_->fail_message("move " + from->path, s.error() + fts.error() + error));
        ++report.files_renamed;
        continue;
      }
    }
    const auto chunks = chunk_document(doc.document, options.chunking);
    std::int64_t file_id = 0;
    if (old) {
      file_id = old->id;
      Stmt del(db, "DELETE FROM chunks WHERE file_id = ?1");
      del.bind(1, file_id);
      Stmt s(db,
             "UPDATE files SET size = ?2, mtime_ns = ?3, sha256 = ?4, kind = ?5, language = ?6, text_bytes = ?7"
             " WHERE id = ?1");
      s.bind(1, file_id).bind(2, f.size).bind(3, f.mtime_ns).bind(4, hash).bind(5, to_string(doc.document.kind));
      s.bind(6, doc.document.language).bind(7, static_cast<std::int64_t>(doc.document.text.size()));
      if (!del.run() || !s.run())
        return failure<IndexReport>(impl_->fail_message("update " + f.relative, del.error() + s.error()));
    } else {
      Stmt s(db,
             "INSERT INTO files(folder_id, path, size, mtime_ns, sha256, kind, language, text_bytes)"
             " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
      s.bind(1, folder_id).bind(2, f.relative).bind(3, f.size).bind(4, f.mtime_ns).bind(5, hash);
      s.bind(6, to_string(doc.document.kind)).bind(7, doc.document.language);
      s.bind(8, static_cast<std::int64_t>(doc.document.text.size()));
      if (!s.run()) return failure<IndexReport>(impl_->fail_message("add " + f.relative, s.error()));
      file_id = sqlite3_last_insert_rowid(db.get());
    }
    if (!impl_->insert_chunks(file_id, f.relative, chunks, &error) || !t.commit(&error))
      return failure<IndexReport>(impl_->fail_message("store the chunks of " + f.relative, error));
    ++report.files_indexed;
    report.chunks_added += static_cast<std::int64_t>(chunks.size());
  }

  if (!report.cancelled) {
    Transaction t(db);
    for (auto& [hash, f] : vanished) {
      if (!impl_->exec_bound("DELETE FROM files WHERE id = ?1", f->id, &error))
        return failure<IndexReport>(impl_->fail_message("drop " + f->path, error));
      ++report.files_removed;
    }
    Stmt s(db, "UPDATE folders SET indexed_at = ?2 WHERE id = ?1");
    s.bind(1, folder_id).bind(2, now_ms());
    if (!s.run() || !t.commit(&error))
      return failure<IndexReport>(impl_->fail_message("finish indexing", s.error() + error));
  }
  Stmt count(db, "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.folder_id = ?1");
  count.bind(1, folder_id);
  if (count.step()) report.chunks_total = count.integer(0);
  return success(std::move(report));
}

namespace {

Hit read_hit(const Stmt& s, bool with_score) {
  Hit h;
  h.chunk_id = s.integer(0);
  h.folder_id = s.integer(1);
  h.relative_path = s.text(3);
  h.path = s.text(2) + "/" + h.relative_path;
  h.first_line = static_cast<int>(s.integer(4));
  h.last_line = static_cast<int>(s.integer(5));
  h.page = static_cast<int>(s.integer(6));
  h.title = s.text(7);
  h.text = s.text(8);
  if (with_score) h.score = -s.real(9);
  return h;
}

constexpr const char* kHitColumns =
    "SELECT c.id, f.folder_id, fo.path, f.path, c.first_line, c.last_line, c.page, x.title, x.body";

}  // namespace

IndexResult<std::vector<Hit>> KnowledgeIndex::search(const std::string& question, const SearchOptions& options) {
  const std::string match = fts_query(question_terms(question));
  std::vector<Hit> hits;
  if (match.empty() || options.top <= 0) return success(std::move(hits));
  std::string sql = std::string(kHitColumns) + ", " + kRank +
                    " AS score_rank FROM chunks_fts x JOIN chunks c ON c.id = x.rowid JOIN files f ON f.id = c.file_id"
                    " JOIN folders fo ON fo.id = f.folder_id WHERE chunks_fts MATCH ?1";
  if (!options.folders.empty()) {
    sql += " AND f.folder_id IN (";
    for (std::size_t i = 0; i < options.folders.size(); ++i) sql += (i ? ", ?" : "?") + std::to_string(i + 3);
    sql += ")";
  }
  sql += " ORDER BY score_rank, c.id LIMIT ?2";
  Stmt s(impl_->db, sql);
  s.bind(1, match).bind(2, static_cast<std::int64_t>(options.top));
  for (std::size_t i = 0; i < options.folders.size(); ++i) s.bind(static_cast<int>(i + 3), options.folders[i]);
  while (s.step()) hits.push_back(read_hit(s, true));
  if (s.failed() || !s.ok()) return failure<std::vector<Hit>>(impl_->fail_message("search", s.error()));
  return success(std::move(hits));
}

IndexResult<std::vector<Hit>> KnowledgeIndex::folder_chunks(std::int64_t folder_id) {
  Stmt s(impl_->db, std::string(kHitColumns) +
                        " FROM chunks c JOIN files f ON f.id = c.file_id JOIN folders fo ON fo.id = f.folder_id"
                        " JOIN chunks_fts x ON x.rowid = c.id WHERE f.folder_id = ?1 ORDER BY f.path, c.seq");
  s.bind(1, folder_id);
  std::vector<Hit> hits;
  while (s.step()) hits.push_back(read_hit(s, false));
  if (s.failed() || !s.ok()) return failure<std::vector<Hit>>(impl_->fail_message("read the chunks", s.error()));
  return success(std::move(hits));
}

}  // namespace day0::knowledge
