#pragma once
// Folders as knowledge: files indexed into SQLite (FTS5, ranked by BM25) in structured
// chunks. Indexing walks a folder (honouring .gitignore and skipping build/vendor folders,
// binary and unreadable files, symlink loops), re-reads only files whose size or modification
// time changed, keeps unchanged content by hash (a renamed file is moved, not re-chunked), and
// drops deleted files. One KnowledgeIndex is one database connection: use one per thread
// (indexing on a background thread, searching on another; WAL lets them run together).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "knowledge/chunker.h"
#include "knowledge/document.h"

namespace day0::knowledge {

struct Folder {
  std::int64_t id = 0;
  std::string path;  // absolute, as added
  std::int64_t files = 0;
  std::int64_t chunks = 0;
  std::int64_t text_bytes = 0;  // of all indexed text (to judge whether it fits a context)
  std::int64_t indexed_at = 0;  // Unix ms of the last completed indexing, 0 if never
};

struct SkippedFile {
  std::string path;    // relative to the folder
  std::string reason;  // "binary", "too large (1.0 GB)", "not valid UTF-8", "unreadable: ...", "symlink loop"
};

struct IndexProgress {
  std::int64_t files_done = 0;
  std::int64_t files_total = 0;  // known after the walk; 0 while walking
  std::string current;           // relative path being read
};

struct IndexReport {
  std::int64_t files_seen = 0;
  std::int64_t files_indexed = 0;    // read and chunked (new or changed)
  std::int64_t files_unchanged = 0;  // same size, time or hash
  std::int64_t files_renamed = 0;
  std::int64_t files_removed = 0;
  std::int64_t chunks_added = 0;
  std::int64_t chunks_total = 0;   // in the folder after indexing
  std::int64_t files_ignored = 0;  // left out by .gitignore, or inside build/vendor folders (counted once)
  std::vector<SkippedFile> skipped;
  bool cancelled = false;
};

struct SearchOptions {
  int top = 10;
  std::vector<std::int64_t> folders;  // empty: all folders
};

struct Hit {
  std::int64_t chunk_id = 0;
  std::int64_t folder_id = 0;
  std::string path;           // absolute
  std::string relative_path;  // within the folder
  int first_line = 1;
  int last_line = 1;
  int page = 0;
  std::string title;
  std::string text;
  double score = 0;  // larger is better (negated BM25)
};

struct IndexError {
  std::string message;
};

template <typename T>
struct IndexResult {
  std::optional<T> value;
  IndexError error;
  bool ok() const { return value.has_value(); }
};

struct WalkOptions {
  DocumentLimits limits;
  ChunkOptions chunking;
  bool follow_symlinks = true;  // symlinked files and folders are followed, loops are detected
};

class KnowledgeIndex {
 public:
  // Opens (creating or migrating) the index database.
  static IndexResult<std::unique_ptr<KnowledgeIndex>> open(const std::filesystem::path& db_path);
  ~KnowledgeIndex();

  // Adds a folder (idempotent: the same canonical path returns the same id).
  IndexResult<Folder> add_folder(const std::filesystem::path& folder);
  IndexResult<bool> remove_folder(std::int64_t folder_id);
  IndexResult<std::vector<Folder>> folders();

  // Brings the folder's index up to date. `progress` is called from this thread;
  // `cancel` is polled between files (the index stays consistent when cancelled).
  IndexResult<IndexReport> index_folder(std::int64_t folder_id, const WalkOptions& options = {},
                                        const std::function<void(const IndexProgress&)>& progress = {},
                                        const std::atomic<bool>* cancel = nullptr);

  // Best chunks first for a free-text question (any characters: never a query-syntax error).
  IndexResult<std::vector<Hit>> search(const std::string& question, const SearchOptions& options = {});
  // Every chunk of a folder in path and line order (to put a whole folder into a context).
  IndexResult<std::vector<Hit>> folder_chunks(std::int64_t folder_id);

 private:
  struct Impl;
  explicit KnowledgeIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace day0::knowledge
