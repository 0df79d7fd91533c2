// GLM-5.3-Flash (model_type glm5_next): a hybrid of KDA linear-attention layers and NoPE MLA
// layers with a DeepSeek-sparse-attention indexer over k-pools, manifold-constrained
// hyper-connections (hc_mult residual streams) around every block, a sigmoid-routed MoE with
// shared experts, and a vision tower whose merged patches join the text embeddings.
//
// Checkpoint layout as transformers writes it (T = model.language_model.layers.N.):
//   T{hc_attn,hc_ffn}_{fn [(2+m)m, m*H], base [(2+m)m], scale [3]}       m = hc_mult
//   KDA layers:  T.self_attn.{q,k,v}_proj [Dl, H], {q,k,v}_conv1d [Dl, 1, K], A_log [heads],
//                dt_bias [Dl], f_a_proj [d, H], f_b_proj [Dl, d], g_a/g_b likewise, b_proj
//                [heads, H], o_norm [d], o_proj [H, Dl]          (d head dim, Dl = heads*d)
//   DSA layers:  MLA q_a_proj/q_a_layernorm/q_b_proj (or q_proj), kv_a_proj_with_mqa,
//                kv_a_layernorm, kv_b_proj, o_proj; plus, unless its indexer is "shared",
//                T.self_attn.indexer.{wq_b, wk, k_norm (LayerNorm), weights_proj,
//                index_kpool_compress_ape [kpool, d], index_kpool_compress_gate [d, H]}
//   MoE layers:  T.mlp.gate.{weight [E, H], e_score_correction_bias [E]},
//                T.mlp.experts.e.{gate,up,down}_proj.weight (one tensor per expert),
//                T.mlp.shared_experts.{gate,up,down}_proj.weight
//   Vision:      model.visual.{patch_embed, blocks.N, post_layernorm, downsample, merger}
#include "models/architecture.h"

