#pragma once
// Small text helpers shared by the knowledge module: UTF-8 validation, line ends, SHA-256,
// sizes for people. Private to knowledge/.
#include <cstdint>
#include <string>
#include <string_view>

namespace day0::knowledge {

// Offset of the first byte that breaks UTF-8 (overlongs, surrogates and code points above
// U+10FFFF included), or npos when `text` is valid.
std::size_t find_invalid_utf8(std::string_view text);
inline bool is_valid_utf8(std::string_view text) { return find_invalid_utf8(text) == std::string_view::npos; }

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence.
std::size_t utf8_safe_cut(std::string_view text, std::size_t max_bytes);

// Replaces every invalid byte by U+FFFD (for labels built from file names).
std::string sanitize_utf8(std::string_view text);

// "\r\n" and lone "\r" become "\n".
std::string normalize_line_ends(std::string_view text);

// Lower-case hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);

// "1.0 GB", "512 KB", "17 bytes".
std::string human_size(std::int64_t bytes);

std::string to_lower_ascii(std::string_view text);

}  // namespace day0::knowledge
