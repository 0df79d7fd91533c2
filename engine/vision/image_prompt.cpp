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
  vision::PreparedPrompt prompt;
};

Result<Prepared> prepare(const std::filesystem::path& dir, std::span<const std::int32_t> tokens,
                         const std::vector<std::filesystem::path>& images, const ImagePromptOptions& options) {
  if (tokens.empty()) return error(ErrorCode::invalid_argument, "the prompt has no tokens");
  Prepared p;
  p.pool = std::make_unique<ThreadPool>(static_cast<std::size_t>(std::max(options.threads, 0)));
  models::LoadOptions load;
  load.device = options.device;
  DAY0_ASSIGN_OR_RETURN(p.model, models::load_model(dir, *p.pool, load));
  if (images.empty()) {
    // Each image token must have an image: without any, the prompt is checked as with images.
    auto* im = vision::image_input(*p.model);
    if (im != nullptr && std::find(tokens.begin(), tokens.end(), im->image_tokens().image) != tokens.end())
      return error(ErrorCode::invalid_argument, "the prompt has image tokens but no images were given");
  }
  DAY0_ASSIGN_OR_RETURN(p.prompt, vision::prepare_prompt(*p.model, tokens, images, nullptr));
  return p;
}

// Feeds the prepared prompt (with or without images) and writes the last `rows` logits.
Status feed(Prepared& p, models::SessionState& state, std::int64_t rows, float* logits) {
  const auto T = static_cast<std::int64_t>(p.prompt.tokens.size());
  if (!p.prompt.has_images()) return p.model->forward(state, p.prompt.tokens, rows, logits, nullptr);
  return vision::forward_with_images(*p.prompt.model, state, p.prompt.tokens, p.prompt.where, p.prompt.images, 0, T,
                                     rows, logits, nullptr);
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
  const auto T = static_cast<std::int64_t>(p.prompt.tokens.size());
  out.logits.resize(static_cast<std::size_t>(T * out.vocab));
  auto state = p.model->new_state();
  DAY0_RETURN_IF_ERROR(feed(p, *state, T, out.logits.data()));
  out.expanded = std::move(p.prompt.tokens);
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

  const auto T = static_cast<std::int64_t>(p.prompt.tokens.size());
  const std::int64_t V = p.model->vocab_size();
  std::vector<float> logits(static_cast<std::size_t>(V));
  auto state = p.model->new_state();
  DAY0_RETURN_IF_ERROR(feed(p, *state, 1, logits.data()));
  ImagePromptGeneration out;
  runtime::Sampler sampler(sampling);
  std::vector<std::int32_t> seen = p.prompt.tokens;
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
  out.expanded = std::move(p.prompt.tokens);
  return out;
}

}  // namespace day0
