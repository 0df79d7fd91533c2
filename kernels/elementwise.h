#pragma once
// Row-wise elementwise kernels of the forward pass: the embedding lookup and bias / residual
// additions. All pointers are device pointers; bf16 tensors are passed as uint16_t bit
// patterns. Launchers queue on `stream` and return cudaGetLastError() after the launch, or
// cudaErrorInvalidValue for bad arguments (nothing launched).
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// out[t, :] = float(table[ids[t], :]).  table: [vocab, hidden] bf16; ids: [T] (each in
// [0, vocab), checked by the caller); out: [T, hidden] fp32.
cudaError_t embedding_lookup(const uint16_t* table, int64_t hidden, const int32_t* ids, int64_t T, float* out,
                             cudaStream_t stream);

// y[t, n] += bias[n].  y: [T, N] fp32; bias: [N] fp32.
cudaError_t add_bias_rows(float* y, const float* bias, int64_t T, int64_t N, cudaStream_t stream);

}  // namespace day0::kernels
