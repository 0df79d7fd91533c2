#include "models/glm5_next_config.h"

#include "models/architecture.h"

namespace day0::models {
namespace {

Status field_error(const io::ModelConfig& config, const std::string& message) {
  return error(ErrorCode::corrupt_data, config.origin() + ": " + message);
}

std::string count_mismatch(const std::string& field, std::size_t n, std::int64_t layers) {
  return field + " lists " + std::to_string(n) + " layers but num_hidden_layers is " + std::to_string(layers);
}

// layer_types as transformers completes it: absent means KDA everywhere except every fourth
// layer; "full_attention" is an alias of "deepseek_sparse_attention".
Status read_layer_types(const io::ModelConfig& config, const io::ConfigView& c, Glm5Config& s) {
  if (c.has("layer_types")) {
    DAY0_ASSIGN_OR_RETURN(s.layer_types, c.get_string_list("layer_types"));
  } else {
    for (std::int64_t l = 0; l < s.layers; ++l)
      s.layer_types.push_back(l % 4 != 3 ? "linear_attention" : "deepseek_sparse_attention");
  }
  if (static_cast<std::int64_t>(s.layer_types.size()) != s.layers)
    return field_error(config, count_mismatch("layer_types", s.layer_types.size(), s.layers));
  for (std::size_t i = 0; i < s.layer_types.size(); ++i) {
    auto& t = s.layer_types[i];
    if (t == "full_attention") t = "deepseek_sparse_attention";
    if (t != "linear_attention" && t != "deepseek_sparse_attention")
      return field_error(config, "layer_types[" + std::to_string(i) + "] is \"" + t +
                                     "\"; glm5_next layers are linear_attention or deepseek_sparse_attention");
  }

  if (c.has("mlp_layer_types")) {
    DAY0_ASSIGN_OR_RETURN(s.mlp_types, c.get_string_list("mlp_layer_types"));
  } else {
    for (std::int64_t l = 0; l < s.layers; ++l) s.mlp_types.push_back(l < 3 ? "dense" : "sparse");
  }
  if (static_cast<std::int64_t>(s.mlp_types.size()) != s.layers)
    return field_error(config, count_mismatch("mlp_layer_types", s.mlp_types.size(), s.layers));
  for (std::size_t i = 0; i < s.mlp_types.size(); ++i)
    if (s.mlp_types[i] != "dense" && s.mlp_types[i] != "sparse")
      return field_error(
          config, "mlp_layer_types[" + std::to_string(i) + "] is \"" + s.mlp_types[i] + "\"; expected dense or sparse");

  // indexer_types, else the index_topk_pattern string ("FSSF..."), else the freq/offset schedule.
  if (c.has("indexer_types")) {
    DAY0_ASSIGN_OR_RETURN(s.indexer_types, c.get_string_list("indexer_types"));
  } else if (c.has("index_topk_pattern") && c.json().at("index_topk_pattern").is_string()) {
    DAY0_ASSIGN_OR_RETURN(const std::string pattern, c.get_string("index_topk_pattern"));
    for (const char ch : pattern) {
      if (ch != 'F' && ch != 'S')
        return field_error(config, "index_topk_pattern holds '" + std::string(1, ch) + "'; expected F or S");
      s.indexer_types.push_back(ch == 'F' ? "full" : "shared");
    }
  } else if (c.has("index_topk_pattern")) {
    DAY0_ASSIGN_OR_RETURN(s.indexer_types, c.get_string_list("index_topk_pattern"));
  } else {
    DAY0_ASSIGN_OR_RETURN(std::int64_t freq, c.get_int_or("index_topk_freq", 1, {-(1ll << 30), 1ll << 30}));
    DAY0_ASSIGN_OR_RETURN(const std::int64_t offset,
                          c.get_int_or("index_skip_topk_offset", 2, {-(1ll << 30), 1ll << 30}));
    freq = std::max<std::int64_t>(freq, 1);
    for (std::int64_t i = 0; i < s.layers; ++i)
      s.indexer_types.push_back(std::max<std::int64_t>(i - offset + 1, 0) % freq == 0 ? "full" : "shared");
  }
  if (static_cast<std::int64_t>(s.indexer_types.size()) != s.layers)
    return field_error(config, count_mismatch("indexer_types", s.indexer_types.size(), s.layers));
  for (std::size_t i = 0; i < s.indexer_types.size(); ++i) {
    const auto& t = s.indexer_types[i];
    if (t != "full" && t != "shared")
      return field_error(config, "indexer_types[" + std::to_string(i) + "] is \"" + t + "\"; expected full or shared");
    // transformers hands a selection only from one decoder layer to the next, and only from a
    // layer that ran its own indexer; anything else fails there at run time.
    if (t == "shared" && s.layer_types[i] == "deepseek_sparse_attention" &&
        (i == 0 || s.layer_types[i - 1] != "deepseek_sparse_attention" || s.indexer_types[i - 1] != "full"))
      return field_error(config, "layer " + std::to_string(i) +
                                     " shares the indexer of the previous layer, which is not a sparse-attention "
                                     "layer with its own (\"full\") indexer");
  }
  return Status::ok();
}

}  // namespace

Result<Glm5Config> read_glm5_config(const io::ModelConfig& config) {
  const io::ConfigView c = config.text();
  Glm5Config s;
  DAY0_ASSIGN_OR_RETURN(s.hidden, c.get_int("hidden_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.layers, c.get_int("num_hidden_layers", kLayerRange));
  DAY0_ASSIGN_OR_RETURN(s.vocab, c.get_int("vocab_size", kVocabRange));
  DAY0_ASSIGN_OR_RETURN(s.inter, c.get_int("intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.moe_inter, c.get_int("moe_intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.experts, c.get_int("n_routed_experts", kExpertRange));
  DAY0_ASSIGN_OR_RETURN(s.top_k, c.get_int("num_experts_per_tok", {1, s.experts}));
  DAY0_ASSIGN_OR_RETURN(s.shared, c.get_int_or("n_shared_experts", 0, {0, 64}));
  DAY0_ASSIGN_OR_RETURN(s.n_group, c.get_int_or("n_group", 1, {1, s.experts}));
  DAY0_ASSIGN_OR_RETURN(s.topk_group, c.get_int_or("topk_group", 1, {1, s.n_group}));
  DAY0_ASSIGN_OR_RETURN(s.norm_topk_prob, c.get_bool_or("norm_topk_prob", true));
  DAY0_ASSIGN_OR_RETURN(s.routed_scaling, c.get_float_or("routed_scaling_factor", 2.5));
  DAY0_ASSIGN_OR_RETURN(s.swiglu_limit, c.get_float_or("swiglu_limit", 10.0));
  DAY0_ASSIGN_OR_RETURN(s.heads, c.get_int("num_attention_heads", {1, 4096}));
  if (c.has("q_lora_rank")) {
    DAY0_ASSIGN_OR_RETURN(s.q_lora, c.get_int("q_lora_rank", kDimRange));
  }
  DAY0_ASSIGN_OR_RETURN(s.kv_lora, c.get_int("kv_lora_rank", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.nope, c.get_int("qk_nope_head_dim", {0, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.rope, c.get_int_or("qk_rope_head_dim", 0, {0, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.v_dim, c.get_int("v_head_dim", {1, 4096}));
  if (s.nope + s.rope <= 0) return field_error(config, "qk_nope_head_dim + qk_rope_head_dim must be positive");
  DAY0_ASSIGN_OR_RETURN(s.attn_bias, c.get_bool_or("attention_bias", false));
  DAY0_ASSIGN_OR_RETURN(s.index_heads, c.get_int("index_n_heads", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.index_dim, c.get_int("index_head_dim", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.kpool, c.get_int_or("index_kpool", 16, {1, 1 << 16}));
  DAY0_ASSIGN_OR_RETURN(s.index_topk, c.get_int_or("index_topk", 2048, {1, 1ll << 30}));
  DAY0_ASSIGN_OR_RETURN(s.select_tail, c.get_bool_or("index_kpool_always_select_tail", true));

  // The Hub's nested linear_attn_config overrides the flat fields, as transformers reads it.
  DAY0_ASSIGN_OR_RETURN(s.lin_heads, c.get_int_or("linear_num_heads", 64, {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.lin_dim, c.get_int_or("linear_head_dim", 128, {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.conv_k, c.get_int_or("linear_conv_kernel_dim", 4, {1, 64}));
  if (const auto lin = c.optional_child("linear_attn_config")) {
    DAY0_ASSIGN_OR_RETURN(s.lin_heads, lin->get_int_or("num_heads", s.lin_heads, {1, 4096}));
    DAY0_ASSIGN_OR_RETURN(s.lin_dim, lin->get_int_or("head_dim", s.lin_dim, {1, 4096}));
    DAY0_ASSIGN_OR_RETURN(s.conv_k, lin->get_int_or("short_conv_kernel_size", s.conv_k, {1, 64}));
  }

  DAY0_ASSIGN_OR_RETURN(s.hc, c.get_int_or("hc_mult", 4, {1, 64}));
  DAY0_ASSIGN_OR_RETURN(s.hc_iters, c.get_int_or("hc_sinkhorn_iters", 20, {0, 10000}));
  DAY0_ASSIGN_OR_RETURN(s.hc_eps, c.get_float_or("hc_eps", 1e-6));
  DAY0_ASSIGN_OR_RETURN(s.rms_eps, c.get_float_or("rms_norm_eps", 1e-5));
  DAY0_ASSIGN_OR_RETURN(s.max_positions, c.get_int_or("max_position_embeddings", 1048576, {1, 1ll << 40}));
  DAY0_ASSIGN_OR_RETURN(const bool root_tied, config.root().get_bool_or("tie_word_embeddings", false));
  DAY0_ASSIGN_OR_RETURN(s.tied, c.get_bool_or("tie_word_embeddings", root_tied));

  DAY0_ASSIGN_OR_RETURN(s.mxfp4, mxfp4_experts(config, "glm5_next"));

  if (s.mxfp4 && (s.hidden % 32 != 0 || s.moe_inter % 32 != 0))
    return field_error(config, "MXFP4 experts need hidden_size and moe_intermediate_size to be multiples of 32");
  if (s.experts % s.n_group != 0)
    return field_error(config, "n_routed_experts (" + std::to_string(s.experts) + ") is not a multiple of n_group (" +
                                   std::to_string(s.n_group) + ")");
  DAY0_RETURN_IF_ERROR(read_layer_types(config, c, s));
  return s;
}

Status check_glm5_runnable(const io::ModelConfig& config, const Glm5Config& s) {
  const io::ConfigView c = config.text();
  const auto unsupported = [&](const std::string& message) {
    return error(ErrorCode::unsupported, config.origin() + ": " + message);
  };
  DAY0_ASSIGN_OR_RETURN(const std::int64_t kv_heads, c.get_int_or("num_key_value_heads", s.heads, {1, 4096}));
  if (kv_heads != s.heads)
    return field_error(config, "num_key_value_heads (" + std::to_string(kv_heads) +
                                   ") must equal num_attention_heads (" + std::to_string(s.heads) + ") in glm5_next");
  if (s.rope != 0)
    return unsupported("qk_rope_head_dim is " + std::to_string(s.rope) +
                       "; glm5_next's sparse-attention layers are NoPE (transformers rejects a RoPE part too)");
  if (s.q_lora == 0)
    return unsupported("glm5_next's sparse attention needs q_lora_rank (the indexer reads the query latent)");
  if (s.index_topk % s.kpool != 0)
    return field_error(config, "index_topk (" + std::to_string(s.index_topk) + ") is not a multiple of index_kpool (" +
                                   std::to_string(s.kpool) + ")");
  if (!s.select_tail)
    return unsupported(
        "index_kpool_always_select_tail is false; Day0 runs glm5_next with the incomplete k-pool "
        "always attended, as released");
  if (s.experts / s.n_group < 2)
    return field_error(config, "each expert group needs at least two experts (group scores sum the top two)");
  if (s.top_k > s.topk_group * (s.experts / s.n_group))
    return field_error(
        config, "num_experts_per_tok (" + std::to_string(s.top_k) + ") exceeds the experts of topk_group groups");
  const Result<std::string> act = c.get_string_or("hidden_act", "silu");
  if (!act.is_ok()) return act.status();
  if (*act != "silu") return unsupported("hidden_act is \"" + *act + "\"; glm5_next uses silu");
  if (!(s.rms_eps > 0) || !(s.hc_eps >= 0))
    return field_error(config, "rms_norm_eps must be positive and hc_eps not negative");
  return Status::ok();
}

}  // namespace day0::models
