// The CPU thread pool under the pattern a decode step produces: hundreds of thousands of short
// loops back to back, their sizes (and so their chunk counts) changing from one loop to the
// next, with workers that are sometimes spinning, sometimes asleep, sometimes still leaving the
// previous loop when the next one is published. Every index of every loop must be visited
// exactly once, and every loop must return.
//
// A watchdog ends the program with a message if a loop never returns (a lost chunk or a lost
// wake-up would otherwise hang until the test runner's timeout).
#include <QtTest>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

using namespace day0;

namespace {

class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, limit, [this] { return done_; }))
            qFatal("a parallel_for did not return within %lld s", static_cast<long long>(limit.count()));
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// Runs `loops` loops on `pool` with sizes drawn by `next_size`, checking each one's coverage.
template <typename NextSize>
void run_loops(ThreadPool& pool, int loops, NextSize next_size) {
  std::vector<std::atomic<std::uint32_t>> visits(4096);
  for (int loop = 1; loop <= loops; ++loop) {
    const std::size_t n = next_size();
    pool.parallel_for(n, 1, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) visits[i].fetch_add(1, std::memory_order_relaxed);
    });
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t v = visits[i].exchange(0, std::memory_order_relaxed);
      if (v != 1) QFAIL(qPrintable(QString("loop %1 (n = %2): index %3 visited %4 times").arg(loop).arg(n).arg(i).arg(v)));
    }
  }
}

}  // namespace

class TestThreadPool : public QObject {
  Q_OBJECT
 private slots:
  // Chunk counts alternating between 2 and the maximum: a worker leaving a small loop must not
  // take a chunk of the larger one that follows, nor count one twice.
  void alternatingChunkCounts() {
    Watchdog watchdog(std::chrono::seconds(120));
    for (const std::size_t threads : {2u, 3u, 5u, 8u}) {
      ThreadPool pool(threads);
      bool small = false;
      run_loops(pool, 60000, [&] {
        small = !small;
        return small ? std::size_t{2} : std::size_t{4096};
      });
      if (QTest::currentTestFailed()) return;
    }
  }

  // Random sizes, including 0 and 1 (run on the caller alone) and sizes below the chunk count.
  void randomSizes() {
    Watchdog watchdog(std::chrono::seconds(120));
    std::mt19937 rng(17);
    ThreadPool pool(4);
    run_loops(pool, 100000, [&] { return static_cast<std::size_t>(rng() % 40); });
  }

  // Pauses long enough for the workers to fall asleep between loops: each loop must wake them
  // (or run on the caller) and return.
  void wakesSleepingWorkers() {
    Watchdog watchdog(std::chrono::seconds(120));
    ThreadPool pool(3);
    for (int round = 0; round < 40; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::atomic<std::size_t> covered{0};
      pool.parallel_for(64, 1, [&](std::size_t b, std::size_t e) { covered.fetch_add(e - b); });
      QCOMPARE(covered.load(), std::size_t{64});
    }
  }

  // A pool is destroyed cleanly whether its workers are spinning or asleep.
  void destroysWhileSpinningOrAsleep() {
    Watchdog watchdog(std::chrono::seconds(60));
    for (int i = 0; i < 200; ++i) {
      ThreadPool pool(4);
      std::atomic<std::size_t> sum{0};
      pool.parallel_for(100, 1, [&](std::size_t b, std::size_t e) { sum.fetch_add(e - b); });
      QCOMPARE(sum.load(), std::size_t{100});
      if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
