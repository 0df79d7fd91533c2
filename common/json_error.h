#pragma once
// JSON errors in plain words. The JSON library's exceptions read "[json.exception.parse_error.101]
// parse error at line 3, column 7: syntax error while parsing object key - unexpected '}';
// expected string literal"; people see "line 3, column 7: unexpected '}'; expected a string".
// Shared by engine/ and storage/ (neither includes the other), so it depends on nothing of either.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace day0::common {

// The reason of a JSON library exception without the library's prefix, with the position first
// for a parse error: "line 3, column 7: unexpected '}'", "the number 1e999 is too large".
std::string json_error_text(const nlohmann::json::exception& e);

// "`what` is not valid JSON (line 3, column 7): unexpected '}'" for a parse error (or a number out
// of range), "`what`: <reason>" for any other.
std::string json_parse_problem(std::string_view what, const nlohmann::json::exception& e);

}  // namespace day0::common
