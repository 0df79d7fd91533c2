#include "rope.h"

#include "device_util.cuh"

namespace day0::kernels {
namespace {

__global__ void rope_qkv_kernel(RopeQkvArgs a) {
  const int64_t t = blockIdx.x;
  const int d = a.head_dim, half = d / 2;
  const int q_dim = a.heads * d, kv_dim = a.kv_heads * d;
  const float* row = a.qkv + t * (q_dim + 2 * kv_dim);
  const int64_t pos = static_cast<int64_t>(*a.position) + t;
  const float position = static_cast<float>(pos);
  // Rotated pairs of q and k heads, then the plain v copy.
  const int pairs = (a.heads + a.kv_heads) * half;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    const int head = i / half, j = i % half;
    const float angle = position * a.inv_freq[j];
    float s, c;
    sincosf(angle, &s, &c);
    c *= a.attention_factor;
    s *= a.attention_factor;
    const float* x = row + head * d;  // k heads follow q heads in the row
    const float lo = x[j], hi = x[j + half];
    const float out_lo = lo * c - hi * s, out_hi = hi * c + lo * s;
    if (head < a.heads) {
      uint16_t* q = a.q_out + (t * a.heads + head) * d;
      q[j] = detail::float_to_bf16_bits(out_lo);
      q[j + half] = detail::float_to_bf16_bits(out_hi);
    } else {
      uint16_t* k = a.k_cache + pos * kv_dim + (head - a.heads) * d;
      k[j] = detail::float_to_bf16_bits(out_lo);
      k[j + half] = detail::float_to_bf16_bits(out_hi);
    }
  }
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x)
    a.v_cache[pos * kv_dim + i] = detail::float_to_bf16_bits(row[q_dim + kv_dim + i]);
}

}  // namespace

cudaError_t rope_qkv(const RopeQkvArgs& a, cudaStream_t stream) {
  if (a.T < 0 || a.heads <= 0 || a.kv_heads <= 0 || a.head_dim <= 0 || a.head_dim % 2 != 0)
    return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  if (a.qkv == nullptr || a.inv_freq == nullptr || a.position == nullptr || a.q_out == nullptr ||
      a.k_cache == nullptr || a.v_cache == nullptr)
    return cudaErrorInvalidValue;
  rope_qkv_kernel<<<static_cast<unsigned>(a.T), 128, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace day0::kernels
