#pragma once
// An incremental parser for server-sent events (the WHATWG "text/event-stream" format) as
// OpenAI-compatible servers stream them: bytes arrive in arbitrary pieces, lines end in LF,
// CRLF or CR (a CRLF may be split across pieces), lines starting with ':' are comments
// (keep-alives), several "data:" lines join with '\n', and a blank line ends an event.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace day0::remote {

class SseParser {
 public:
  // Called with each complete event's data; returning false stops the parser.
  using OnData = std::function<bool(const std::string& data)>;

  // A line longer than `max_line_bytes` (a server that never ends its lines) is an error.
  explicit SseParser(std::size_t max_line_bytes = 64u << 20) : max_line_(max_line_bytes) {}

  // Returns false when on_data asked to stop or a line grew past the limit (error() says which).
  bool feed(std::string_view bytes, const OnData& on_data);
  const std::string& error() const { return error_; }

 private:
  bool line_done(const OnData& on_data);

  std::size_t max_line_;
  std::string line_;
  std::string data_;
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte was a CR: an LF right after it ends nothing
  std::string error_;
};

}  // namespace day0::remote
