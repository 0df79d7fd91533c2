#pragma once
// One SQLite connection (RAII), configured for durability: WAL journal, synchronous=FULL (a
// committed message survives power loss), foreign keys on, a busy timeout. Each thread opens
// its own connection; the history store runs on its own thread.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "storage/store_result.h"

struct sqlite3;

namespace day0::storage {

struct Migration {
  int version;  // PRAGMA user_version after this step
  const char* name;
  const char* sql;
};

struct ConnectionOptions {
  int busy_timeout_ms = 5000;  // how long a write waits for another process's lock
  // Leave the -wal file in place when the connection closes (SQLITE_FCNTL_PERSIST_WAL).
  // Start-up sets it while it checks a file, so a damaged database keeps its log.
  bool keep_wal_on_close = false;
};

class Database {
 public:
  // Opens (creating if needed) the database file and applies the connection settings. A file
  // that is not a database fails here (SQLITE_NOTADB) because the settings read its header.
  static StoreResult<Database> open(const std::filesystem::path& path, const ConnectionOptions& options = {});

  // Opens a file that nothing writes any more (a backup) read-only, without locks or a WAL.
  static StoreResult<Database> open_read_only(const std::filesystem::path& path);

  Database() = default;
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  StoreStatus exec(std::string_view sql);
  StoreResult<std::int64_t> query_int(std::string_view sql);
  // The first column of every row, joined by newlines.
  StoreResult<std::string> query_text(std::string_view sql);

  StoreResult<int> user_version();
  // "ok", or SQLite's list of problems. quick_check skips the index-content cross checks.
  StoreResult<std::string> quick_check();
  StoreResult<std::string> integrity_check();
  // Applies, in order, each migration newer than user_version, each in its own transaction,
  // with foreign keys off so that a migration may rebuild a table (SQLite's documented
  // procedure); PRAGMA foreign_key_check must pass before each commit. Refuses a database
  // whose version is newer than the newest migration (written by a newer Day0), so nothing
  // is damaged by an old build.
  StoreStatus migrate(const std::vector<Migration>& migrations);
  // Writes a consistent copy of the database to `target` (VACUUM INTO), flushed to disk.
  StoreStatus backup_to(const std::filesystem::path& target);

  // See ConnectionOptions::keep_wal_on_close.
  void set_keep_wal_on_close(bool keep);

  // Rows changed by the last INSERT, UPDATE or DELETE.
  std::int64_t changes() const;
  std::int64_t last_insert_rowid() const;

  // The error SQLite reports for the last call on this connection, prefixed by `what`.
  StoreError last_error(const std::string& what) const;

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back by the destructor unless committed.
class Transaction {
 public:
  static StoreResult<Transaction> begin(Database& db);
  Transaction(Transaction&& other) noexcept;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  StoreStatus commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;
};

}  // namespace day0::storage
