#pragma once
// Scalar conversions between float (binary32) and the narrow formats Day0 reads or produces:
// bf16, IEEE binary16 (f16), FP8 E4M3 ("fn" variant) and E5M2, and the OCP MX scale E8M0.
//
// Every encoder rounds to nearest, ties to even (RNE), in integer arithmetic on the float's bits,
// so results do not depend on the FPU's rounding mode or on flush-to-zero / denormals-are-zero
// settings. Decoders are constexpr and inline because hot loops (dequantization, reference
// kernels) call them per element; they are exact, since every narrow value is a float.
#include <bit>
#include <cstdint>

namespace day0::formats {

// What an FP8 encoder does with a finite value too large for the format, and with +-inf.
enum class Fp8Overflow : uint8_t {
  saturate,  // clamp to +-max finite (NVIDIA's __NV_SATFINITE); the usual choice for weights
  nan,       // OCP non-saturating mode: E4M3 gives NaN, E5M2 gives +-inf as IEEE rounding does
};

// How f32_to_e8m0 picks a power of two.
enum class E8m0Rounding : uint8_t {
  floor,    // largest power of two <= x: the OCP MX shared-scale rule
  nearest,  // nearest power of two by value; a tie (x = 1.5 * 2^k) goes up to 2^(k+1)
};

inline constexpr uint8_t kFp8E4m3MaxFinite = 0x7E;  // 448
inline constexpr uint8_t kFp8E4m3Nan = 0x7F;        // S.1111.111 is the only NaN; no infinities
inline constexpr uint8_t kFp8E5m2MaxFinite = 0x7B;  // 57344
inline constexpr uint8_t kFp8E5m2Inf = 0x7C;
inline constexpr uint8_t kE8m0Nan = 0xFF;
inline constexpr int kE8m0Bias = 127;

namespace detail {

inline constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32Inf = 0x7F800000u;
inline constexpr uint32_t kF32QuietBit = 0x00400000u;

// Rounds a finite non-negative float, given as its bits, to a sign-less binary format with
// kManBits mantissa bits and exponent bias kBias, RNE, with subnormals. The exponent range is
// treated as unbounded above, so the returned magnitude code can exceed the format's largest
// finite code: callers compare against it to detect overflow. +inf (0x7F800000) also returns a
// code above every format's maximum, so callers need no separate test for it.
template <int kManBits, int kBias>
constexpr uint32_t round_magnitude(uint32_t abs_bits) noexcept {
  static_assert(kManBits >= 1 && kManBits <= 22 && kBias >= 1 && kBias <= 127);
  constexpr int kDrop = 23 - kManBits;  // float mantissa bits rounded off for a normal result
  const int exponent = static_cast<int>(abs_bits >> 23);
  if (exponent > 127 - kBias) {
    // Normal result: rebias the exponent in place; a mantissa carry correctly bumps it.
    const uint32_t rebased = abs_bits - (static_cast<uint32_t>(127 - kBias) << 23);
    return (rebased + ((1u << (kDrop - 1)) - 1u) + ((rebased >> kDrop) & 1u)) >> kDrop;
  }
  // Subnormal result: count units of 2^(1 - kBias - kManBits). The float is
  // significand * 2^(e - 150) with e = max(exponent, 1), so it holds significand * 2^-shift units.
  const uint32_t significand = (abs_bits & 0x7FFFFFu) | (exponent != 0 ? 0x800000u : 0u);
  const int shift = 151 - kBias - kManBits - (exponent != 0 ? exponent : 1);
  if (shift > 25) return 0;  // below half a unit (significand < 2^24): rounds to zero
  return (significand + ((1u << (shift - 1)) - 1u) + ((significand >> shift) & 1u)) >> shift;
}

}  // namespace detail

// ---- bf16: the top half of a float. ----

// Exact; a NaN keeps its sign and payload bits (a signalling NaN stays signalling).
constexpr float bf16_to_f32(uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// RNE; finite values past the largest bf16 round to +-inf as IEEE does; a NaN stays a NaN with
// its sign and the top of its payload, made quiet so truncating the payload cannot yield inf.
// Inline because activations are converted per element.
constexpr uint16_t f32_to_bf16(float value) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & detail::kF32AbsMask) > detail::kF32Inf) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Adding 0x7FFF plus the kept LSB rounds the dropped half to nearest-even; a carry moves into
  // the exponent and, from the largest finite value, into the inf pattern.
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// ---- f16: IEEE binary16 (1 sign, 5 exponent bits bias 15, 10 mantissa bits). ----

