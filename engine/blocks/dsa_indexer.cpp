#include "blocks/dsa_indexer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace day0::blocks {

Result<IndexerWeights> bind_indexer(const models::WeightSource& weights, const IndexerConfig& c,
                                    const std::string& prefix) {
  IndexerWeights w;
  DAY0_ASSIGN_OR_RETURN(w.wq_b, weights.matrix(prefix + "wq_b.weight", c.heads * c.head_dim, c.q_lora));
  DAY0_ASSIGN_OR_RETURN(w.wk, weights.matrix(prefix + "wk.weight", c.head_dim, c.hidden));
  DAY0_ASSIGN_OR_RETURN(w.k_norm_w, weights.vector(prefix + "k_norm.weight", c.head_dim));
  DAY0_ASSIGN_OR_RETURN(w.k_norm_b, weights.vector(prefix + "k_norm.bias", c.head_dim));
  DAY0_ASSIGN_OR_RETURN(w.weights_proj, weights.matrix(prefix + "weights_proj.weight", c.heads, c.hidden));
  DAY0_ASSIGN_OR_RETURN(w.ape, weights.matrix(prefix + "index_kpool_compress_ape", c.kpool, c.head_dim));
  DAY0_ASSIGN_OR_RETURN(w.gate, weights.matrix(prefix + "index_kpool_compress_gate", c.head_dim, c.hidden));
  return w;
}

void IndexerCache::truncate(std::int64_t tokens) {
  length_ = std::min(length_, std::max<std::int64_t>(tokens, 0));
  keys_.resize(static_cast<std::size_t>(length_ * d_));
  gates_.resize(keys_.size());
  pooled_.resize(static_cast<std::size_t>((length_ / kpool_) * d_));
}

float indexer_pool_score(const float* q, const float* w, const float* pooled, std::int64_t heads, std::int64_t d) {
  const float head_scale = 1.0f / std::sqrt(static_cast<float>(heads));
  const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(d));
  float s = 0;
  for (std::int64_t h = 0; h < heads; ++h) {
    const float dot = cpu::dot(q + h * d, pooled, d);
    s += w[h] * head_scale * std::max(dot * softmax_scale, 0.0f);
  }
  return s;
}

