#include "common/json_error.h"

#include <array>
#include <utility>

namespace day0::common {
namespace {

// Removes `prefix` from the front of `s`; true when it was there.
bool take(std::string& s, std::string_view prefix) {
  if (s.rfind(prefix, 0) != 0) return false;
  s.erase(0, prefix.size());
  return true;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// The parser's own words for what it read or expected, as people say them.
std::string plain_reason(std::string reason) {
  // "syntax error while parsing object key - unexpected '}'": the part after the dash says it.
  if (take(reason, "syntax error while parsing ")) {
    const auto dash = reason.find(" - ");
    if (dash != std::string::npos) reason.erase(0, dash + 3);
  }
  if (reason.rfind("attempting to parse an empty input", 0) == 0) return "it is empty";
  // "; last read: '...'" quotes raw input (the position already says where): left out.
  if (const auto last = reason.find("; last read: '"); last != std::string::npos) {
    const auto expected = reason.rfind("'; expected ");
    reason.erase(last, expected != std::string::npos && expected > last ? expected + 1 - last : std::string::npos);
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kWords{{
      {"'[', '{', or a literal", "a value"},
      {"string literal", "a string"},
      {"number literal", "a number"},
      {"unexpected end of input", "it ends too early"},
      {"end of input", "the end"},
      {"<uninitialized>", "nothing"},
      {"'<parse error>'", "text that is not JSON"},
  }};
  for (const auto& [from, to] : kWords) replace_all(reason, from, to);
  return reason;
}

}  // namespace

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string text = e.what();
  // "[json.exception.parse_error.101] ": the library's name for the exception.
  if (text.rfind("[json.exception.", 0) == 0) {
    const auto close = text.find("] ");
    if (close != std::string::npos) text.erase(0, close + 2);
  }
  if (take(text, "parse error at ")) {
    // "line 3, column 7: <reason>" (or "byte 12: <reason>" from older versions).
    const auto colon = text.find(": ");
    if (colon == std::string::npos) return text;
    const std::string where = text.substr(0, colon);
    std::string reason = plain_reason(text.substr(colon + 2));
    if (where == "line 1, column 1" && reason.rfind("it ends too early", 0) == 0) reason = "it is empty";
    return where + ": " + reason;
  }
  if (take(text, "parse error: ")) return plain_reason(text);
  if (take(text, "number overflow parsing ")) {
    // "'1e999'"
    if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') text = text.substr(1, text.size() - 2);
    return "the number " + text + " is too large";
  }
  return text;
}

std::string json_parse_problem(std::string_view what, const nlohmann::json::exception& e) {
  const std::string text = json_error_text(e);
  const bool parse = dynamic_cast<const nlohmann::json::parse_error*>(&e) != nullptr;
  const bool overflow = e.id == 406;  // out_of_range: a number too large while parsing
  if (!parse && !overflow) return std::string(what) + ": " + text;
  const auto colon = text.find(": ");
  if (parse && colon != std::string::npos && (text.rfind("line ", 0) == 0 || text.rfind("byte ", 0) == 0))
    return std::string(what) + " is not valid JSON (" + text.substr(0, colon) + "): " + text.substr(colon + 2);
  return std::string(what) + " is not valid JSON: " + text;
}

}  // namespace day0::common
