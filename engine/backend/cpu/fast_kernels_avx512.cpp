// The fast CPU kernels for AVX-512 (F), compiled with -mavx512f (and AVX2, FMA, F16C) and called
// only after the CPU and the OS reported AVX-512 support.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/fast_kernels.h"

// GCC 12's AVX-512 headers leave a register undefined on purpose in the 512->256-bit casts,
// which -Wuninitialized reports wherever they are inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace day0::cpu::detail {
namespace {

struct V {
  using vec = __m512;
  static constexpr int W = 16;
  static constexpr int R = 8;
  static vec zero() { return _mm512_setzero_ps(); }
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec set1(float s) { return _mm512_set1_ps(s); }
  static float hsum(vec v) { return _mm512_reduce_add_ps(v); }
  // As the AVX2 version (one byte shuffle per nibble half to E2M1 doubled), widened 16 at a time.
  static void mx_block(const std::uint8_t* q, vec half_scale, vec* out) {
    const __m128i lut = _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i lo = _mm_shuffle_epi8(lut, _mm_and_si128(bytes, nibble));
    const __m128i hi = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(bytes, 4), nibble));
    out[0] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_unpacklo_epi8(lo, hi))), half_scale);
    out[1] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_unpackhi_epi8(lo, hi))), half_scale);
  }
  static void bf16_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 2; ++i) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * i));
      out[i] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
  }
  static void f16_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 2; ++i)
      out[i] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * i)));
  }
  static void f32_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 2; ++i) out[i] = _mm512_loadu_ps(reinterpret_cast<const float*>(p) + 16 * i);
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

const FastKernels& avx512_kernels() { return kTable; }

}  // namespace day0::cpu::detail
