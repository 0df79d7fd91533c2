#pragma once
// Unicode helpers with Python's str semantics: templates index, slice, strip and case-map
// strings by code point, so the interpreter decodes UTF-8 wherever Python would count characters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace day0::chat_template {

// Index of the first invalid UTF-8 byte, or npos when `s` is valid (no overlongs, no surrogates).
std::size_t find_invalid_utf8(std::string_view s);

// Code points of valid UTF-8 (callers validate first; stray bytes decode as U+FFFD).
std::vector<char32_t> decode_utf8(std::string_view s);
void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(const std::vector<char32_t>& cps, std::size_t begin, std::size_t end);
// Number of code points.
std::size_t utf8_length(std::string_view s);
bool is_ascii(std::string_view s);

// Python's str.isspace() for one code point.
bool py_isspace(char32_t c);
bool py_isalpha(char32_t c);
bool py_isdigit(char32_t c);
bool py_isalnum(char32_t c);
bool py_is_lower_cased(char32_t c);
bool py_is_upper_cased(char32_t c);
// Simple case mappings (ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic).
char32_t py_to_upper(char32_t c);
char32_t py_to_lower(char32_t c);
// Python's str.isprintable() for one code point (what repr() leaves unescaped).
bool py_isprintable(char32_t c);

std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);

}  // namespace day0::chat_template
