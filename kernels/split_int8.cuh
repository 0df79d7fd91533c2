#pragma once
// Device side of the split int8 vectors (mxfp4_gemv.h): quantising one 32-value block with a
// warp, and the E8M0 block scales.
#include <cstdint>

#include "device_util.cuh"

namespace day0::kernels::detail {

// Lane l holds value l of a 32-value block; writes the block's 64 bytes and its scale.
__device__ __forceinline__ void quantize_block_split_int8(float v, int lane, int8_t* q, float* scale) {
  const float amax = warp_max(fabsf(v));
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  const float y = v * inv;
  const float hi = rintf(y);
  q[lane] = static_cast<int8_t>(hi);
  q[32 + lane] = static_cast<int8_t>(rintf((y - hi) * 254.0f));
  if (lane == 0) *scale = amax / 127.0f;
}

// 2^(s - 128) for an E8M0 scale byte s (half the block scale: the int8 codes are twice the
// E2M1 values), exactly, subnormal for s < 2.
__device__ __forceinline__ float e8m0_half(uint32_t s) {
  return __uint_as_float(s >= 2u ? (s - 1u) << 23 : 0x00200000u << s);
}

}  // namespace day0::kernels::detail
