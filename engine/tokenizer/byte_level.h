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
  // Inverse: character (< 0x144) -> byte, or -1.
  std::array<int, 0x144> char_to_byte{};
};

const ByteLevelTable& byte_level_table();

}  // namespace day0::tokenizer
