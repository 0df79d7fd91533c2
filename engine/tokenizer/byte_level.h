#pragma once
// GPT-2's byte-to-character table: the printable bytes map to themselves, the others to the
// characters from U+0100 on, in byte order, so any byte string becomes printable text.
#include <array>
#include <cstdint>
#include <string>

namespace day0::tokenizer {

struct ByteLevelTable {
  std::array<std::uint32_t, 256> byte_to_char{};
  std::array<std::string, 256> byte_to_utf8;  // byte_to_char as UTF-8
  // The same without strings, for the per-byte hot loop: every stand-in is below U+0144, so one
  // or two UTF-8 bytes.
  std::array<std::array<char, 2>, 256> utf8_bytes{};
  std::array<std::uint8_t, 256> utf8_length{};
  // Inverse: character (< 0x144) -> byte, or -1.
  std::array<int, 0x144> char_to_byte{};
};

const ByteLevelTable& byte_level_table();

// Replaces every byte of `text` by its stand-in, in place.
void byte_level_map(std::string& text);

}  // namespace day0::tokenizer
