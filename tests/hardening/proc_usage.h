#pragma once
// Test helper: what the process holds, from /proc/self (Linux): resident memory, open file
// descriptors and threads, for the soak tests.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

namespace day0::test {

// Under AddressSanitizer and ThreadSanitizer freed memory sits in the allocator's quarantine or
// shadow, so resident memory grows without a leak; there LeakSanitizer checks leaks instead.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kResidentMemoryTracksLeaks = false;
#else
inline constexpr bool kResidentMemoryTracksLeaks = true;
#endif

struct ProcUsage {
  std::uint64_t rss_kib = 0;
  std::size_t fds = 0;
  std::size_t threads = 0;
};

inline ProcUsage proc_usage() {
  ProcUsage u;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) std::istringstream(line.substr(6)) >> u.rss_kib;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++u.fds;
  --u.fds;  // the descriptor the listing itself holds open
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++u.threads;
  return u;
}

// proc_usage() once descriptors and threads stop changing (two readings 50 ms apart agree, for
// up to a second): a thread on its way out is not counted as one that stays.
inline ProcUsage settled_proc_usage() {
  ProcUsage before = proc_usage();
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const ProcUsage now = proc_usage();
    if (now.fds == before.fds && now.threads == before.threads) return now;
    before = now;
  }
  return before;
}

// What each open descriptor refers to ("fd -> target"), for a message when a count differs.
inline std::string open_descriptors() {
  std::string out;
  std::vector<std::filesystem::path> fds;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) fds.push_back(e.path());
  for (const auto& fd : fds) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(fd, ec);
    if (ec) continue;  // the listing's own descriptor, closed by now
    out += fd.filename().string() + " -> " + target.string() + "\n";
  }
  return out;
}

}  // namespace day0::test
