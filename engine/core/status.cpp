#include "day0/status.h"

namespace day0 {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::ok: return "ok";
    case ErrorCode::invalid_argument: return "invalid argument";
    case ErrorCode::not_found: return "not found";
    case ErrorCode::io_error: return "I/O error";
    case ErrorCode::corrupt_data: return "corrupt data";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::out_of_memory: return "out of memory";
    case ErrorCode::device_error: return "device error";
    case ErrorCode::cancelled: return "cancelled";
    case ErrorCode::internal: return "internal error";
  }
  return "unknown error";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (is_ok() || context.empty()) return *this;
  return {code_, context + ": " + message_};
}

}  // namespace day0
