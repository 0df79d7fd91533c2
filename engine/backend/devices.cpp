#include "day0/devices.h"

#include <unistd.h>
#include <fstream>
#include <thread>

#include <fmt/format.h>

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
