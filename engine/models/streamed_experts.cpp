#include "models/streamed_experts.h"

#include <algorithm>
#include <future>

#include "models/expert_locations.h"

namespace day0::models {
namespace {

// Experts read while the previous group computes: enough for the reads of a group to keep the
// store's readers busy, few enough that the first group's read (which nothing overlaps) is short.
constexpr std::size_t kGroup = 8;

}  // namespace

std::uint64_t routed_expert_bytes(const io::Checkpoint& checkpoint, std::span<const ExpectedTensor> manifest) {
  std::uint64_t bytes = 0;
  for (const ExpectedTensor& t : manifest) {
    if (t.role != TensorRole::routed_experts) continue;
    if (const auto ref = checkpoint.find(t.name)) bytes += ref->info->nbytes();
  }
  return bytes;
}

std::uint64_t expert_cache_for_tokens(std::uint64_t expert_bytes, const MoeLayout& moe, std::uint64_t slots_per_token) {
  if (expert_bytes == 0) return 0;
  const auto experts = static_cast<std::uint64_t>(std::max<std::int64_t>(1, moe.moe_layers * moe.routed_experts));
  const std::uint64_t slot = (expert_bytes / experts + 63) / 64 * 64;
  return slot * static_cast<std::uint64_t>(std::max<std::int64_t>(1, moe.experts_per_token)) * slots_per_token;
}

Result<std::unique_ptr<StreamedExperts>> StreamedExperts::open(const io::Checkpoint& checkpoint,
                                                               std::span<const ExpectedTensor> manifest,
                                                               const ExpertStreamingOptions& options,
                                                               std::size_t min_slots,
                                                               experts::ExpertCache::Check check) {
  DAY0_ASSIGN_OR_RETURN(auto locations, expert_locations(checkpoint, manifest));
  if (locations.empty()) return error(ErrorCode::unsupported, "this model has no routed experts to stream");
  std::unique_ptr<StreamedExperts> out(new StreamedExperts());
  for (const auto& l : locations) out->expert_bytes_ += l.bytes;
  std::vector<std::filesystem::path> shards;
  for (const auto& s : checkpoint.shards()) shards.push_back(s.path());
  DAY0_ASSIGN_OR_RETURN(auto store, experts::ExpertStore::open(std::move(shards), std::move(locations),
                                                               {.readers = options.readers, .direct = options.direct}));
  out->store_ = std::move(store);
  DAY0_ASSIGN_OR_RETURN(out->cache_,
                        experts::ExpertCache::create(out->store_, options.cache_bytes, min_slots, std::move(check)));
  return out;
}

Result<std::uint64_t> StreamedExperts::offset(std::int32_t layer, std::string_view suffix) const {
  // Expert 0 of the layer stands for all of them (expert_locations() checked the shapes).
  const ExpertLocation* loc = store_->location(layer, 0);
  if (loc == nullptr) return error(ErrorCode::internal, "layer " + std::to_string(layer) + " has no routed experts");
  std::uint64_t at = 0;
  for (const auto& r : loc->ranges) {
    if (r.tensor.size() >= suffix.size() && r.tensor.compare(r.tensor.size() - suffix.size(), suffix.size(), suffix) == 0)
      return at;
    at += r.length;
  }
  return error(ErrorCode::internal,
               "layer " + std::to_string(layer) + "'s experts have no tensor ending in " + std::string(suffix));
}

Status StreamedExperts::for_each(std::int32_t layer, std::span<const std::int32_t> experts,
                                 const std::function<Status(std::size_t, const std::uint8_t*)>& fn) {
  using Lease = experts::ExpertCache::Lease;
  const std::size_t free = std::max<std::size_t>(cache_->free_slots(), 1);
  if (experts.size() <= kGroup && experts.size() <= free) {
    // A decode step's experts: read the misses together, then run them all.
    DAY0_ASSIGN_OR_RETURN(auto lease, cache_->acquire(layer, experts));
    for (std::size_t i = 0; i < experts.size(); ++i) DAY0_RETURN_IF_ERROR(fn(i, lease.data(i)));
    return Status::ok();
  }
  if (free < 2) {
    for (std::size_t i = 0; i < experts.size(); ++i) {
      DAY0_ASSIGN_OR_RETURN(auto lease, cache_->acquire(layer, experts.subspan(i, 1)));
      DAY0_RETURN_IF_ERROR(fn(i, lease.data(0)));
    }
    return Status::ok();
  }
  // Many experts (a prefill chunk reaches most of a layer's): groups of at most kGroup, and at
  // most half the free slots, the next group read on another thread while this one runs.
  const std::size_t group = std::min(free / 2, kGroup);
  const auto fetch = [this, layer, experts, group](std::size_t begin) {
    const auto part = experts.subspan(begin, std::min(group, experts.size() - begin));
    return std::async(std::launch::async, [this, layer, part] { return cache_->acquire(layer, part); });
  };
  std::future<Result<Lease>> next = fetch(0);
  for (std::size_t begin = 0; begin < experts.size(); begin += group) {
    Result<Lease> current = next.get();
    if (!current) return current.status();
    if (begin + group < experts.size()) next = fetch(begin + group);
    Status status;
    for (std::size_t i = 0; status.is_ok() && i < current->size(); ++i) status = fn(begin + i, current->data(i));
    if (!status.is_ok()) return status;  // `next` finishes (and its lease ends) as it goes
  }
  return Status::ok();
}

ExpertStreaming StreamedExperts::report() const {
  const auto s = cache_->stats();
  ExpertStreaming r;
  r.streamed = true;
  r.direct = store_->direct_active();
  r.cache_bytes = cache_->bytes();
  r.expert_bytes = expert_bytes_;
  r.lookups = s.lookups;
  r.hits = s.hits;
  r.misses = s.misses;
  r.evictions = s.evictions;
  r.bytes_read = s.bytes_read;
  r.read_seconds = s.read_seconds;
  return r;
}

}  // namespace day0::models
