#pragma once
// The expert store: reads routed experts straight from the checkpoint's safetensors shards, each
// expert its byte ranges (models/expert_locations.h) back to back into a buffer the caller owns
// (a GPU cache's pinned staging slot, or any host memory), with pread on a few reader threads so
// several reads are in flight at once. Nothing is mapped, so the hot path takes no page faults;
// with `direct` the shards are read with O_DIRECT (aligned reads through a per-thread bounce
// buffer, for disks where that beats the page cache) and a filesystem without it falls back to
// ordinary reads, which `direct_active()` reports.
//
// A shard that changes underneath (its size or modification time differs from when the store
// opened it, or a read comes back short) fails that read with a message naming the shard; the
// store never reads past what it checked and never crashes on it.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "day0/status.h"
#include "models/expert_locations.h"

namespace day0::experts {

struct StoreOptions {
  std::size_t readers = 4;  // threads issuing preads; reads of one batch run on all of them
  bool direct = false;      // O_DIRECT where the filesystem allows it
};

struct StoreStats {
  std::uint64_t experts = 0;  // experts read whole
  std::uint64_t bytes = 0;
  double read_seconds = 0;    // summed over reader threads (wall time is less with several)
};

// One expert to read and where its bytes go (at least ExpertStore::bytes(layer, expert) of them).
struct ExpertRead {
  std::int32_t layer = 0;
  std::int32_t expert = 0;
  std::span<std::uint8_t> destination;
};

class ExpertStore {
 public:
  // `shards` are the checkpoint's shard files in Checkpoint::shards() order (what the ranges'
  // `shard` indexes); `experts` comes from expert_locations().
  static Result<std::unique_ptr<ExpertStore>> open(std::vector<std::filesystem::path> shards,
                                                   std::vector<models::ExpertLocation> experts,
                                                   const StoreOptions& options = {});
  ~ExpertStore();
  ExpertStore(const ExpertStore&) = delete;
  ExpertStore& operator=(const ExpertStore&) = delete;

  // The bytes of one expert read whole, or 0 for an expert the checkpoint does not have.
  std::uint64_t bytes(std::int32_t layer, std::int32_t expert) const;
  // Where an expert's bytes lie, or null for one the checkpoint does not have. read() places its
  // ranges back to back in this order.
  const models::ExpertLocation* location(std::int32_t layer, std::int32_t expert) const;
  std::uint64_t max_expert_bytes() const { return max_expert_bytes_; }
  bool direct_active() const { return direct_active_; }

  // Reads the experts on the reader threads and returns when all are in (or the first error,
  // after the rest have stopped). Safe to call from several threads.
  Status read(std::span<const ExpertRead> experts);

  StoreStats stats() const;

 private:
  struct Shard {
    std::filesystem::path path;
    int fd = -1;         // buffered reads
    int direct_fd = -1;  // O_DIRECT, or -1
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
  };
  struct Job;    // one range of one expert
  struct Batch;  // the jobs of one read() call

  ExpertStore() = default;
  void reader_loop();
  Status read_range(const Job& job, std::vector<std::uint8_t>& bounce);
  Status check_unchanged(const Shard& shard) const;

  std::vector<Shard> shards_;
  std::map<std::pair<std::int32_t, std::int32_t>, models::ExpertLocation> experts_;
  std::uint64_t max_expert_bytes_ = 0;
  std::uint64_t max_range_bytes_ = 0;
  bool direct_active_ = false;

  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::deque<Job> queue_;
  bool stop_ = false;
  StoreStats stats_;
  std::vector<std::thread> readers_;
};

}  // namespace day0::experts
