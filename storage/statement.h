#pragma once
// A prepared statement (RAII) with typed binds and column reads. Bind errors are remembered
// and reported by the next step(), so call sites read as one chain.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/database.h"

struct sqlite3_stmt;

namespace day0::storage {

class Statement {
 public:
  static StoreResult<Statement> prepare(Database& db, std::string_view sql);

  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Parameters are numbered from 1, as in SQL's ?1.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::optional<std::int64_t> value);
  Statement& bind(int index, std::optional<double> value);
  Statement& bind_blob(int index, std::string_view bytes);
  Statement& bind_null(int index);

  // True when a row is ready, false when the statement is done.
  StoreResult<bool> step();
  // Steps to the end, for statements that return no rows.
  StoreStatus run();
  // Rewinds for another execution with new binds.
  void reset();

  std::int64_t column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  std::string column_blob(int column) const;
  bool column_is_null(int column) const;
  std::optional<std::int64_t> column_optional_int(int column) const;
  std::optional<double> column_optional_double(int column) const;

 private:
  Statement(Database* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void note_bind(int rc, int index);
  Database* db_;
  sqlite3_stmt* stmt_;
  int bind_error_ = 0;
  int bind_error_index_ = 0;
};

}  // namespace day0::storage
