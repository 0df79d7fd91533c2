// config.json through what `inspect` and loading read: the typed config, then every
// architecture's readers (MoE layout and the expected tensor list), the glm5_next checks and the
// vision processor's patch geometry. Each reader runs on every config whatever its model_type,
// so one corpus exercises them all.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "io/model_config.h"
#include "models/architecture.h"
#include "models/glm5_next_config.h"
#include "vision/glm5_vision_preprocess.h"
#include "vision/image_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace day0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = io::ModelConfig::parse(text, "config.json");
  if (!config) {
    DAY0_FUZZ_CHECK(!config.status().message().empty(), "an error needs a message");
    return 0;
  }
  for (const auto* arch : models::architectures()) {
    if (auto layout = arch->moe_layout(*config)) {
      DAY0_FUZZ_CHECK(layout->moe_layers <= layout->layers, "more MoE layers than layers");
    }
    if (auto tensors = arch->expected_tensors(*config)) {
      for (const auto& t : *tensors) DAY0_FUZZ_CHECK(!t.name.empty(), "a tensor without a name");
    }
  }
  if (auto glm = models::read_glm5_config(*config)) {
    const auto& c = glm.value();
    DAY0_FUZZ_CHECK(c.layer_types.size() == static_cast<std::size_t>(c.layers) &&
                        c.mlp_types.size() == static_cast<std::size_t>(c.layers) &&
                        c.indexer_types.size() == static_cast<std::size_t>(c.layers),
                    "layer schedules must cover every layer");
    for (std::int64_t l = 0; l < c.layers; ++l) {
      (void)c.is_moe(l);
      (void)c.has_indexer(l);
    }
    (void)models::check_glm5_runnable(*config, c);
  }
  (void)vision::load_processor_config(*config, "/nonexistent/day0-fuzz-model");
  (void)vision::image_token_ids(*config);
  return 0;
}
