#pragma once
// Results of storage operations: a value, or an error with SQLite's code and a message a
// person can act on. (storage/ does not depend on the engine, so it has its own small type.)
#include <string>
#include <utility>
#include <variant>

namespace day0::storage {

struct StoreError {
  int sqlite_code = 0;  // SQLITE_* primary result code, 0 when the error is not SQLite's
  std::string message;
};

inline StoreError store_error(std::string message) { return StoreError{0, std::move(message)}; }

template <typename T>
class [[nodiscard]] StoreResult {
 public:
  StoreResult(T value) : v_(std::move(value)) {}
  StoreResult(StoreError error) : v_(std::move(error)) {}

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<T>(v_); }
  // By value, so `for (auto& x : f().value())` does not refer into a destroyed temporary.
  T value() && { return std::get<T>(std::move(v_)); }
  const T& value() const& { return std::get<T>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const StoreError& error() const { return std::get<StoreError>(v_); }

 private:
  std::variant<T, StoreError> v_;
};

struct Ok {};
using StoreStatus = StoreResult<Ok>;

}  // namespace day0::storage

// Early returns for functions that return a StoreResult of any type.
#define DAY0_STORE_CONCAT_INNER(a, b) a##b
#define DAY0_STORE_CONCAT(a, b) DAY0_STORE_CONCAT_INNER(a, b)
#define DAY0_STORE_TRY(expr)                                                       \
  do {                                                                             \
    if (auto day0_store_r_ = (expr); !day0_store_r_) return day0_store_r_.error(); \
  } while (0)
// Declares `auto name` holding the value of `expr`, or returns its error.
#define DAY0_STORE_ASSIGN(name, expr)                                                                         \
  auto DAY0_STORE_CONCAT(day0_store_a_, __LINE__) = (expr);                                                   \
  if (!DAY0_STORE_CONCAT(day0_store_a_, __LINE__)) return DAY0_STORE_CONCAT(day0_store_a_, __LINE__).error(); \
  auto name = std::move(DAY0_STORE_CONCAT(day0_store_a_, __LINE__)).value()
