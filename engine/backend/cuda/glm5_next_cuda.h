#pragma once
// glm5_next's (GLM-5.3-Flash) GPU program on the executor (backend/cuda/device_model.h). The
// weights come from the same binding as the CPU model (models/glm5_next_weights.h): dense
// matrices uploaded as bf16, routed experts as stored (bf16 or MXFP4) and reached through a
// table of pointers per layer. Per layer, around each site the mHC collapse and expand
// (kernels/hyper_connection.h); KDA layers run the short convolutions and the exact recurrence
// (kernels/kda.h) on state kept in the session with bounded snapshots; MLA layers append their
// latent to a bf16 cache and attend absorbed over the positions the DSA indexer selected
// (kernels/mla_attention.h, kernels/dsa_indexer.h); MoE layers route with grouped sigmoid
// scores and run the experts (kernels/glm_moe.h). Decode is one CUDA graph per session.
#include <cstdint>
#include <memory>

#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/loaded_model.h"

namespace day0::cuda {

// Tokens one prefill pass processes at once.
inline constexpr std::int64_t kGlm5PrefillChunk = 1024;
// Passes of at least this many tokens run MXFP4 experts through the FP8 workspace on the tensor
// cores; fewer read them in place. Measured at the released shape (H200, 16 layers): a 512-token
// pass takes the same time either way (209.6 / 204.7 ms), 1,024 tokens 1.75x faster through the
// workspace; shorter passes lose (a fixed ~9.6 ms a layer to convert and read the routed experts).
inline constexpr std::int64_t kGlm5MoeGemmTokens = 640;

// What the GPU program holds for this config, for the memory plan made before loading and
// shown by `inspect`.
Result<limits::DeviceFootprint> glm5_next_device_footprint(const io::ModelConfig& config, bool fp8);

Result<std::unique_ptr<models::LoadedModel>> load_glm5_next(const io::ModelConfig& config,
                                                            std::shared_ptr<const io::Checkpoint> checkpoint,
                                                            ThreadPool& pool, const models::LoadOptions& options);

}  // namespace day0::cuda
