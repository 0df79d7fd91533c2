#pragma once
// Device side of the split int8 vectors (mxfp4_gemv.h): quantising one 32-value block with a
// warp, and the MXFP4 x split-int8 block dot product.
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

// Four E2M1 codes (the low 16 bits of `codes`, low nibble first) as four int8 values of twice
// the E2M1 value (0, ±1, ±2, ±3, ±4, ±6, ±8, ±12): byte-permute lookups in the positive and
// negative halves of the table, then a per-byte pick by the sign bit. `pick` holds, per nibble,
// its position (0..3) plus 4 for a negative code.
__device__ __forceinline__ int e2m1x4_to_int8x2(uint32_t codes, uint32_t pick) {
  constexpr uint32_t kPos0 = 0x03020100u, kPos1 = 0x0C080604u;  // 0 1 2 3 | 4 6 8 12
  constexpr uint32_t kNeg0 = 0xFDFEFF00u, kNeg1 = 0xF4F8FAFCu;  // 0 -1 -2 -3 | -4 -6 -8 -12
  const uint32_t pos = __byte_perm(kPos0, kPos1, codes & 0x7777u);
  const uint32_t neg = __byte_perm(kNeg0, kNeg1, codes & 0x7777u);
  return static_cast<int>(__byte_perm(pos, neg, pick));
}

// 2^(s - 128) for an E8M0 scale byte s (half the block scale: the int8 codes are twice the
// E2M1 values), exactly, subnormal for s < 2.
__device__ __forceinline__ float e8m0_half(uint32_t s) {
  return __uint_as_float(s >= 2u ? (s - 1u) << 23 : 0x00200000u << s);
}

// One MXFP4 block (16 bytes of codes, element i in nibble i) dotted with one split int8 block
// (hi: 8 words, lo: 8 words, 4 values each): returns hi_sum + lo_sum / 254 as a float.
__device__ __forceinline__ float mxfp4_split_int8_dot(const uint4& w, const int4& h0, const int4& h1, const int4& l0,
                                                      const int4& l1) {
  const uint32_t words[4] = {w.x, w.y, w.z, w.w};
  const int hs[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
  const int ls[8] = {l0.x, l0.y, l0.z, l0.w, l1.x, l1.y, l1.z, l1.w};
  int sh = 0, sl = 0;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const uint32_t q = words[m];
    const uint32_t pick = ((q >> 1) & 0x44444444u) | 0x32103210u;
    const int v0 = e2m1x4_to_int8x2(q, pick);
    const int v1 = e2m1x4_to_int8x2(q >> 16, pick >> 16);
    sh = __dp4a(v0, hs[2 * m], sh);
    sh = __dp4a(v1, hs[2 * m + 1], sh);
    sl = __dp4a(v0, ls[2 * m], sl);
    sl = __dp4a(v1, ls[2 * m + 1], sl);
  }
  return static_cast<float>(sh) + static_cast<float>(sl) * (1.0f / 254.0f);
}

}  // namespace day0::kernels::detail
