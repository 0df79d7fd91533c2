#pragma once
// The DeepSeek-sparse-attention indexer of glm5_next, with k-pools: which cached positions each
// query of a sparse-attention (MLA) layer attends.
//
// Per token (x: the normed input of the attention site [H], q_resid: the MLA query latent):
//   key   = LayerNorm_1e-6(wk x)                   [d]   (weight and bias)
//   gate  = index_kpool_compress_gate x            [d]
// Pool j (complete once its kpool tokens are cached) has the key
//   pooled[c] = sum_i softmax_i(gate_i[c] + ape[i][c]) * key_i[c]     i over the pool's tokens
// A query at position p scores each complete pool j with (j + 1) * kpool <= p + 1:
//   q = wq_b q_resid [heads, d],  w = weights_proj x * heads^-0.5
//   score_j = sum_h w[h] * relu(q_h . pooled_j * d^-0.5)
// and attends the tokens of its min(index_topk / kpool, pools) best pools plus the incomplete
// tail [pools * kpool, p], which is always selected (so a context shorter than index_topk is
// attended densely). Keys, gates and pooled keys are cached per token / per pool and pools
// are completed incrementally as tokens arrive.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "day0/status.h"
#include "models/weights.h"

namespace day0::blocks {

struct IndexerConfig {
  std::int64_t hidden = 0, q_lora = 0, heads = 0, head_dim = 0, kpool = 0, topk = 0;
  // Selection row width for a context of `positions` tokens: at most min(topk, positions) tokens
  // of whole pools plus at most kpool - 1 tail tokens (bounded by the context, so a huge
  // index_topk costs nothing).
  std::int64_t width(std::int64_t positions) const { return std::min(topk, positions) + kpool - 1; }
};

struct IndexerWeights {
  cpu::Matrix wq_b;          // [heads * d, q_lora]
  cpu::Matrix wk;            // [d, H]
  cpu::Matrix k_norm_w;      // [1, d]
  cpu::Matrix k_norm_b;      // [1, d]
  cpu::Matrix weights_proj;  // [heads, H]
  cpu::Matrix ape;           // [kpool, d]  index_kpool_compress_ape
  cpu::Matrix gate;          // [d, H]      index_kpool_compress_gate
};

// prefix: e.g. "model.language_model.layers.3.self_attn.indexer.".
Result<IndexerWeights> bind_indexer(const models::WeightSource& weights, const IndexerConfig& config,
                                    const std::string& prefix);

// Per-session indexer state of one layer.
class IndexerCache {
 public:
  explicit IndexerCache(const IndexerConfig& config) : d_(config.head_dim), kpool_(config.kpool) {}
  std::int64_t length() const { return length_; }
  void truncate(std::int64_t tokens);
  std::uint64_t bytes() const { return (keys_.capacity() + gates_.capacity() + pooled_.capacity()) * sizeof(float); }

 private:
  friend void indexer_select(ThreadPool&, const IndexerConfig&, const IndexerWeights&, IndexerCache&, const float*,
                             const float*, std::int64_t, std::int32_t*, std::int64_t, std::vector<float>*);
  std::int64_t d_, kpool_;
  std::int64_t length_ = 0;
  std::vector<float> keys_;    // [length, d]
  std::vector<float> gates_;   // [length, d]
  std::vector<float> pooled_;  // [length / kpool, d]
};

// Feeds T tokens at positions cache.length() ... and writes each one's selection:
// selection [T, width] token positions (selected pools best first, then the tail), -1 padded;
// width >= config.width(cache.length() + T). x: [T, H] the normed attention input;
// q_resid: [T, q_lora]. With `scores`, the pool scores behind the selections are appended to it:
// for each token in order, the scores of the (p + 1) / kpool pools it sees (p its position).
void indexer_select(ThreadPool& pool, const IndexerConfig& config, const IndexerWeights& weights, IndexerCache& cache,
                    const float* x, const float* q_resid, std::int64_t T, std::int32_t* selection, std::int64_t width,
                    std::vector<float>* scores = nullptr);

// One pool's score for one query: sum_h w[h] * heads^-0.5 * relu(q_h . pooled * d^-0.5), the
// heads' terms added in order. q: [heads, d]; w: [heads]; pooled: [d].
float indexer_pool_score(const float* q, const float* w, const float* pooled, std::int64_t heads, std::int64_t d);

}  // namespace day0::blocks
