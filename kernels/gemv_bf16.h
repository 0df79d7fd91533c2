#pragma once
// Dense bf16 GEMV for decode (a few tokens): one warp per output row, 16-byte weight loads, the
// input in shared memory as fp32. cuBLASLt is slower at these shapes (docs/perf-notes.md).
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// y[t, n] = (accumulate ? y[t, n] : 0) + sum_k W[n, k] x[t, k] + (bias ? bias[n] : 0).
// W: [N, K] bf16 (16-byte aligned, K % 8 == 0); x: [T, K] fp32; bias: [N] fp32 or null;
// y: [T, N] fp32.
cudaError_t gemv_bf16(const uint16_t* W, const float* bias, const float* x, int64_t T, int64_t N, int64_t K,
                      bool accumulate, float* y, cudaStream_t stream);

}  // namespace day0::kernels
