#pragma once
// Turning a conversation into the model's own prompt: its chat template rendered with its
// special tokens, then its tokenizer, exactly as transformers' apply_chat_template(...,
// tokenize=True) does. Shared by day0-cli chat and the app.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "day0/chat_template.h"
#include "day0/engine.h"
#include "day0/status.h"
#include "day0/tokenizer.h"

namespace day0 {

struct ChatMessage {
  std::string role;       // system, user, assistant, tool
  std::string content;
  std::string reasoning;  // an assistant's reasoning (passed as `thinking` and `reasoning_content`)
  // Positions the message takes in the model beyond the tokens of its text: an image's
  // placeholder holds one image token, which the model expands to image_token_count() positions,
  // so a message with images adds, for each, that count less one. Counted when a conversation
  // is fitted to the context (encode_fitting); the text is unaffected.
  std::int64_t extra_tokens = 0;
};

// Splits streamed output text into reasoning and answer (gpt-oss harmony channels, <think>
// blocks), holding back text that may still turn out to be a marker.
class OutputSplitter {
 public:
  ~OutputSplitter();
  OutputSplitter(OutputSplitter&&) noexcept;
  OutputSplitter& operator=(OutputSplitter&&) noexcept;
  std::vector<OutputPiece> feed(std::string_view text);
  std::vector<OutputPiece> finish();

 private:
  friend class ChatFormatter;
  struct Impl;
  explicit OutputSplitter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What happens when a conversation does not fit the model's context (with room for the reply):
// stop (the turn fails), truncate_middle (keep the system prompt, the first turn and the most
// recent turns that fit; whole turns in the middle are left out), rolling_window (keep the
// system prompt and the most recent turns that fit). A turn is a user message with what follows
// it up to the next user message. Leaving turns out of a prompt never changes the history.
enum class ContextOverflow { stop, truncate_middle, rolling_window };
const char* context_overflow_name(ContextOverflow policy);  // "stop", "truncate-middle", "rolling-window"
// Also accepts "truncate_middle", "rolling_window", "truncate", "rolling"; nullopt otherwise.
std::optional<ContextOverflow> parse_context_overflow(std::string_view name);

struct FittedPrompt {
  std::vector<std::int32_t> tokens;  // the prompt (with the generation prompt)
  // What the prompt takes in the context: its tokens and the kept messages' extra_tokens.
  std::int64_t positions = 0;
  std::vector<std::size_t> kept;     // indices of the messages in it, in order
  std::size_t dropped = 0;           // messages left out
  std::int64_t full_tokens = 0;      // the whole conversation's prompt length (positions)
  // False when it still does not fit: under stop, the whole conversation reaches max_context;
  // otherwise the system prompt and the last turn alone leave no room for the reply.
  bool fits = true;
};

class ChatFormatter {
 public:
  // Reads tokenizer.json, the chat template and tokenizer_config.json's special tokens.
  static Result<ChatFormatter> load(const std::filesystem::path& model_dir);

  // The template's text for `messages`.
  Result<std::string> render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  // render() tokenized without adding special tokens again (the template already has them).
  Result<std::vector<std::int32_t>> encode(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  // encode(messages, true) made to fit `max_context` positions under `policy`: under stop it
  // fits while shorter than max_context (the reply takes what is left); the other policies leave
  // out whole turns until `reserve` positions (room for the reply, at most half the context) stay free.
  Result<FittedPrompt> encode_fitting(const std::vector<ChatMessage>& messages, std::int64_t max_context,
                                      std::int64_t reserve, ContextOverflow policy) const;

  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Ids that end an assistant turn besides the model's EOS ids (e.g. gpt-oss's <|return|>,
  // <|call|>; GLM's <|user|>, <|observation|>), when the vocabulary has them.
  const std::vector<std::int32_t>& turn_end_ids() const { return turn_end_ids_; }
  // The text that stands for one image in a message to `model`: its image placeholder tokens
  // (GLM: <|begin_of_image|><|image|><|end_of_image|>) as this tokenizer writes them; empty for a
  // model that reads text only.
  std::string image_placeholder(const ModelSummary& model) const;
  // A splitter for one assistant turn in this model's output format (`prompt` is the rendered
  // prompt, whose end tells whether the turn opens inside a think block).
  OutputSplitter output_splitter(std::string_view prompt) const;

 private:
  ChatFormatter(Tokenizer tokenizer, ChatTemplate chat_template) : tokenizer_(std::move(tokenizer)), template_(std::move(chat_template)) {}
  Tokenizer tokenizer_;
  ChatTemplate template_;
  std::string bos_token_, eos_token_;
  std::vector<std::int32_t> turn_end_ids_;
  bool harmony_ = false;
};

}  // namespace day0
