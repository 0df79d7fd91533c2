#pragma once
// gpt-oss's config and its manifest of tensors, read once and shared by everything that touches
// a checkpoint of it: `inspect` (the table of tensors), the CPU model (models/gpt_oss.cpp), and
// the GPU upload (backend/cuda/gpt_oss_cuda.cpp). No field of config.json and no tensor name of
// gpt-oss is spelled anywhere else.
//
// Released checkpoint layout per layer N (H hidden, I expert width, E experts):
//   model.layers.N.self_attn.{q,k,v,o}_proj.{weight,bias}, self_attn.sinks [heads]
//   model.layers.N.mlp.router.{weight [E, H], bias [E]}
//   model.layers.N.mlp.experts.gate_up_proj_blocks [E, 2I, H/32, 16] u8  (gate/up interleaved)
//   model.layers.N.mlp.experts.gate_up_proj_scales [E, 2I, H/32] u8 (E8M0)
//   model.layers.N.mlp.experts.gate_up_proj_bias   [E, 2I]
//   model.layers.N.mlp.experts.down_proj_blocks    [E, H, I/32, 16] u8, _scales [E, H, I/32]
//   model.layers.N.mlp.experts.down_proj_bias      [E, H]
// Without quantization_config (a bf16 re-save) the experts are gate_up_proj [E, H, 2I] and
// down_proj [E, I, H].
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "day0/status.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/architecture.h"

namespace day0::models {

struct GptOssConfig {
  std::int64_t hidden = 0, layers = 0, experts = 0, top_k = 0, inter = 0, heads = 0, kv_heads = 0, head_dim = 0,
               vocab = 0;
  bool tied = false;
  bool mxfp4 = false;  // quantization_config.quant_method == "mxfp4"
  std::int64_t sliding_window = 0, max_positions = 0;
  double rms_eps = 1e-5;
  std::vector<bool> sliding;  // per layer
  std::int64_t q_dim() const { return heads * head_dim; }
  std::int64_t kv_dim() const { return kv_heads * head_dim; }
};

// config.json's fields, range-checked and consistent (head counts, MXFP4 dimensions, layer types).
Result<GptOssConfig> read_gpt_oss_config(const io::ModelConfig& config);

// Views into the mapped checkpoint (nothing copied), shape-checked against the config.
struct GptOssLayerWeights {
  cpu::Matrix input_norm, post_norm;
  cpu::Matrix q, k, v, o, q_bias, k_bias, v_bias, o_bias, sinks;
  cpu::Matrix router, router_bias;
  std::vector<cpu::Mxfp4Matrix> gate_up, down;       // per expert
  std::vector<cpu::Matrix> gate_up_bias, down_bias;  // per expert, [1, 2I] and [1, H]
};
struct GptOssWeights {
  cpu::Matrix embed, final_norm, lm_head;  // lm_head is the embedding when tied
  std::vector<GptOssLayerWeights> layers;
};

// The checkpoint's tensors as released (names, stored dtypes, shapes, roles).
std::vector<ExpectedTensor> gpt_oss_tensors(const GptOssConfig& config);
// Every tensor the model runs on; a missing or misshapen one is an error naming it. Checkpoints
// with unquantized experts are refused (the experts are run as released, in MXFP4).
Result<GptOssWeights> bind_gpt_oss(const GptOssConfig& config, std::shared_ptr<const io::Checkpoint> checkpoint);

}  // namespace day0::models
