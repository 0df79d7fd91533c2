#include "backend/cpu/kernel_rates.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "core/dtype.h"

namespace day0::cpu {
namespace {

template <typename M>
double rate(ThreadPool& pool, std::span<const M> matrices, std::int64_t tokens, double seconds) {
  if (matrices.empty()) return 0;
  tokens = std::max<std::int64_t>(1, tokens);
  std::int64_t cols = 0, rows = 0;
  for (const M& m : matrices) cols = std::max(cols, m.cols), rows = std::max(rows, m.rows);
  std::mt19937 rng(5);
  std::vector<float> x(static_cast<std::size_t>(tokens * cols)), y(static_cast<std::size_t>(tokens * rows));
  for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (const M& m : matrices) linear(pool, x.data(), tokens, m, nullptr, y.data());  // first touch
  std::uint64_t bytes = 0;
  std::size_t next = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    const M& m = matrices[next];
    linear(pool, x.data(), tokens, m, nullptr, y.data());
    bytes += weight_bytes(m);
    next = (next + 1) % matrices.size();
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < seconds || next != 0);
  return static_cast<double>(bytes) / elapsed;
}

}  // namespace

std::uint64_t weight_bytes(const Matrix& m) {
  return static_cast<std::uint64_t>(m.rows * m.cols) * static_cast<std::uint64_t>(dtype_bits(m.dtype)) / 8;
}
std::uint64_t weight_bytes(const Mxfp4Matrix& m) {
  return static_cast<std::uint64_t>(m.rows * m.cols) / 2 + static_cast<std::uint64_t>(m.rows * m.cols) / 32;
}

double linear_rate(ThreadPool& pool, std::span<const Matrix> matrices, std::int64_t tokens, double seconds) {
  return rate(pool, matrices, tokens, seconds);
}
double linear_rate(ThreadPool& pool, std::span<const Mxfp4Matrix> matrices, std::int64_t tokens, double seconds) {
  return rate(pool, matrices, tokens, seconds);
}

}  // namespace day0::cpu
