#pragma once
// Manifold-constrained hyper-connections (mHC), as glm5_next uses them around every attention
// and MLP site. The residual is `hc` parallel streams [hc, H] per token. At a site:
//   flat   = streams / sqrt(mean(streams^2) + rms_eps)            (unweighted RMSNorm over hc*H)
//   mix    = fn @ flat                                             [(2 + hc) * hc]
//   pre    = sigmoid(mix[0:hc] * scale[0] + base[0:hc]) + hc_eps   [hc]
//   post   = 2 * sigmoid(mix[hc:2hc] * scale[1] + base[hc:2hc])    [hc]
//   comb   = softmax_j(mix[2hc:] * scale[2] + base[2hc:]) + hc_eps [hc, hc] (row i, column j)
//            then columns normalised (c / (column sum + hc_eps)), then hc_sinkhorn_iters - 1
//            rounds of rows then columns, exactly in transformers' order
//   input  = sum_i pre[i] * streams[i]                             [H], the sublayer's input
// and after the sublayer computed y [H]:
//   streams'[i] = post[i] * y + sum_j comb[j][i] * streams[j]
#include <cstdint>
#include <string>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "day0/status.h"
#include "models/weights.h"

namespace day0::blocks {

struct HcConfig {
  std::int64_t streams = 0;  // hc_mult
  std::int64_t hidden = 0;
  std::int64_t sinkhorn_iters = 20;
  float rms_eps = 1e-5f;
  float hc_eps = 1e-6f;

  std::int64_t mix() const { return (2 + streams) * streams; }
};

struct HcWeights {
  cpu::Matrix fn;     // [(2 + hc) * hc, hc * H]
  cpu::Matrix base;   // [1, (2 + hc) * hc]
  cpu::Matrix scale;  // [1, 3]
};

// prefix: e.g. "model.language_model.layers.3.hc_attn_" (tensors fn, base, scale).
Result<HcWeights> bind_hyper_connection(const models::WeightSource& weights, const HcConfig& config,
                                        const std::string& prefix);

// streams: [T, hc, H]. Writes input [T, H], post [T, hc] and comb [T, hc, hc].
void hc_collapse(ThreadPool& pool, const HcConfig& config, const HcWeights& weights, const float* streams,
                 std::int64_t T, float* input, float* post, float* comb);

// streams [T, hc, H] <- post * y + comb^T streams, y: [T, H].
void hc_expand(const HcConfig& config, const float* y, const float* post, const float* comb, std::int64_t T,
               float* streams);

}  // namespace day0::blocks
