#pragma once
// glm5_next (GLM-5.3-Flash) text generation on the CPU: binds the checkpoint's weights and runs
// the forward pass of transformers' Glm5NextForConditionalGeneration (text only).
#include <memory>

#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/loaded_model.h"

namespace day0::models {

Result<std::unique_ptr<LoadedModel>> load_glm5_next(const io::ModelConfig& config,
                                                    std::shared_ptr<const io::Checkpoint> checkpoint, ThreadPool& pool,
                                                    const LoadOptions& options);

// Variants of the forward pass for tests.
struct Glm5RunOptions {
  // Every sparse-attention layer attends all positions up to the query's (the indexer still
  // runs and is traced). Equal to the sparse path while the context is shorter than index_topk.
  bool dense_attention = false;
};
Result<std::unique_ptr<LoadedModel>> load_glm5_next(const io::ModelConfig& config,
                                                    std::shared_ptr<const io::Checkpoint> checkpoint, ThreadPool& pool,
                                                    const LoadOptions& options, const Glm5RunOptions& run);

}  // namespace day0::models
