#pragma once
// Helpers of the GPU tests: device buffers with poisoned guard regions (a write past the end of
// an output is caught), host <-> device copies, random data, bf16 rounding, relative errors.
// Every GPU test program exits with 77 (ctest: skipped) when no CUDA device is usable.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "formats/float_formats.h"
#include "models/loaded_model.h"

namespace day0::gpu_test {

#define CUDA_VERIFY(expr)                                                                                        \
  do {                                                                                                           \
    const cudaError_t cuda_verify_error_ = (expr);                                                               \
    QVERIFY2(cuda_verify_error_ == cudaSuccess,                                                                  \
             qPrintable(QStringLiteral("%1 failed: %2")                                                          \
                            .arg(QLatin1String(#expr), QLatin1String(cudaGetErrorString(cuda_verify_error_))))); \
  } while (0)

inline constexpr std::uint8_t kPoison = 0xCD;
inline constexpr std::size_t kGuard = 4096;

// A device allocation of `bytes` followed by kGuard poisoned bytes; the usable part starts
// poisoned too, so unwritten outputs show.
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  explicit GuardedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&p_, bytes + kGuard) == cudaSuccess)
      cudaMemset(p_, kPoison, bytes + kGuard);
    else
      p_ = nullptr;
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  GuardedBuffer(GuardedBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  ~GuardedBuffer() {
    if (p_ != nullptr) cudaFree(p_);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  bool guard_intact() const {
    std::vector<std::uint8_t> g(kGuard);
    if (cudaMemcpy(g.data(), static_cast<std::uint8_t*>(p_) + bytes_, kGuard, cudaMemcpyDeviceToHost) != cudaSuccess)
      return false;
    for (auto b : g)
      if (b != kPoison) return false;
    return true;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename T>
GuardedBuffer to_device(const std::vector<T>& host) {
  GuardedBuffer b(host.size() * sizeof(T));
  cudaMemcpy(b.as<void>(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return b;
}

template <typename T>
std::vector<T> to_host(const GuardedBuffer& b, std::size_t n) {
  std::vector<T> out(n);
  cudaDeviceSynchronize();
  cudaMemcpy(out.data(), b.as<void>(), n * sizeof(T), cudaMemcpyDeviceToHost);
  return out;
}

inline std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float sd = 1.0f) {
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = formats::f32_to_bf16(v[i]);
  return out;
}

inline std::vector<float> from_bf16(const std::vector<std::uint16_t>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = formats::bf16_to_f32(v[i]);
  return out;
}

// ||a - b|| / ||b|| over n values; NaN anywhere gives infinity.
inline double rel_l2(const float* a, const float* b, std::size_t n) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}
inline double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() != b.size() ? INFINITY : rel_l2(a.data(), b.data(), a.size());
}

// A fixture checkpoint of tests/data/models.
inline std::filesystem::path model_dir(const char* name) {
  return std::filesystem::path(DAY0_TEST_DATA_DIR) / "models" / name;
}

// The model in `dir` loaded on `device` ("cpu", "cuda"), or null with the reason logged.
inline std::unique_ptr<models::LoadedModel> load_on(const std::filesystem::path& dir, ThreadPool& pool,
                                                    const std::string& device, bool bf16_workspace = false) {
  models::LoadOptions options;
  options.device = device;
  options.bf16_workspace = bf16_workspace;
  auto m = models::load_model(dir, pool, options);
  if (!m) qWarning("%s", m.status().message().c_str());
  return m ? std::move(*m) : nullptr;
}

// Views of host vectors as the CPU operators' matrices.
inline cpu::Matrix bf16_matrix(const std::vector<std::uint16_t>& v, std::int64_t rows, std::int64_t cols) {
  return {DType::bf16, reinterpret_cast<const std::uint8_t*>(v.data()), rows, cols};
}
inline cpu::Matrix f32_matrix(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return {DType::f32, reinterpret_cast<const std::uint8_t*>(v.data()), rows, cols};
}

// Mean KL(p || q) of the softmaxes of two [rows, vocab] logit sets, and the share of rows whose
// arg max agrees.
inline std::pair<double, double> kl_and_top1(const std::vector<float>& p_logits, const std::vector<float>& q_logits,
                                             std::int64_t vocab) {
  const std::int64_t rows = static_cast<std::int64_t>(p_logits.size()) / vocab;
  double kl = 0;
  int agree = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* p = p_logits.data() + r * vocab;
    const float* q = q_logits.data() + r * vocab;
    const double pm = *std::max_element(p, p + vocab), qm = *std::max_element(q, q + vocab);
    double pz = 0, qz = 0;
    for (std::int64_t i = 0; i < vocab; ++i) {
      pz += std::exp(p[i] - pm);
      qz += std::exp(q[i] - qm);
    }
    for (std::int64_t i = 0; i < vocab; ++i) {
      const double lp = p[i] - pm - std::log(pz), lq = q[i] - qm - std::log(qz);
      kl += std::exp(lp) * (lp - lq);
    }
    agree += std::max_element(p, p + vocab) - p == std::max_element(q, q + vocab) - q;
  }
  return {kl / static_cast<double>(rows), static_cast<double>(agree) / static_cast<double>(rows)};
}

inline int skip_without_gpu() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    std::printf("SKIP: no usable CUDA device (%s)\n", error != cudaSuccess ? cudaGetErrorString(error) : "none found");
    return 77;
  }
  return 0;
}

}  // namespace day0::gpu_test
