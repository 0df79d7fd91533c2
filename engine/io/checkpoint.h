#pragma once
// A Hugging Face checkpoint folder: config.json plus one `model.safetensors`, or shards listed
// by `model.safetensors.index.json` ({"metadata": {"total_size": N}, "weight_map": {tensor:
// shard}}). Shard names come from a file downloaded from the internet: they must be plain file
// names inside the folder.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "day0/status.h"
#include "io/safetensors.h"

namespace day0::io {

inline constexpr std::string_view kIndexFileName = "model.safetensors.index.json";
inline constexpr std::string_view kSingleFileName = "model.safetensors";

struct CheckpointIndex {
  std::optional<std::uint64_t> total_size;        // metadata.total_size, when given
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
  std::vector<std::string> shards;                // distinct shard names, sorted
};

// Parses and validates an index file (JSON object, string values, safe shard names).
Result<CheckpointIndex> parse_checkpoint_index(std::string_view text, const std::string& file_name);
Result<CheckpointIndex> read_checkpoint_index(const std::filesystem::path& path);

// A tensor found in one of the shards.
struct TensorRef {
  const SafetensorsFile* file = nullptr;
  const TensorInfo* info = nullptr;
};

class Checkpoint {
 public:
  // Opens and validates every shard of the folder (mapped, not read).
  static Result<std::unique_ptr<Checkpoint>> open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<SafetensorsFile>& shards() const { return shards_; }
  const std::map<std::string, TensorRef, std::less<>>& tensors() const { return tensors_; }
  std::optional<TensorRef> find(std::string_view name) const;
  // Warnings that did not stop loading (e.g. tensors a shard holds that the index omits).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::filesystem::path dir_;
  std::vector<SafetensorsFile> shards_;
  std::map<std::string, TensorRef, std::less<>> tensors_;
  std::vector<std::string> warnings_;
};

}  // namespace day0::io
