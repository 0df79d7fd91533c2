// day0::StreamDecoder: the decoder chain run token by token (see decoders.h for the stages).
#include "day0/tokenizer.h"
#include "tokenizer/tokenizer_impl.h"

namespace day0 {

struct StreamDecoder::State {
  std::shared_ptr<const tokenizer::TokenizerImpl> impl;
  bool skip_special_tokens = false;
  // Empty when the chain cannot settle text before the end: then ids wait for flush().
  std::vector<std::unique_ptr<tokenizer::StreamStage>> stages;
  std::vector<std::uint32_t> held_ids;

  void reset() { stages = impl->decoder.make_stream(); }

  // Pushes `tokens` through stages [from, end) and returns the concatenated output.
  std::string run(std::vector<std::string> tokens, std::size_t from) {
    for (std::size_t s = from; s < stages.size(); ++s) {
      std::vector<std::string> next;
      for (std::string& t : tokens) stages[s]->push(std::move(t), next);
      tokens = std::move(next);
    }
    std::string out;
    for (const std::string& t : tokens) out += t;
    return out;
  }
};

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens) : state_(new State) {
  state_->impl = tokenizer.impl_;
  state_->skip_special_tokens = skip_special_tokens;
  state_->reset();
}

StreamDecoder::~StreamDecoder() = default;
StreamDecoder::StreamDecoder(StreamDecoder&&) noexcept = default;
StreamDecoder& StreamDecoder::operator=(StreamDecoder&&) noexcept = default;

std::string StreamDecoder::feed(std::uint32_t id) {
  State& s = *state_;
  if (s.stages.empty()) {
    s.held_ids.push_back(id);
    return {};
  }
  const std::string* token = s.impl->decoder_input(id, s.skip_special_tokens);
  if (token == nullptr) return {};
  return s.run({*token}, 0);
}

std::string StreamDecoder::flush() {
  State& s = *state_;
  std::string out;
  if (s.stages.empty()) {
    out = s.impl->decode(s.held_ids, s.skip_special_tokens);
    s.held_ids.clear();
  } else {
    // Finish each stage in order; what a stage releases still passes through the later ones.
    for (std::size_t k = 0; k < s.stages.size(); ++k) {
      std::vector<std::string> released;
      s.stages[k]->finish(released);
      out += s.run(std::move(released), k + 1);
    }
  }
  s.reset();
  return out;
}

}  // namespace day0
