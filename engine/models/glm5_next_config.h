#pragma once
// The text half of a glm5_next (GLM-5.3-Flash) config.json, read and validated once: every
// field the forward pass uses, with limits, and the layer schedules (attention, MLP, indexer).
#include <cstdint>
#include <string>
#include <vector>

#include "day0/status.h"
#include "io/model_config.h"

namespace day0::models {

struct Glm5Config {
  std::int64_t hidden = 0, layers = 0, vocab = 0;
  std::int64_t inter = 0;      // dense MLP width (intermediate_size)
  std::int64_t moe_inter = 0;  // one expert's width (moe_intermediate_size)
  std::int64_t experts = 0, top_k = 0, shared = 0, n_group = 1, topk_group = 1;
  bool norm_topk_prob = true;
  double routed_scaling = 1.0, swiglu_limit = 10.0;

  // MLA: heads, q_lora (0: a plain q_proj, which transformers' glm5_next rejects), kv_lora,
  // per-head key (nope + rope) and value widths.
  std::int64_t heads = 0, q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v_dim = 0;
  bool attn_bias = false;

  // DSA indexer.
  std::int64_t index_heads = 0, index_dim = 0, index_topk = 0, kpool = 0;
  bool select_tail = true;

  // KDA.
  std::int64_t lin_heads = 0, lin_dim = 0, conv_k = 0;

  // mHC.
  std::int64_t hc = 0, hc_iters = 20;
  double hc_eps = 1e-6;

  double rms_eps = 1e-5;
  std::int64_t max_positions = 0;
  bool tied = false;
  bool mxfp4 = false;  // quantization_config.quant_method == "mxfp4": stacked MXFP4 experts

  std::vector<std::string> layer_types, mlp_types, indexer_types;

  bool is_kda(std::int64_t l) const { return layer_types[static_cast<std::size_t>(l)] == "linear_attention"; }
  bool is_moe(std::int64_t l) const { return mlp_types[static_cast<std::size_t>(l)] == "sparse"; }
  // A DSA layer that runs its own indexer (the others reuse the previous layer's selection).
  bool has_indexer(std::int64_t l) const { return !is_kda(l) && indexer_types[static_cast<std::size_t>(l)] == "full"; }
};

// Reads and checks the fields the checkpoint's tensor list depends on (shapes, schedules, the
// expert format). Enough for `inspect`.
Result<Glm5Config> read_glm5_config(const io::ModelConfig& config);

// Also checks what running the model needs (RoPE-free MLA with a low-rank query, silu, ...),
// with a message that names the field.
Status check_glm5_runnable(const io::ModelConfig& config, const Glm5Config& c);

}  // namespace day0::models
