#pragma once
// Options shared by the commands that run a model.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace day0::cli {

// "1,2,3" -> ids; an empty list, a non-number or a value outside [0, 2^31) is an error.
std::optional<std::vector<std::int32_t>> parse_token_list(const std::string& text, std::string* problem);
std::optional<double> parse_number(const std::string& text);
std::optional<std::int64_t> parse_integer(const std::string& text);

}  // namespace day0::cli