namespace day0::models {
namespace {

using u64 = std::uint64_t;

struct Glm5Text {
  std::int64_t hidden, layers, vocab, inter, moe_inter, experts, top_k, shared;
  std::int64_t heads, q_lora, kv_lora, nope, rope, v_dim;  // q_lora 0: no low-rank query
  std::int64_t index_heads, index_dim, kpool;
  std::int64_t lin_heads, lin_dim, conv_k;
  std::int64_t hc;
  bool attn_bias, tied;
  std::vector<std::string> layer_types, mlp_types, indexer_types;
};

Status field_error(const io::ModelConfig& config, const std::string& message) {
  return error(ErrorCode::corrupt_data, config.origin() + ": " + message);
}

Result<Glm5Text> read_text(const io::ModelConfig& config) {
  const io::ConfigView c = config.text();
  Glm5Text s{};
  DAY0_ASSIGN_OR_RETURN(s.hidden, c.get_int("hidden_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.layers, c.get_int("num_hidden_layers", kLayerRange));
  DAY0_ASSIGN_OR_RETURN(s.vocab, c.get_int("vocab_size", kVocabRange));
  DAY0_ASSIGN_OR_RETURN(s.inter, c.get_int("intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.moe_inter, c.get_int("moe_intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.experts, c.get_int("n_routed_experts", kExpertRange));
  DAY0_ASSIGN_OR_RETURN(s.top_k, c.get_int("num_experts_per_tok", {1, s.experts}));
  DAY0_ASSIGN_OR_RETURN(s.shared, c.get_int_or("n_shared_experts", 0, {0, 64}));
  DAY0_ASSIGN_OR_RETURN(s.heads, c.get_int("num_attention_heads", {1, 4096}));
  s.q_lora = 0;
  if (c.has("q_lora_rank")) {
    DAY0_ASSIGN_OR_RETURN(s.q_lora, c.get_int("q_lora_rank", kDimRange));
  }
  DAY0_ASSIGN_OR_RETURN(s.kv_lora, c.get_int("kv_lora_rank", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.nope, c.get_int("qk_nope_head_dim", {0, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.rope, c.get_int_or("qk_rope_head_dim", 0, {0, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.v_dim, c.get_int("v_head_dim", {1, 4096}));
  if (s.nope + s.rope <= 0) return field_error(config, "qk_nope_head_dim + qk_rope_head_dim must be positive");
  DAY0_ASSIGN_OR_RETURN(s.index_heads, c.get_int("index_n_heads", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.index_dim, c.get_int("index_head_dim", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.kpool, c.get_int("index_kpool", {1, 1 << 16}));
  DAY0_ASSIGN_OR_RETURN(s.lin_heads, c.get_int("linear_num_heads", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.lin_dim, c.get_int("linear_head_dim", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.conv_k, c.get_int("linear_conv_kernel_dim", {1, 64}));
  DAY0_ASSIGN_OR_RETURN(s.hc, c.get_int("hc_mult", {1, 64}));
  DAY0_ASSIGN_OR_RETURN(s.attn_bias, c.get_bool_or("attention_bias", false));
  DAY0_ASSIGN_OR_RETURN(const bool root_tied, config.root().get_bool_or("tie_word_embeddings", false));
  DAY0_ASSIGN_OR_RETURN(s.tied, c.get_bool_or("tie_word_embeddings", root_tied));

  DAY0_ASSIGN_OR_RETURN(s.layer_types, c.get_string_list("layer_types"));
  if (static_cast<std::int64_t>(s.layer_types.size()) != s.layers)
    return field_error(config, "layer_types lists " + std::to_string(s.layer_types.size()) + " layers but " +
                                   "num_hidden_layers is " + std::to_string(s.layers));
  for (std::size_t i = 0; i < s.layer_types.size(); ++i) {
    const auto& t = s.layer_types[i];
    if (t != "linear_attention" && t != "deepseek_sparse_attention")
      return field_error(config, "layer_types[" + std::to_string(i) + "] is \"" + t +
                                     "\"; glm5_next layers are linear_attention or deepseek_sparse_attention");
  }
  if (c.has("mlp_layer_types")) {
    DAY0_ASSIGN_OR_RETURN(s.mlp_types, c.get_string_list("mlp_layer_types"));
  } else {
    DAY0_ASSIGN_OR_RETURN(const std::int64_t dense, c.get_int_or("first_k_dense_replace", 0, {0, s.layers}));
    for (std::int64_t l = 0; l < s.layers; ++l) s.mlp_types.push_back(l < dense ? "dense" : "sparse");
  }
  if (static_cast<std::int64_t>(s.mlp_types.size()) != s.layers)
    return field_error(config, "mlp_layer_types lists " + std::to_string(s.mlp_types.size()) +
                                   " layers but num_hidden_layers is " + std::to_string(s.layers));
  for (std::size_t i = 0; i < s.mlp_types.size(); ++i)
    if (s.mlp_types[i] != "dense" && s.mlp_types[i] != "sparse")
      return field_error(config, "mlp_layer_types[" + std::to_string(i) + "] is \"" + s.mlp_types[i] +
                                     "\"; expected dense or sparse");
  if (c.has("indexer_types")) {
    DAY0_ASSIGN_OR_RETURN(s.indexer_types, c.get_string_list("indexer_types"));
  } else {
    s.indexer_types.assign(static_cast<std::size_t>(s.layers), "full");
  }
  if (static_cast<std::int64_t>(s.indexer_types.size()) != s.layers)
    return field_error(config, "indexer_types lists " + std::to_string(s.indexer_types.size()) +
                                   " layers but num_hidden_layers is " + std::to_string(s.layers));
  for (std::size_t i = 0; i < s.indexer_types.size(); ++i) {
    const auto& t = s.indexer_types[i];
    if (t != "full" && t != "shared")
      return field_error(config, "indexer_types[" + std::to_string(i) + "] is \"" + t + "\"; expected full or shared");
    // A shared indexer reuses the selection of the sparse-attention layer right before it.
    if (t == "shared" && s.layer_types[i] == "deepseek_sparse_attention" &&
        (i == 0 || s.layer_types[i - 1] != "deepseek_sparse_attention"))
      return field_error(config, "layer " + std::to_string(i) + " shares the indexer of the previous layer, " +
                                     "which is not a sparse-attention layer");
  }
  return s;
}

Result<MoeLayout> moe_layout(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const Glm5Text s, read_text(config));
  MoeLayout layout{s.layers, 0, s.experts, s.top_k, s.shared};
  for (const auto& t : s.mlp_types) layout.moe_layers += t == "sparse" ? 1 : 0;
  return layout;
}

void add_linear(std::vector<ExpectedTensor>& t, const std::string& name, u64 out, u64 in, bool bias) {
  t.push_back({name + ".weight", DType::bf16, {out, in}});
  if (bias) t.push_back({name + ".bias", DType::bf16, {out}});
}

// Gives every tensor added since `first` the role `role`.
void set_role(std::vector<ExpectedTensor>& t, std::size_t first, TensorRole role) {
  for (std::size_t i = first; i < t.size(); ++i) t[i].role = role;
}

void add_text(std::vector<ExpectedTensor>& t, const Glm5Text& s) {
  const DType b = DType::bf16;
  const u64 H = static_cast<u64>(s.hidden), m = static_cast<u64>(s.hc);
  const u64 mix = (2 + m) * m;
  const std::string root = "model.language_model.";
  t.push_back({root + "embed_tokens.weight", b, {static_cast<u64>(s.vocab), H}, TensorRole::embedding});
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const auto li = static_cast<std::size_t>(l);
    const std::string p = root + "layers." + std::to_string(l) + ".";
    for (const char* hc : {"hc_attn_", "hc_ffn_"}) {
      t.push_back({p + hc + "fn", b, {mix, m * H}});
      t.push_back({p + hc + "base", b, {mix}});
      t.push_back({p + hc + "scale", b, {3}});
    }
    t.push_back({p + "input_layernorm.weight", b, {H}});
    t.push_back({p + "post_attention_layernorm.weight", b, {H}});
    set_role(t, t.size() - 8, TensorRole::hyper_connection);
    set_role(t, t.size() - 2, TensorRole::norm);
    const std::string a = p + "self_attn.";
    std::size_t first = t.size();
    if (s.layer_types[li] == "linear_attention") {
      const u64 d = static_cast<u64>(s.lin_dim), heads = static_cast<u64>(s.lin_heads), D = heads * d;
      for (const char* x : {"q", "k", "v"}) {
        add_linear(t, a + x + "_proj", D, H, false);
        t.push_back({a + x + "_conv1d.weight", b, {D, 1, static_cast<u64>(s.conv_k)}});
      }
      t.push_back({a + "A_log", b, {heads}});
      t.push_back({a + "dt_bias", b, {D}});
      add_linear(t, a + "f_a_proj", d, H, false);
      add_linear(t, a + "f_b_proj", D, d, false);
      add_linear(t, a + "g_a_proj", d, H, false);
      add_linear(t, a + "g_b_proj", D, d, false);
      add_linear(t, a + "b_proj", heads, H, false);
      t.push_back({a + "o_norm.weight", b, {d}});
      add_linear(t, a + "o_proj", H, D, false);
      set_role(t, first, TensorRole::linear_attention);
    } else {
      const u64 heads = static_cast<u64>(s.heads), qk = static_cast<u64>(s.nope + s.rope);
      const u64 q_lora = static_cast<u64>(s.q_lora), kv_lora = static_cast<u64>(s.kv_lora);
      if (s.q_lora > 0) {
        add_linear(t, a + "q_a_proj", q_lora, H, s.attn_bias);
        t.push_back({a + "q_a_layernorm.weight", b, {q_lora}});
        add_linear(t, a + "q_b_proj", heads * qk, q_lora, false);
      } else {
        add_linear(t, a + "q_proj", heads * qk, H, false);
      }
      add_linear(t, a + "kv_a_proj_with_mqa", kv_lora + static_cast<u64>(s.rope), H, s.attn_bias);
      t.push_back({a + "kv_a_layernorm.weight", b, {kv_lora}});
      add_linear(t, a + "kv_b_proj", heads * static_cast<u64>(s.nope + s.v_dim), kv_lora, false);
      add_linear(t, a + "o_proj", H, heads * static_cast<u64>(s.v_dim), s.attn_bias);
      set_role(t, first, TensorRole::attention);
      if (s.indexer_types[li] == "full") {
        first = t.size();
        const std::string x = a + "indexer.";
        const u64 d = static_cast<u64>(s.index_dim);
        add_linear(t, x + "wq_b", static_cast<u64>(s.index_heads) * d, s.q_lora > 0 ? q_lora : H, false);
        add_linear(t, x + "wk", d, H, false);
        t.push_back({x + "k_norm.weight", b, {d}});
        t.push_back({x + "k_norm.bias", b, {d}});
        add_linear(t, x + "weights_proj", static_cast<u64>(s.index_heads), H, false);
        t.push_back({x + "index_kpool_compress_ape", b, {static_cast<u64>(s.kpool), d}});
        t.push_back({x + "index_kpool_compress_gate", b, {d, H}});
        set_role(t, first, TensorRole::sparse_attention_indexer);
      }
    }
    const std::string f = p + "mlp.";
    first = t.size();
    if (s.mlp_types[li] == "dense") {
      const u64 I = static_cast<u64>(s.inter);
      add_linear(t, f + "gate_proj", I, H, false);
      add_linear(t, f + "up_proj", I, H, false);
      add_linear(t, f + "down_proj", H, I, false);
      set_role(t, first, TensorRole::dense_mlp);
    } else {
      const u64 E = static_cast<u64>(s.experts), I = static_cast<u64>(s.moe_inter);
      t.push_back({f + "gate.weight", b, {E, H}});
      t.push_back({f + "gate.e_score_correction_bias", b, {E}});
      set_role(t, first, TensorRole::router);
      first = t.size();
      for (u64 e = 0; e < E; ++e) {
        const std::string x = f + "experts." + std::to_string(e) + ".";
        add_linear(t, x + "gate_proj", I, H, false);
        add_linear(t, x + "up_proj", I, H, false);
        add_linear(t, x + "down_proj", H, I, false);
      }
      set_role(t, first, TensorRole::routed_experts);
      first = t.size();
      if (s.shared > 0) {
        const u64 Is = I * static_cast<u64>(s.shared);
        add_linear(t, f + "shared_experts.gate_proj", Is, H, false);
        add_linear(t, f + "shared_experts.up_proj", Is, H, false);
        add_linear(t, f + "shared_experts.down_proj", H, Is, false);
        set_role(t, first, TensorRole::shared_experts);
      }
    }
  }
  t.push_back({root + "norm.weight", b, {H}, TensorRole::norm});
  if (!s.tied) t.push_back({"lm_head.weight", b, {static_cast<u64>(s.vocab), H}, TensorRole::lm_head});
}

Status add_vision(std::vector<ExpectedTensor>& t, const io::ConfigView& v) {
  const DType b = DType::bf16;
  DAY0_ASSIGN_OR_RETURN(const std::int64_t depth, v.get_int("depth", {0, 1024}));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t hidden, v.get_int("hidden_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t heads, v.get_int("num_heads", {1, 1024}));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t inter, v.get_int("intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t out, v.get_int("out_hidden_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t proj, v.get_int("projection_intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t patch, v.get_int("patch_size", {1, 1024}));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t temporal, v.get_int_or("temporal_patch_size", 2, {1, 64}));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t channels, v.get_int_or("in_channels", 3, {1, 64}));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t merge, v.get_int_or("spatial_merge_size", 2, {1, 64}));
  DAY0_ASSIGN_OR_RETURN(const bool bias, v.get_bool_or("attention_bias", true));
  if (hidden % heads != 0)
    return error(ErrorCode::corrupt_data, v.field_name("hidden_size") + " is not a multiple of " + v.field_name("num_heads"));
  const u64 Hv = static_cast<u64>(hidden), O = static_cast<u64>(out), P = static_cast<u64>(proj);
  const std::string p = "model.visual.";
  const std::size_t first = t.size();
  t.push_back({p + "patch_embed.proj.weight", b,
               {Hv, static_cast<u64>(channels), static_cast<u64>(temporal), static_cast<u64>(patch), static_cast<u64>(patch)}});
  t.push_back({p + "patch_embed.proj.bias", b, {Hv}});
  for (std::int64_t i = 0; i < depth; ++i) {
    const std::string k = p + "blocks." + std::to_string(i) + ".";
    t.push_back({k + "norm1.weight", b, {Hv}});
    t.push_back({k + "norm2.weight", b, {Hv}});
    add_linear(t, k + "attn.qkv", 3 * Hv, Hv, bias);
    add_linear(t, k + "attn.proj", Hv, Hv, bias);
    t.push_back({k + "attn.q_norm.weight", b, {Hv / static_cast<u64>(heads)}});
    t.push_back({k + "attn.k_norm.weight", b, {Hv / static_cast<u64>(heads)}});
    add_linear(t, k + "mlp.gate_proj", static_cast<u64>(inter), Hv, bias);
    add_linear(t, k + "mlp.up_proj", static_cast<u64>(inter), Hv, bias);
    add_linear(t, k + "mlp.down_proj", Hv, static_cast<u64>(inter), bias);
  }
  t.push_back({p + "post_layernorm.weight", b, {Hv}});
  t.push_back({p + "downsample.weight", b, {O, Hv, static_cast<u64>(merge), static_cast<u64>(merge)}});
  t.push_back({p + "downsample.bias", b, {O}});
  add_linear(t, p + "merger.proj", O, O, false);
  t.push_back({p + "merger.post_projection_norm.weight", b, {O}});
  t.push_back({p + "merger.post_projection_norm.bias", b, {O}});
  add_linear(t, p + "merger.gate_proj", P, O, false);
  add_linear(t, p + "merger.up_proj", P, O, false);
  add_linear(t, p + "merger.down_proj", O, P, false);
  set_role(t, first, TensorRole::vision);
  return Status::ok();
}

Result<std::vector<ExpectedTensor>> expected_tensors(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const Glm5Text s, read_text(config));
  std::vector<ExpectedTensor> t;
  add_text(t, s);
  if (const auto vision = config.vision()) DAY0_RETURN_IF_ERROR(add_vision(t, *vision));
  return t;
}

}  // namespace

extern const Architecture kGlm5Next;
const Architecture kGlm5Next{
    "glm5_next",
    "GLM-5.3-Flash (glm5_next)",
    "KDA linear attention, DSA sparse attention over k-pools, mHC, MoE with shared experts, vision",
    &moe_layout,
    &expected_tensors,
    nullptr,  // text generation lands with the CPU implementation of its blocks
};

}  // namespace day0::models
