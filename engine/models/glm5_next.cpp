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
//   MXFP4 experts (config.json quantization_config.quant_method "mxfp4"; written by
//                `day0-cli quantize-experts`), I = moe_intermediate_size:
//                T.mlp.experts.gate_up_proj_blocks [E, 2I, H/32, 16] u8, _scales [E, 2I, H/32]
//                  (rows [0, I) expert e's gate_proj, rows [I, 2I) its up_proj: the halves of
//                  transformers' fused gate_up_proj, not interleaved as in gpt-oss)
//                T.mlp.experts.down_proj_blocks [E, H, I/32, 16] u8, _scales [E, H, I/32]
//   Vision:      model.visual.{patch_embed, blocks.N, post_layernorm, downsample, merger}
#include "models/architecture.h"
#include "models/glm5_next_config.h"
#include "models/glm5_next_model.h"
#ifdef DAY0_HAVE_CUDA
#include "backend/cuda/glm5_next_cuda.h"
#endif

namespace day0::models {
namespace {

using u64 = std::uint64_t;

Result<MoeLayout> moe_layout(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const Glm5Config s, read_glm5_config(config));
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

void add_text(std::vector<ExpectedTensor>& t, const Glm5Config& s) {
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
      if (s.mxfp4) {
        const std::string x = f + "experts.";
        t.push_back({x + "gate_up_proj_blocks", DType::u8, {E, 2 * I, H / 32, 16}});
        t.push_back({x + "gate_up_proj_scales", DType::u8, {E, 2 * I, H / 32}});
        t.push_back({x + "down_proj_blocks", DType::u8, {E, H, I / 32, 16}});
        t.push_back({x + "down_proj_scales", DType::u8, {E, H, I / 32}});
      } else {
        for (u64 e = 0; e < E; ++e) {
          const std::string x = f + "experts." + std::to_string(e) + ".";
          const std::size_t first_of_expert = t.size();
          add_linear(t, x + "gate_proj", I, H, false);
          add_linear(t, x + "up_proj", I, H, false);
          add_linear(t, x + "down_proj", H, I, false);
          for (std::size_t i = first_of_expert; i < t.size(); ++i) t[i].expert = static_cast<std::int32_t>(e);
        }
      }
      set_role(t, first, TensorRole::routed_experts);
      for (std::size_t i = first; i < t.size(); ++i) t[i].layer = static_cast<std::int32_t>(li);
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
    return error(ErrorCode::corrupt_data,
                 v.field_name("hidden_size") + " is not a multiple of " + v.field_name("num_heads"));
  const u64 Hv = static_cast<u64>(hidden), O = static_cast<u64>(out), P = static_cast<u64>(proj);
  const std::string p = "model.visual.";
  const std::size_t first = t.size();
  t.push_back(
      {p + "patch_embed.proj.weight",
       b,
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
  DAY0_ASSIGN_OR_RETURN(const Glm5Config s, read_glm5_config(config));
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
    &load_glm5_next,
#ifdef DAY0_HAVE_CUDA
    &cuda::load_glm5_next,
    &cuda::glm5_next_device_footprint,
#else
    nullptr,
    nullptr,
#endif
};

}  // namespace day0::models
