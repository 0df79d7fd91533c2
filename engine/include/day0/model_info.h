#pragma once
// What Day0 can tell about a model folder before loading it: architecture, parameter counts,
// tensors grouped by role, the expert format, and whether the family is supported. Works on a
// complete checkpoint and on a folder holding only config.json and the shard index (to plan a
// download), in which case the counts come from the configuration.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "day0/status.h"

namespace day0 {

struct TensorGroupInfo {
  std::string role;                             // "routed experts", "attention", ...
  std::uint64_t tensors = 0;
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;                      // 0 when only the index is present
  std::map<std::string, std::uint64_t> dtypes;  // dtype -> tensor count
};

struct ModelInfo {
  std::filesystem::path dir;
  std::string model_type;      // config.json model_type
  std::string architecture;    // config.json architectures[0], when given
  std::string family;          // "gpt-oss", "GLM-5.3-Flash (glm5_next)", or empty when unknown
  bool supported = false;      // a family Day0 implements
  bool demo = false;           // one of Day0's demo models (day0-demo.json in the folder, its "note"
                               // becomes support_note)
  std::string support_note;    // why not, or what is special

  bool weights_present = false;   // all shards found and validated
  std::string count_source;       // "tensors" or "config"
  std::uint64_t n_tensors = 0;
  std::uint64_t n_shards = 0;
  std::uint64_t shards_present = 0;
  std::uint64_t tensor_bytes = 0;  // sum of tensor data (index total_size when no weights)

  std::uint64_t total_params = 0;
  std::uint64_t params_per_expert = 0;         // one routed expert of one layer
  std::uint64_t bytes_per_expert = 0;          // its stored bytes (largest over layers; with the weights)
  std::uint64_t expert_byte_ranges = 0;        // contiguous file ranges that hold one expert
  std::uint64_t active_params_per_token = 0;   // excludes the embedding table and vision tower
  std::uint64_t vision_params = 0;

  std::int64_t layers = 0;
  std::int64_t moe_layers = 0;
  std::int64_t routed_experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t shared_experts = 0;
  bool has_vision = false;

  // The GPU memory plan's inputs (builds with the GPU backend, families with a GPU path; 0
  // otherwise): what the GPU holds besides the caches (weights as it keeps them, workspaces),
  // and the caches for the model's whole context, growth included.
  std::uint64_t gpu_weight_bytes = 0;
  std::uint64_t gpu_workspace_bytes = 0;
  std::uint64_t gpu_context_cache_bytes = 0;
  std::int64_t max_context = 0;

  std::string expert_format;  // "MXFP4", "BF16", "FP8 E4M3", ... or "none" for dense models
  std::vector<TensorGroupInfo> groups;
  std::vector<std::string> warnings;  // disagreements between tensors and config, index issues
};

Result<ModelInfo> inspect_model(const std::filesystem::path& dir);

// What loading on a GPU with `free_bytes` free will plan: the longest context that fits (up to
// the model's) and the bytes then held. out_of_memory says what does not fit; unsupported where
// the model has no GPU path in this build. fp8: the GPU has FP8 tensor cores (sm_89 and newer).
struct GpuFit {
  std::int64_t context = 0;
  std::uint64_t needed = 0;
};
Result<GpuFit> plan_gpu_fit(const std::filesystem::path& dir, std::uint64_t free_bytes, bool fp8 = true);
// Human-readable report (what `day0-cli inspect` prints).
std::string format_model_info(const ModelInfo& info);
// The same as JSON (what `day0-cli inspect --json` prints).
std::string model_info_json(const ModelInfo& info);

}  // namespace day0
