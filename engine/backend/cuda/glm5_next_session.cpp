#include "backend/cuda/glm5_next_session.h"

#include "blocks/kda.h"

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
  return s;
}

}  // namespace day0::cuda::glm5
