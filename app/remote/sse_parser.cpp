#include "remote/sse_parser.h"

namespace day0::remote {

bool SseParser::feed(std::string_view bytes, const OnData& on_data) {
  for (const char c : bytes) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      if (!line_done(on_data)) return false;
      continue;
    }
    if (line_.size() >= max_line_) {
      error_ = "an event-stream line is longer than " + std::to_string(max_line_) + " bytes";
      return false;
    }
    line_.push_back(c);
  }
  return true;
}

bool SseParser::line_done(const OnData& on_data) {
  std::string line;
  line.swap(line_);
  if (line.empty()) {
    if (!has_data_) return true;
    std::string data;
    data.swap(data_);
    has_data_ = false;
    if (!data.empty() && data.back() == '\n') data.pop_back();
    if (!on_data(data)) {
      error_ = "stopped";
      return false;
    }
    return true;
  }
  if (line.front() == ':') return true;
  const std::size_t colon = line.find(':');
  const std::string field = line.substr(0, colon);
  std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.erase(0, 1);
  if (field == "data") {
    data_ += value;
    data_ += '\n';
    has_data_ = true;
  }
  // event, id and retry fields carry nothing an OpenAI stream needs.
  return true;
}

}  // namespace day0::remote
