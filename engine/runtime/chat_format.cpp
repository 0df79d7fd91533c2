#include <nlohmann/json.hpp>

#include "chat_template/reasoning.h"
#include "day0/chat.h"
#include "io/json_util.h"

namespace day0 {
namespace {

// Special tokens in tokenizer_config.json are strings or {"content": "..."} objects.
std::string token_text(const nlohmann::json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return "";
  const auto& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

OutputPiece convert(const chat_template::OutputSegment& s) {
  OutputPiece p;
  switch (s.channel) {
    case chat_template::OutputChannel::reasoning: p.channel = OutputChannel::reasoning; break;
    case chat_template::OutputChannel::answer: p.channel = OutputChannel::answer; break;
    case chat_template::OutputChannel::commentary: p.channel = OutputChannel::commentary; break;
    case chat_template::OutputChannel::tool_call: p.channel = OutputChannel::tool_call; break;
  }
  p.text = s.text;
  p.recipient = s.recipient;
  return p;
}

std::vector<OutputPiece> convert(const std::vector<chat_template::OutputSegment>& segments) {
  std::vector<OutputPiece> out;
  for (const auto& s : segments) out.push_back(convert(s));
  return out;
}

}  // namespace

const char* output_channel_name(OutputChannel channel) {
  switch (channel) {
    case OutputChannel::reasoning: return "reasoning";
    case OutputChannel::answer: return "answer";
    case OutputChannel::commentary: return "commentary";
    case OutputChannel::tool_call: return "tool_call";
  }
  return "answer";
}

struct OutputSplitter::Impl {
  chat_template::ReasoningParser parser;
};

OutputSplitter::OutputSplitter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OutputSplitter::~OutputSplitter() = default;
OutputSplitter::OutputSplitter(OutputSplitter&&) noexcept = default;
OutputSplitter& OutputSplitter::operator=(OutputSplitter&&) noexcept = default;
std::vector<OutputPiece> OutputSplitter::feed(std::string_view text) { return convert(impl_->parser.feed(text)); }
std::vector<OutputPiece> OutputSplitter::finish() { return convert(impl_->parser.finish()); }

OutputSplitter ChatFormatter::output_splitter(std::string_view prompt) const {
  if (harmony_)
    return OutputSplitter(std::make_unique<OutputSplitter::Impl>(
        OutputSplitter::Impl{chat_template::ReasoningParser(chat_template::ReasoningFormat::harmony)}));
  // A generation prompt ending in an open <think> starts the turn inside the reasoning.
  std::string_view tail = prompt;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.remove_suffix(1);
  const bool open_think = tail.size() >= 7 && tail.substr(tail.size() - 7) == "<think>";
  return OutputSplitter(std::make_unique<OutputSplitter::Impl>(
      OutputSplitter::Impl{chat_template::ReasoningParser(chat_template::ReasoningFormat::think_tags, open_think)}));
}

Result<ChatFormatter> ChatFormatter::load(const std::filesystem::path& dir) {
  DAY0_ASSIGN_OR_RETURN(Tokenizer tokenizer, Tokenizer::load(dir));
  auto source = read_model_chat_template(dir);
  if (!source)
    return error(source.status().code(), source.status().message() + " (the model folder needs a chat template to chat)");
  // Errors name the file the template came from.
  std::error_code ec;
  const std::string origin = std::filesystem::exists(dir / "chat_template.jinja", ec)
                                 ? (dir / "chat_template.jinja").string()
                                 : (dir / "tokenizer_config.json").string() + " chat_template";
  DAY0_ASSIGN_OR_RETURN(ChatTemplate chat_template, ChatTemplate::parse(*source, origin));
  ChatFormatter formatter(std::move(tokenizer), std::move(chat_template));
  if (std::filesystem::exists(dir / "tokenizer_config.json", ec)) {
    DAY0_ASSIGN_OR_RETURN(const nlohmann::json config, io::read_json_file(dir / "tokenizer_config.json", 64ull << 20));
    formatter.bos_token_ = token_text(config, "bos_token");
    formatter.eos_token_ = token_text(config, "eos_token");
  }
  formatter.harmony_ = formatter.tokenizer_.token_to_id("<|channel|>").has_value();
  for (const char* t : {"<|return|>", "<|call|>", "<|user|>", "<|observation|>", "<|endoftext|>", "<|im_end|>",
                        "<|eot_id|>"}) {
    if (const auto id = formatter.tokenizer_.token_to_id(t)) formatter.turn_end_ids_.push_back(static_cast<std::int32_t>(*id));
  }
  return formatter;
}

Result<std::string> ChatFormatter::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  nlohmann::json context;
  context["messages"] = nlohmann::json::array();
  for (const auto& m : messages) {
    nlohmann::json message = {{"role", m.role}, {"content", m.content}};
    if (!m.reasoning.empty()) {
      message["thinking"] = m.reasoning;
      message["reasoning_content"] = m.reasoning;
    }
    context["messages"].push_back(message);
  }
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = bos_token_;
  context["eos_token"] = eos_token_;
  return template_.render_json(context.dump());
}

Result<std::vector<std::int32_t>> ChatFormatter::encode(const std::vector<ChatMessage>& messages,
                                                        bool add_generation_prompt) const {
  DAY0_ASSIGN_OR_RETURN(const std::string text, render(messages, add_generation_prompt));
  DAY0_ASSIGN_OR_RETURN(const auto ids, tokenizer_.encode(text, /*add_special_tokens=*/false));
  return std::vector<std::int32_t>(ids.begin(), ids.end());
}

}  // namespace day0
