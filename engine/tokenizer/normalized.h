#pragma once
// A piece of the text on its way through the pipeline, as tokenizers' NormalizedString keeps it:
// the current (normalized) bytes and, when the pipeline needs it, for each byte the offset in the
// original text of the character it came from. Only Metaspace's prepend_scheme "first" reads
// offsets (does this piece start at original offset 0?), so tracking is off unless a pipeline has
// one; the transforms below then just edit text.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace day0::tokenizer {

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

struct Piece {
  std::string text;
  std::vector<std::uint32_t> align;  // per byte of text when tracked, else empty
  std::uint32_t shift = 0;           // original offset of the piece's start (offsets_original().0)
  std::int64_t added_id = -1;        // an added token's id once matched; such pieces are final
  bool tracked = false;

  bool is_final() const { return added_id >= 0; }
};

// A slice [start, end) of `p` (a new NormalizedString in tokenizers: its shift is the original
// offset of its first byte).
Piece slice(const Piece& p, std::size_t start, std::size_t end);

// Applies `behavior` to the matches of `spans` (from Pattern::find_matches or a character test)
// and appends the non-empty resulting slices to `out`.
void split_piece(const Piece& p, const std::vector<Span>& spans, SplitBehavior behavior, bool invert,
                 std::vector<Piece>& out);
// The same, handing each slice to `emit` as it is cut (stops at the first error).
using PieceSink = std::function<Status(Piece&)>;
Status split_piece(const Piece& p, const std::vector<Span>& spans, SplitBehavior behavior, bool invert,
                   const PieceSink& emit);

// Edits, each keeping `align` as tokenizers' transform_range does.
void replace_spans(Piece& p, const std::vector<Span>& spans, std::string_view content);  // matches -> content
void prepend(Piece& p, std::string_view s);  // no-op on an empty piece, as in tokenizers
void append(Piece& p, std::string_view s);
// Replaces each character by map(cp, out) (possibly several or no characters).
template <typename Map>
void map_chars(Piece& p, Map&& map);
// Removes leading/trailing White_Space characters.
void strip(Piece& p, bool left, bool right);

}  // namespace day0::tokenizer

#include "tokenizer/normalized_inl.h"
