#pragma once
// glm5_next's weights as views into the mapped checkpoint, bound once by tensor name: the CPU
// model (glm5_next_model.cpp) computes with them and the GPU program (backend/cuda/
// glm5_next_cuda.cpp) uploads them, so no tensor name or config field is read in two places.
#include <cstdint>
#include <optional>
#include <vector>

#include "blocks/dsa_indexer.h"
#include "blocks/hyper_connection.h"
#include "blocks/kda.h"
#include "blocks/mla_attention.h"
#include "blocks/moe.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/glm5_next_config.h"
#include "models/weights.h"

namespace day0::models {

struct Glm5Layer {
  blocks::HcWeights attn_hc, ffn_hc;
  cpu::Matrix input_norm, post_norm;
  std::optional<blocks::KdaLayer> kda;            // a linear-attention layer
  std::optional<blocks::MlaWeights> mla;          // a sparse-attention layer
  std::optional<blocks::IndexerWeights> indexer;  // a sparse-attention layer with its own indexer
  std::optional<blocks::MoeLayer> moe;
  std::optional<blocks::DenseMlp> mlp;
};

struct Glm5Weights {
  // The block configurations the config implies.
  blocks::HcConfig hc;
  blocks::MlaConfig mla;
  blocks::IndexerConfig indexer;
  blocks::MoeConfig moe;
  std::optional<blocks::KdaConfig> kda;  // set when any layer is a KDA layer
  cpu::Matrix embed, final_norm, lm_head;
  std::vector<Glm5Layer> layers;
  // Per layer: its index among the KDA layers or among the MLA layers (the session state's
  // order), and among the layers with their own indexer (-1: none).
  std::vector<std::int64_t> slot, index_slot;
  std::int64_t kda_layers = 0, mla_layers = 0, indexer_layers = 0;
};

// Binds the text model's weights (vision lives in vision/). A missing tensor or one of the wrong
// shape or dtype is an error naming it.
Result<Glm5Weights> bind_glm5_weights(const io::ModelConfig& config, const Glm5Config& s,
                                      const std::shared_ptr<const io::Checkpoint>& checkpoint,
                                      const blocks::BindOptions& options);

}  // namespace day0::models
