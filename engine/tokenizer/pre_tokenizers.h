#pragma once
// tokenizer.json "pre_tokenizer": Split, ByteLevel, Digits, Metaspace, Whitespace,
// WhitespaceSplit, Punctuation, BertPreTokenizer, CharDelimiterSplit and Sequence. Any other type
// is refused by name.
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/json_read.h"
#include "tokenizer/normalized.h"

namespace day0::tokenizer {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces every non-final piece of `pieces` by its parts (empty parts dropped); final pieces
  // (added tokens) pass through untouched.
  virtual Status pre_tokenize(std::vector<Piece>& pieces) const = 0;
  // The same for one non-final piece, handing each non-empty part to `sink` in order instead of
  // collecting them (every pre-tokenizer works piece by piece, so the parts are those
  // pre_tokenize gives). The piece may be changed.
  virtual Status pre_tokenize_piece(Piece& piece, const PieceSink& sink) const;
  // Does this pre-tokenizer read original offsets (Metaspace with prepend_scheme "first")?
  virtual bool needs_offsets() const { return false; }
};

Result<std::unique_ptr<PreTokenizer>> parse_pre_tokenizer(const json& j, const std::string& path, int depth = 0);

}  // namespace day0::tokenizer
