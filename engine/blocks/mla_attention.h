#pragma once
// Multi-head latent attention (MLA) as glm5_next's sparse-attention layers run it: NoPE, with a
// low-rank query. Per token (h: the normed input of the attention site [H]):
//   q_resid = RMSNorm(q_a_proj h)                         [q_lora]  (also read by the indexer)
//   q       = q_b_proj q_resid                            [heads, nope]
//   c       = RMSNorm(kv_a_proj_with_mqa h)               [kv_lora] the cached latent
//   k_h, v_h = the two parts of kv_b_proj c               [nope], [v_dim] per head
//   out     = o_proj(concat_h sum_j softmax_j(q_h . k_hj / sqrt(nope)) v_hj)
// over the positions j the indexer selected (or every position <= the query's, densely).
// Only the latent c is cached. kv_b is absorbed: q_h . k_hj = (W_kh^T q_h) . c_j and
// sum_j p_j v_hj = W_vh (sum_j p_j c_j), so keys and values are never expanded.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "day0/status.h"
#include "models/weights.h"

namespace day0::blocks {

struct MlaConfig {
  std::int64_t hidden = 0, heads = 0, q_lora = 0, kv_lora = 0, nope = 0, v_dim = 0;
  bool bias = false;  // attention_bias: q_a_proj, kv_a_proj_with_mqa and o_proj carry biases
  float rms_eps = 1e-5f;
};

struct MlaWeights {
  cpu::Matrix q_a, q_a_bias, q_a_norm;     // [q_lora, H], [1, q_lora], [1, q_lora]
  cpu::Matrix q_b;                         // [heads * nope, q_lora]
  cpu::Matrix kv_a, kv_a_bias, kv_a_norm;  // [kv_lora, H], [1, kv_lora], [1, kv_lora]
  cpu::Matrix kv_b;                        // [heads * (nope + v_dim), kv_lora]
  cpu::Matrix o, o_bias;                   // [H, heads * v_dim], [1, H]
};

// prefix: e.g. "model.language_model.layers.3.self_attn.".
Result<MlaWeights> bind_mla(const models::WeightSource& weights, const MlaConfig& config, const std::string& prefix);

// The per-session latent cache of one layer: [length, kv_lora] floats.
class MlaCache {
 public:
  explicit MlaCache(std::int64_t kv_lora) : kv_lora_(kv_lora) {}
  std::int64_t length() const { return static_cast<std::int64_t>(latent_.size()) / kv_lora_; }
  void append(const float* latent, std::int64_t T) { latent_.insert(latent_.end(), latent, latent + T * kv_lora_); }
  void truncate(std::int64_t tokens) {
    latent_.resize(static_cast<std::size_t>(std::min(length(), std::max<std::int64_t>(tokens, 0)) * kv_lora_));
  }
  const float* at(std::int64_t position) const { return latent_.data() + position * kv_lora_; }
  std::uint64_t bytes() const { return latent_.capacity() * sizeof(float); }

 private:
  std::int64_t kv_lora_;
  std::vector<float> latent_;
};

// h: [T, H] -> q_resid [T, q_lora], latent [T, kv_lora].
void mla_project(ThreadPool& pool, const MlaConfig& config, const MlaWeights& weights, const float* h, std::int64_t T,
                 float* q_resid, float* latent);

// Queries at positions pos0 ... pos0 + T - 1 (their latents already in `cache`) -> out [T, H]
// after o_proj. selection: [T, width] positions (-1 = none) as the indexer writes them, or null
// for dense causal attention.
void mla_attend(ThreadPool& pool, const MlaConfig& config, const MlaWeights& weights, const MlaCache& cache,
                const float* q_resid, std::int64_t T, std::int64_t pos0, const std::int32_t* selection,
                std::int64_t width, float* out);

}  // namespace day0::blocks
