#include "backend/cpu/kernel_rates.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/cpu_ops.h"

namespace day0::cpu {
namespace {

// gpt-oss-20b's expert shape (2I x H): typical of the matrices a decode step runs.
constexpr std::int64_t kRows = 5760, kCols = 2880;
// Enough copies to be well past the last-level cache, cycled through.
constexpr int kCopies = 8;
constexpr double kSeconds = 0.25;

template <typename Run>
double time_per_call(Run run) {
  run();  // first touch, out of the measurement
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    run();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < kSeconds);
  return elapsed / calls;
}

}  // namespace

KernelRates measure_kernel_rates(ThreadPool& pool, std::int64_t prefill_tokens) {
  KernelRates r;
  std::mt19937 rng(5);
  const std::size_t bf16_bytes = static_cast<std::size_t>(kRows * kCols) * 2;
  const std::size_t block_bytes = static_cast<std::size_t>(kRows * kCols) / 2;
  const std::size_t scale_bytes = static_cast<std::size_t>(kRows * kCols) / 32;
  std::vector<std::uint8_t> bf16(bf16_bytes * kCopies), blocks(block_bytes * kCopies), scales(scale_bytes * kCopies);
  for (std::size_t i = 0; i < bf16.size(); i += 2) {
    // Values around 0.01 (a bf16 exponent of 120): finite, like trained weights.
    bf16[i] = static_cast<std::uint8_t>(rng());
    bf16[i + 1] = static_cast<std::uint8_t>(0x3C | (rng() & 0x80));
  }
  for (auto& b : blocks) b = static_cast<std::uint8_t>(rng());
  for (auto& s : scales) s = static_cast<std::uint8_t>(0x78 + rng() % 8);
  const auto bf16_matrix = [&](int c) { return Matrix{DType::bf16, bf16.data() + c * bf16_bytes, kRows, kCols}; };
  const auto mx_matrix = [&](int c) {
    return Mxfp4Matrix{blocks.data() + c * block_bytes, scales.data() + c * scale_bytes, kRows, kCols};
  };
  const std::int64_t T = std::max<std::int64_t>(1, prefill_tokens);
  std::vector<float> x(static_cast<std::size_t>(T * kCols)), y(static_cast<std::size_t>(T * kRows));
  for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);

  int copy = 0;
  const double bf16_call = time_per_call([&] {
    linear(pool, x.data(), 1, bf16_matrix(copy), nullptr, y.data());
    copy = (copy + 1) % kCopies;
  });
  r.bf16_gemv_gbps = static_cast<double>(bf16_bytes) / bf16_call / 1e9;
  const double mx_call = time_per_call([&] {
    linear(pool, x.data(), 1, mx_matrix(copy), nullptr, y.data());
    copy = (copy + 1) % kCopies;
  });
  r.mxfp4_gemv_gbps = static_cast<double>(block_bytes + scale_bytes) / mx_call / 1e9;
  const double flops = 2.0 * static_cast<double>(T) * kRows * kCols;
  r.bf16_gflops = flops / time_per_call([&] { linear(pool, x.data(), T, bf16_matrix(0), nullptr, y.data()); }) / 1e9;
  r.mxfp4_gflops = flops / time_per_call([&] { linear(pool, x.data(), T, mx_matrix(0), nullptr, y.data()); }) / 1e9;
  return r;
}

}  // namespace day0::cpu
