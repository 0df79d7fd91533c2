#include "tokenizer/byte_level.h"

#include "tokenizer/unicode.h"

namespace day0::tokenizer {

namespace {

ByteLevelTable build() {
  ByteLevelTable t;
  t.char_to_byte.fill(-1);
  auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
  std::uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const std::uint32_t c = printable(b) ? static_cast<std::uint32_t>(b) : next++;
    t.byte_to_char[b] = c;
    append_utf8(t.byte_to_utf8[b], c);
    t.char_to_byte[c] = b;
  }
  return t;
}

}  // namespace

const ByteLevelTable& byte_level_table() {
  static const ByteLevelTable table = build();
  return table;
}

}  // namespace day0::tokenizer
