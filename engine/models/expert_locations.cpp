#include "models/expert_locations.h"

#include <algorithm>
#include <map>
#include <utility>

namespace day0::models {

Result<std::vector<ExpertLocation>> expert_locations(const io::Checkpoint& checkpoint,
                                                     std::span<const ExpectedTensor> manifest) {
  // Experts per layer: the stacked tensors' first dimension, or one past the highest per-expert
  // index. The manifest's stacked tensors of a layer agree on it; the checkpoint must too.
  std::map<std::int32_t, std::int64_t> experts_in_layer;
  for (const ExpectedTensor& t : manifest) {
    if (t.role != TensorRole::routed_experts) continue;
    if (t.layer < 0) return error(ErrorCode::internal, "the manifest gives routed-expert tensor " + t.name + " no layer");
    const std::int64_t n = t.expert < 0 ? (t.shape.empty() ? 0 : static_cast<std::int64_t>(t.shape[0])) : t.expert + 1;
    auto& e = experts_in_layer[t.layer];
    if (t.expert < 0 && e > 0 && n != e)
      return error(ErrorCode::internal, "the manifest stacks " + std::to_string(n) + " experts in " + t.name +
                                            " but " + std::to_string(e) + " in other tensors of layer " +
                                            std::to_string(t.layer));
    e = std::max(e, n);
  }
  std::map<std::pair<std::int32_t, std::int32_t>, ExpertLocation> by_expert;
  const auto* first_shard = checkpoint.shards().data();
  for (const ExpectedTensor& t : manifest) {
    if (t.role != TensorRole::routed_experts) continue;
    const auto ref = checkpoint.find(t.name);
    if (!ref) return error(ErrorCode::not_found, "expert tensor " + t.name + " is missing from the checkpoint");
    const io::TensorInfo& info = *ref->info;
    // Float experts may be stored as BF16, F16 or F32 (the loader reads all three): the shape is
    // what must match; the bytes are what the file holds.
    const std::int64_t n = experts_in_layer[t.layer];
    if (info.shape != t.shape || (t.expert < 0 && (n <= 0 || info.nbytes() % static_cast<std::uint64_t>(n) != 0))) {
      const auto text = [](const std::vector<std::uint64_t>& shape) {
        std::string s = "[";
        for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
        return s + "]";
      };
      return error(ErrorCode::corrupt_data, "expert tensor " + t.name + " has shape " + text(info.shape) +
                                                "; config.json implies " + text(t.shape));
    }
    const auto shard = static_cast<std::size_t>(ref->file - first_shard);
    const std::uint64_t start = ref->file->file_offset(info);
    const auto add = [&](std::int32_t expert, std::uint64_t offset, std::uint64_t length) {
      ExpertLocation& loc = by_expert[{t.layer, expert}];
      loc.layer = t.layer;
      loc.expert = expert;
      loc.ranges.push_back({shard, offset, length, t.name});
      loc.bytes += length;
    };
    if (t.expert >= 0) {
      add(t.expert, start, info.nbytes());
    } else {
      const std::uint64_t per = info.nbytes() / static_cast<std::uint64_t>(n);
      for (std::int32_t e = 0; e < n; ++e) add(e, start + static_cast<std::uint64_t>(e) * per, per);
    }
  }
  std::vector<ExpertLocation> out;
  out.reserve(by_expert.size());
  for (auto& [key, loc] : by_expert) out.push_back(std::move(loc));
  return out;
}

}  // namespace day0::models
