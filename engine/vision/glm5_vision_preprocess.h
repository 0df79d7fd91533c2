#pragma once
// The GLM-5.3-Flash image processor (transformers' Glm5NextImageProcessor, torchvision backend):
//   canvas    = smart_resize(h, w): both sides aligned to patch * merge (28 px), the pixel count
//               between min_image_tokens and max_image_tokens tokens' worth;
//   content   = the image scaled into the canvas keeping its aspect ratio (never enlarged once it
//               holds min_image_tokens), antialiased bicubic (a = -0.5) on 0..255 values, then
//               clamped and rounded to integers as torchvision does for 8-bit images;
//   padding   = zeros right and bottom up to the canvas;
//   values    = (x - mean / rescale) / (std / rescale), CLIP mean and std;
//   patches   = [grid_h * grid_w, C * temporal * patch * patch], ordered block-major over the
//               merge x merge blocks (block row, block column, row in block, column in block),
//               each patch's frame repeated temporal_patch_size times.
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "day0/status.h"
#include "io/image_decode.h"
#include "io/model_config.h"

namespace day0::vision {

struct ProcessorConfig {
  std::int64_t patch_size = 14;
  std::int64_t temporal_patch_size = 2;
  std::int64_t merge_size = 2;
  std::int64_t min_image_tokens = 16;
  std::int64_t max_image_tokens = 8000;
  double rescale_factor = 1.0 / 255.0;
  std::array<double, 3> image_mean{0.48145466, 0.4578275, 0.40821073};  // OpenAI CLIP
  std::array<double, 3> image_std{0.26862954, 0.26130258, 0.27577711};
  std::int64_t factor() const { return patch_size * merge_size; }
};

// Patch geometry from config.json's vision_config, then the overrides of
// `<dir>/preprocessor_config.json` when the folder has one.
Result<ProcessorConfig> load_processor_config(const io::ModelConfig& config, const std::filesystem::path& dir);

struct Canvas {
  std::int64_t height = 0, width = 0;                  // aligned canvas
  std::int64_t content_height = 0, content_width = 0;  // the resized image inside it
};

// The processor's smart_resize: the aligned (height, width) for `num_frames` frames.
Result<std::array<std::int64_t, 2>> smart_resize(std::int64_t num_frames, std::int64_t height, std::int64_t width,
                                                 std::int64_t temporal_factor, std::int64_t factor,
                                                 std::int64_t min_tokens, std::int64_t max_tokens);

// Canvas and content size for an image of height x width.
Result<Canvas> plan_canvas(std::int64_t height, std::int64_t width, const ProcessorConfig& config);

// The tokens the vision encoder gives an image of height x width: one per merge x merge block
// of patches of its canvas.
Result<std::int64_t> image_token_count(std::int64_t height, std::int64_t width, const ProcessorConfig& config);

// Antialiased separable bicubic resize as PyTorch's interpolate(mode="bicubic", antialias=True,
// align_corners=False) computes it in float32: width first, then height; a = -0.5; the kernel's
// support scaled by in/out when shrinking. in: [channels, h, w] planar; out: [channels, oh, ow].
void resize_bicubic_antialias(const float* in, std::int64_t channels, std::int64_t h, std::int64_t w, std::int64_t oh,
                              std::int64_t ow, float* out);

struct VisionInput {
  std::vector<float> pixel_values;  // [grid_t * grid_h * grid_w, patch_dim]
  std::int64_t patch_dim = 0;       // channels * temporal * patch * patch
  std::int64_t grid_t = 1, grid_h = 0, grid_w = 0;
  Canvas canvas;
  std::int64_t patches() const { return grid_t * grid_h * grid_w; }
};

// The resized, padded canvas as 0..255 values, planar [3, canvas.height, canvas.width].
Result<std::vector<float>> canvas_pixels(const io::RgbImage& image, const ProcessorConfig& config, Canvas* canvas);

Result<VisionInput> preprocess_image(const io::RgbImage& image, const ProcessorConfig& config);

}  // namespace day0::vision
