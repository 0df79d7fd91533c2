#include "elementwise.h"

#include "device_util.cuh"

namespace day0::kernels {
namespace {

__global__ void embedding_kernel(const uint16_t* __restrict__ table, int64_t hidden, const int32_t* __restrict__ ids,
                                 float* __restrict__ out) {
  const int64_t t = blockIdx.x;
  const uint16_t* row = table + static_cast<int64_t>(ids[t]) * hidden;
  for (int64_t c = threadIdx.x; c < hidden; c += blockDim.x) out[t * hidden + c] = detail::bf16_bits_to_float(row[c]);
}

__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t total, int64_t N) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += bias[i % N];
}

}  // namespace

cudaError_t embedding_lookup(const uint16_t* table, int64_t hidden, const int32_t* ids, int64_t T, float* out,
                             cudaStream_t stream) {
  if (T < 0 || hidden <= 0 || (T > 0 && (table == nullptr || ids == nullptr || out == nullptr)))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  embedding_kernel<<<static_cast<unsigned>(T), 256, 0, stream>>>(table, hidden, ids, out);
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

}  // namespace day0::kernels
