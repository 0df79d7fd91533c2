#pragma once
// Dense bf16 GEMV for decode (a few tokens): a warp takes two output rows at a time, 16-byte
// weight loads (a warp reads 512 contiguous bytes of a row per load), the input row in shared
// memory as fp32, a grid of at most 8 eight-warp CTAs per multiprocessor looping over the rows so
// the input is staged once per CTA. Launched with programmatic dependent launch on a created
// stream: a warp loads its first round of weights, and what its first rows' epilogue reads (bias,
// y when accumulating, the RoPE position), before it waits for the previous kernel, so those
// must not be written by the kernel launched just before (they are weights, or written earlier).
// cuBLASLt is slower at these shapes (docs/perf-notes.md).
#include <cstdint>

#include <cuda_runtime_api.h>

#include "rope.h"

namespace day0::kernels {

// y[t, n] = (accumulate ? y[t, n] : 0) + sum_k W[n, k] x[t, k] + (bias ? bias[n] : 0).
// W: [N, K] bf16 (16-byte aligned, K % 8 == 0); x: [T, K] fp32; bias: [N] fp32 or null;
// y: [T, N] fp32.
cudaError_t gemv_bf16(const uint16_t* W, const float* bias, const float* x, int64_t T, int64_t N, int64_t K,
                      bool accumulate, float* y, cudaStream_t stream);

// The same with the input RMS-normed on the way in (the decode step's norms fused into the
// projection that reads them): x'[t, k] = x[t, k] / sqrt(mean_k x[t]^2 + eps) * norm[k] (norm:
// [K] bf16), as rms_norm() computes it in fp32; y = W x' + bias.
cudaError_t gemv_bf16_rms_normed(const uint16_t* W, const float* bias, const float* x, const uint16_t* norm, float eps,
                                 int64_t T, int64_t N, int64_t K, float* y, cudaStream_t stream);

// The decode step's q/k/v projection with its input RMSNorm and rope_qkv() fused: W the fused
// [(heads + 2 kv_heads) d, K] rows, bias its [rows] fp32; the rotated q goes to r.q_out, k and v
// into the cache at *r.position + t for the r.T rows of x (r.qkv is not read).
cudaError_t gemv_bf16_qkv_rope(const uint16_t* W, const float* bias, const float* x, const uint16_t* norm, float eps,
                               int64_t K, const RopeQkvArgs& rope, cudaStream_t stream);

}  // namespace day0::kernels
