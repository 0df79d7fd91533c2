#include "rms_norm.h"

#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    rms_norm_kernel(const float* __restrict__ x, int64_t D, const uint16_t* __restrict__ weight, float eps,
                    uint16_t* __restrict__ out_bf16, float* __restrict__ out_f32) {
  __shared__ float scratch[32];
  const float* row = x + blockIdx.x * D;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < D; c += kThreads) sum += row[c] * row[c];
  sum = detail::block_sum(sum, scratch);
  const float inv = 1.0f / sqrtf(sum / static_cast<float>(D) + eps);
  for (int64_t c = threadIdx.x; c < D; c += kThreads) {
    const float v = row[c] * inv * detail::bf16_bits_to_float(weight[c]);
    if (out_bf16 != nullptr) out_bf16[blockIdx.x * D + c] = detail::float_to_bf16_bits(v);
    if (out_f32 != nullptr) out_f32[blockIdx.x * D + c] = v;
  }
}

}  // namespace

cudaError_t rms_norm(const float* x, int64_t T, int64_t D, const uint16_t* weight, float eps, uint16_t* out_bf16,
                     float* out_f32, cudaStream_t stream) {
  if (T < 0 || D <= 0 || (out_bf16 == nullptr && out_f32 == nullptr) || (T > 0 && (x == nullptr || weight == nullptr)))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  rms_norm_kernel<<<static_cast<unsigned>(T), kThreads, 0, stream>>>(x, D, weight, eps, out_bf16, out_f32);
  return cudaGetLastError();
}

}  // namespace day0::kernels
