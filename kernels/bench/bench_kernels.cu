// day0-kernel-bench: times each kernel family on the GPU (device events, warm-up, median of
// repeated runs over buffers rotated to defeat the L2) and reports achieved bandwidth against
// a device-to-device copy measured in the same run. Correctness is the tests' job
// (tests/kernels); this program only measures. Output: a table, then one JSON line.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "mxfp4_fp8.h"

namespace {

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "day0-kernel-bench: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

constexpr int kSets = 4;        // rotated input/output sets, each larger than the L2
constexpr int kRepeats = 50;

template <typename Launch>
double median_ms(Launch launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) launch(i % kSets);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int i = 0; i < kRepeats; ++i) {
    CHECK(cudaEventRecord(a));
    launch(i % kSets);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  // Default: 4 Mi blocks = 128 Mi values (one gpt-oss-120b layer's 128 experts hold 37 Mi blocks).
  const long long n_blocks = argc > 1 ? std::atoll(argv[1]) : (4ll << 20);
  int device = 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDevice(&device));
  CHECK(cudaGetDeviceProperties(&prop, device));

  std::vector<uint8_t> blocks(static_cast<size_t>(n_blocks) * 16), scales(static_cast<size_t>(n_blocks));
  std::mt19937 rng(20261130);
  for (auto& b : blocks) b = static_cast<uint8_t>(rng());
  for (auto& s : scales) s = static_cast<uint8_t>(100 + rng() % 50);

  struct Set {
    uint8_t *blocks, *scales, *fp8;
    int16_t* exponent;
    uint16_t* bf16;
  } sets[kSets];
  for (auto& s : sets) {
    CHECK(cudaMalloc(&s.blocks, blocks.size()));
    CHECK(cudaMalloc(&s.scales, scales.size()));
    CHECK(cudaMalloc(&s.fp8, blocks.size() * 2));
    CHECK(cudaMalloc(&s.exponent, scales.size() * 2));
    CHECK(cudaMalloc(&s.bf16, blocks.size() * 4));
    CHECK(cudaMemcpy(s.blocks, blocks.data(), blocks.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(s.scales, scales.data(), scales.size(), cudaMemcpyHostToDevice));
  }

  const double n = static_cast<double>(n_blocks);
  const double copy_bytes = 2.0 * static_cast<double>(blocks.size() * 4);  // read + write
  const double copy_ms = median_ms([&](int i) {
    CHECK(cudaMemcpyAsync(sets[i].bf16, sets[(i + 1) % kSets].bf16, blocks.size() * 4, cudaMemcpyDeviceToDevice));
  });
  const double fp8_ms = median_ms([&](int i) {
    CHECK(day0::kernels::mxfp4_to_fp8_e4m3(sets[i].blocks, sets[i].scales, n_blocks, sets[i].fp8, sets[i].exponent, 0));
  });
  const double bf16_ms = median_ms([&](int i) {
    CHECK(day0::kernels::mxfp4_to_bf16(sets[i].blocks, sets[i].scales, n_blocks, sets[i].bf16, 0));
  });
  // Bytes each conversion must move: 17 per block in; out 32 + 2 (FP8 + exponent) or 64 (bf16).
  const double fp8_gbs = n * 51.0 / (fp8_ms * 1e6), bf16_gbs = n * 81.0 / (bf16_ms * 1e6);
  const double copy_gbs = copy_bytes / (copy_ms * 1e6);
  std::printf("device: %s (sm_%d%d), %lld MXFP4 blocks (%.1f MiB in)\n", prop.name, prop.major, prop.minor,
              n_blocks, n * 17.0 / (1 << 20));
  std::printf("%-22s %10s %10s %10s\n", "kernel", "ms", "GB/s", "of copy");
  std::printf("%-22s %10.4f %10.0f %9.0f%%\n", "d2d copy (reference)", copy_ms, copy_gbs, 100.0);
  std::printf("%-22s %10.4f %10.0f %9.0f%%\n", "mxfp4_to_fp8_e4m3", fp8_ms, fp8_gbs, 100.0 * fp8_gbs / copy_gbs);
  std::printf("%-22s %10.4f %10.0f %9.0f%%\n", "mxfp4_to_bf16", bf16_ms, bf16_gbs, 100.0 * bf16_gbs / copy_gbs);
  std::printf("{\"device\":\"%s\",\"blocks\":%lld,\"copy_gbs\":%.0f,\"mxfp4_to_fp8_ms\":%.4f,\"mxfp4_to_fp8_gbs\":%.0f,"
              "\"mxfp4_to_bf16_ms\":%.4f,\"mxfp4_to_bf16_gbs\":%.0f}\n",
              prop.name, n_blocks, copy_gbs, fp8_ms, fp8_gbs, bf16_ms, bf16_gbs);
  for (auto& s : sets) {
    cudaFree(s.blocks);
    cudaFree(s.scales);
    cudaFree(s.fp8);
    cudaFree(s.exponent);
    cudaFree(s.bf16);
  }
  return 0;
}
