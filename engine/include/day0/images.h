#pragma once
// Prompts with images, for tools (day0-cli logits/generate --image): the model folder is loaded
// on the device asked for (the vision tower itself runs on the CPU), each image file is decoded (PNG or JPEG), preprocessed as the model's image
// processor does and run through its vision tower, and every occurrence of the model's image
// token in `tokens` stands for the next image: it expands to that image's tokens, whose input
// embeddings are the image's features (begin/end tokens are given by the caller).
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "day0/engine.h"
#include "day0/status.h"

namespace day0 {

struct ImagePromptOptions {
  int threads = 0;            // 0: one per hardware thread
  std::string device = "cpu";  // "cpu", "cuda" or "cuda:N" (models::LoadOptions::device)
};

struct ImagePromptLogits {
  std::vector<std::int32_t> expanded;  // the prompt with the image tokens expanded
  std::vector<float> logits;           // [expanded.size(), vocab], from one prefill
  std::int64_t vocab = 0;
};

Result<ImagePromptLogits> image_prompt_logits(const std::filesystem::path& model_dir,
                                              std::span<const std::int32_t> tokens,
                                              const std::vector<std::filesystem::path>& images,
                                              const ImagePromptOptions& options = {});

struct ImagePromptGeneration {
  std::vector<std::int32_t> expanded;
  std::vector<std::int32_t> generated;
  bool stopped_at_eos = false;
};

// Continues the prompt with `sampling` (temperature 0: greedy), up to `max_new_tokens`, ending at
// an end-of-sequence id of the model's generation_config.json / config.json.
Result<ImagePromptGeneration> image_prompt_generate(const std::filesystem::path& model_dir,
                                                    std::span<const std::int32_t> tokens,
                                                    const std::vector<std::filesystem::path>& images,
                                                    const Sampling& sampling, std::int64_t max_new_tokens,
                                                    const ImagePromptOptions& options = {});

}  // namespace day0
