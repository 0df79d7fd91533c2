#pragma once
// The host expert cache: a byte budget of memory split into slots, each holding one routed
// expert as the expert store reads it (its byte ranges back to back, models/expert_locations.h).
// A model that streams its experts asks for the experts a layer's tokens were routed to;
// acquire() reads the ones not in a slot in one batch on the store's reader threads, evicting
// the least recently used experts that no lease holds, and returns where each one's bytes are.
// The bytes stay put until the lease ends.
//
// Every expert read is passed to a check (a damaged MXFP4 scale, say) before any lease sees it;
// an expert that fails it, or a read that fails, leaves no slot behind and fails the acquire with
// the reason, so the next acquire reads it again.
//
// Statistics say what streaming costs: lookups, hits, misses, evictions, bytes read and the time
// acquire() spent waiting for them.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "day0/status.h"
#include "experts/expert_store.h"

namespace day0::experts {

struct CacheStats {
  std::uint64_t lookups = 0;  // experts asked for
  std::uint64_t hits = 0;     // of which already in a slot
  std::uint64_t misses = 0;   // read from the checkpoint
  std::uint64_t evictions = 0;
  std::uint64_t bytes_read = 0;
  double read_seconds = 0;  // wall time acquire() waited for reads
  double hit_rate() const { return lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0; }
  double read_gb_per_s() const { return read_seconds > 0 ? static_cast<double>(bytes_read) / read_seconds / 1e9 : 0.0; }
};

class ExpertCache {
 public:
  // Checks an expert's bytes once they are read; an error keeps them out of the cache.
  using Check = std::function<Status(std::int32_t layer, std::int32_t expert, const std::uint8_t* bytes)>;

  // Slots of the store's largest expert, as many as `budget_bytes` holds; fewer than `min_slots`
  // is an error that says how much the smallest workable cache needs.
  static Result<std::unique_ptr<ExpertCache>> create(std::shared_ptr<ExpertStore> store, std::uint64_t budget_bytes,
                                                     std::size_t min_slots, Check check = nullptr);
  ~ExpertCache();
  ExpertCache(const ExpertCache&) = delete;
  ExpertCache& operator=(const ExpertCache&) = delete;

  // Experts held in slots while a lease lives; data(i) is the i-th expert asked for.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    ~Lease();
    const std::uint8_t* data(std::size_t i) const { return data_[i]; }
    std::size_t size() const { return data_.size(); }

   private:
    friend class ExpertCache;
    void release();
    ExpertCache* cache_ = nullptr;
    std::vector<std::uint32_t> slots_;
    std::vector<const std::uint8_t*> data_;
  };

  // Makes `experts` of `layer` resident and holds them. Distinct experts only, at most
  // free_slots() of them (slots no other lease holds).
  Result<Lease> acquire(std::int32_t layer, std::span<const std::int32_t> experts);

  // Replaces the check (before the first acquire).
  void set_check(Check check) {
    std::lock_guard lock(mutex_);
    check_ = std::move(check);
  }

  std::size_t slot_count() const { return slot_count_; }
  std::uint64_t slot_bytes() const { return slot_bytes_; }
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(slot_count_) * slot_bytes_; }
  std::size_t free_slots() const;
  CacheStats stats() const;

 private:
  struct Slot {
    std::uint64_t key = 0;  // (layer, expert); valid only when `filled`
    std::uint64_t last_use = 0;
    std::uint32_t pins = 0;
    bool filled = false;
  };
  ExpertCache() = default;
  std::uint8_t* slot_data(std::uint32_t slot) const { return memory_ + static_cast<std::uint64_t>(slot) * slot_bytes_; }
  void unpin(std::span<const std::uint32_t> slots);

  std::shared_ptr<ExpertStore> store_;
  Check check_;
  std::uint64_t slot_bytes_ = 0;
  std::size_t slot_count_ = 0;
  std::uint8_t* memory_ = nullptr;

  mutable std::mutex mutex_;
  std::vector<Slot> slot_state_;
  std::unordered_map<std::uint64_t, std::uint32_t> where_;  // key -> slot
  std::uint64_t clock_ = 0;
  std::size_t pinned_ = 0;  // slots with pins > 0
  CacheStats stats_;
};

}  // namespace day0::experts
