// gpt-oss (model_type gpt_oss): GQA attention with sinks, alternating sliding-window and full
// layers, YaRN RoPE, and a top-k MoE whose experts ship in MXFP4.
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
#include "models/architecture.h"

namespace day0::models {
namespace {

struct GptOssShape {
  std::int64_t hidden, layers, experts, top_k, inter, heads, kv_heads, head_dim, vocab;
  bool tied, mxfp4;
};

Result<GptOssShape> read_shape(const io::ModelConfig& config) {
  const io::ConfigView c = config.text();
  GptOssShape s{};
  DAY0_ASSIGN_OR_RETURN(s.hidden, c.get_int("hidden_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.layers, c.get_int("num_hidden_layers", kLayerRange));
  DAY0_ASSIGN_OR_RETURN(s.experts, c.get_int("num_local_experts", kExpertRange));
  DAY0_ASSIGN_OR_RETURN(s.top_k, c.get_int("num_experts_per_tok", {1, s.experts}));
  DAY0_ASSIGN_OR_RETURN(s.inter, c.get_int("intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.heads, c.get_int("num_attention_heads", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.kv_heads, c.get_int("num_key_value_heads", {1, s.heads}));
  DAY0_ASSIGN_OR_RETURN(s.head_dim, c.get_int_or("head_dim", s.hidden / s.heads, {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.vocab, c.get_int("vocab_size", kVocabRange));
  DAY0_ASSIGN_OR_RETURN(s.tied, c.get_bool_or("tie_word_embeddings", false));
  if (s.heads % s.kv_heads != 0)
    return error(ErrorCode::corrupt_data, config.origin() + ": num_attention_heads (" + std::to_string(s.heads) +
                                              ") is not a multiple of num_key_value_heads (" +
                                              std::to_string(s.kv_heads) + ")");
  s.mxfp4 = false;
  if (const auto q = config.root().optional_child("quantization_config")) {
    DAY0_ASSIGN_OR_RETURN(const std::string method, q->get_string_or("quant_method", ""));
    if (method == "mxfp4") {
      s.mxfp4 = true;
    } else if (!method.empty()) {
      return error(ErrorCode::unsupported, config.origin() + ": quantization method \"" + method +
                                               "\" is not supported for gpt-oss (MXFP4 or unquantized only)");
    }
  }
  if (s.mxfp4 && (s.hidden % 32 != 0 || s.inter % 32 != 0))
    return error(ErrorCode::corrupt_data, config.origin() + ": MXFP4 experts need hidden_size and " +
                                              "intermediate_size to be multiples of 32");
  return s;
}

Result<MoeLayout> moe_layout(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const GptOssShape s, read_shape(config));
  return MoeLayout{s.layers, s.layers, s.experts, s.top_k, 0};
}

Result<std::vector<ExpectedTensor>> expected_tensors(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const GptOssShape s, read_shape(config));
  using u = std::uint64_t;
  const u H = static_cast<u>(s.hidden), E = static_cast<u>(s.experts), I = static_cast<u>(s.inter);
  const u q = static_cast<u>(s.heads * s.head_dim), kv = static_cast<u>(s.kv_heads * s.head_dim);
  const DType b = DType::bf16;
  std::vector<ExpectedTensor> t;
  t.push_back({"model.embed_tokens.weight", b, {static_cast<u>(s.vocab), H}});
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", b, {H}});
    t.push_back({p + "post_attention_layernorm.weight", b, {H}});
    t.push_back({p + "self_attn.q_proj.weight", b, {q, H}});
    t.push_back({p + "self_attn.q_proj.bias", b, {q}});
    t.push_back({p + "self_attn.k_proj.weight", b, {kv, H}});
    t.push_back({p + "self_attn.k_proj.bias", b, {kv}});
    t.push_back({p + "self_attn.v_proj.weight", b, {kv, H}});
    t.push_back({p + "self_attn.v_proj.bias", b, {kv}});
    t.push_back({p + "self_attn.o_proj.weight", b, {H, q}});
    t.push_back({p + "self_attn.o_proj.bias", b, {H}});
    t.push_back({p + "self_attn.sinks", b, {static_cast<u>(s.heads)}});
    t.push_back({p + "mlp.router.weight", b, {E, H}});
    t.push_back({p + "mlp.router.bias", b, {E}});
    const std::string e = p + "mlp.experts.";
    if (s.mxfp4) {
      t.push_back({e + "gate_up_proj_blocks", DType::u8, {E, 2 * I, H / 32, 16}});
      t.push_back({e + "gate_up_proj_scales", DType::u8, {E, 2 * I, H / 32}});
      t.push_back({e + "down_proj_blocks", DType::u8, {E, H, I / 32, 16}});
      t.push_back({e + "down_proj_scales", DType::u8, {E, H, I / 32}});
    } else {
      t.push_back({e + "gate_up_proj", b, {E, H, 2 * I}});
      t.push_back({e + "down_proj", b, {E, I, H}});
    }
    t.push_back({e + "gate_up_proj_bias", b, {E, 2 * I}});
    t.push_back({e + "down_proj_bias", b, {E, H}});
  }
  t.push_back({"model.norm.weight", b, {H}});
  if (!s.tied) t.push_back({"lm_head.weight", b, {static_cast<u>(s.vocab), H}});
  for (auto& tensor : t) tensor.role = classify_by_name(tensor.name);
  return t;
}

}  // namespace

extern const Architecture kGptOss;
const Architecture kGptOss{
    "gpt_oss",
    "gpt-oss",
    "MXFP4 experts, attention sinks, sliding-window and full attention layers",
    &moe_layout,
    &expected_tensors,
};

}  // namespace day0::models
