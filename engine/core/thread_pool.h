#pragma once
// A fixed pool of worker threads for data-parallel loops on the CPU backend. parallel_for
// splits [0, n) into contiguous chunks, runs them on the workers and the calling thread, and
// returns when all are done. One loop runs at a time per pool (the engine thread owns it).
//
// A decode step runs a few hundred short loops (one per weight matrix), so a loop must start
// and end in microseconds: the callable is passed by reference (no allocation, no copy), chunks
// are claimed with one atomic operation, and idle workers spin for a short while before they
// sleep, so the next loop of the same step finds them awake.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace day0 {

// A non-owning reference to a callable `void(std::size_t begin, std::size_t end)`: what
// parallel_for takes instead of a std::function, so that passing a lambda allocates nothing.
// The callable must outlive the call (a temporary lambda argument does).
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& f)  // NOLINT: implicit, so that call sites pass lambdas as before
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::size_t b, std::size_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
  void operator()(std::size_t begin, std::size_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, std::size_t, std::size_t);
};

class ThreadPool {
 public:
  // threads == 0: one per hardware thread. DAY0_CPU_AFFINITY=1 pins worker i to the i-th CPU
  // the process may run on (the calling thread is left where the system puts it).
  explicit ThreadPool(std::size_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const { return workers_.size() + 1; }

  // fn(begin, end) for contiguous chunks of at least `grain` items.
  void parallel_for(std::size_t n, std::size_t grain, RangeFn fn);

 private:
  void worker_loop(std::size_t index);
  // Claims the next chunk of loop `generation`; false when that loop has none left (or is over).
  bool claim(std::uint32_t generation, std::uint32_t* chunk);
  void run_chunks(std::uint32_t generation);

  std::vector<std::thread> workers_;
  // The current loop in one word: its generation (high 32 bits), its number of chunks (next 16)
  // and the next unclaimed chunk (low 16). A claim is a compare-and-swap on the whole word, so a
  // worker still holding an older generation can never claim a chunk of a newer loop, and the
  // bound it checks is always the claimed loop's own. The job fields below are read only after a
  // successful claim: the caller writes them before publishing the word and rewrites them only
  // after every chunk of the loop is done, which cannot happen while a claimed chunk is running.
  std::atomic<std::uint64_t> ticket_{0};
  const RangeFn* job_ = nullptr;
  std::size_t job_n_ = 0;
  std::uint32_t job_chunks_ = 0;
  std::atomic<std::uint32_t> chunks_done_{0};
  std::uint32_t generation_ = 0;  // the caller's copy
  // Sleeping workers wait on this; the caller notifies only when one may be asleep.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace day0
