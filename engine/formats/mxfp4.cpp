#include "formats/mxfp4.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

namespace day0::formats {

namespace {

// The 16 bf16 values of one block's codes under `scale`: one table per block, then two lookups
// per packed byte, instead of rebuilding each value from its bit fields.
std::array<uint16_t, 16> scaled_bf16_table(uint8_t scale) {
  std::array<uint16_t, 16> table{};
  for (uint8_t code = 0; code < 16; ++code) table[code] = e2m1_scaled_to_bf16(code, scale);
  return table;
}

}  // namespace

uint8_t f32_to_e2m1(float value) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t abs_bits = bits & detail::kF32AbsMask;
  if (abs_bits > detail::kF32Inf) return 0x0;
  const uint32_t sign = (bits >> 28) & 0x8u;
  // E2M1 is a 1-mantissa-bit, bias-1 binary format; codes above 7 (6) saturate.
  return static_cast<uint8_t>(sign | std::min(detail::round_magnitude<1, 1>(abs_bits), 7u));
}

void mxfp4_dequantize(const uint8_t* blocks, const uint8_t* scales, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const std::array<uint16_t, 16> bf16 = scaled_bf16_table(scales[b]);
    std::array<float, 16> table{};
    for (size_t i = 0; i < 16; ++i) table[i] = bf16_to_f32(bf16[i]);
    const uint8_t* in = blocks + b * kMxfp4BlockBytes;
    float* dst = out + b * kMxfp4BlockSize;
    for (int i = 0; i < kMxfp4BlockBytes; ++i) {
      dst[2 * i] = table[in[i] & 0x0Fu];
      dst[2 * i + 1] = table[in[i] >> 4];
    }
  }
}

void mxfp4_dequantize_bf16(const uint8_t* blocks, const uint8_t* scales, size_t n_blocks,
                           uint16_t* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const std::array<uint16_t, 16> table = scaled_bf16_table(scales[b]);
    const uint8_t* in = blocks + b * kMxfp4BlockBytes;
    uint16_t* dst = out + b * kMxfp4BlockSize;
    for (int i = 0; i < kMxfp4BlockBytes; ++i) {
      dst[2 * i] = table[in[i] & 0x0Fu];
      dst[2 * i + 1] = table[in[i] >> 4];
    }
  }
}

Status mxfp4_quantize(const float* in, size_t n_values, uint8_t* blocks, uint8_t* scales) {
  if (n_values % kMxfp4BlockSize != 0) {
    return error(ErrorCode::invalid_argument,
                 "MXFP4 quantization takes a multiple of 32 values, got " +
                     std::to_string(n_values));
  }
  const size_t n_blocks = n_values / kMxfp4BlockSize;
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* x = in + b * kMxfp4BlockSize;
    float amax = 0.0f;
    for (int i = 0; i < kMxfp4BlockSize; ++i) {
      if (!std::isfinite(x[i])) {
        return error(ErrorCode::invalid_argument,
                     "MXFP4 quantization input " + std::to_string(b * kMxfp4BlockSize + i) +
                         " is " + (std::isnan(x[i]) ? "NaN" : "infinite"));
      }
      amax = std::max(amax, std::fabs(x[i]));
    }
    // floor(log2(amax)) is the float's unbiased exponent; the scale byte is that minus 2,
    // rebiased by 127. Zero and subnormal amax (< 2^-126) land on the clamp, byte 0x00.
    const int float_exponent = static_cast<int>(std::bit_cast<uint32_t>(amax) >> 23);
    const int scale = std::max(float_exponent - 2, 0);
    const int shared_exponent = scale - kE8m0Bias;  // in [-127, 125]
    // 2^-shared_exponent is a normal float (biased exponent in [2, 254]), and x times it is
    // exact: the product is below 8, and a product small enough to lose bits to float
    // underflow (< 2^-126) rounds to an E2M1 zero either way.
    const float inverse_scale =
        std::bit_cast<float>(static_cast<uint32_t>(kE8m0Bias - shared_exponent) << 23);
    scales[b] = static_cast<uint8_t>(scale);
    uint8_t* dst = blocks + b * kMxfp4BlockBytes;
    for (int i = 0; i < kMxfp4BlockBytes; ++i) {
      const uint8_t low = f32_to_e2m1(x[2 * i] * inverse_scale);
      const uint8_t high = f32_to_e2m1(x[2 * i + 1] * inverse_scale);
      dst[i] = static_cast<uint8_t>(low | (high << 4));
    }
  }
  return Status::ok();
}

Status mxfp4_to_fp8_e4m3(const uint8_t* blocks, const uint8_t* scales, size_t n_blocks,
                         uint8_t* fp8_out, int16_t* block_exponent_out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    if (e8m0_is_nan(scales[b])) {
      return error(ErrorCode::corrupt_data,
                   "MXFP4 block " + std::to_string(b) + " has the NaN scale byte 0xFF");
    }
    block_exponent_out[b] = static_cast<int16_t>(e8m0_exponent(scales[b]));
    const uint8_t* in = blocks + b * kMxfp4BlockBytes;
    uint8_t* dst = fp8_out + b * kMxfp4BlockSize;
    for (int i = 0; i < kMxfp4BlockBytes; ++i) {
      const uint16_t pair = e2m1_pair_to_fp8_e4m3[in[i]];
      dst[2 * i] = static_cast<uint8_t>(pair & 0xFFu);
      dst[2 * i + 1] = static_cast<uint8_t>(pair >> 8);
    }
  }
  return Status::ok();
}

}  // namespace day0::formats
