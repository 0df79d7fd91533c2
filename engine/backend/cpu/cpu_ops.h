#pragma once
// The CPU backend's operators: fp32 arithmetic, threaded over output rows, reading weights in
// their stored dtype (bf16, f16, f32, MXFP4) straight from the checkpoint's memory map and
// converting as they compute. Each op says exactly what it computes.
//
// Two implementations stand behind them (cpu_kernels.h selects): `reference`, plain loops that
// decode a row to floats and dot it, the oracle every GPU kernel and the fast path are checked
// against; and `fast`, vectorised kernels per instruction set that decode weights in registers
// and serve a tile of tokens per decoded row. Both keep activations and sums in fp32 and decode
// every weight exactly; they differ only in the order of the additions.
#include <cstdint>
#include <span>

#include "core/dtype.h"
#include "core/thread_pool.h"

namespace day0::cpu {

// A row-major 2-D view of stored weights: [rows, cols] elements of `dtype` (bf16, f16 or f32).
struct Matrix {
  DType dtype = DType::f32;
  const std::uint8_t* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// An MXFP4 matrix in the gpt-oss layout: `blocks` [rows, cols/32, 16] bytes (two E2M1 codes per
// byte, low nibble first) and `scales` [rows, cols/32] E8M0 bytes.
struct Mxfp4Matrix {
  const std::uint8_t* blocks = nullptr;
  const std::uint8_t* scales = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// The operators below run the selected kernel set (cpu_kernels.h): fast unless
// DAY0_CPU_KERNELS=reference.

// out[0..cols) = row `row` of m as float.
void decode_row(const Matrix& m, std::int64_t row, float* out);
void decode_row(const Mxfp4Matrix& m, std::int64_t row, float* out);

// y[t, n] = sum_k x[t, k] * w[n, k] (+ bias[n]).  x: [T, K], w: [N, K], bias: [N] or null,
// y: [T, N]. Threaded over n; each weight row is decoded once and used for all T tokens.
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Matrix& w, const Matrix* bias, float* y);
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Mxfp4Matrix& w, const Matrix* bias, float* y);

// y[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight.  x, y: [T, D] (may alias).
void rms_norm(const float* x, std::int64_t T, std::int64_t D, const Matrix& weight, float eps, float* y);

// Rotary embedding in the "halves" convention: for each head, element i < d/2 pairs with
// i + d/2: (a, b) -> (a cos - b sin, b cos + a sin). x: [T, heads, d]; cos, sin: [T, d/2].
void rope_halves(float* x, std::int64_t T, std::int64_t heads, std::int64_t d, const float* cos, const float* sin);

float dot(const float* a, const float* b, std::int64_t n);
// y[i] += a * x[i] for i < n.
void axpy(float a, const float* x, float* y, std::int64_t n);

// The same operators, each implementation by name (tests compare them).
namespace reference {
void decode_row(const Matrix& m, std::int64_t row, float* out);
void decode_row(const Mxfp4Matrix& m, std::int64_t row, float* out);
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Matrix& w, const Matrix* bias, float* y);
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Mxfp4Matrix& w, const Matrix* bias, float* y);
float dot(const float* a, const float* b, std::int64_t n);
void axpy(float a, const float* x, float* y, std::int64_t n);
}  // namespace reference

// With the instruction set kernel_isa() names.
namespace fast {
void decode_row(const Matrix& m, std::int64_t row, float* out);
void decode_row(const Mxfp4Matrix& m, std::int64_t row, float* out);
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Matrix& w, const Matrix* bias, float* y);
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Mxfp4Matrix& w, const Matrix* bias, float* y);
float dot(const float* a, const float* b, std::int64_t n);
void axpy(float a, const float* x, float* y, std::int64_t n);
}  // namespace fast

}  // namespace day0::cpu
