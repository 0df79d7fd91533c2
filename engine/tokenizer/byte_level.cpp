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
    t.utf8_length[b] = static_cast<std::uint8_t>(t.byte_to_utf8[b].size());
    for (std::size_t k = 0; k < t.byte_to_utf8[b].size(); ++k) t.utf8_bytes[b][k] = t.byte_to_utf8[b][k];
    t.char_to_byte[c] = b;
  }
  return t;
}

}  // namespace

const ByteLevelTable& byte_level_table() {
  static const ByteLevelTable table = build();
  return table;
}

void byte_level_map(std::string& text) {
  const ByteLevelTable& t = byte_level_table();
  const std::size_t n = text.size();
  std::size_t mapped = 0;
  for (unsigned char b : text) mapped += t.utf8_length[b];
  if (mapped == n) return;  // only printable ASCII, which maps to itself
  // Stand-ins are never shorter than their byte: fill from the back, reading ahead of writing.
  text.resize(mapped);
  char* d = text.data();
  std::size_t w = mapped;
  for (std::size_t r = n; r-- > 0;) {
    const auto b = static_cast<unsigned char>(d[r]);
    if (t.utf8_length[b] == 1) {
      d[--w] = t.utf8_bytes[b][0];
    } else {
      d[--w] = t.utf8_bytes[b][1];
      d[--w] = t.utf8_bytes[b][0];
    }
  }
}

}  // namespace day0::tokenizer
