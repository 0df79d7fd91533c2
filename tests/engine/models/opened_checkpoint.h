#pragma once
// A checkpoint folder opened as the engine opens it, for tests that look at its tensors: the
// config, the architecture's manifest of tensors, the mapped shards and, from them, where each
// routed expert lies. Empty members mean the folder did not open.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/architecture.h"
#include "models/expert_locations.h"

namespace day0::test {

struct OpenedCheckpoint {
  std::optional<io::ModelConfig> config;
  std::vector<models::ExpectedTensor> manifest;
  std::shared_ptr<const io::Checkpoint> checkpoint;
  std::vector<models::ExpertLocation> experts;  // empty when expert_locations() refused
  std::vector<std::filesystem::path> shards;    // the shard files, in Checkpoint::shards() order
};

inline OpenedCheckpoint open_checkpoint(const std::filesystem::path& dir) {
  OpenedCheckpoint o;
  auto config = io::ModelConfig::load(dir);
  if (!config) return o;
  const auto* arch = models::find_architecture(config->model_type());
  if (arch == nullptr) return o;
  auto manifest = arch->expected_tensors(*config);
  auto checkpoint = io::Checkpoint::open(dir);
  if (!manifest || !checkpoint) return o;
  o.config = std::move(*config);
  o.manifest = std::move(*manifest);
  o.checkpoint = std::move(*checkpoint);
  for (const auto& s : o.checkpoint->shards()) o.shards.push_back(s.path());
  if (auto experts = models::expert_locations(*o.checkpoint, o.manifest)) o.experts = std::move(*experts);
  return o;
}

// An expert's bytes as the mapped checkpoint holds them, its ranges back to back (what the expert
// store reads into a buffer).
inline std::vector<std::uint8_t> mapped_bytes(const io::Checkpoint& c, const models::ExpertLocation& e) {
  std::vector<std::uint8_t> out;
  for (const auto& r : e.ranges) {
    const auto& shard = c.shards()[r.shard];
    const auto ref = c.find(r.tensor);
    const auto data = shard.data(*ref->info);
    const std::uint64_t at = r.offset - shard.file_offset(*ref->info);
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
               data.begin() + static_cast<std::ptrdiff_t>(at + r.length));
  }
  return out;
}

}  // namespace day0::test
