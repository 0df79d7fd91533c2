#pragma once
// Routed experts streamed from the checkpoint instead of read through the memory map: the expert
// store (experts/expert_store.h) and a host expert cache (experts/expert_cache.h) for one loaded
// model, and what a model's MoE needs to use them: where each of an expert's tensors starts in
// its cache slot, and a loop that brings the experts a layer's tokens were routed to into the
// cache in groups that fit it.
//
// A model whose weights do not fit in memory keeps everything else mapped and its experts here:
// the first prompt reads only the experts it routes to, and memory stays within the plan.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "day0/engine.h"
#include "day0/status.h"
#include "experts/expert_cache.h"
#include "io/checkpoint.h"
#include "models/architecture.h"
#include "models/loaded_model.h"

namespace day0::models {

class StreamedExperts {
 public:
  // `min_slots`: the experts one forward needs at once at the least (top_k: one token's).
  static Result<std::unique_ptr<StreamedExperts>> open(const io::Checkpoint& checkpoint,
                                                       std::span<const ExpectedTensor> manifest,
                                                       const ExpertStreamingOptions& options, std::size_t min_slots,
                                                       experts::ExpertCache::Check check = nullptr);

  // Where the range of the tensor named `...<suffix>` starts in a slot of `layer`'s experts (the
  // same for every expert of a layer: stacked slices, or per-expert tensors of equal shapes).
  // An error names the tensor when the layer's experts have none such.
  Result<std::uint64_t> offset(std::int32_t layer, std::string_view suffix) const;

  // Calls fn(i, bytes) for every experts[i] with that expert's bytes in the cache: all at once
  // when they are few (a decode step's), else in groups of up to 8 (and half the free slots), the
  // next group read on another thread while fn runs on this one. The first error (a read, a
  // check, or fn's) ends it.
  Status for_each(std::int32_t layer, std::span<const std::int32_t> experts,
                  const std::function<Status(std::size_t, const std::uint8_t*)>& fn);

  std::uint64_t expert_bytes() const { return expert_bytes_; }  // every routed expert of the checkpoint
  ExpertStreaming report() const;
  experts::ExpertCache& cache() { return *cache_; }

 private:
  std::shared_ptr<experts::ExpertStore> store_;
  std::unique_ptr<experts::ExpertCache> cache_;
  std::uint64_t expert_bytes_ = 0;
};

// The bytes of the routed-expert tensors of `manifest` as `checkpoint` stores them.
std::uint64_t routed_expert_bytes(const io::Checkpoint& checkpoint, std::span<const ExpectedTensor> manifest);
// A cache of `slots_per_token` times one token's experts (top_k slots of an expert's bytes, as
// the cache rounds them), from the experts' total bytes and the MoE layout.
std::uint64_t expert_cache_for_tokens(std::uint64_t expert_bytes, const MoeLayout& moe, std::uint64_t slots_per_token = 1);

}  // namespace day0::models
