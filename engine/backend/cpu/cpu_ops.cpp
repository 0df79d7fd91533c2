#include "backend/cpu/cpu_ops.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "formats/float_formats.h"
#include "formats/mxfp4.h"

namespace day0::cpu {
namespace reference {

void decode_row(const Matrix& m, std::int64_t row, float* out) {
  const std::size_t n = static_cast<std::size_t>(m.cols);
  switch (m.dtype) {
    case DType::f32:
      std::memcpy(out, m.data + static_cast<std::size_t>(row) * n * 4, n * 4);
      return;
    case DType::bf16: {
      const std::uint8_t* p = m.data + static_cast<std::size_t>(row) * n * 2;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, p + 2 * i, 2);  // safetensors promises no alignment
        out[i] = formats::bf16_to_f32(bits);
      }
      return;
    }
    case DType::f16: {
      const std::uint8_t* p = m.data + static_cast<std::size_t>(row) * n * 2;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, p + 2 * i, 2);
        out[i] = formats::f16_to_f32(bits);
      }
      return;
    }
    default:
      // Loaders only build Matrix views of the dtypes above.
      std::memset(out, 0, n * sizeof(float));
      return;
  }
}

void decode_row(const Mxfp4Matrix& m, std::int64_t row, float* out) {
  const std::size_t blocks_per_row = static_cast<std::size_t>(m.cols / formats::kMxfp4BlockSize);
  const std::size_t first = static_cast<std::size_t>(row) * blocks_per_row;
  formats::mxfp4_dequantize(m.blocks + first * formats::kMxfp4BlockBytes, m.scales + first, blocks_per_row, out);
}

float dot(const float* a, const float* b, std::int64_t n) {
  // Eight independent partial sums let the compiler vectorise without reassociating a single
  // accumulator, and keep the rounding independent of the thread split.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  float tail = 0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

namespace {

template <typename W>
void linear_impl(ThreadPool& pool, const float* x, std::int64_t T, const W& w, const Matrix* bias, float* y) {
  const std::int64_t N = w.rows, K = w.cols;
  std::vector<float> bias_values;
  if (bias != nullptr) {
    bias_values.resize(static_cast<std::size_t>(N));
    reference::decode_row(Matrix{bias->dtype, bias->data, 1, N}, 0, bias_values.data());
  }
  const std::size_t grain = static_cast<std::size_t>(std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(K, 1)));
  pool.parallel_for(static_cast<std::size_t>(N), grain, [&](std::size_t begin, std::size_t end) {
    std::vector<float> row(static_cast<std::size_t>(K));
    for (std::size_t n = begin; n < end; ++n) {
      reference::decode_row(w, static_cast<std::int64_t>(n), row.data());
      const float b = bias != nullptr ? bias_values[n] : 0.0f;
      for (std::int64_t t = 0; t < T; ++t) y[t * N + static_cast<std::int64_t>(n)] = dot(x + t * K, row.data(), K) + b;
    }
  });
}

}  // namespace

void linear(ThreadPool& pool, const float* x, std::int64_t T, const Matrix& w, const Matrix* bias, float* y) {
  linear_impl(pool, x, T, w, bias, y);
}

void linear(ThreadPool& pool, const float* x, std::int64_t T, const Mxfp4Matrix& w, const Matrix* bias, float* y) {
  linear_impl(pool, x, T, w, bias, y);
}

void axpy(float a, const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace reference

void rms_norm(const float* x, std::int64_t T, std::int64_t D, const Matrix& weight, float eps, float* y) {
  std::vector<float> w(static_cast<std::size_t>(D));
  decode_row(weight, 0, w.data());
  for (std::int64_t t = 0; t < T; ++t) {
    const float* xt = x + t * D;
    float* yt = y + t * D;
    const float mean_square = dot(xt, xt, D) / static_cast<float>(D);
    const float inv = 1.0f / std::sqrt(mean_square + eps);
    for (std::int64_t i = 0; i < D; ++i) yt[i] = w[static_cast<std::size_t>(i)] * (xt[i] * inv);
  }
}

void rope_halves(float* x, std::int64_t T, std::int64_t heads, std::int64_t d, const float* cos, const float* sin) {
  const std::int64_t half = d / 2;
  for (std::int64_t t = 0; t < T; ++t) {
    const float* c = cos + t * half;
    const float* s = sin + t * half;
    for (std::int64_t h = 0; h < heads; ++h) {
      float* v = x + (t * heads + h) * d;
      for (std::int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * c[i] - b * s[i];
        v[i + half] = b * c[i] + a * s[i];
      }
    }
  }
}

}  // namespace day0::cpu
