#pragma once
// The loaded pipeline behind day0::Tokenizer: added tokens -> normalizer -> pre-tokenizer -> BPE
// -> post-processor, and the decoder chain.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_vocabulary.h"
#include "tokenizer/bpe.h"
#include "tokenizer/decoders.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processors.h"
#include "tokenizer/pre_tokenizers.h"

namespace day0::tokenizer {

struct TokenizerImpl {
  std::string origin;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<BpeModel> model;
  AddedVocabulary added;
  std::unique_ptr<PostProcessor> post_processor;
  DecoderPipeline decoder;
  bool track_offsets = false;  // a pre-tokenizer reads original offsets

  static Result<std::shared_ptr<const TokenizerImpl>> from_json(const json& root, const std::string& origin);

  Result<std::vector<std::uint32_t>> encode(std::string_view text, bool add_special_tokens) const;
  // The token string of `id` (added tokens first, then the model), or nullptr for an unknown id.
  const std::string* token_of(std::uint32_t id) const;
  // The string a decoder sees for `id`, or nullptr when the id is unknown or skipped.
  const std::string* decoder_input(std::uint32_t id, bool skip_special_tokens) const;
  std::string decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens) const;
};

}  // namespace day0::tokenizer
