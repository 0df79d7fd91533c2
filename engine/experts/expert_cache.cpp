#include "experts/expert_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>

#include <fmt/format.h>

namespace day0::experts {
namespace {

constexpr std::uint64_t kSlotAlign = 64;
constexpr std::uint64_t kMemoryAlign = 4096;

std::uint64_t key_of(std::int32_t layer, std::int32_t expert) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(layer)) << 32) | static_cast<std::uint32_t>(expert);
}

std::string gib(std::uint64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

}  // namespace

Result<std::unique_ptr<ExpertCache>> ExpertCache::create(std::shared_ptr<ExpertStore> store, std::uint64_t budget_bytes,
                                                         std::size_t min_slots, Check check) {
  if (!store) return error(ErrorCode::invalid_argument, "an expert cache needs an expert store");
  std::unique_ptr<ExpertCache> cache(new ExpertCache());
  cache->slot_bytes_ = std::max<std::uint64_t>(store->max_expert_bytes(), 1);
  cache->slot_bytes_ = (cache->slot_bytes_ + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
  const std::uint64_t count = budget_bytes / cache->slot_bytes_;
  min_slots = std::max<std::size_t>(min_slots, 1);
  if (count < min_slots)
    return error(ErrorCode::out_of_memory,
                 fmt::format("an expert cache of {} holds {} experts of {}; streaming this model needs at least {} "
                             "({})",
                             gib(budget_bytes), count, gib(cache->slot_bytes_), min_slots,
                             gib(cache->slot_bytes_ * min_slots)));
  // Slots are addressed with 32-bit indices; a cache never needs more.
  cache->slot_count_ = static_cast<std::size_t>(std::min<std::uint64_t>(count, 1u << 30));
  const std::uint64_t total =
      (static_cast<std::uint64_t>(cache->slot_count_) * cache->slot_bytes_ + kMemoryAlign - 1) / kMemoryAlign *
      kMemoryAlign;
  cache->memory_ = static_cast<std::uint8_t*>(std::aligned_alloc(kMemoryAlign, total));
  if (cache->memory_ == nullptr)
    return error(ErrorCode::out_of_memory, "cannot allocate an expert cache of " + gib(total));
  cache->slot_state_.resize(cache->slot_count_);
  cache->store_ = std::move(store);
  cache->check_ = std::move(check);
  return cache;
}

ExpertCache::~ExpertCache() { std::free(memory_); }

std::size_t ExpertCache::free_slots() const {
  std::lock_guard lock(mutex_);
  return slot_count_ - pinned_;
}

CacheStats ExpertCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

Result<ExpertCache::Lease> ExpertCache::acquire(std::int32_t layer, std::span<const std::int32_t> experts) {
  // One acquire at a time: the bookkeeping and the reads it starts are one step.
  std::unique_lock lock(mutex_);
  {
    std::vector<std::int32_t> sorted(experts.begin(), experts.end());
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return error(ErrorCode::invalid_argument, "the experts asked for at once must be distinct");
  }
  if (experts.size() > slot_count_ - pinned_)
    return error(ErrorCode::invalid_argument, fmt::format("{} experts asked for at once; the cache has {} free slots",
                                                          experts.size(), slot_count_ - pinned_));
  Lease lease;
  lease.cache_ = this;
  lease.slots_.resize(experts.size());
  lease.data_.resize(experts.size());
  const std::uint64_t now = ++clock_;
  std::vector<std::size_t> missing;  // indices into `experts`
  for (std::size_t i = 0; i < experts.size(); ++i) {
    ++stats_.lookups;
    const auto it = where_.find(key_of(layer, experts[i]));
    if (it == where_.end()) {
      missing.push_back(i);
      continue;
    }
    Slot& s = slot_state_[it->second];
    if (s.pins++ == 0) ++pinned_;
    s.last_use = now;
    lease.slots_[i] = it->second;
    ++stats_.hits;
  }
  if (missing.empty()) {
    for (std::size_t i = 0; i < experts.size(); ++i) lease.data_[i] = slot_data(lease.slots_[i]);
    return lease;
  }
  // Victims: empty slots first, then the least recently used that no lease holds. There are
  // enough: the request fitted the free slots, and its hits took at most their own share.
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t s = 0; s < slot_count_; ++s)
    if (slot_state_[s].pins == 0) candidates.push_back(s);
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(missing.size()),
                    candidates.end(), [&](std::uint32_t a, std::uint32_t b) {
                      const Slot& x = slot_state_[a];
                      const Slot& y = slot_state_[b];
                      if (x.filled != y.filled) return !x.filled;
                      return x.last_use < y.last_use;
                    });
  std::vector<ExpertRead> reads;
  for (std::size_t m = 0; m < missing.size(); ++m) {
    const std::uint32_t slot = candidates[m];
    Slot& s = slot_state_[slot];
    if (s.filled) {
      where_.erase(s.key);
      ++stats_.evictions;
    }
    s.filled = false;
    s.pins = 1;
    ++pinned_;
    s.last_use = now;
    s.key = key_of(layer, experts[missing[m]]);
    lease.slots_[missing[m]] = slot;
    reads.push_back({layer, experts[missing[m]], std::span<std::uint8_t>(slot_data(slot), slot_bytes_)});
  }
  const auto t0 = std::chrono::steady_clock::now();
  Status status = store_->read(reads);
  stats_.read_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t m = 0; status.is_ok() && m < missing.size(); ++m) {
    if (check_) status = check_(layer, experts[missing[m]], slot_data(lease.slots_[missing[m]]));
  }
  if (!status.is_ok()) {
    // The slots just read hold nothing usable; every pin of this lease goes.
    unpin(lease.slots_);
    lease.cache_ = nullptr;
    return status;
  }
  for (std::size_t m = 0; m < missing.size(); ++m) {
    Slot& s = slot_state_[lease.slots_[missing[m]]];
    s.filled = true;
    where_[s.key] = lease.slots_[missing[m]];
    stats_.bytes_read += store_->bytes(layer, experts[missing[m]]);
    ++stats_.misses;
  }
  for (std::size_t i = 0; i < experts.size(); ++i) lease.data_[i] = slot_data(lease.slots_[i]);
  return lease;
}

void ExpertCache::unpin(std::span<const std::uint32_t> slots) {
  for (const std::uint32_t slot : slots) {
    Slot& s = slot_state_[slot];
    if (s.pins > 0 && --s.pins == 0) --pinned_;
  }
}

ExpertCache::Lease::Lease(Lease&& other) noexcept
    : cache_(other.cache_), slots_(std::move(other.slots_)), data_(std::move(other.data_)) {
  other.cache_ = nullptr;
}

ExpertCache::Lease& ExpertCache::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    cache_ = other.cache_;
    slots_ = std::move(other.slots_);
    data_ = std::move(other.data_);
    other.cache_ = nullptr;
  }
  return *this;
}

ExpertCache::Lease::~Lease() { release(); }

void ExpertCache::Lease::release() {
  if (cache_ == nullptr) return;
  std::lock_guard lock(cache_->mutex_);
  cache_->unpin(slots_);
  cache_ = nullptr;
  slots_.clear();
  data_.clear();
}

}  // namespace day0::experts
