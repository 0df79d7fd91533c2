#pragma once
// Manifold-constrained hyper-connections (mHC) on the GPU, exactly as blocks::hc_collapse and
// blocks::hc_expand compute them (engine/blocks/hyper_connection.h): the residual is `hc`
// parallel streams [hc, H] per token, collapsed into a sublayer's input and expanded again with
// its output. fp32 throughout; fn is read as bf16. All pointers are device pointers; launchers
// queue on `stream` (no allocation, no synchronisation: CUDA-graph capturable) and return
// cudaGetLastError() after the launch, or cudaErrorInvalidValue for bad arguments.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

inline constexpr int kHcMaxStreams = 8;

// streams [T, hc, H] fp32; fn [(2 + hc) * hc, hc * H] bf16; base [(2 + hc) * hc] fp32;
// scale [3] fp32 -> input [T, H], post [T, hc], comb [T, hc, hc] (row i, column j):
//   mix  = fn @ (streams[t] / sqrt(mean(streams[t]^2) + rms_eps))   (RMSNorm over hc * H)
//   pre  = sigmoid(mix[0:hc] * scale[0] + base[0:hc]) + hc_eps
//   post = 2 * sigmoid(mix[hc:2hc] * scale[1] + base[hc:2hc])
//   comb = softmax over each row of mix[2hc:] * scale[2] + base[2hc:], + hc_eps, then columns
//          normalised, then sinkhorn_iters - 1 rounds of rows then columns (x / (sum + hc_eps))
//   input = sum_i pre[i] * streams[t, i]
// 1 <= hc <= kHcMaxStreams; input must not overlap streams. Few tokens split fn's columns over
// several CTAs whose partial sums pass through `input` (summed in a fixed order): the result
// does not depend on scheduling.
cudaError_t hc_collapse(const float* streams, int64_t T, int hc, int64_t H, const uint16_t* fn, const float* base,
                        const float* scale, int sinkhorn_iters, float rms_eps, float hc_eps, float* input, float* post,
                        float* comb, cudaStream_t stream);

// streams[t][i] = post[t][i] * y[t] + sum_j comb[t][j][i] * streams[t][j], in place.
// y [T, H]; post [T, hc]; comb [T, hc, hc]; streams [T, hc, H].
cudaError_t hc_expand(const float* y, const float* post, const float* comb, int64_t T, int hc, int64_t H,
                      float* streams, cudaStream_t stream);

// out[t] = (sum_i streams[t][i]) / hc, the head's input. streams [T, hc, H] -> out [T, H].
cudaError_t hc_mean(const float* streams, int64_t T, int hc, int64_t H, float* out, cudaStream_t stream);

}  // namespace day0::kernels
