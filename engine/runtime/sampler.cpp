#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace day0::runtime {

Sampler::Sampler(const Sampling& sampling) : s_(sampling), state_(sampling.seed ^ 0x9E3779B97F4A7C15ull) {}

double Sampler::uniform() {
  // splitmix64: a fixed, platform-independent sequence per seed.
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

std::size_t Sampler::select(std::span<float> logits, std::span<const std::int32_t> seen) {
  const auto vocab = static_cast<std::int32_t>(logits.size());
  if (s_.repetition_penalty != 1.0f || s_.presence_penalty != 0.0f) {
    seen_mask_.assign(static_cast<std::size_t>(vocab), 0);
    for (const std::int32_t t : seen)
      if (t >= 0 && t < vocab) seen_mask_[static_cast<std::size_t>(t)] = 1;
    for (std::int32_t t = 0; t < vocab; ++t) {
      if (!seen_mask_[static_cast<std::size_t>(t)]) continue;
      float& l = logits[static_cast<std::size_t>(t)];
      if (s_.repetition_penalty != 1.0f) l = l > 0 ? l / s_.repetition_penalty : l * s_.repetition_penalty;
      l -= s_.presence_penalty;
    }
  }
  if (s_.temperature <= 0.0f) {
    // Greedy; equal logits pick the lowest id, as torch.argmax does.
    std::int32_t best = 0;
    for (std::int32_t t = 1; t < vocab; ++t)
      if (logits[static_cast<std::size_t>(t)] > logits[static_cast<std::size_t>(best)]) best = t;
    order_.assign(1, best);
    probs_.assign(1, 1.0f);
    return 1;
  }
  order_.resize(static_cast<std::size_t>(vocab));
  std::iota(order_.begin(), order_.end(), 0);
  const auto by_logit = [&](std::int32_t a, std::int32_t b) {
    const float la = logits[static_cast<std::size_t>(a)], lb = logits[static_cast<std::size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::size_t keep = order_.size();
  if (s_.top_k > 0 && static_cast<std::size_t>(s_.top_k) < keep) {
    keep = static_cast<std::size_t>(s_.top_k);
    std::partial_sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(keep), order_.end(), by_logit);
  } else {
    std::sort(order_.begin(), order_.end(), by_logit);
  }
  // Softmax over the kept candidates at the given temperature (sorted, highest first).
  probs_.resize(keep);
  const float top = logits[static_cast<std::size_t>(order_[0])] / s_.temperature;
  double z = 0;
  for (std::size_t i = 0; i < keep; ++i) {
    probs_[i] = std::exp(logits[static_cast<std::size_t>(order_[i])] / s_.temperature - top);
    z += probs_[i];
  }
  for (auto& p : probs_) p = static_cast<float>(p / z);
  if (s_.top_p < 1.0f) {
    double cumulative = 0;
    std::size_t n = 0;
    while (n < keep) {
      cumulative += probs_[n++];
      if (cumulative >= s_.top_p) break;
    }
    keep = std::max<std::size_t>(n, 1);
  }
  if (s_.min_p > 0.0f) {
    const float floor = probs_[0] * s_.min_p;
    std::size_t n = 1;
    while (n < keep && probs_[n] >= floor) ++n;
    keep = n;
  }
  return keep;
}

Sampler::Candidates Sampler::candidates(std::span<float> logits, std::span<const std::int32_t> seen) {
  const std::size_t keep = select(logits, seen);
  double total = 0;
  for (std::size_t i = 0; i < keep; ++i) total += probs_[i];
  normalized_.resize(keep);
  for (std::size_t i = 0; i < keep; ++i) normalized_[i] = static_cast<float>(probs_[i] / total);
  return {std::span<const std::int32_t>(order_.data(), keep), normalized_};
}

std::int32_t Sampler::sample(std::span<float> logits, std::span<const std::int32_t> seen) {
  const std::size_t keep = select(logits, seen);
  if (s_.temperature <= 0.0f) return order_[0];
  double total = 0;
  for (std::size_t i = 0; i < keep; ++i) total += probs_[i];
  double u = uniform() * total;
  for (std::size_t i = 0; i < keep; ++i) {
    u -= probs_[i];
    if (u < 0) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace day0::runtime
