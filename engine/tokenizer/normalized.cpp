#include "tokenizer/normalized.h"

#include <algorithm>

namespace day0::tokenizer {

Piece slice(const Piece& p, std::size_t start, std::size_t end) {
  Piece s;
  s.text.assign(p.text, start, end - start);
  s.tracked = p.tracked;
  if (p.tracked) {
    s.align.assign(p.align.begin() + static_cast<std::ptrdiff_t>(start),
                   p.align.begin() + static_cast<std::ptrdiff_t>(end));
    s.shift = start < p.align.size() ? p.align[start] : p.shift;
  }
  return s;
}

namespace {

struct Cut {
  std::size_t start, end;
  bool remove;
};

// The slices tokenizers' NormalizedString::split makes of `spans` under `behavior`.
std::vector<Cut> cuts_of(const std::vector<Span>& spans, SplitBehavior behavior, bool invert) {
  std::vector<Cut> cuts;
  cuts.reserve(spans.size());
  auto matched = [invert](const Span& s) { return s.is_match != invert; };
  switch (behavior) {
    case SplitBehavior::isolated:
      for (const Span& s : spans) cuts.push_back({s.start, s.end, false});
      break;
    case SplitBehavior::removed:
      for (const Span& s : spans) cuts.push_back({s.start, s.end, matched(s)});
      break;
    case SplitBehavior::contiguous: {
      bool previous = false;
      for (const Span& s : spans) {
        const bool m = matched(s);
        if (m == previous && !cuts.empty()) {
          cuts.back().end = s.end;
        } else {
          cuts.push_back({s.start, s.end, false});
        }
        previous = m;
      }
      break;
    }
    case SplitBehavior::merged_with_previous: {
      bool previous = false;
      for (const Span& s : spans) {
        const bool m = matched(s);
        if (m && !previous && !cuts.empty()) {
          cuts.back().end = s.end;
        } else {
          cuts.push_back({s.start, s.end, false});
        }
        previous = m;
      }
      break;
    }
    case SplitBehavior::merged_with_next: {
      bool previous = false;
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        const bool m = matched(*it);
        if (m && !previous && !cuts.empty()) {
          cuts.back().start = it->start;
        } else {
          cuts.push_back({it->start, it->end, false});
        }
        previous = m;
      }
      std::reverse(cuts.begin(), cuts.end());
      break;
    }
  }
  return cuts;
}

}  // namespace

void split_piece(const Piece& p, const std::vector<Span>& spans, SplitBehavior behavior, bool invert,
                 std::vector<Piece>& out) {
  for (const Cut& c : cuts_of(spans, behavior, invert)) {
    if (c.remove || c.end <= c.start) continue;
    out.push_back(slice(p, c.start, c.end));
  }
}

Status split_piece(const Piece& p, const std::vector<Span>& spans, SplitBehavior behavior, bool invert,
                   const PieceSink& emit) {
  if (behavior == SplitBehavior::isolated) {
    // Every span is its own slice: no need for the cut list.
    for (const Span& s : spans) {
      if (s.end <= s.start) continue;
      Piece part = slice(p, s.start, s.end);
      DAY0_RETURN_IF_ERROR(emit(part));
    }
    return Status::ok();
  }
  for (const Cut& c : cuts_of(spans, behavior, invert)) {
    if (c.remove || c.end <= c.start) continue;
    Piece part = slice(p, c.start, c.end);
    DAY0_RETURN_IF_ERROR(emit(part));
  }
  return Status::ok();
}

void replace_spans(Piece& p, const std::vector<Span>& spans, std::string_view content) {
  std::string text;
  text.reserve(p.text.size());
  std::vector<std::uint32_t> align;
  if (p.tracked) align.reserve(p.text.size());
  for (const Span& s : spans) {
    if (!s.is_match) {
      text.append(p.text, s.start, s.end - s.start);
      if (p.tracked)
        align.insert(align.end(), p.align.begin() + static_cast<std::ptrdiff_t>(s.start),
                     p.align.begin() + static_cast<std::ptrdiff_t>(s.end));
      continue;
    }
    text.append(content);
    // Inserted after the removed match: aligned with its last byte (the piece's start when the
    // match is empty at offset 0).
    if (p.tracked) align.insert(align.end(), content.size(), s.end > 0 ? p.align[s.end - 1] : p.shift);
  }
  p.text = std::move(text);
  p.align = std::move(align);
}

void prepend(Piece& p, std::string_view s) {
  if (p.text.empty() || s.empty()) return;
  p.text.insert(0, s);
  if (p.tracked) p.align.insert(p.align.begin(), s.size(), p.align[0]);
}

void append(Piece& p, std::string_view s) {
  if (p.text.empty() || s.empty()) return;
  p.text.append(s);
  if (p.tracked) p.align.insert(p.align.end(), s.size(), p.align.back());
}

void strip(Piece& p, bool left, bool right) {
  std::size_t begin = 0;
  std::size_t end = p.text.size();
  if (left) {
    while (begin < p.text.size()) {
      std::size_t next = begin;
      if (!is_white_space(next_code_point(p.text, next))) break;
      begin = next;
    }
  }
  if (right) {
    // Walk back character by character.
    while (end > begin) {
      std::size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(p.text[start]) & 0xC0) == 0x80) --start;
      std::size_t i = start;
      if (!is_white_space(next_code_point(p.text, i))) break;
      end = start;
    }
  }
  if (begin == 0 && end == p.text.size()) return;
  p.text = p.text.substr(begin, end - begin);
  if (p.tracked)
    p.align = std::vector<std::uint32_t>(p.align.begin() + static_cast<std::ptrdiff_t>(begin),
                                         p.align.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace day0::tokenizer