// Exact; a NaN keeps its sign and payload and is made quiet, as F16C's vcvtph2ps does.
constexpr float f16_to_f32(uint16_t bits) noexcept {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t magnitude = bits & 0x7FFFu;
  uint32_t out = (magnitude << 13) + ((127u - 15u) << 23);  // rebias a normal number
  if (magnitude >= 0x7C00u) {
    out += (128u - 16u) << 23;  // exponent 31 -> 255: inf, or NaN below
    if (magnitude > 0x7C00u) out |= detail::kF32QuietBit;
  } else if (magnitude < 0x0400u) {
    // Subnormal or zero: m * 2^-24. Build 2^-14 * (1 + m/1024), a normal float, and subtract
    // 2^-14; the difference is exact and no subnormal operand is involved.
    out = std::bit_cast<uint32_t>(std::bit_cast<float>(out + (1u << 23)) - 0x1p-14f);
  }
  return std::bit_cast<float>(out | sign);
}

// RNE with subnormals; overflow (|x| >= 65520) gives +-inf; a NaN gives a quiet NaN with the
// sign and the top 9 payload bits.
uint16_t f32_to_f16(float value) noexcept;

// ---- FP8 E4M3 "fn" (OCP, torch.float8_e4m3fn): bias 7, no inf, S.1111.111 is NaN, max 448. ----

constexpr float fp8_e4m3_to_f32(uint8_t bits) noexcept {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
  const uint32_t magnitude = bits & 0x7Fu;
  if (magnitude == kFp8E4m3Nan) {
    return std::bit_cast<float>(sign | detail::kF32Inf | detail::kF32QuietBit);
  }
  uint32_t out = (magnitude << 20) + ((127u - 7u) << 23);
  if (magnitude < 0x08u) {
    // Subnormal or zero: m * 2^-9, computed as 2^-6 * (1 + m/8) - 2^-6 (exact, see f16_to_f32).
    out = std::bit_cast<uint32_t>(std::bit_cast<float>(out + (1u << 23)) - 0x1p-6f);
  }
  return std::bit_cast<float>(out | sign);
}

// RNE with subnormals. |x| > 464 (448 plus half an ulp) overflows; exactly 464 is a tie that
// goes to 448, whose mantissa is even. Overflow and +-inf: +-448 (saturate) or +-NaN (nan).
// NaN input gives 0x7F with the input's sign.
uint8_t f32_to_fp8_e4m3(float value, Fp8Overflow mode = Fp8Overflow::saturate) noexcept;

// ---- FP8 E5M2: bias 15, IEEE-like with inf and NaN, max 57344; the top byte of an f16. ----

constexpr float fp8_e5m2_to_f32(uint8_t bits) noexcept {
  return f16_to_f32(static_cast<uint16_t>(bits << 8));
}

// RNE with subnormals. |x| >= 61440 overflows (the tie goes to the even 2^16, i.e. inf).
// Overflow and +-inf: +-57344 (saturate) or +-inf (nan). NaN input gives the high byte of the
// f16 NaN f32_to_f16 makes: quiet (0x7E or 0x7F), sign kept.
uint8_t f32_to_fp8_e5m2(float value, Fp8Overflow mode = Fp8Overflow::saturate) noexcept;

// ---- E8M0: the OCP MX scale. Unsigned 8-bit exponent, bias 127, value 2^(e - 127); 0xFF is NaN;
// there is no zero and no sign. ----

constexpr bool e8m0_is_nan(uint8_t bits) noexcept { return bits == kE8m0Nan; }

// The power of two's exponent, e - 127, in [-127, 127] for every byte but 0xFF, for which it
// returns 128: check e8m0_is_nan first.
constexpr int e8m0_exponent(uint8_t bits) noexcept { return static_cast<int>(bits) - kE8m0Bias; }

// Exact, including 2^-127 (byte 0), which is a float subnormal (bits 0x00400000).
constexpr float e8m0_to_f32(uint8_t bits) noexcept {
  if (bits == 0) return std::bit_cast<float>(0x00400000u);
  if (bits == kE8m0Nan) return std::bit_cast<float>(detail::kF32Inf | detail::kF32QuietBit);
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 23);
}

// The result is clamped to [2^-127, 2^127] (bytes 0x00..0xFE). Inputs outside the positive
// numbers follow the clamp where it has a meaning: +-0 gives 0x00 (the limit of ever smaller
// scales, what an all-zero block needs) and +inf gives 0xFE. NaN and negative numbers,
// -inf included, have no power-of-two scale and give 0xFF (NaN).
uint8_t f32_to_e8m0(float value, E8m0Rounding rounding) noexcept;

}  // namespace day0::formats
