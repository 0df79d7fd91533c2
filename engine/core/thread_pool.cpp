#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace day0 {
namespace {

// How long an idle worker polls for the next loop before it sleeps. A decode step's loops are
// tens of microseconds apart; a turn's steps are milliseconds apart.
constexpr auto kSpin = std::chrono::microseconds(500);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void pin_to_cpu(std::thread& thread, std::size_t index) {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  std::size_t seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == index) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(thread.native_handle(), sizeof(one), &one);
      return;
    }
  }
#else
  (void)thread;
  (void)index;
#endif
}

}  // namespace

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const char* affinity = std::getenv("DAY0_CPU_AFFINITY");
  const bool pin = affinity != nullptr && std::strcmp(affinity, "1") == 0;
  for (std::size_t i = 1; i < threads; ++i) {
    workers_.emplace_back([this, i] { worker_loop(i); });
    if (pin) pin_to_cpu(workers_.back(), i);
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

bool ThreadPool::claim(std::uint32_t generation, std::uint32_t* chunk) {
  std::uint64_t t = ticket_.load(std::memory_order_acquire);
  while (true) {
    if (static_cast<std::uint32_t>(t >> 32) != generation) return false;
    const auto chunks = static_cast<std::uint32_t>((t >> 16) & 0xffff);
    const auto next = static_cast<std::uint32_t>(t & 0xffff);
    if (next >= chunks) return false;
    if (ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      *chunk = next;
      return true;
    }
  }
}

void ThreadPool::run_chunks(std::uint32_t generation) {
  std::uint32_t c = 0;
  while (claim(generation, &c)) {
    // The claim synchronised with the publication of this loop, and the loop cannot end (so its
    // fields cannot be rewritten) before this chunk is counted as done.
    (*job_)(c * job_n_ / job_chunks_, (c + 1) * job_n_ / job_chunks_);
    chunks_done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(std::size_t n, std::size_t grain, RangeFn fn) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t max_chunks = (n + grain - 1) / grain;
  const auto chunks = static_cast<std::uint32_t>(std::min({max_chunks, size() * 4, std::size_t{0xffff}}));
  if (chunks <= 1 || workers_.empty()) {
    fn(0, n);
    return;
  }
  // Every chunk of the previous loop is done (the caller waited for that), so no worker can be
  // inside a claimed chunk and the fields may be rewritten.
  const std::uint32_t generation = ++generation_;
  job_ = &fn;
  job_n_ = n;
  job_chunks_ = chunks;
  chunks_done_.store(0, std::memory_order_relaxed);
  ticket_.store((static_cast<std::uint64_t>(generation) << 32) | (static_cast<std::uint64_t>(chunks) << 16),
                std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  }
  run_chunks(generation);  // the caller works too
  for (unsigned spins = 0; chunks_done_.load(std::memory_order_acquire) != chunks; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker_loop(std::size_t) {
  std::uint32_t seen = 0;
  while (true) {
    // Spin for a new generation, then sleep until one is published.
    auto generation = [&] { return static_cast<std::uint32_t>(ticket_.load(std::memory_order_acquire) >> 32); };
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned i = 0; generation() == seen && !stop_.load(std::memory_order_relaxed); ++i) {
      cpu_relax();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > spin_until) {
        std::unique_lock lock(mutex_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        // seq_cst, paired with the caller's store of the ticket and load of sleepers_: either
        // the caller sees this sleeper and notifies, or this check sees the new loop.
        wake_.wait(lock, [&] {
          return stop_.load() || static_cast<std::uint32_t>(ticket_.load(std::memory_order_seq_cst) >> 32) != seen;
        });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
    }
    if (stop_.load()) return;
    seen = generation();
    run_chunks(seen);
  }
}

}  // namespace day0
