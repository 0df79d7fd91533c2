// Image files as the app reads an attached image: decode (PNG, JPEG, or a refusal naming the
// format) with the default limits, then the GLM vision preprocessing into patches.
#include <cstdint>
#include <span>

#include "fuzz/fuzz_check.h"
#include "io/image_decode.h"
#include "vision/glm5_vision_preprocess.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace day0;
  auto image = io::decode_image(std::span<const std::uint8_t>(data, size), "fuzz-image");
  if (!image) {
    DAY0_FUZZ_CHECK(!image.status().message().empty(), "an error needs a message");
    return 0;
  }
  DAY0_FUZZ_CHECK(image->width > 0 && image->height > 0, "an empty image decoded");
  DAY0_FUZZ_CHECK(image->pixels.size() == static_cast<std::size_t>(image->width * image->height * 3),
                  "pixel buffer size");
  const vision::ProcessorConfig config;
  auto input = vision::preprocess_image(*image, config);
  if (!input) {
    DAY0_FUZZ_CHECK(!input.status().message().empty(), "an error needs a message");
    return 0;
  }
  DAY0_FUZZ_CHECK(input->patch_dim == 3 * config.temporal_patch_size * config.patch_size * config.patch_size,
                  "patch width");
  DAY0_FUZZ_CHECK(input->pixel_values.size() == static_cast<std::size_t>(input->patches() * input->patch_dim),
                  "patch buffer size");
  DAY0_FUZZ_CHECK(input->patches() <= config.max_image_tokens * config.merge_size * config.merge_size,
                  "more patches than max_image_tokens allows");
  return 0;
}
