#pragma once
// Token sampling: penalties, then greedy or temperature with top-k, top-p and min-p filters,
// drawn from a seeded generator so a (seed, context) pair always gives the same tokens.
#include <cstdint>
#include <span>
#include <vector>

#include "day0/engine.h"

namespace day0::runtime {

class Sampler {
 public:
  explicit Sampler(const Sampling& sampling);

  // Picks the next token from `logits` ([vocab], modified in place) given the tokens seen so far
  // (the context and what was generated), used by the penalties.
  std::int32_t sample(std::span<float> logits, std::span<const std::int32_t> seen);

  // What sample() draws from: the tokens that survive the penalties and filters, highest logit
  // first (lower id first among equals), with their probabilities (summing to 1); greedy gives
  // the one token with probability 1. Valid until the next call.
  struct Candidates {
    std::span<const std::int32_t> ids;
    std::span<const float> probs;
  };
  Candidates candidates(std::span<float> logits, std::span<const std::int32_t> seen);

 private:
  double uniform();  // [0, 1)
  // Penalties and filters: the kept tokens in order_[0..keep) with unnormalised probabilities in
  // probs_ (highest first); returns keep.
  std::size_t select(std::span<float> logits, std::span<const std::int32_t> seen);

  Sampling s_;
  std::uint64_t state_;
  std::vector<std::int32_t> order_;
  std::vector<float> probs_;
  std::vector<float> normalized_;
  std::vector<std::uint8_t> seen_mask_;
};

}  // namespace day0::runtime
