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

template <typename T>
class [[nodiscard]] StoreResult {
 public:
  StoreResult(T value) : v_(std::move(value)) {}
  StoreResult(StoreError error) : v_(std::move(error)) {}

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& value() const& { return std::get<T>(v_); }
  T* operator->() { return &value(); }
  const StoreError& error() const { return std::get<StoreError>(v_); }

 private:
  std::variant<T, StoreError> v_;
};

struct Ok {};
using StoreStatus = StoreResult<Ok>;

}  // namespace day0::storage
