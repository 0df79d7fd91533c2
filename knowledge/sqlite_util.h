#pragma once
// Minimal RAII over SQLite for the knowledge index: a connection and prepared statements.
// Errors come back as strings naming the statement's purpose. Private to knowledge/.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace day0::knowledge {

class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() {
    if (db_) sqlite3_close_v2(db_);
  }
  // Opens or creates; false with `error` set.
  bool open(const std::string& path, std::string* error);
  // Runs statements without results; false with `error` set.
  bool exec(std::string_view sql, std::string* error);
  sqlite3* get() const { return db_; }
  std::string message() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(Db& db, std::string_view sql);
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(stmt_); }

  bool ok() const { return stmt_ != nullptr && !failed(); }
  Stmt& bind(int i, std::int64_t v) {
    note(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, std::string_view v) {
    note(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }

  // True while rows come; check error() afterwards.
  bool step();
  // Runs to the end; false on error.
  bool run() {
    while (step()) {
    }
    return rc_ == SQLITE_OK || rc_ == SQLITE_DONE;
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    rc_ = SQLITE_OK;
  }
  bool failed() const { return !(rc_ == SQLITE_OK || rc_ == SQLITE_DONE || rc_ == SQLITE_ROW); }
  std::string error() const { return error_; }

  std::int64_t integer(int c) const { return sqlite3_column_int64(stmt_, c); }
  double real(int c) const { return sqlite3_column_double(stmt_, c); }
  std::string text(int c) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))) : std::string();
  }

 private:
  void note(int rc) {
    if (rc != SQLITE_OK && rc_ == SQLITE_OK) {
      rc_ = rc;
      error_ = sqlite3_errmsg(db_->get());
    }
  }
  Db* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
  std::string error_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back unless commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  bool begun() const { return begun_; }
  bool commit(std::string* error);

 private:
  Db& db_;
  bool begun_ = false;
  bool done_ = false;
};

}  // namespace day0::knowledge
