#pragma once
// Chat templates: runs a model's own Jinja chat template (tokenizer_config.json's
// `chat_template` or chat_template.jinja) the way transformers' apply_chat_template does,
// byte for byte, with budgets so a hostile template fails instead of hanging the app.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "day0/status.h"

namespace day0 {

namespace chat_template {
struct Template;
}

struct ChatTemplateLimits {
  std::uint64_t max_steps = 2'000'000;       // evaluation steps (real templates use < 100,000)
  std::size_t max_output_bytes = 16u << 20;  // the rendering, and any single value built on the way
  int max_depth = 500;                       // nesting of statements, expressions and macro calls
};

struct ChatTemplateRenderOptions {
  ChatTemplateLimits limits;
  // The clock strftime_now reads; unset: the current local time.
  std::optional<std::tm> fixed_now;
};

class ChatTemplate {
 public:
  // Parses Jinja source; errors read "NAME:LINE:COLUMN: message".
  static Result<ChatTemplate> parse(std::string_view source, std::string name = "chat_template");

  // Renders with every top-level key of the JSON object `context_json` as a variable
  // (messages, add_generation_prompt, bos_token, eos_token, tools, ...).
  Result<std::string> render_json(std::string_view context_json, const ChatTemplateRenderOptions& options = {}) const;

  const std::string& name() const;

 private:
  explicit ChatTemplate(std::shared_ptr<const chat_template::Template> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const chat_template::Template> impl_;
};

// The chat template of a Hugging Face model folder: chat_template.jinja if present, else
// tokenizer_config.json's `chat_template` (a string, or a list of {name, template} from which
// "default" is taken).
Result<std::string> read_model_chat_template(const std::filesystem::path& model_dir);

}  // namespace day0
