#pragma once
// OCP Microscaling (MX) FP4: E2M1 elements in blocks of 32 that share one E8M0 scale.
//
// E2M1: 1 sign bit, 2 exponent bits (bias 1), 1 mantissa bit, no inf or NaN. Codes 0..7 are
// 0, 0.5, 1, 1.5, 2, 3, 4, 6; codes 8..15 are their negatives (8 is -0).
//
// Storage, as in gpt-oss checkpoints: a block is 16 bytes holding two codes per byte, low nibble
// first: element 2i is the low nibble of byte i, element 2i+1 the high nibble. A tensor of
// n_blocks blocks is `blocks` [n_blocks][16] bytes plus `scales` [n_blocks] E8M0 bytes, and
// element j of block b has the value e2m1(code) * 2^(scales[b] - 127).
//
// The online conversion to FP8 keeps the two factors apart: each element becomes the E4M3 code
// of its unscaled E2M1 value (always exact) and the scale becomes an integer block exponent that
// the GEMM folds in, so no rounding happens anywhere (mxfp4_to_fp8_e4m3).
#include <array>
#include <cstddef>
#include <cstdint>

#include "day0/status.h"
#include "formats/float_formats.h"

namespace day0::formats {

inline constexpr int kMxfp4BlockSize = 32;   // elements per shared scale
inline constexpr int kMxfp4BlockBytes = 16;  // packed bytes per block

// ---- E2M1 elements ----

inline constexpr std::array<float, 16> kE2m1Values = {
    0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// Decodes the low 4 bits of `code`; the high bits are ignored.
constexpr float e2m1_to_f32(uint8_t code) noexcept { return kE2m1Values[code & 0x0Fu]; }

// RNE onto the E2M1 grid (ties: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2,
// 3.5 -> 4, 5 -> 4), saturating: |x| > 6 and +-inf give +-6. The sign is kept, so -0 and small
// negatives that round to zero give 0x8. NaN has no E2M1 code and gives +0 (0x0); callers that
// must not lose a NaN check for it first, as mxfp4_quantize does.
uint8_t f32_to_e2m1(float value) noexcept;

// The E4M3 byte of an E2M1 code's value (exact: E2M1 values are E4M3 normals or zero):
//   code  0    1    2    3    4    5    6    7      8..15: the same | 0x80
//   value 0    0.5  1    1.5  2    3    4    6
//   E4M3  0x00 0x30 0x38 0x3C 0x40 0x44 0x48 0x4C
constexpr uint8_t e2m1_to_fp8_e4m3(uint8_t code) noexcept {
  constexpr std::array<uint8_t, 8> kMagnitude = {0x00, 0x30, 0x38, 0x3C, 0x40, 0x44, 0x48, 0x4C};
  return static_cast<uint8_t>(((code & 0x08u) << 4) | kMagnitude[code & 0x07u]);
}

// A packed byte (two E2M1 codes) -> two E4M3 bytes, the low nibble's in the low byte, so a
// little-endian uint16 store writes the elements in order. 512 bytes: stays in L1 for the CPU
// loop; the CUDA kernel computes the same mapping from e2m1_to_fp8_e4m3's 8-entry table.
inline constexpr std::array<uint16_t, 256> e2m1_pair_to_fp8_e4m3 = [] {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    const auto low = e2m1_to_fp8_e4m3(static_cast<uint8_t>(byte & 0x0F));
    const auto high = e2m1_to_fp8_e4m3(static_cast<uint8_t>(byte >> 4));
    table[static_cast<size_t>(byte)] = static_cast<uint16_t>(low | (high << 8));
  }
  return table;
}();

// The bf16 bits of e2m1(code) * 2^(scale - 127), built from the bit fields so that it is exact
// and independent of the FPU's flush-to-zero mode. Exact for every code and scale except where
// the value exceeds bf16's (= float's) range: scale 0xFE with |value| >= 2 and scale 0xFD with
// |value| >= 4 give +-inf. The smallest values (scale 0x00: 0.5 * 2^-127 = 2^-128) are bf16
// subnormals and exact. Scale 0xFF (NaN) gives the quiet NaN 0x7FC0 for every code.
constexpr uint16_t e2m1_scaled_to_bf16(uint8_t code, uint8_t scale) noexcept {
  if (scale == kE8m0Nan) return 0x7FC0;
  const auto sign = static_cast<uint16_t>((code & 0x08u) << 12);
  const int magnitude = code & 0x07;
  if (magnitude == 0) return sign;
  // |e2m1| = (1 + mantissa/2) * 2^k: codes 2..7 are normal (k = code/2 - 1), code 1 is 2^-1.
  const int mantissa = magnitude >= 2 ? (magnitude & 1) : 0;
  const int biased = (magnitude >> 1) - 1 + scale;  // bf16 biased exponent of the product
  if (biased >= 0xFF) return static_cast<uint16_t>(sign | 0x7F80u);
  if (biased >= 1) return static_cast<uint16_t>(sign | (biased << 7) | (mantissa << 6));
  // bf16 subnormal (biased is 0 or -1): (1 + mantissa/2) * 2^(biased - 127) counted in units of
  // 2^-133 is (2 + mantissa) << (biased + 5).
  return static_cast<uint16_t>(sign | ((2 + mantissa) << (biased + 5)));
}

// ---- Blocks ----

// out: [n_blocks * 32] floats. Exact (see e2m1_scaled_to_bf16: every value is a bf16, hence a
// float), with the same overflow to +-inf; a block whose scale is 0xFF decodes to quiet NaNs.
void mxfp4_dequantize(const uint8_t* blocks, const uint8_t* scales, size_t n_blocks, float* out);

// out: [n_blocks * 32] bf16 bit patterns, each e2m1_scaled_to_bf16(code, scale).
void mxfp4_dequantize_bf16(const uint8_t* blocks, const uint8_t* scales, size_t n_blocks,
                           uint16_t* out);

// Quantizes n_values floats (a multiple of 32, else invalid_argument) into n_values / 32 blocks
// (blocks: [n_values / 2] bytes, scales: [n_values / 32] bytes) with the OCP MX rule: the shared
// exponent is floor(log2(amax)) - 2 (2 is E2M1's largest exponent), clamped below to -127; each
// element is x / 2^exponent rounded RNE onto the E2M1 grid, saturating at +-6 (values between 6
// and 8 times the scale clip, as the spec accepts). An all-zero block gets the smallest scale,
// 2^-127 (byte 0x00), which is the same clamp applied to amax -> 0. A NaN or inf input gives
// invalid_argument naming its index; blocks before it have been written by then.
Status mxfp4_quantize(const float* in, size_t n_values, uint8_t* blocks, uint8_t* scales);

// The building block of the online MXFP4 -> FP8 conversion.
// blocks [n_blocks][16], scales [n_blocks] -> fp8_out [n_blocks * 32] E4M3 bytes (element order)
// and block_exponent_out [n_blocks] = scale - 127, so that
//   fp8_e4m3_to_f32(fp8_out[i]) * 2^block_exponent_out[i / 32]
// equals the MXFP4 value of element i exactly. A scale of 0xFF (NaN) returns corrupt_data naming
// the block; the outputs of the blocks before it have been written.
Status mxfp4_to_fp8_e4m3(const uint8_t* blocks, const uint8_t* scales, size_t n_blocks,
                         uint8_t* fp8_out, int16_t* block_exponent_out);

}  // namespace day0::formats
