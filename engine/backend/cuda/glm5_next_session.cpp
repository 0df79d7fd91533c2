#include "backend/cuda/glm5_next_session.h"

#include <algorithm>
#include <string>

#include "blocks/kda.h"
#include "glm_moe.h"
#include "hyper_connection.h"

namespace day0::cuda::glm5 {

Result<Shape> read_shape(const io::ModelConfig& config) {
  Shape s;
  DAY0_ASSIGN_OR_RETURN(s.c, models::read_glm5_config(config));
  DAY0_RETURN_IF_ERROR(models::check_glm5_runnable(config, s.c));
  for (std::int64_t l = 0; l < s.c.layers; ++l) {
    if (s.c.is_kda(l)) {
      ++s.kda_layers;
    } else {
      ++s.mla_layers;
      if (s.c.has_indexer(l)) ++s.indexer_layers;
    }
  }
  if (s.kda_layers > 0) {
    DAY0_ASSIGN_OR_RETURN(const blocks::KdaConfig kc, blocks::read_kda_config(config.text()));
    s.kda_heads = kc.heads;
    s.kda_d = kc.head_dim;
    s.kda_conv = kc.conv_kernel;
    s.has_lower_bound = kc.lower_bound.has_value();
    s.lower_bound = kc.lower_bound.value_or(0.0f);
    s.kda_norm_eps = kc.norm_eps;
    s.l2_eps = kc.l2_eps;
  }
  const auto& c = s.c;
  if (c.hidden % 32 != 0 || c.moe_inter % 32 != 0 || c.q_lora % 8 != 0 || (c.heads * c.v_dim) % 8 != 0 ||
      c.inter % 8 != 0 || (s.kda_layers > 0 && (s.kda_d % 8 != 0)))
    return error(ErrorCode::unsupported, config.origin() +
                                             ": the CUDA backend runs glm5_next with hidden and expert widths that "
                                             "are multiples of 32 and projection widths that are multiples of 8");
  // The kernels' own bounds, named by the config field that passes them.
  const auto beyond = [&](const char* field, std::int64_t value, const std::string& limit) {
    return error(ErrorCode::unsupported, config.origin() + ": " + field + " is " + std::to_string(value) +
                                             "; the CUDA backend runs glm5_next with " + limit);
  };
  if (c.kv_lora > kernels::kMlaMaxLatent || c.kv_lora % 8 != 0)
    return beyond("kv_lora_rank", c.kv_lora, "a multiple of 8 up to " + std::to_string(kernels::kMlaMaxLatent));
  if (s.indexer_layers > 0 && (c.index_dim % 4 != 0 || c.index_dim > 256))
    return beyond("index_head_dim", c.index_dim, "a multiple of 4 up to 256");
  if (s.indexer_layers > 0 && std::min(c.index_topk, c.max_positions) / c.kpool > kernels::kIndexerMaxChosen)
    return beyond("index_topk", c.index_topk,
                  "at most " + std::to_string(kernels::kIndexerMaxChosen) + " k-pools selected per query");
  if (s.kda_layers > 0 && s.kda_d > 256) return beyond("linear_head_dim", s.kda_d, "at most 256");
  if (s.kda_layers > 0 && (s.kda_conv < 1 || s.kda_conv > 64))
    return beyond("linear_conv_kernel_dim", s.kda_conv, "1 to 64");
  if (c.hc > kernels::kHcMaxStreams)
    return beyond("hc_mult", c.hc, "at most " + std::to_string(kernels::kHcMaxStreams) + " streams");
  if (c.experts > kernels::kGlmMaxExperts)
    return beyond("n_routed_experts", c.experts, "at most " + std::to_string(kernels::kGlmMaxExperts));
  if (c.top_k > kernels::kGlmMaxTopK)
    return beyond("num_experts_per_tok", c.top_k, "at most " + std::to_string(kernels::kGlmMaxTopK));
  if (c.n_group > kernels::kGlmMaxGroups)
    return beyond("n_group", c.n_group, "at most " + std::to_string(kernels::kGlmMaxGroups));
  return s;
}

std::size_t attention_scratch_floats(const Shape& s, std::int64_t capacity) {
  std::size_t most = 0;
  for (std::int64_t T = 1; T <= kGlm5PrefillChunk; ++T)
    most = std::max(most, kernels::mla_attend_scratch_floats(T, static_cast<int>(s.c.heads),
                                                             static_cast<int>(s.c.kv_lora), capacity));
  return most;
}

std::size_t selection_scratch_bytes(const Shape& s, std::int64_t capacity) {
  std::size_t most = 0;
  for (std::int64_t T = 1; T <= kGlm5PrefillChunk; ++T)
    most = std::max(most, kernels::indexer_select_scratch_bytes(T, capacity, static_cast<int>(s.c.kpool)));
  return most;
}

}  // namespace day0::cuda::glm5
