#include "core/thread_pool.h"

#include <algorithm>

namespace day0 {

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::parallel_for(std::size_t n, std::size_t grain,
                              const std::function<void(std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t max_chunks = (n + grain - 1) / grain;
  const std::size_t chunks = std::min(max_chunks, size() * 4);
  if (chunks <= 1 || workers_.empty()) {
    fn(0, n);
    return;
  }
  std::unique_lock lock(mutex_);
  job_ = &fn;
  job_n_ = n;
  chunks_ = chunks;
  next_chunk_ = 0;
  chunks_done_ = 0;
  ++generation_;
  work_ready_.notify_all();
  // The caller works too.
  while (next_chunk_ < chunks_) {
    const std::size_t c = next_chunk_++;
    lock.unlock();
    fn(c * n / chunks, (c + 1) * n / chunks);
    lock.lock();
    ++chunks_done_;
  }
  work_done_.wait(lock, [this] { return chunks_done_ == chunks_; });
  job_ = nullptr;
}

void ThreadPool::worker_loop(std::size_t) {
  std::size_t seen = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr && next_chunk_ < chunks_); });
    if (stop_) return;
    seen = generation_;
    while (job_ != nullptr && next_chunk_ < chunks_) {
      const std::size_t c = next_chunk_++;
      const auto* fn = job_;
      const std::size_t n = job_n_, chunks = chunks_;
      lock.unlock();
      (*fn)(c * n / chunks, (c + 1) * n / chunks);
      lock.lock();
      if (++chunks_done_ == chunks_) work_done_.notify_all();
    }
  }
}

}  // namespace day0
