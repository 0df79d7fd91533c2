#pragma once
// UTF-8 helpers and the Unicode character properties the tokenizer pipeline needs (ICU-backed),
// each defined the way the `tokenizers` component that uses it defines it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace day0::tokenizer {

inline constexpr std::uint32_t kReplacementChar = 0xFFFD;

// Length of the UTF-8 sequence starting with lead byte `b` in valid UTF-8 (1 for ASCII).
inline std::size_t utf8_length(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

// Decodes the code point at `s[i]` of valid UTF-8 and advances `i` past it.
std::uint32_t next_code_point(std::string_view s, std::size_t& i);
void append_utf8(std::string& out, std::uint32_t cp);

bool is_valid_utf8(std::string_view bytes);
// Appends `bytes` to `out`, each maximal invalid subpart replaced by U+FFFD: the rule of Python's
// bytes.decode("utf-8", errors="replace") and Rust's String::from_utf8_lossy.
void append_lossy_utf8(std::string& out, std::string_view bytes);
std::string lossy_utf8(std::string_view bytes);
// Number of trailing bytes of `bytes` that begin a valid UTF-8 sequence which more bytes could
// still complete (0 when the text ends on a complete character or on bytes that are invalid
// whatever follows).
std::size_t incomplete_utf8_tail(std::string_view bytes);

// Rust char::is_whitespace and the `\s` of onig and of Rust's regex: Unicode White_Space.
bool is_white_space(std::uint32_t cp);
// Rust char::is_numeric: general category N (Nd, Nl, No).
bool is_numeric(std::uint32_t cp);
// tokenizers' Punctuation pre-tokenizer: ASCII punctuation or general category P.
bool is_punctuation(std::uint32_t cp);
// The `\w` of Rust's regex crate (used for added tokens' single_word): Alphabetic, M, Nd, Pc,
// Join_Control.
bool is_rust_word_char(std::uint32_t cp);
// General category M (Mn, Mc, Me).
bool is_combining_mark(std::uint32_t cp);

// Rust char::to_lowercase: the full (unconditional) lowercase mapping of one code point.
void append_lowercase(std::string& out, std::uint32_t cp);

enum class NormalForm { nfc, nfd, nfkc, nfkd };
// Normalizes valid UTF-8. `segments` receives, for each output byte, the index (in input bytes)
// of the input character whose normalization segment produced it; pass nullptr when not needed.
std::string normalize_unicode(std::string_view text, NormalForm form, std::vector<std::uint32_t>* segments);

}  // namespace day0::tokenizer
