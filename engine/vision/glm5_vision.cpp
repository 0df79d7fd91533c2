#include "vision/glm5_vision.h"

#include "day0/log.h"
#include "models/weights.h"

namespace day0::vision {
namespace {

// What about the vision config keeps Day0 from reading images with it, or empty.
std::string unusable_config(const io::ModelConfig& config, std::int64_t text_hidden, VisionTowerConfig* out) {
  auto vc = parse_vision_config(config);
  if (!vc) return vc.status().message();
  if (vc->out_hidden != text_hidden)
    return "vision_config.out_hidden_size (" + std::to_string(vc->out_hidden) + ") differs from the text hidden size (" +
           std::to_string(text_hidden) + ")";
  *out = *vc;
  return {};
}

}  // namespace

Result<Glm5Vision> load_glm5_vision(const io::ModelConfig& config,
                                    const std::shared_ptr<const io::Checkpoint>& checkpoint, std::int64_t text_hidden,
                                    ThreadPool& pool) {
  Glm5Vision v;
  if (!config.vision() || !checkpoint->find("model.visual.patch_embed.proj.weight")) return v;
  VisionTowerConfig vc;
  if (const std::string why = unusable_config(config, text_hidden, &vc); !why.empty()) {
    v.unavailable = why.rfind(config.origin(), 0) == 0 ? why : config.origin() + ": " + why;
    DAY0_LOG_WARN("images are unavailable for this model (it reads text): {}", v.unavailable);
    return v;
  }
  DAY0_ASSIGN_OR_RETURN(v.tower, VisionTower::load(vc, models::WeightSource(checkpoint), "model.visual", pool));
  DAY0_ASSIGN_OR_RETURN(v.processor, load_processor_config(config, checkpoint->dir()));
  DAY0_ASSIGN_OR_RETURN(v.ids, image_token_ids(config));
  return v;
}

Result<EncodedImage> Glm5Vision::encode(const VisionInput& input, models::ForwardTrace* trace,
                                        std::int64_t text_hidden) const {
  if (!tower) {
    if (!unavailable.empty())
      return error(ErrorCode::unsupported, "this checkpoint's vision tower cannot be used: " + unavailable);
    return error(ErrorCode::unsupported, "this checkpoint has no vision tower; it takes no images");
  }
  EncodedImage out;
  DAY0_ASSIGN_OR_RETURN(out.features, tower->encode(input, trace));
  out.tokens = static_cast<std::int64_t>(out.features.size()) / text_hidden;
  out.hash = hash_vision_input(input);
  return out;
}

}  // namespace day0::vision
