#include "knowledge/sqlite_util.h"

namespace day0::knowledge {

bool Db::open(const std::string& path, std::string* error) {
  const int rc =
      sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    *error = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    return false;
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, 5000);
  return true;
}

bool Db::exec(std::string_view sql, std::string* error) {
  char* message = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return true;
  *error = message ? message : sqlite3_errmsg(db_);
  sqlite3_free(message);
  return false;
}

Stmt::Stmt(Db& db, std::string_view sql) : db_(&db) {
  rc_ = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc_ != SQLITE_OK) error_ = sqlite3_errmsg(db.get());
}

bool Stmt::step() {
  if (!stmt_ || failed() || rc_ == SQLITE_DONE) return false;
  rc_ = sqlite3_step(stmt_);
  if (rc_ == SQLITE_ROW) return true;
  if (rc_ != SQLITE_DONE) error_ = sqlite3_errmsg(db_->get());
  return false;
}

Transaction::Transaction(Db& db) : db_(db) {
  std::string ignored;
  begun_ = db_.exec("BEGIN IMMEDIATE", &ignored);
}

Transaction::~Transaction() {
  if (begun_ && !done_) {
    std::string ignored;
    db_.exec("ROLLBACK", &ignored);
  }
}

bool Transaction::commit(std::string* error) {
  if (!begun_) {
    *error = "could not begin a transaction: " + db_.message();
    return false;
  }
  done_ = db_.exec("COMMIT", error);
  return done_;
}

}  // namespace day0::knowledge
