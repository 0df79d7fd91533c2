#pragma once
// gpt-oss's GPU program on the executor (backend/cuda/device_model.h). Dense weights are uploaded once as bf16; experts
// stay MXFP4 on the GPU. Prefill converts each layer's routed experts online into one shared workspace (FP8 E4M3 +
// block exponents on sm_89 and newer, bf16 before) sized for the most experts one layer can route to, reused by every
// layer, and runs grouped tensor-core GEMMs on it; decode reads the MXFP4 blocks directly in fused GEMVs and replays
// the whole step as a CUDA graph.
#include <cstdint>
#include <memory>

#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/loaded_model.h"

namespace day0::cuda {

// Tokens one prefill pass processes at once (longer inputs run in passes of this size).
inline constexpr std::int64_t kGptOssPrefillChunk = 2048;

// The shared expert workspace: slots = min(experts, chunk * top_k) experts, each as large as
// the larger of its gate_up [2I, H] and down [H, I] matrices, at 1 byte + a 2-byte exponent
// per 32 values (FP8) or 2 bytes per value (bf16). The number of layers plays no part.
std::uint64_t gpt_oss_expert_workspace_bytes(std::int64_t experts, std::int64_t top_k, std::int64_t hidden,
                                             std::int64_t inter, std::int64_t chunk, bool fp8);

// What the GPU program will hold for this config (fp8: the FP8 workspace, else bf16), for the
// memory plan made before loading and shown by `inspect`.
Result<limits::DeviceFootprint> gpt_oss_device_footprint(const io::ModelConfig& config, bool fp8);

Result<std::unique_ptr<models::LoadedModel>> load_gpt_oss(const io::ModelConfig& config,
                                                          std::shared_ptr<const io::Checkpoint> checkpoint,
                                                          ThreadPool& pool, const models::LoadOptions& options);

}  // namespace day0::cuda
