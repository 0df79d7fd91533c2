#include "formats/float_formats.h"

#include <algorithm>

namespace day0::formats {

namespace {

constexpr uint32_t abs_bits(uint32_t bits) { return bits & detail::kF32AbsMask; }
constexpr bool is_nan_bits(uint32_t bits) { return abs_bits(bits) > detail::kF32Inf; }

// The quiet f16 NaN for a float NaN: sign, exponent 31, quiet bit, then the next 9 payload bits.
constexpr uint16_t f16_nan(uint32_t bits) {
  return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7E00u | ((bits >> 13) & 0x01FFu));
}

}  // namespace

uint16_t f32_to_f16(float value) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (is_nan_bits(bits)) return f16_nan(bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  // Any code past the largest finite one (0x7BFF) is an overflow, and 0x7C00 is inf.
  const uint32_t code = std::min(detail::round_magnitude<10, 15>(abs_bits(bits)), 0x7C00u);
  return static_cast<uint16_t>(sign | code);
}

uint8_t f32_to_fp8_e4m3(float value, Fp8Overflow mode) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 24) & 0x80u;
  if (is_nan_bits(bits)) return static_cast<uint8_t>(sign | kFp8E4m3Nan);
  uint32_t code = detail::round_magnitude<3, 7>(abs_bits(bits));
  if (code > kFp8E4m3MaxFinite) {
    code = mode == Fp8Overflow::saturate ? kFp8E4m3MaxFinite : kFp8E4m3Nan;
  }
  return static_cast<uint8_t>(sign | code);
}

uint8_t f32_to_fp8_e5m2(float value, Fp8Overflow mode) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (is_nan_bits(bits)) return static_cast<uint8_t>(f16_nan(bits) >> 8);
  const uint32_t sign = (bits >> 24) & 0x80u;
  uint32_t code = detail::round_magnitude<2, 15>(abs_bits(bits));
  if (code > kFp8E5m2MaxFinite) {
    code = mode == Fp8Overflow::saturate ? kFp8E5m2MaxFinite : kFp8E5m2Inf;
  }
  return static_cast<uint8_t>(sign | code);
}

uint8_t f32_to_e8m0(float value, E8m0Rounding rounding) noexcept {
  constexpr uint32_t kMaxScale = 0xFE;  // 2^127
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (is_nan_bits(bits)) return kE8m0Nan;
  if (abs_bits(bits) == 0) return 0x00;
  if ((bits >> 31) != 0) return kE8m0Nan;
  // For a normal float the biased exponent is already the E8M0 byte of 2^floor(log2 x):
  // both use bias 127. Exponent 255 is +inf here and clamps like any huge value.
  const uint32_t exponent = bits >> 23;
  if (exponent == 0) {
    // x < 2^-126: the candidates are 2^-127 (0x00) and 2^-126 (0x01); their midpoint
    // 1.5 * 2^-127 is the subnormal float with bits 0x00600000.
    if (rounding == E8m0Rounding::floor) return 0x00;
    return bits >= 0x00600000u ? 0x01 : 0x00;
  }
  if (exponent == 0xFF) return kMaxScale;
  uint32_t code = exponent;
  // x = (1 + f) * 2^k lies at or past the midpoint 1.5 * 2^k of [2^k, 2^(k+1)] when f >= 1/2.
  if (rounding == E8m0Rounding::nearest && (bits & 0x00400000u) != 0) ++code;
  return static_cast<uint8_t>(std::min(code, kMaxScale));
}

}  // namespace day0::formats
