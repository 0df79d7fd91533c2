#include "storage/database.h"

#include <sqlite3.h>
#include <utility>

namespace day0::storage {

StoreError Database::last_error(const std::string& what) const {
  const int code = db_ ? sqlite3_errcode(db_) : SQLITE_ERROR;
  return {code & 0xff, what + ": " + (db_ ? sqlite3_errmsg(db_) : "no database") + " (" + path_.string() + ")"};
}

StoreResult<Database> Database::open(const std::filesystem::path& path) {
  Database db;
  db.path_ = path;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr) != SQLITE_OK) {
    StoreError e = db.last_error("cannot open the history database");
    return e;
  }
  sqlite3_extended_result_codes(db.db_, 1);
  sqlite3_busy_timeout(db.db_, 5000);
  // journal_mode returns a row; exec discards it. A database on a file system without shared
  // memory support keeps its rollback journal, which is still durable.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"}) {
    if (auto s = db.exec(pragma); !s) return s.error();
  }
  return db;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

StoreStatus Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    StoreError e{sqlite3_errcode(db_) & 0xff, std::string(message ? message : "unknown error") + " (" + path_.string() + ")"};
    sqlite3_free(message);
    return e;
  }
  return Ok{};
}

namespace {

struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() { sqlite3_finalize(stmt); }
};

}  // namespace

StoreResult<std::int64_t> Database::query_int(std::string_view sql) {
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s.stmt, nullptr) != SQLITE_OK)
    return last_error("cannot prepare query");
  const int rc = sqlite3_step(s.stmt);
  if (rc != SQLITE_ROW) return last_error("query returned no row");
  return static_cast<std::int64_t>(sqlite3_column_int64(s.stmt, 0));
}

StoreResult<std::string> Database::query_text(std::string_view sql) {
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s.stmt, nullptr) != SQLITE_OK)
    return last_error("cannot prepare query");
  std::string out;
  int rc;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
    if (!out.empty()) out += "\n";
    const auto* text = sqlite3_column_text(s.stmt, 0);
    out += text ? reinterpret_cast<const char*>(text) : "";
  }
  if (rc != SQLITE_DONE) return last_error("query failed");
  return out;
}

StoreResult<int> Database::user_version() {
  auto v = query_int("PRAGMA user_version");
  if (!v) return v.error();
  return static_cast<int>(v.value());
}

StoreResult<std::string> Database::quick_check() { return query_text("PRAGMA quick_check"); }

StoreStatus Database::migrate(const std::vector<Migration>& migrations) {
  auto current = user_version();
  if (!current) return current.error();
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  if (current.value() > newest)
    return StoreError{0, "the history database " + path_.string() + " has schema version " +
                             std::to_string(current.value()) + ", newer than this Day0 knows (" +
                             std::to_string(newest) + "); it was written by a newer version and is left untouched"};
  for (const auto& m : migrations) {
    if (m.version <= current.value()) continue;
    const std::string sql = std::string("BEGIN IMMEDIATE;\n") + m.sql + "\nPRAGMA user_version=" +
                            std::to_string(m.version) + ";\nCOMMIT;";
    if (auto s = exec(sql); !s) {
      (void)exec("ROLLBACK");
      return StoreError{s.error().sqlite_code,
                        "migration " + std::to_string(m.version) + " (" + m.name + ") failed: " + s.error().message};
    }
  }
  return Ok{};
}

StoreStatus Database::backup_to(const std::filesystem::path& target) {
  Statement s;
  if (sqlite3_prepare_v2(db_, "VACUUM INTO ?1", -1, &s.stmt, nullptr) != SQLITE_OK)
    return last_error("cannot prepare the backup");
  const std::string file = target.string();
  sqlite3_bind_text(s.stmt, 1, file.c_str(), static_cast<int>(file.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(s.stmt) != SQLITE_DONE) return last_error("backup to " + file + " failed");
  return Ok{};
}

}  // namespace day0::storage
