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
  int version;        // PRAGMA user_version after this step
  const char* name;
  const char* sql;
};

class Database {
 public:
  // Opens (creating if needed) the database file and applies the connection settings.
  static StoreResult<Database> open(const std::filesystem::path& path);

  Database() = default;
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  StoreStatus exec(std::string_view sql);
  StoreResult<std::int64_t> query_int(std::string_view sql);
  StoreResult<std::string> query_text(std::string_view sql);

  StoreResult<int> user_version();
  // "ok", or SQLite's list of problems.
  StoreResult<std::string> quick_check();
  // Applies, in order, each migration newer than user_version, each in its own transaction.
  // Refuses a database whose version is newer than the newest migration (written by a newer
  // Day0), so nothing is damaged by an old build.
  StoreStatus migrate(const std::vector<Migration>& migrations);
  // Writes a consistent copy of the database to `target` (VACUUM INTO).
  StoreStatus backup_to(const std::filesystem::path& target);

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  StoreError last_error(const std::string& what) const;
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

// The history schema's migrations, oldest first.
const std::vector<Migration>& history_migrations();

}  // namespace day0::storage
