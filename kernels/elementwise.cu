#include "elementwise.h"

#include "decode_trace.cuh"
#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kEmbedThreads = 256;

// One CTA per token. Rows of whole 16-byte words (hidden % 8 == 0, aligned) go as one round of
// 16-byte loads per thread (up to 4 words each: 8,192 values) before any store, so a decode
// step's lookup costs one memory latency rather than one per loop step.
__global__ void __launch_bounds__(kEmbedThreads)
    embedding_kernel(const uint16_t* __restrict__ table, int64_t hidden, const int32_t* __restrict__ ids,
                     float* __restrict__ out) {
  DAY0_TRACE_SCOPE(trace::embed);
  constexpr int kU = 4;
  const int64_t t = blockIdx.x;
  const uint16_t* row = table + static_cast<int64_t>(ids[t]) * hidden;
  float* dst = out + t * hidden;
  const bool vec = (hidden & 7) == 0 && (reinterpret_cast<uintptr_t>(table) & 15u) == 0 &&
                   (reinterpret_cast<uintptr_t>(out) & 15u) == 0;
  const int64_t words = vec ? hidden / 8 : 0;
  for (int64_t base = 0; base < words; base += kEmbedThreads * kU) {
    uint4 w[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int64_t i = base + threadIdx.x + u * kEmbedThreads;
      w[u] = i < words ? __ldg(reinterpret_cast<const uint4*>(row) + i) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int64_t i = base + threadIdx.x + u * kEmbedThreads;
      if (i >= words) break;
      float4* o = reinterpret_cast<float4*>(dst + 8 * i);
      o[0] = make_float4(__uint_as_float(w[u].x << 16), __uint_as_float(w[u].x & 0xffff0000u),
                         __uint_as_float(w[u].y << 16), __uint_as_float(w[u].y & 0xffff0000u));
      o[1] = make_float4(__uint_as_float(w[u].z << 16), __uint_as_float(w[u].z & 0xffff0000u),
                         __uint_as_float(w[u].w << 16), __uint_as_float(w[u].w & 0xffff0000u));
    }
  }
  for (int64_t c = 8 * words + threadIdx.x; c < hidden; c += kEmbedThreads) dst[c] = detail::bf16_bits_to_float(row[c]);
}

__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t total, int64_t N) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += bias[i % N];
}

__global__ void split_bf16_kernel(const float* __restrict__ x, int64_t n, uint16_t* __restrict__ hi,
                                  uint16_t* __restrict__ lo) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint16_t h = detail::float_to_bf16_bits(x[i]);
    hi[i] = h;
    lo[i] = detail::float_to_bf16_bits(x[i] - detail::bf16_bits_to_float(h));
  }
}

__global__ void repeat_rows_kernel(const float* __restrict__ x, int64_t T, int64_t N, int copies,
                                   float* __restrict__ out) {
  const int64_t total = T * copies * N;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / (copies * N), n = i % N;
    out[i] = x[t * N + n];
  }
}

__global__ void store_rows_bf16_kernel(const float* __restrict__ x, int64_t T, int64_t N,
                                       const int32_t* __restrict__ position, int64_t capacity,
                                       uint16_t* __restrict__ cache) {
  const int64_t first = *position, total = T * N;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = first + i / N;
    if (row < capacity) cache[row * N + i % N] = detail::float_to_bf16_bits(x[i]);
  }
}

// A grid-stride launch over n values.
unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 8192 ? blocks : 8192);
}

}  // namespace

cudaError_t split_bf16(const float* x, int64_t n, uint16_t* hi, uint16_t* lo, cudaStream_t stream) {
  if (n < 0 || (n > 0 && (x == nullptr || hi == nullptr || lo == nullptr))) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  split_bf16_kernel<<<grid_for(n), 256, 0, stream>>>(x, n, hi, lo);
  return cudaGetLastError();
}

cudaError_t repeat_rows(const float* x, int64_t T, int64_t N, int copies, float* out, cudaStream_t stream) {
  if (T < 0 || N <= 0 || copies <= 0 || (T > 0 && (x == nullptr || out == nullptr))) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  repeat_rows_kernel<<<grid_for(T * copies * N), 256, 0, stream>>>(x, T, N, copies, out);
  return cudaGetLastError();
}

cudaError_t store_rows_bf16(const float* x, int64_t T, int64_t N, const int32_t* position, int64_t capacity,
                            uint16_t* cache, cudaStream_t stream) {
  if (T < 0 || N <= 0 || capacity < 0 || (T > 0 && (x == nullptr || position == nullptr || cache == nullptr)))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  store_rows_bf16_kernel<<<grid_for(T * N), 256, 0, stream>>>(x, T, N, position, capacity, cache);
  return cudaGetLastError();
}

cudaError_t embedding_lookup(const uint16_t* table, int64_t hidden, const int32_t* ids, int64_t T, float* out,
                             cudaStream_t stream) {
  if (T < 0 || hidden <= 0 || (T > 0 && (table == nullptr || ids == nullptr || out == nullptr)))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  embedding_kernel<<<static_cast<unsigned>(T), kEmbedThreads, 0, stream>>>(table, hidden, ids, out);
  return cudaGetLastError();
}

cudaError_t add_bias_rows(float* y, const float* bias, int64_t T, int64_t N, cudaStream_t stream) {
  if (T < 0 || N <= 0 || (T > 0 && (y == nullptr || bias == nullptr))) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  const int64_t total = T * N;
  const int64_t blocks = (total + 255) / 256;
  add_bias_kernel<<<static_cast<unsigned>(blocks < 8192 ? blocks : 8192), 256, 0, stream>>>(y, bias, total, N);
  return cudaGetLastError();
}

DAY0_TRACE_SETTER(trace_set_elementwise)

}  // namespace day0::kernels
