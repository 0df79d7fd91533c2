#include "models/glm5_next_weights.h"

namespace day0::models {

Result<Glm5Weights> bind_glm5_weights(const io::ModelConfig& config, const Glm5Config& s,
                                      const std::shared_ptr<const io::Checkpoint>& checkpoint,
                                      const blocks::BindOptions& options) {
  const WeightSource w(checkpoint);
  const std::int64_t H = s.hidden;
  Glm5Weights g;
  g.hc = {s.hc, H, s.hc_iters, static_cast<float>(s.rms_eps), static_cast<float>(s.hc_eps)};
  g.mla = {H, s.heads, s.q_lora, s.kv_lora, s.nope, s.v_dim, s.attn_bias, static_cast<float>(s.rms_eps)};
  g.indexer = {H, s.q_lora, s.index_heads, s.index_dim, s.kpool, s.index_topk};
  g.moe.hidden = H;
  g.moe.experts = s.experts;
  g.moe.top_k = s.top_k;
  g.moe.inter = s.moe_inter;
  g.moe.shared_inter = s.moe_inter * s.shared;
  g.moe.n_group = s.n_group;
  g.moe.topk_group = s.topk_group;
  g.moe.norm_topk_prob = s.norm_topk_prob;
  g.moe.routed_scaling = static_cast<float>(s.routed_scaling);
  g.moe.swiglu_limit = static_cast<float>(s.swiglu_limit);
  g.moe.mxfp4 = s.mxfp4;
  bool any_kda = false;
  for (std::int64_t l = 0; l < s.layers; ++l) any_kda = any_kda || s.is_kda(l);
  if (any_kda) {
    DAY0_ASSIGN_OR_RETURN(g.kda, blocks::read_kda_config(config.text()));
  }

  const std::string root = "model.language_model.";
  DAY0_ASSIGN_OR_RETURN(g.embed, w.matrix(root + "embed_tokens.weight", s.vocab, H));
  DAY0_ASSIGN_OR_RETURN(g.final_norm, w.vector(root + "norm.weight", H));
  DAY0_ASSIGN_OR_RETURN(g.lm_head, w.matrix(s.tied ? root + "embed_tokens.weight" : "lm_head.weight", s.vocab, H));
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const std::string p = root + "layers." + std::to_string(l) + ".";
    Glm5Layer L;
    DAY0_ASSIGN_OR_RETURN(L.attn_hc, blocks::bind_hyper_connection(w, g.hc, p + "hc_attn_"));
    DAY0_ASSIGN_OR_RETURN(L.ffn_hc, blocks::bind_hyper_connection(w, g.hc, p + "hc_ffn_"));
    DAY0_ASSIGN_OR_RETURN(L.input_norm, w.vector(p + "input_layernorm.weight", H));
    DAY0_ASSIGN_OR_RETURN(L.post_norm, w.vector(p + "post_attention_layernorm.weight", H));
    if (s.is_kda(l)) {
      DAY0_ASSIGN_OR_RETURN(L.kda, blocks::bind_kda_layer(w, *g.kda, p + "self_attn"));
      g.slot.push_back(g.kda_layers++);
      g.index_slot.push_back(-1);
    } else {
      DAY0_ASSIGN_OR_RETURN(L.mla, blocks::bind_mla(w, g.mla, p + "self_attn."));
      if (s.has_indexer(l)) {
        DAY0_ASSIGN_OR_RETURN(L.indexer, blocks::bind_indexer(w, g.indexer, p + "self_attn.indexer."));
        g.index_slot.push_back(g.indexer_layers++);
      } else {
        g.index_slot.push_back(-1);
      }
      g.slot.push_back(g.mla_layers++);
    }
    if (s.is_moe(l)) {
      DAY0_ASSIGN_OR_RETURN(L.moe, blocks::bind_moe(w, g.moe, p + "mlp.", options));
    } else {
      DAY0_ASSIGN_OR_RETURN(L.mlp, blocks::bind_dense_mlp(w, p + "mlp.", H, s.inter));
    }
    g.layers.push_back(std::move(L));
  }
  return g;
}

}  // namespace day0::models