void indexer_select(ThreadPool& pool, const IndexerConfig& c, const IndexerWeights& w, IndexerCache& cache,
                    const float* x, const float* q_resid, std::int64_t T, std::int32_t* selection, std::int64_t width,
                    std::vector<float>* scores_out) {
  const std::int64_t d = c.head_dim, nh = c.heads, kp = c.kpool, pos0 = cache.length_;

  // New keys (LayerNorm over d, eps 1e-6) and gate scores, appended to the cache.
  std::vector<float> k(static_cast<std::size_t>(T * d)), g(k.size());
  cpu::linear(pool, x, T, w.wk, nullptr, k.data());
  cpu::linear(pool, x, T, w.gate, nullptr, g.data());
  std::vector<float> ln_w(static_cast<std::size_t>(d)), ln_b(ln_w.size());
  cpu::decode_row(w.k_norm_w, 0, ln_w.data());
  cpu::decode_row(w.k_norm_b, 0, ln_b.data());
  for (std::int64_t t = 0; t < T; ++t) {
    float* kt = k.data() + t * d;
    float mean = 0;
    for (std::int64_t i = 0; i < d; ++i) mean += kt[i];
    mean /= static_cast<float>(d);
    float var = 0;
    for (std::int64_t i = 0; i < d; ++i) var += (kt[i] - mean) * (kt[i] - mean);
    var /= static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(var + 1e-6f);
    for (std::int64_t i = 0; i < d; ++i)
      kt[i] = (kt[i] - mean) * inv * ln_w[static_cast<std::size_t>(i)] + ln_b[static_cast<std::size_t>(i)];
  }
  cache.keys_.insert(cache.keys_.end(), k.begin(), k.end());
  cache.gates_.insert(cache.gates_.end(), g.begin(), g.end());
  cache.length_ = pos0 + T;

  // Pools completed by these tokens: a softmax over the pool's tokens per channel.
  std::vector<float> ape(static_cast<std::size_t>(kp * d));
  for (std::int64_t i = 0; i < kp; ++i) cpu::decode_row(w.ape, i, ape.data() + i * d);
  const std::int64_t pools_done = static_cast<std::int64_t>(cache.pooled_.size()) / d;
  const std::int64_t pools_now = cache.length_ / kp;
  cache.pooled_.resize(static_cast<std::size_t>(pools_now * d));
  for (std::int64_t p = pools_done; p < pools_now; ++p) {
    float* out = cache.pooled_.data() + p * d;
    for (std::int64_t ch = 0; ch < d; ++ch) {
      float top = -INFINITY;
      for (std::int64_t i = 0; i < kp; ++i)
        top = std::max(top, cache.gates_[static_cast<std::size_t>((p * kp + i) * d + ch)] +
                                ape[static_cast<std::size_t>(i * d + ch)]);
      float z = 0;
      for (std::int64_t i = 0; i < kp; ++i)
        z += std::exp(cache.gates_[static_cast<std::size_t>((p * kp + i) * d + ch)] +
                      ape[static_cast<std::size_t>(i * d + ch)] - top);
      // sum_i (e_i / z) * key_i: the reference normalises before the weighted sum.
      float acc = 0;
      for (std::int64_t i = 0; i < kp; ++i) {
        const float e = std::exp(cache.gates_[static_cast<std::size_t>((p * kp + i) * d + ch)] +
                                 ape[static_cast<std::size_t>(i * d + ch)] - top);
        acc += (e / z) * cache.keys_[static_cast<std::size_t>((p * kp + i) * d + ch)];
      }
      out[ch] = acc;
    }
  }

  // Queries.
  std::vector<float> q(static_cast<std::size_t>(T * nh * d)), hw(static_cast<std::size_t>(T * nh));
  cpu::linear(pool, q_resid, T, w.wq_b, nullptr, q.data());
  cpu::linear(pool, x, T, w.weights_proj, nullptr, hw.data());
  const std::int64_t budget = c.topk / kp;
  // Where each token's scores go in scores_out (the rows are as long as the pools each sees).
  std::vector<std::size_t> score_at;
  if (scores_out != nullptr) {
    std::size_t n = scores_out->size();
    for (std::int64_t t = 0; t < T; ++t) {
      score_at.push_back(n);
      n += static_cast<std::size_t>((pos0 + t + 1) / kp);
    }
    scores_out->resize(n);
  }
  pool.parallel_for(static_cast<std::size_t>(T), 1, [&](std::size_t begin, std::size_t end) {
    std::vector<float> scores;
    std::vector<std::int32_t> order;
    for (std::size_t tt = begin; tt < end; ++tt) {
      const auto t = static_cast<std::int64_t>(tt);
      const std::int64_t p = pos0 + t, visible = (p + 1) / kp;
      scores.assign(static_cast<std::size_t>(visible), 0.0f);
      for (std::int64_t j = 0; j < visible; ++j)
        scores[static_cast<std::size_t>(j)] = indexer_pool_score(q.data() + t * nh * d, hw.data() + t * nh,
                                                                 cache.pooled_.data() + j * d, nh, d);
      if (scores_out != nullptr)
        std::copy(scores.begin(), scores.end(), scores_out->begin() + static_cast<std::ptrdiff_t>(score_at[tt]));
      const std::int64_t chosen = std::min(budget, visible);
      order.resize(static_cast<std::size_t>(visible));
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + chosen, order.end(), [&](std::int32_t a, std::int32_t b) {
        return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)] ||
               (scores[static_cast<std::size_t>(a)] == scores[static_cast<std::size_t>(b)] && a < b);
      });
      std::int32_t* row = selection + t * width;
      std::int64_t n = 0;
      for (std::int64_t j = 0; j < chosen; ++j)
        for (std::int64_t i = 0; i < kp; ++i)
          row[n++] = static_cast<std::int32_t>(order[static_cast<std::size_t>(j)] * kp + i);
      for (std::int64_t pos = visible * kp; pos <= p; ++pos) row[n++] = static_cast<std::int32_t>(pos);
      for (; n < width; ++n) row[n] = -1;
    }
  });
}

}  // namespace day0::blocks
