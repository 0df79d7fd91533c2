#pragma once
// The fast CPU kernels, one table per instruction set (fast_kernels_<isa>.cpp, each compiled for
// its instruction set and instantiated from fast_kernels_impl.h). Internal to the CPU backend:
// operators reach them through cpu_ops.h.
#include <cstdint>

#include "backend/cpu/cpu_ops.h"

namespace day0::cpu::detail {

struct FastKernels {
  // y[t * ldy + n] = sum_k x[t * K + k] * w[n, k] (+ bias[n]) for t < T and n in [n0, n1).
  void (*linear)(const float* x, std::int64_t T, const Matrix& w, const float* bias, float* y, std::int64_t ldy,
                 std::int64_t n0, std::int64_t n1);
  void (*linear_mxfp4)(const float* x, std::int64_t T, const Mxfp4Matrix& w, const float* bias, float* y,
                       std::int64_t ldy, std::int64_t n0, std::int64_t n1);
  void (*decode_row)(const Matrix& m, std::int64_t row, float* out);
  void (*decode_row_mxfp4)(const Mxfp4Matrix& m, std::int64_t row, float* out);
  float (*dot)(const float* a, const float* b, std::int64_t n);
  // y[i] += a * x[i]
  void (*axpy)(float a, const float* x, float* y, std::int64_t n);
};

const FastKernels& portable_kernels();
#if defined(DAY0_CPU_X86)
const FastKernels& avx2_kernels();
const FastKernels& avx512_kernels();
#endif

// 2^(e - 128) for every E8M0 byte e: half the block scale, since the fast kernels decode E2M1
// codes doubled (integers 0..12). Byte 0xFF (NaN) gives a NaN, so its block decodes to NaNs.
struct HalfE8m0Table {
  float v[256];
};
extern const HalfE8m0Table kHalfE8m0;

}  // namespace day0::cpu::detail
