#include "gemv_bf16.h"

#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kWarps = 8;

// Eight bf16 weights (one 16-byte word) dotted with eight fp32 inputs.
__device__ __forceinline__ float dot8(const uint4& w, const float* x) {
  const float4 x0 = *reinterpret_cast<const float4*>(x);
  const float4 x1 = *reinterpret_cast<const float4*>(x + 4);
  float acc = __uint_as_float(w.x << 16) * x0.x + __uint_as_float(w.x & 0xffff0000u) * x0.y;
  acc += __uint_as_float(w.y << 16) * x0.z + __uint_as_float(w.y & 0xffff0000u) * x0.w;
  acc += __uint_as_float(w.z << 16) * x1.x + __uint_as_float(w.z & 0xffff0000u) * x1.y;
  acc += __uint_as_float(w.w << 16) * x1.z + __uint_as_float(w.w & 0xffff0000u) * x1.w;
  return acc;
}

__global__ void __launch_bounds__(kWarps * 32)
    gemv_kernel(const uint4* __restrict__ W, const float* __restrict__ bias, const float* __restrict__ x, int64_t N,
                int64_t K, bool accumulate, float* __restrict__ y) {
  extern __shared__ float xs[];
  const int64_t t = blockIdx.y;
  for (int64_t c = threadIdx.x; c < K; c += blockDim.x) xs[c] = x[t * K + c];
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
  if (n >= N) return;
  const int64_t chunks = K / 8;
  const uint4* row = W + n * chunks;
  // Four 16-byte loads in flight per lane, then the tail.
  float acc = 0.0f;
  int64_t c = lane;
  for (; c + 96 < chunks; c += 128) {
    uint4 w[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) w[u] = __ldg(row + c + 32 * u);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc += dot8(w[u], xs + (c + 32 * u) * 8);
  }
  for (; c < chunks; c += 32) acc += dot8(__ldg(row + c), xs + c * 8);
  acc = detail::warp_sum(acc);
  if (lane != 0) return;
  if (bias != nullptr) acc += bias[n];
  float* out = y + t * N + n;
  *out = accumulate ? *out + acc : acc;
}

}  // namespace

cudaError_t gemv_bf16(const uint16_t* W, const float* bias, const float* x, int64_t T, int64_t N, int64_t K,
                      bool accumulate, float* y, cudaStream_t stream) {
  if (T < 0 || N <= 0 || K <= 0 || K % 8 != 0 || T > 65535) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (W == nullptr || x == nullptr || y == nullptr || !detail::aligned16(W)) return cudaErrorInvalidValue;
  const size_t smem = sizeof(float) * static_cast<size_t>(K);
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(gemv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>((N + kWarps - 1) / kWarps), static_cast<unsigned>(T));
  gemv_kernel<<<grid, kWarps * 32, smem, stream>>>(reinterpret_cast<const uint4*>(W), bias, x, N, K, accumulate, y);
  return cudaGetLastError();
}

}  // namespace day0::kernels
