#include "models/gpt_oss_manifest.h"

#include <string>

#include "models/weights.h"

namespace day0::models {
namespace {

// One row per dense tensor of a layer: its name after "model.layers.N.", where it goes, and its
// shape ([rows, cols], or [rows] for a vector).
struct LayerTensor {
  const char* suffix;
  cpu::Matrix GptOssLayerWeights::*field;
  std::int64_t (*rows)(const GptOssConfig&);
  std::int64_t (*cols)(const GptOssConfig&);  // null: a vector of `rows` values
};

std::int64_t hidden(const GptOssConfig& c) { return c.hidden; }
std::int64_t q_dim(const GptOssConfig& c) { return c.q_dim(); }
std::int64_t kv_dim(const GptOssConfig& c) { return c.kv_dim(); }
std::int64_t heads(const GptOssConfig& c) { return c.heads; }
std::int64_t experts(const GptOssConfig& c) { return c.experts; }

constexpr LayerTensor kLayerTensors[] = {
    {"input_layernorm.weight", &GptOssLayerWeights::input_norm, hidden, nullptr},
    {"post_attention_layernorm.weight", &GptOssLayerWeights::post_norm, hidden, nullptr},
    {"self_attn.q_proj.weight", &GptOssLayerWeights::q, q_dim, hidden},
    {"self_attn.q_proj.bias", &GptOssLayerWeights::q_bias, q_dim, nullptr},
    {"self_attn.k_proj.weight", &GptOssLayerWeights::k, kv_dim, hidden},
    {"self_attn.k_proj.bias", &GptOssLayerWeights::k_bias, kv_dim, nullptr},
    {"self_attn.v_proj.weight", &GptOssLayerWeights::v, kv_dim, hidden},
    {"self_attn.v_proj.bias", &GptOssLayerWeights::v_bias, kv_dim, nullptr},
    {"self_attn.o_proj.weight", &GptOssLayerWeights::o, hidden, q_dim},
    {"self_attn.o_proj.bias", &GptOssLayerWeights::o_bias, hidden, nullptr},
    {"self_attn.sinks", &GptOssLayerWeights::sinks, heads, nullptr},
    {"mlp.router.weight", &GptOssLayerWeights::router, experts, hidden},
    {"mlp.router.bias", &GptOssLayerWeights::router_bias, experts, nullptr},
};

constexpr const char* kEmbedding = "model.embed_tokens.weight";
constexpr const char* kFinalNorm = "model.norm.weight";
constexpr const char* kLmHead = "lm_head.weight";

std::string layer_prefix(std::int64_t l) { return "model.layers." + std::to_string(l) + "."; }
std::string experts_prefix(std::int64_t l) { return layer_prefix(l) + "mlp.experts."; }

}  // namespace

Result<GptOssConfig> read_gpt_oss_config(const io::ModelConfig& config) {
  const io::ConfigView c = config.text();
  GptOssConfig s;
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
  DAY0_ASSIGN_OR_RETURN(s.mxfp4, mxfp4_experts(config, "gpt-oss"));

  if (s.mxfp4 && (s.hidden % 32 != 0 || s.inter % 32 != 0))
    return error(ErrorCode::corrupt_data,
                 config.origin() + ": MXFP4 experts need hidden_size and " + "intermediate_size to be multiples of 32");
  DAY0_ASSIGN_OR_RETURN(s.max_positions, c.get_int_or("max_position_embeddings", 131072, {1, 1ll << 40}));
  DAY0_ASSIGN_OR_RETURN(s.rms_eps, c.get_float_or("rms_norm_eps", 1e-5));
  DAY0_ASSIGN_OR_RETURN(s.sliding_window, c.get_int_or("sliding_window", 0, {0, 1ll << 40}));
  s.sliding.assign(static_cast<std::size_t>(s.layers), false);
  if (c.has("layer_types")) {
    DAY0_ASSIGN_OR_RETURN(const auto types, c.get_string_list("layer_types"));
    if (static_cast<std::int64_t>(types.size()) != s.layers)
      return error(ErrorCode::corrupt_data, config.origin() + ": layer_types lists " + std::to_string(types.size()) +
                                                " layers but num_hidden_layers is " + std::to_string(s.layers));
    for (std::size_t l = 0; l < types.size(); ++l) {
      if (types[l] != "sliding_attention" && types[l] != "full_attention")
        return error(ErrorCode::corrupt_data, config.origin() + ": layer_types[" + std::to_string(l) + "] is \"" +
                                                  types[l] + "\"; expected sliding_attention or full_attention");
      s.sliding[l] = types[l] == "sliding_attention" && s.sliding_window > 0;
    }
  }
  return s;
}

std::vector<ExpectedTensor> gpt_oss_tensors(const GptOssConfig& s) {
  using u = std::uint64_t;
  const u H = static_cast<u>(s.hidden), E = static_cast<u>(s.experts), I = static_cast<u>(s.inter);
  const DType b = DType::bf16;
  std::vector<ExpectedTensor> t;
  t.push_back({kEmbedding, b, {static_cast<u>(s.vocab), H}});
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const std::string p = layer_prefix(l);
    for (const LayerTensor& d : kLayerTensors) {
      std::vector<u> shape{static_cast<u>(d.rows(s))};
      if (d.cols != nullptr) shape.push_back(static_cast<u>(d.cols(s)));
      t.push_back({p + d.suffix, b, shape});
    }
    const std::string e = experts_prefix(l);
    const std::size_t first_expert_tensor = t.size();
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
    for (std::size_t i = first_expert_tensor; i < t.size(); ++i) t[i].layer = static_cast<std::int32_t>(l);
  }
  t.push_back({kFinalNorm, b, {H}});
  if (!s.tied) t.push_back({kLmHead, b, {static_cast<u>(s.vocab), H}});
  for (auto& tensor : t) tensor.role = classify_by_name(tensor.name);
  return t;
}

