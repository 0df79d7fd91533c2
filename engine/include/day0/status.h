#pragma once
// Status and Result<T>: how the engine reports failure. The engine never aborts or exits on
// bad input; every error carries a message a person can act on.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace day0 {

enum class ErrorCode {
  ok = 0,
  invalid_argument,  // the caller asked for something impossible
  not_found,         // a file, tensor or field that should exist does not
  io_error,          // the operating system refused a read, map or open
  corrupt_data,      // a file exists but its contents are malformed or inconsistent
  unsupported,       // well-formed, but not something Day0 can run (yet)
  out_of_memory,
  device_error,      // a GPU runtime call failed
  cancelled,
  internal,
};

const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::ok; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "corrupt_data: tensor x ends at byte 812 but the file has 640"
  std::string to_string() const;

  // Prefixes context, e.g. the file name: status.with_context("model-00001.safetensors").
  Status with_context(const std::string& context) const;

 private:
  ErrorCode code_ = ErrorCode::ok;
  std::string message_;
};

inline Status error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {
    assert(!std::get<Status>(v_).is_ok() && "a Result built from a Status must hold an error");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace day0

// Propagates an error Status (or the error of a Result) to the caller.
#define DAY0_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::day0::Status day0_status_ = (expr);           \
    if (!day0_status_.is_ok()) return day0_status_; \
  } while (0)

#define DAY0_CONCAT_INNER(a, b) a##b
#define DAY0_CONCAT(a, b) DAY0_CONCAT_INNER(a, b)
// DAY0_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
#define DAY0_ASSIGN_OR_RETURN(lhs, expr) \
  DAY0_ASSIGN_OR_RETURN_IMPL(DAY0_CONCAT(day0_result_, __LINE__), lhs, expr)
#define DAY0_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.is_ok()) return tmp.status();           \
  lhs = std::move(tmp).value()
