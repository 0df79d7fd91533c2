#pragma once
// Hugging Face tokenizer.json (BPE models: byte-level like GPT-2 / o200k / GLM / Qwen, and
// Metaspace + byte_fallback like Llama / Mistral), token-for-token identical to the `tokenizers`
// library. Encoding never fails on any byte string: raw bytes that are not UTF-8 are read as
// Python reads them with errors="replace" (each maximal invalid subpart becomes U+FFFD) before
// tokenizing, which is what `tokenizers` sees when handed such text.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "day0/status.h"

namespace day0 {

namespace tokenizer {
struct TokenizerImpl;
}

class Tokenizer {
 public:
  // Reads `path` (a tokenizer.json, or a folder holding one).
  static Result<Tokenizer> load(const std::filesystem::path& path);
  // Parses tokenizer.json text; `origin` names it in error messages.
  static Result<Tokenizer> from_json(std::string_view json_text, const std::string& origin);

  // Ids of `text` (any bytes). `add_special_tokens` runs the post-processor (BOS/EOS templates).
  // Fails only when the tokenizer itself is unusable for this input (an unk_token missing from
  // the vocabulary, as `tokenizers` fails).
  Result<std::vector<std::uint32_t>> encode(std::string_view text, bool add_special_tokens = true) const;
  // The tokens' strings as the model sees them ("Ġhello", "▁the", "<0x0A>"), one per id.
  std::vector<std::string> id_strings(std::span<const std::uint32_t> ids) const;

  // Text of `ids` through the tokenizer's decoder. Unknown ids are skipped, as `tokenizers` does.
  std::string decode(std::span<const std::uint32_t> ids, bool skip_special_tokens = false) const;

  std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(std::uint32_t id) const;
  bool is_special(std::uint32_t id) const;
  // One past the largest id (model vocabulary and added tokens).
  std::size_t vocab_size() const;

  const tokenizer::TokenizerImpl& impl() const { return *impl_; }

 private:
  friend class StreamDecoder;
  explicit Tokenizer(std::shared_ptr<const tokenizer::TokenizerImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const tokenizer::TokenizerImpl> impl_;
};

// Incremental detokenizer: feed ids one at a time as a model generates them and get text pieces.
// Pieces never split a UTF-8 character and never drop bytes: the concatenation of every feed()
// and the final flush() equals tokenizer.decode(all ids, skip_special_tokens). Text that later
// ids can still change (an unfinished UTF-8 sequence, a run of <0xNN> byte tokens, characters a
// decoder may strip at the end) is held back until it is settled.
class StreamDecoder {
 public:
  StreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false);
  ~StreamDecoder();
  StreamDecoder(StreamDecoder&&) noexcept;
  StreamDecoder& operator=(StreamDecoder&&) noexcept;

  // Text settled by this id (often empty).
  std::string feed(std::uint32_t id);
  // Everything still held back, decoded as the full decode ends (U+FFFD for unfinished bytes).
  // The decoder then starts afresh.
  std::string flush();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace day0