Result<GptOssWeights> bind_gpt_oss(const GptOssConfig& s, std::shared_ptr<const io::Checkpoint> checkpoint) {
  const WeightSource w(std::move(checkpoint));
  const std::int64_t H = s.hidden, E = s.experts, I = s.inter;
  GptOssWeights out;
  DAY0_ASSIGN_OR_RETURN(out.embed, w.matrix(kEmbedding, s.vocab, H));
  DAY0_ASSIGN_OR_RETURN(out.final_norm, w.vector(kFinalNorm, H));
  DAY0_ASSIGN_OR_RETURN(out.lm_head, w.matrix(s.tied ? kEmbedding : kLmHead, s.vocab, H));
  if (!s.mxfp4)
    return error(ErrorCode::unsupported,
                 "this gpt-oss checkpoint stores its experts unquantized (gate_up_proj [E, H, 2I]); Day0 runs gpt-oss "
                 "with the MXFP4 experts of the released checkpoint");
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const std::string p = layer_prefix(l);
    GptOssLayerWeights L;
    for (const LayerTensor& d : kLayerTensors) {
      if (d.cols != nullptr) {
        DAY0_ASSIGN_OR_RETURN(L.*d.field, w.matrix(p + d.suffix, d.rows(s), d.cols(s)));
      } else {
        DAY0_ASSIGN_OR_RETURN(L.*d.field, w.vector(p + d.suffix, d.rows(s)));
      }
    }
    const std::string e = experts_prefix(l);
    DAY0_ASSIGN_OR_RETURN(L.gate_up, w.stacked_mxfp4(e + "gate_up_proj", E, 2 * I, H));
    DAY0_ASSIGN_OR_RETURN(L.down, w.stacked_mxfp4(e + "down_proj", E, H, I));
    DAY0_ASSIGN_OR_RETURN(L.gate_up_bias, w.stacked(e + "gate_up_proj_bias", E, 0, 2 * I));
    DAY0_ASSIGN_OR_RETURN(L.down_bias, w.stacked(e + "down_proj_bias", E, 0, H));
    out.layers.push_back(std::move(L));
  }
  return out;
}

}  // namespace day0::models
