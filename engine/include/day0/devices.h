#pragma once
// What the engine can compute on: the CPU always, NVIDIA GPUs when the CUDA backend is built
// and a driver answers. Without a usable GPU, `gpu_problem` says why, in words a person can act
// on, and the engine runs on the CPU.
#include <cstdint>
#include <string>
#include <vector>

namespace day0 {

struct GpuInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  std::uint64_t total_memory = 0;
  std::uint64_t free_memory = 0;
  bool fp8 = false;  // tensor-core FP8 (sm_89 and newer); otherwise the BF16 workspace is used
};

struct CpuInfo {
  std::string name;
  int threads = 0;
  std::uint64_t memory = 0;  // physical RAM in bytes
};

struct DeviceReport {
  CpuInfo cpu;
  std::vector<GpuInfo> gpus;
  std::string gpu_problem;  // empty when GPUs were found
};

DeviceReport discover_devices();
// Memory the system can give now without swapping (MemAvailable of /proc/meminfo), in bytes;
// 0 when it cannot be read.
std::uint64_t available_memory_bytes();
// The CPU's memory read bandwidth in GB/s (1e9 bytes/s), measured now: `threads` threads
// (0 = one per hardware thread) each stream through their part of a buffer larger than the
// caches; the best of three passes. About a second. The roofline of CPU decoding, which must
// read every active weight once per token.
double measure_cpu_read_gbps(int threads);
// Which CPU kernels the engine runs: "fast (avx512)", "fast (avx2)", "fast (portable)" or
// "reference" (DAY0_CPU_KERNELS, DAY0_CPU_ISA).
std::string cpu_kernel_description();

// One line per device, e.g. "cuda:0 NVIDIA H200, sm_90, 132 SMs, 139.8 GiB (FP8)".
std::vector<std::string> describe_devices(const DeviceReport& report);

}  // namespace day0
