#include <algorithm>
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

std::string ChatFormatter::image_placeholder(const ModelSummary& model) const {
  std::string text;
  for (const std::int32_t id : model.image_placeholder_ids) {
    const auto token = id >= 0 ? tokenizer_.id_to_token(static_cast<std::uint32_t>(id)) : std::nullopt;
    if (!token) return {};  // a vocabulary without the model's image tokens cannot write images
    text += *token;
  }
  return text;
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
  // Text that is not UTF-8 (a paste of binary bytes) becomes U+FFFD rather than an exception.
  return template_.render_json(context.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Result<std::vector<std::int32_t>> ChatFormatter::encode(const std::vector<ChatMessage>& messages,
                                                        bool add_generation_prompt) const {
  DAY0_ASSIGN_OR_RETURN(const std::string text, render(messages, add_generation_prompt));
  DAY0_ASSIGN_OR_RETURN(const auto ids, tokenizer_.encode(text, /*add_special_tokens=*/false));
  return std::vector<std::int32_t>(ids.begin(), ids.end());
}


const char* context_overflow_name(ContextOverflow policy) {
  switch (policy) {
    case ContextOverflow::stop: return "stop";
    case ContextOverflow::truncate_middle: return "truncate-middle";
    case ContextOverflow::rolling_window: return "rolling-window";
  }
  return "stop";
}

std::optional<ContextOverflow> parse_context_overflow(std::string_view name) {
  if (name == "stop") return ContextOverflow::stop;
  if (name == "truncate-middle" || name == "truncate_middle" || name == "truncate") return ContextOverflow::truncate_middle;
  if (name == "rolling-window" || name == "rolling_window" || name == "rolling") return ContextOverflow::rolling_window;
  return std::nullopt;
}

Result<FittedPrompt> ChatFormatter::encode_fitting(const std::vector<ChatMessage>& messages, std::int64_t max_context,
                                                   std::int64_t reserve, ContextOverflow policy) const {
  FittedPrompt out;
  DAY0_ASSIGN_OR_RETURN(out.tokens, encode(messages, true));
  // Images take more positions than their placeholders' tokens (ChatMessage::extra_tokens).
  std::int64_t extra = 0;
  for (const auto& m : messages) extra += std::max<std::int64_t>(0, m.extra_tokens);
  out.full_tokens = static_cast<std::int64_t>(out.tokens.size()) + extra;
  out.positions = out.full_tokens;
  for (std::size_t i = 0; i < messages.size(); ++i) out.kept.push_back(i);
  if (policy == ContextOverflow::stop || max_context <= 0) {
    out.fits = max_context <= 0 || out.full_tokens < max_context;
    return out;
  }
  const std::int64_t budget = max_context - std::clamp<std::int64_t>(reserve, 1, std::max<std::int64_t>(1, max_context / 2));
  if (out.full_tokens <= budget) return out;

  // The system prompt (leading system or developer messages), then turns: each starts at a user
  // message (whatever precedes the first one belongs to the first turn).
  std::size_t head = 0;
  while (head < messages.size() && (messages[head].role == "system" || messages[head].role == "developer")) ++head;
  std::vector<std::size_t> starts;
  for (std::size_t i = head; i < messages.size(); ++i)
    if (i == head || messages[i].role == "user") starts.push_back(i);
  const std::size_t turns = starts.size();
  const auto turn_end = [&](std::size_t t) { return t + 1 < turns ? starts[t + 1] : messages.size(); };
  out.fits = false;
  if (turns <= 1) return out;  // nothing that may be left out

  // Estimates (each message's text alone, plus a few tokens of markup) pick where to start;
  // the prompt is then encoded and the choice corrected against the real count.
  std::vector<std::int64_t> cost(turns, 0);
  std::int64_t estimated = 0;
  for (std::size_t t = 0; t < turns; ++t) {
    for (std::size_t i = starts[t]; i < turn_end(t); ++i) {
      DAY0_ASSIGN_OR_RETURN(const auto ids, tokenizer_.encode(messages[i].content, /*add_special_tokens=*/false));
      cost[t] += static_cast<std::int64_t>(ids.size()) + 4 + std::max<std::int64_t>(0, messages[i].extra_tokens);
    }
    estimated += cost[t];
  }
  const std::int64_t overhead = std::max<std::int64_t>(0, out.full_tokens - estimated);

  // Keeps the system prompt, the first turn when `first`, and turns from `from` on.
  const auto attempt = [&](bool first, std::size_t from, FittedPrompt* fitted) -> Status {
    std::vector<ChatMessage> chosen;
    std::int64_t kept_extra = 0;
    fitted->kept.clear();
    const auto take = [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        chosen.push_back(messages[i]);
        fitted->kept.push_back(i);
        kept_extra += std::max<std::int64_t>(0, messages[i].extra_tokens);
      }
    };
    take(0, head);
    if (first) take(starts[0], turn_end(0));
    take(starts[from], messages.size());
    DAY0_ASSIGN_OR_RETURN(fitted->tokens, encode(chosen, true));
    fitted->dropped = messages.size() - fitted->kept.size();
    fitted->full_tokens = out.full_tokens;
    fitted->positions = static_cast<std::int64_t>(fitted->tokens.size()) + kept_extra;
    fitted->fits = fitted->positions <= budget;
    return Status::ok();
  };
  // The smallest `from` (>= lowest) that fits, starting from the estimate and walking both ways.
  const auto search = [&](bool first, std::size_t lowest, FittedPrompt* best) -> Status {
    std::int64_t sum = overhead + (first ? cost[0] : 0);
    std::size_t from = turns - 1;
    for (std::size_t t = turns - 1; t >= lowest; --t) {
      if (sum + cost[t] > budget) break;
      sum += cost[t];
      from = t;
      if (t == 0) break;
    }
    from = std::max(from, lowest);
    FittedPrompt fitted;
    if (Status s = attempt(first, from, &fitted); !s.is_ok()) return s;
    while (!fitted.fits && from + 1 < turns) {
      if (Status s = attempt(first, ++from, &fitted); !s.is_ok()) return s;
    }
    if (!fitted.fits) {
      *best = std::move(fitted);
      return Status::ok();
    }
    while (from > lowest) {
      FittedPrompt more;
      if (Status s = attempt(first, from - 1, &more); !s.is_ok()) return s;
      if (!more.fits) break;
      fitted = std::move(more);
      --from;
    }
    *best = std::move(fitted);
    return Status::ok();
  };

  FittedPrompt best;
  best.fits = false;
  if (policy == ContextOverflow::truncate_middle && turns >= 3) {
    if (Status s = search(true, 2, &best); !s.is_ok()) return s;
    if (best.fits) return best;
  }
  // Rolling window (or the middle could not be cut with the first turn kept).
  if (Status s = search(false, 1, &best); !s.is_ok()) return s;
  return best;
}

}  // namespace day0
