#include "storage/database.h"

#include <sqlite3.h>
#include <utility>

#include "storage/file_util.h"
#include "storage/statement.h"

namespace day0::storage {

StoreError Database::last_error(const std::string& what) const {
  const int code = db_ ? sqlite3_errcode(db_) : SQLITE_ERROR;
  return {code & 0xff, what + ": " + (db_ ? sqlite3_errmsg(db_) : "no database") + " (" + path_.string() + ")"};
}

StoreResult<Database> Database::open(const std::filesystem::path& path, const ConnectionOptions& options) {
  Database db;
  db.path_ = path;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr) != SQLITE_OK)
    return db.last_error("cannot open the history database");
  sqlite3_extended_result_codes(db.db_, 1);
  sqlite3_busy_timeout(db.db_, options.busy_timeout_ms);
  if (options.keep_wal_on_close) db.set_keep_wal_on_close(true);
  // journal_mode returns a row; exec discards it. A database on a file system without shared
  // memory support keeps its rollback journal, which is still durable.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"}) {
    if (auto s = db.exec(pragma); !s) return s.error();
  }
  return db;
}

StoreResult<Database> Database::open_read_only(const std::filesystem::path& path) {
  // immutable=1 tells SQLite the file cannot change, so it takes no locks and needs no -shm.
  std::string uri = "file:";
  for (unsigned char c : path.string()) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                       c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  uri += "?immutable=1";
  Database db;
  db.path_ = path;
  if (sqlite3_open_v2(uri.c_str(), &db.db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK)
    return db.last_error("cannot open");
  sqlite3_extended_result_codes(db.db_, 1);
  return db;
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

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
    StoreError e{sqlite3_errcode(db_) & 0xff,
                 std::string(message ? message : "unknown error") + " (" + path_.string() + ")"};
    sqlite3_free(message);
    return e;
  }
  return Ok{};
}

void Database::set_keep_wal_on_close(bool keep) {
  int value = keep ? 1 : 0;
  sqlite3_file_control(db_, "main", SQLITE_FCNTL_PERSIST_WAL, &value);
}

std::int64_t Database::changes() const { return sqlite3_changes64(db_); }
std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

StoreResult<std::int64_t> Database::query_int(std::string_view sql) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(*this, sql));
  DAY0_STORE_ASSIGN(row, s.step());
  if (!row) return store_error("query returned no row: " + std::string(sql));
  return s.column_int(0);
}

StoreResult<std::string> Database::query_text(std::string_view sql) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(*this, sql));
  std::string out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    if (!out.empty()) out += "\n";
    out += s.column_text(0);
  }
  return out;
}

StoreResult<int> Database::user_version() {
  DAY0_STORE_ASSIGN(v, query_int("PRAGMA user_version"));
  return static_cast<int>(v);
}

StoreResult<std::string> Database::quick_check() { return query_text("PRAGMA quick_check"); }
StoreResult<std::string> Database::integrity_check() { return query_text("PRAGMA integrity_check"); }

StoreStatus Database::migrate(const std::vector<Migration>& migrations) {
  DAY0_STORE_ASSIGN(current, user_version());
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  if (current > newest)
    return store_error("the history database " + path_.string() + " has schema version " + std::to_string(current) +
                       ", newer than this Day0 knows (" + std::to_string(newest) +
                       "); it was written by a newer version and is left untouched");
  if (current == newest) return Ok{};
  // PRAGMA foreign_keys is a no-op inside a transaction, so it is switched around them.
  DAY0_STORE_TRY(exec("PRAGMA foreign_keys=OFF"));
  StoreStatus result = Ok{};
  for (const auto& m : migrations) {
    if (m.version <= current) continue;
    const std::string step = "migration " + std::to_string(m.version) + " (" + m.name + ")";
    auto tx = Transaction::begin(*this);
    if (!tx) {
      result = tx.error();
      break;
    }
    if (auto s = exec(m.sql); !s) {
      result = StoreError{s.error().sqlite_code, step + " failed: " + s.error().message};
      break;
    }
    auto broken = query_text("PRAGMA foreign_key_check");
    if (!broken || !broken.value().empty()) {
      result = store_error(step + " left broken references: " + (broken ? broken.value() : broken.error().message));
      break;
    }
    if (auto s = exec("PRAGMA user_version=" + std::to_string(m.version)); !s) {
      result = s.error();
      break;
    }
    if (auto s = tx->commit(); !s) {
      result = StoreError{s.error().sqlite_code, step + " could not be committed: " + s.error().message};
      break;
    }
  }
  if (auto s = exec("PRAGMA foreign_keys=ON"); !s && result) result = s.error();
  return result;
}

StoreStatus Database::backup_to(const std::filesystem::path& target) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(*this, "VACUUM INTO ?1"));
  s.bind(1, target.string());
  if (auto r = s.run(); !r)
    return StoreError{r.error().sqlite_code, "backup to " + target.string() + " failed: " + r.error().message};
  // VACUUM INTO leaves the new file unsynced.
  DAY0_STORE_TRY(sync_path(target));
  return sync_path(target.has_parent_path() ? target.parent_path() : std::filesystem::path("."));
}

StoreResult<Transaction> Transaction::begin(Database& db) {
  DAY0_STORE_TRY(db.exec("BEGIN IMMEDIATE"));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_ && !sqlite3_get_autocommit(db_->handle())) (void)db_->exec("ROLLBACK");
}

StoreStatus Transaction::commit() {
  Database* db = std::exchange(db_, nullptr);
  if (auto s = db->exec("COMMIT"); !s) {
    if (!sqlite3_get_autocommit(db->handle())) (void)db->exec("ROLLBACK");
    return s.error();
  }
  return Ok{};
}

}  // namespace day0::storage
