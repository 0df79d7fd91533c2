#include "day0/devices.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backend/cpu/cpu_kernels.h"
#include "limits/memory_plan.h"

#ifdef DAY0_HAVE_CUDA
#include "backend/cuda/cuda_devices.h"
#endif

namespace day0 {
namespace {

CpuInfo discover_cpu() {
  CpuInfo cpu;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) cpu.name = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  if (cpu.name.empty()) cpu.name = "CPU";
  cpu.threads = static_cast<int>(std::thread::hardware_concurrency());
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0)
    cpu.memory = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  return cpu;
}

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

double measure_cpu_read_gbps(int threads) {
  const int n = threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Well past any last-level cache, within what the machine can spare.
  std::uint64_t bytes = 1ull << 30;
  if (const std::uint64_t avail = available_memory_bytes(); avail > 0) bytes = std::min(bytes, avail / 8);
  bytes = std::max<std::uint64_t>(bytes, 64ull << 20) / (64 * static_cast<std::uint64_t>(n)) * 64 * n;
  const std::size_t words = bytes / 8, per = words / static_cast<std::size_t>(n);
  std::unique_ptr<std::uint64_t[]> buffer(new (std::nothrow) std::uint64_t[words]);
  if (!buffer) return 0.0;
  std::vector<std::uint64_t> sinks(static_cast<std::size_t>(n) * 8);
  const auto run = [&](bool write) {
    std::vector<std::thread> pool;
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < n; ++t)
      pool.emplace_back([&, t] {
        std::uint64_t* p = buffer.get() + static_cast<std::size_t>(t) * per;
        if (write) {
          std::memset(p, t + 1, per * 8);
          return;
        }
        // Four independent sums: loads, not additions, set the pace.
        std::uint64_t a = 0, b = 0, c = 0, d = 0;
        for (std::size_t i = 0; i + 4 <= per; i += 4) a += p[i], b += p[i + 1], c += p[i + 2], d += p[i + 3];
        sinks[static_cast<std::size_t>(t) * 8] = a + b + c + d;
      });
    for (auto& th : pool) th.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  run(true);  // touch every page first: the reads must not count page faults
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) best = std::min(best, run(false));
  return static_cast<double>(words * 8) / best / 1e9;
}

std::string cpu_kernel_description() { return cpu::kernel_description(); }

std::uint64_t available_memory_bytes() { return limits::available_memory().value_or(0); }

DeviceReport discover_devices() {
  DeviceReport report;
  report.cpu = discover_cpu();
#ifdef DAY0_HAVE_CUDA
  if (!cuda::list_devices(&report.gpus, &report.gpu_problem)) report.gpus.clear();
#else
  report.gpu_problem = "this build of Day0 has no CUDA backend (configured with DAY0_CUDA=OFF)";
#endif
  return report;
}

std::vector<std::string> describe_devices(const DeviceReport& report) {
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("cpu: {}, {} threads, {:.1f} GiB RAM", report.cpu.name, report.cpu.threads, gib(report.cpu.memory)));
  for (const auto& gpu : report.gpus) {
    lines.push_back(fmt::format("cuda:{}: {}, sm_{}{}, {} SMs, {:.1f} GiB ({:.1f} GiB free), {} workspace", gpu.index,
                                gpu.name, gpu.compute_major, gpu.compute_minor, gpu.multiprocessors,
                                gib(gpu.total_memory), gib(gpu.free_memory), gpu.fp8 ? "FP8" : "BF16"));
  }
  if (report.gpus.empty()) lines.push_back("gpu: none (" + report.gpu_problem + "); using the CPU");
  return lines;
}

}  // namespace day0
