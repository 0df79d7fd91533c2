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

// hi[i] = bf16(x[i]), lo[i] = bf16(x[i] - hi[i]) for n values: x = hi + lo to about 2^-16 of x,
// so two bf16 GEMMs (hi, then lo accumulated) give near-fp32 products of fp32 activations.
cudaError_t split_bf16(const float* x, int64_t n, uint16_t* hi, uint16_t* lo, cudaStream_t stream);

// out[t, c, :] = x[t, :] for c < copies: x [T, N] -> out [T, copies, N] (the hyper-connection
// streams all start as the embedding).
cudaError_t repeat_rows(const float* x, int64_t T, int64_t N, int copies, float* out, cudaStream_t stream);

// cache[*position + t, :] = bf16(x[t, :]) for t < T: x [T, N] fp32 appended to a [capacity, N]
// bf16 cache at the position a decode graph reads from device memory (rows past capacity are
// not written).
cudaError_t store_rows_bf16(const float* x, int64_t T, int64_t N, const int32_t* position, int64_t capacity,
                            uint16_t* cache, cudaStream_t stream);

}  // namespace day0::kernels
