// The fast CPU kernels for any CPU: GCC/Clang vector extensions (8 floats), lowered to whatever
// the target has (SSE2 on baseline x86-64, NEON on arm64). Compiled with the project's flags.
#include <cstring>

#include "backend/cpu/fast_kernels.h"
#include "formats/float_formats.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // 32-byte vectors are passed only between inlined helpers

namespace day0::cpu::detail {
namespace {

using float8 = float __attribute__((vector_size(32)));

struct V {
  using vec = float8;
  static constexpr int W = 8;
  static constexpr int R = 4;
  static vec zero() { return vec{}; }
  static vec load(const float* p) {
    vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, vec v) { std::memcpy(p, &v, sizeof v); }
  static vec add(vec a, vec b) { return a + b; }
  static vec mul(vec a, vec b) { return a * b; }
  static vec fma(vec a, vec b, vec c) { return a * b + c; }
  static vec set1(float s) { return vec{} + s; }
  static float hsum(vec v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }
  static void mx_block(const std::uint8_t* q, vec half_scale, vec* out) {
    static constexpr float kDoubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    float v[32];
    for (int i = 0; i < 16; ++i) {
      v[2 * i] = kDoubled[q[i] & 0x0F];
      v[2 * i + 1] = kDoubled[q[i] >> 4];
    }
    for (int i = 0; i < 4; ++i) out[i] = load(v + 8 * i) * half_scale;
  }
  static void bf16_block(const std::uint8_t* p, vec* out) {
    float v[32];
    for (int i = 0; i < 32; ++i) v[i] = bf16_scalar(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    for (int i = 0; i < 4; ++i) out[i] = load(v + 8 * i);
  }
  static void f16_block(const std::uint8_t* p, vec* out) {
    float v[32];
    for (int i = 0; i < 32; ++i) v[i] = f16_scalar(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    for (int i = 0; i < 4; ++i) out[i] = load(v + 8 * i);
  }
  static void f32_block(const std::uint8_t* p, vec* out) {
    for (int i = 0; i < 4; ++i) std::memcpy(&out[i], p + 32 * i, 32);
  }
  static float bf16_scalar(std::uint16_t bits) { return formats::bf16_to_f32(bits); }
  static float f16_scalar(std::uint16_t bits) { return formats::f16_to_f32(bits); }
};

#include "backend/cpu/fast_kernels_impl.h"

}  // namespace

const FastKernels& portable_kernels() { return kTable; }

}  // namespace day0::cpu::detail
