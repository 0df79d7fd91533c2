#pragma once
// A fixed pool of worker threads for data-parallel loops on the CPU backend. parallel_for
// splits [0, n) into contiguous chunks, runs them on the workers and the calling thread, and
// returns when all are done. One loop runs at a time per pool (the engine thread owns it).
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace day0 {

class ThreadPool {
 public:
  // threads == 0: one per hardware thread.
  explicit ThreadPool(std::size_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const { return workers_.size() + 1; }

  // fn(begin, end) for chunks of at least `grain` items.
  void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn);

 private:
  void worker_loop(std::size_t index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const std::function<void(std::size_t, std::size_t)>* job_ = nullptr;
  std::size_t job_n_ = 0;
  std::size_t chunks_ = 0;
  std::size_t next_chunk_ = 0;
  std::size_t chunks_done_ = 0;
  std::size_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace day0
