#pragma once
// One row per supported architecture: how to read its config, which tensors a checkpoint of
// it holds, and what role each tensor plays. Adding an architecture = one models/<name>.cpp
// file defining its row, one line in registry.cpp, one test row.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <memory>

#include "core/dtype.h"
#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/loaded_model.h"

namespace day0::models {

enum class TensorRole {
  embedding, attention, sparse_attention_indexer, linear_attention, hyper_connection, norm,
  dense_mlp, router, routed_experts, shared_experts, lm_head, vision, mtp, other,
};
std::string_view role_name(TensorRole role);

struct ExpectedTensor {
  std::string name;
  DType dtype;
  std::vector<std::uint64_t> shape;
  TensorRole role = TensorRole::other;
  // Routed experts only: the decoder layer, and the expert the tensor holds, or -1 when it holds
  // every expert of the layer stacked along its first dimension (expert_locations() reads these).
  std::int32_t layer = -1;
  std::int32_t expert = -1;
};

struct MoeLayout {
  std::int64_t layers = 0;
  std::int64_t moe_layers = 0;
  std::int64_t routed_experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t shared_experts = 0;
};

struct Architecture {
  std::string_view model_type;
  std::string_view family;
  std::string_view note;
  Result<MoeLayout> (*moe_layout)(const io::ModelConfig& config);
  // The checkpoint's tensors as the model is released (names, stored dtypes, shapes, roles).
  Result<std::vector<ExpectedTensor>> (*expected_tensors)(const io::ModelConfig& config);
  // Binds the weights for running on the CPU; null while the family can be inspected but not
  // yet run.
  Result<std::unique_ptr<LoadedModel>> (*load)(const io::ModelConfig& config,
                                               std::shared_ptr<const io::Checkpoint> checkpoint, ThreadPool& pool,
                                               const LoadOptions& options);
  // Binds the weights on a GPU (LoadOptions::device "cuda[:N]"); null where the family runs
  // on the CPU only. Set only in builds with the CUDA backend.
  Result<std::unique_ptr<LoadedModel>> (*load_cuda)(const io::ModelConfig& config,
                                                    std::shared_ptr<const io::Checkpoint> checkpoint,
                                                    ThreadPool& pool, const LoadOptions& options) = nullptr;
  // What the GPU path holds for a config (fp8: with the FP8 workspace), for the memory plan made
  // before loading and shown by `inspect`; null where load_cuda is.
  Result<limits::DeviceFootprint> (*device_footprint)(const io::ModelConfig& config, bool fp8) = nullptr;
};

const Architecture* find_architecture(std::string_view model_type);
std::span<const Architecture* const> architectures();

// Role from naming conventions shared by Hugging Face checkpoints, for tensors that no
// architecture lists.
TensorRole classify_by_name(std::string_view tensor_name);

// Logical parameters a stored tensor holds: MXFP4 blocks (U8, `*_blocks`) hold two per byte,
// their E8M0 scales (`*_scales`) are quantisation metadata and hold none.
std::uint64_t stored_params(std::string_view name, DType dtype, std::uint64_t numel, bool mxfp4_checkpoint);

// Whether quantization_config says the experts are MXFP4 (quant_method "mxfp4"): false without
// one; another method is unsupported for `family`.
Result<bool> mxfp4_experts(const io::ModelConfig& config, std::string_view family);

// Shared limits for config fields, so absurd values fail early with a clear message.
inline constexpr io::IntRange kDimRange{1, 1 << 20};
inline constexpr io::IntRange kLayerRange{1, 4096};
inline constexpr io::IntRange kVocabRange{1, 1 << 24};
inline constexpr io::IntRange kExpertRange{1, 1 << 16};

}  // namespace day0::models
