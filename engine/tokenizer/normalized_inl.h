#pragma once
// Template part of normalized.h.
#include "tokenizer/unicode.h"

namespace day0::tokenizer {

template <typename Map>
void map_chars(Piece& p, Map&& map) {
  std::string text;
  text.reserve(p.text.size() + 8);
  std::vector<std::uint32_t> align;
  if (p.tracked) align.reserve(p.text.size() + 8);
  std::size_t i = 0;
  while (i < p.text.size()) {
    const std::size_t at = i;
    const std::uint32_t cp = next_code_point(p.text, i);
    const std::size_t before = text.size();
    map(cp, text);
    if (p.tracked) align.insert(align.end(), text.size() - before, p.align[at]);
  }
  p.text = std::move(text);
  p.align = std::move(align);
}

}  // namespace day0::tokenizer
