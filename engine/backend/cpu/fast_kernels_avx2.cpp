// The fast CPU kernels for AVX2 + FMA + F16C (every x86-64 CPU since 2013-2015), compiled with
// -mavx2 -mfma -mf16c and called only after the CPU reported those features.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/fast_kernels.h"

namespace day0::cpu::detail {
namespace {

struct V {
  using vec = __m256;
  static constexpr int W = 8;
  static constexpr int R = 4;
  static vec zero() { return _mm256_setzero_ps(); }
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
  static vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
  static vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static vec set1(float s) { return _mm256_set1_ps(s); }
  static float hsum(vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // The 16 code bytes -> 32 int8 values (E2M1 doubled: 0, 1, 2, 3, 4, 6, 8, 12 and negatives)
  // by one byte shuffle per nibble half, interleaved back into element order, widened to
  // floats and multiplied by half the block scale: exactly the reference's values.
  static void mx_block(const std::uint8_t* q, vec half_scale, vec* out) {
    const __m128i lut = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i lo = _mm_shuffle_epi8(lut, _mm_and_si128(bytes, nibble));
    const __m128i hi = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(bytes, 4), nibble));
    const __m128i e0 = _mm_unpacklo_epi8(lo, hi), e1 = _mm_unpackhi_epi8(lo, hi);
    out[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(e0)), half_scale);
    out[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(e0, 8))), half_scale);
    out[2] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(e1)), half_scale);
    out[3] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(e1, 8))), half_scale);
  }
  static void bf16_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 4; ++i) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      out[i] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
  }
  static void f16_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 4; ++i) out[i] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)));
  }
  static void f32_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 4; ++i) out[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(p) + 8 * i);
  }
  static float bf16_scalar(std::uint16_t bits) {
    const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static float f16_scalar(std::uint16_t bits) { return _cvtsh_ss(bits); }
};

#include "backend/cpu/fast_kernels_impl.h"

}  // namespace

const FastKernels& avx2_kernels() { return kTable; }

}  // namespace day0::cpu::detail
