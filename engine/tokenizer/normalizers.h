#pragma once
// tokenizer.json "normalizer": NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace,
// Prepend, Append, ByteLevel and Sequence. Any other type is refused by name.
#include <memory>
#include <string>

#include "tokenizer/json_read.h"
#include "tokenizer/normalized.h"

namespace day0::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual Status normalize(Piece& piece) const = 0;
};

// {"String": s} or {"Regex": r} under obj["pattern"] (Split, Replace).
Result<std::shared_ptr<const Pattern>> parse_pattern(const json& obj, const std::string& path);

// Null JSON gives a null normalizer.
Result<std::unique_ptr<Normalizer>> parse_normalizer(const json& j, const std::string& path, int depth = 0);

}  // namespace day0::tokenizer
