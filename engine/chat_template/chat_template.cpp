// The public face of the template engine: parse, render from a JSON context, and find a model
// folder's template. Interpreter errors (thrown inside) become Status here.
#include "day0/chat_template.h"

#include <new>

#include "chat_template/evaluator.h"
#include "chat_template/json_value.h"
#include "chat_template/parser.h"
#include "chat_template/unicode.h"
#include "common/json_error.h"
#include "io/json_util.h"

namespace day0 {

namespace {

Status to_status(const chat_template::TemplateError& e, const std::string& name) {
  std::string where = name;
  if (e.line > 0) where += ":" + std::to_string(e.line) + ":" + std::to_string(e.column);
  const ErrorCode code = e.kind == chat_template::ErrorKind::syntax   ? ErrorCode::corrupt_data
                         : e.kind == chat_template::ErrorKind::budget ? ErrorCode::out_of_memory
                                                                      : ErrorCode::invalid_argument;
  return error(code, where + ": " + chat_template::error_kind_name(e.kind) + ": " + e.message);
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, std::string name) {
  if (const std::size_t bad = chat_template::find_invalid_utf8(source); bad != std::string_view::npos)
    return error(ErrorCode::corrupt_data,
                 name + ": the template is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  try {
    std::shared_ptr<const chat_template::Template> t = chat_template::parse_template(source, name);
    return ChatTemplate(std::move(t));
  } catch (const chat_template::TemplateError& e) {
    return to_status(e, name);
  } catch (const std::bad_alloc&) {
    return error(ErrorCode::out_of_memory, name + ": out of memory while parsing the template");
  }
}

const std::string& ChatTemplate::name() const { return impl_->name; }

Result<std::string> ChatTemplate::render_json(std::string_view context_json,
                                              const ChatTemplateRenderOptions& options) const {
  // Ordered: Python dicts keep insertion order, and templates print and iterate them.
  nlohmann::ordered_json context;
  try {
    context = nlohmann::ordered_json::parse(context_json.begin(), context_json.end());
  } catch (const nlohmann::ordered_json::exception& e) {
    return error(ErrorCode::invalid_argument, common::json_parse_problem("the template context", e));
  }
  if (!context.is_object()) return error(ErrorCode::invalid_argument, "the template context must be a JSON object");
  try {
    const chat_template::DictData vars = chat_template::json_object_to_dict(context);
    chat_template::RenderLimits limits;
    limits.max_steps = options.limits.max_steps;
    limits.max_output_bytes = options.limits.max_output_bytes;
    limits.max_depth = options.limits.max_depth;
    const std::tm* clock = options.fixed_now ? &*options.fixed_now : nullptr;
    return chat_template::render_template(*impl_, vars, limits, clock);
  } catch (const chat_template::TemplateError& e) {
    return to_status(e, impl_->name);
  } catch (const std::bad_alloc&) {
    return error(ErrorCode::out_of_memory, impl_->name + ": out of memory while rendering the template");
  }
}

Result<std::string> read_model_chat_template(const std::filesystem::path& model_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(model_dir, ec))
    return error(ErrorCode::not_found, model_dir.string() + " is not a folder");
  const auto jinja = model_dir / "chat_template.jinja";
  if (std::filesystem::exists(jinja, ec)) return io::read_text_file(jinja, 16u << 20);
  const auto config_path = model_dir / "tokenizer_config.json";
  if (!std::filesystem::exists(config_path, ec))
    return error(ErrorCode::not_found,
                 model_dir.string() + " has neither chat_template.jinja nor tokenizer_config.json");
  DAY0_ASSIGN_OR_RETURN(const nlohmann::json config, io::read_json_file(config_path));
  if (!config.is_object() || !config.contains("chat_template"))
    return error(ErrorCode::not_found, config_path.string() + " has no chat_template");
  const auto& t = config["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const auto& entry : t) {
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string())
        return entry["template"].get<std::string>();
    }
    return error(ErrorCode::not_found, config_path.string() + ": chat_template lists no template named \"default\"");
  }
  return error(ErrorCode::corrupt_data, config_path.string() + ": chat_template is neither a string nor a list");
}

}  // namespace day0
