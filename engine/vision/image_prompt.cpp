// day0/images.h: image prompts for tools, outside the Engine's sessions.
#include <fmt/format.h>

#include <algorithm>

#include "day0/images.h"
#include "io/image_decode.h"
#include "io/json_util.h"
#include "io/model_config.h"
#include "models/loaded_model.h"
#include "runtime/sampler.h"
#include "vision/image_input.h"

namespace day0 {
namespace {

struct Prepared {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<models::LoadedModel> model;
  vision::ImageInputModel* images = nullptr;
  std::vector<vision::EncodedImage> encoded;
  std::vector<std::int32_t> expanded;
  vision::ImagePositions where;
};

Result<Prepared> prepare(const std::filesystem::path& dir, std::span<const std::int32_t> tokens,
                         const std::vector<std::filesystem::path>& images, const ImagePromptOptions& options) {
  if (tokens.empty()) return error(ErrorCode::invalid_argument, "the prompt has no tokens");
  Prepared p;
  p.pool = std::make_unique<ThreadPool>(static_cast<std::size_t>(std::max(options.threads, 0)));
  DAY0_ASSIGN_OR_RETURN(p.model, models::load_model(dir, *p.pool));
  p.images = vision::image_input(*p.model);
  if (p.images == nullptr || p.images->image_tokens().image < 0)
    return error(ErrorCode::unsupported, dir.string() + ": this model takes no images");
  std::vector<std::int64_t> counts;
  for (const auto& path : images) {
    DAY0_ASSIGN_OR_RETURN(const io::RgbImage rgb, io::load_image_file(path));
    DAY0_ASSIGN_OR_RETURN(const vision::VisionInput input, vision::preprocess_image(rgb, p.images->processor()));
    DAY0_ASSIGN_OR_RETURN(vision::EncodedImage enc, p.images->encode_image(input, nullptr));
    counts.push_back(enc.tokens);
    p.encoded.push_back(std::move(enc));
  }
  const std::int32_t image_token = p.images->image_tokens().image;
  DAY0_ASSIGN_OR_RETURN(p.expanded, vision::expand_image_placeholders(tokens, image_token, counts));
  DAY0_ASSIGN_OR_RETURN(p.where, vision::locate_image_rows(p.expanded, image_token, p.encoded));
  return p;
}

void collect_eos(const nlohmann::json& j, std::vector<std::int32_t>* ids) {
  if (!j.is_object() || !j.contains("eos_token_id")) return;
  const auto add = [&](const nlohmann::json& x) {
    if (x.is_number_integer() && x.get<std::int64_t>() >= 0 && x.get<std::int64_t>() < (1ll << 31))
      ids->push_back(static_cast<std::int32_t>(x.get<std::int64_t>()));
  };
  if (j["eos_token_id"].is_array()) {
    for (const auto& x : j["eos_token_id"]) add(x);
  } else {
    add(j["eos_token_id"]);
  }
}

}  // namespace

Result<ImagePromptLogits> image_prompt_logits(const std::filesystem::path& model_dir,
                                              std::span<const std::int32_t> tokens,
                                              const std::vector<std::filesystem::path>& images,
                                              const ImagePromptOptions& options) {
  DAY0_ASSIGN_OR_RETURN(Prepared p, prepare(model_dir, tokens, images, options));
  ImagePromptLogits out;
  out.vocab = p.model->vocab_size();
  const auto T = static_cast<std::int64_t>(p.expanded.size());
  out.logits.resize(static_cast<std::size_t>(T * out.vocab));
  auto state = p.model->new_state();
  DAY0_RETURN_IF_ERROR(vision::forward_with_images(*p.images, *state, p.expanded, p.where, p.encoded, 0, T, T,
                                                   out.logits.data(), nullptr));
  out.expanded = std::move(p.expanded);
  return out;
}

Result<ImagePromptGeneration> image_prompt_generate(const std::filesystem::path& model_dir,
                                                    std::span<const std::int32_t> tokens,
                                                    const std::vector<std::filesystem::path>& images,
                                                    const Sampling& sampling, std::int64_t max_new_tokens,
                                                    const ImagePromptOptions& options) {
  if (max_new_tokens < 0) return error(ErrorCode::invalid_argument, "max_new_tokens is negative");
  DAY0_ASSIGN_OR_RETURN(Prepared p, prepare(model_dir, tokens, images, options));
  std::vector<std::int32_t> eos;
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(model_dir));
  collect_eos(config.json(), &eos);
  if (config.root().optional_child("text_config")) collect_eos(config.text().json(), &eos);
  std::error_code ec;
  if (std::filesystem::exists(model_dir / "generation_config.json", ec))
    if (auto g = io::read_json_file(model_dir / "generation_config.json", 1 << 20)) collect_eos(*g, &eos);

  const auto T = static_cast<std::int64_t>(p.expanded.size());
  const std::int64_t V = p.model->vocab_size();
  std::vector<float> logits(static_cast<std::size_t>(V));
  auto state = p.model->new_state();
  DAY0_RETURN_IF_ERROR(
      vision::forward_with_images(*p.images, *state, p.expanded, p.where, p.encoded, 0, T, 1, logits.data(), nullptr));
  ImagePromptGeneration out;
  runtime::Sampler sampler(sampling);
  std::vector<std::int32_t> seen = p.expanded;
  const std::int64_t room = p.model->max_context() - T;
  for (std::int64_t i = 0; i < std::min(max_new_tokens, room); ++i) {
    const std::int32_t next = sampler.sample(logits, seen);
    out.generated.push_back(next);
    seen.push_back(next);
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) {
      out.stopped_at_eos = true;
      break;
    }
    if (i + 1 == max_new_tokens) break;
    const std::int32_t one[1] = {next};
    DAY0_RETURN_IF_ERROR(p.model->forward(*state, one, 1, logits.data(), nullptr));
  }
  out.expanded = std::move(p.expanded);
  return out;
}

}  // namespace day0
