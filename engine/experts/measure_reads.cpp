// measure_expert_reads (day0/model_tools.h): the expert store timed on a real checkpoint.
#include <chrono>

#include "day0/model_tools.h"
#include "experts/expert_store.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/architecture.h"
#include "models/expert_locations.h"

namespace day0 {

Result<ExpertReadFigures> measure_expert_reads(const std::filesystem::path& dir, bool direct, std::size_t readers,
                                               std::uint64_t max_bytes, std::size_t batch) {
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
  const auto* arch = models::find_architecture(config.model_type());
  if (arch == nullptr)
    return error(ErrorCode::unsupported, "Day0 does not implement model_type \"" + config.model_type() + "\"");
  DAY0_ASSIGN_OR_RETURN(const auto manifest, arch->expected_tensors(config));
  DAY0_ASSIGN_OR_RETURN(const auto checkpoint, io::Checkpoint::open(dir));
  DAY0_ASSIGN_OR_RETURN(auto locations, models::expert_locations(*checkpoint, manifest));
  if (locations.empty()) return error(ErrorCode::unsupported, "this checkpoint has no routed experts");
  std::vector<std::filesystem::path> shards;
  for (const auto& s : checkpoint->shards()) shards.push_back(s.path());
  const auto order = locations;
  DAY0_ASSIGN_OR_RETURN(auto store, experts::ExpertStore::open(std::move(shards), std::move(locations),
                                                               {.readers = readers, .direct = direct}));
  batch = std::max<std::size_t>(batch, 1);
  const std::uint64_t slot = store->max_expert_bytes();
  std::vector<std::uint8_t> buffer(slot * batch);
  ExpertReadFigures f;
  f.direct = store->direct_active();
  f.readers = readers;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < order.size() && (max_bytes == 0 || f.bytes < max_bytes); i += batch) {
    std::vector<experts::ExpertRead> reads;
    for (std::size_t j = i; j < std::min(order.size(), i + batch); ++j)
      reads.push_back({order[j].layer, order[j].expert, std::span<std::uint8_t>(buffer).subspan((j - i) * slot, slot)});
    DAY0_RETURN_IF_ERROR(store->read(reads));
    for (const auto& r : reads) f.bytes += store->bytes(r.layer, r.expert);
    f.experts += reads.size();
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.gb_per_s = f.seconds > 0 ? static_cast<double>(f.bytes) / f.seconds / 1e9 : 0;
  return f;
}

}  // namespace day0
