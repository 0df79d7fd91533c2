#include "cli/model_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace day0::cli {

std::optional<std::int64_t> parse_integer(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::vector<std::int32_t>> parse_token_list(const std::string& text, std::string* problem) {
  std::vector<std::int32_t> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    const auto v = parse_integer(item);
    if (!v || *v < 0 || *v >= (1ll << 31)) {
      *problem = "'" + item + "' in the token list is not a token id";
      return std::nullopt;
    }
    ids.push_back(static_cast<std::int32_t>(*v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (ids.empty()) {
    *problem = "the token list is empty";
    return std::nullopt;
  }
  return ids;
}

}  // namespace day0::cli
