#pragma once
// The vision side of a glm5_next checkpoint, shared by its CPU model and its GPU program (both
// run the tower on the CPU from the mapped checkpoint): the tower, the processor's settings and
// the image token ids. A checkpoint whose vision config Day0 cannot use (a tower whose output
// does not fit the text model, settings it does not support) still loads as a text model: the
// reason is logged once and given to every image sent to it. Missing or malformed tower weights
// are a damaged checkpoint and an error, as any other tensor's.
#include <cstdint>
#include <memory>
#include <string>

#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "vision/glm5_vision_tower.h"
#include "vision/image_input.h"

namespace day0::vision {

struct Glm5Vision {
  std::unique_ptr<VisionTower> tower;
  ProcessorConfig processor;
  ImageTokenIds ids;
  std::string unavailable;  // why images cannot be read (empty when the tower loaded)

  // The image's features [tokens, text_hidden] and its pixels' hash; an error with `unavailable`
  // (or "no vision tower") when there is no tower.
  Result<EncodedImage> encode(const VisionInput& input, models::ForwardTrace* trace, std::int64_t text_hidden) const;
};

// Loads the tower when the checkpoint has one (model.visual.*).
Result<Glm5Vision> load_glm5_vision(const io::ModelConfig& config, const std::shared_ptr<const io::Checkpoint>& checkpoint,
                            std::int64_t text_hidden, ThreadPool& pool);

}  // namespace day0::vision
