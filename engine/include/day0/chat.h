#pragma once
// Turning a conversation into the model's own prompt: its chat template rendered with its
// special tokens, then its tokenizer, exactly as transformers' apply_chat_template(...,
// tokenize=True) does. Shared by day0-cli chat and the app.
#include <cstdint>
#include <filesystem>
#include <memory>
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

class ChatFormatter {
 public:
  // Reads tokenizer.json, the chat template and tokenizer_config.json's special tokens.
  static Result<ChatFormatter> load(const std::filesystem::path& model_dir);

  // The template's text for `messages`.
  Result<std::string> render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  // render() tokenized without adding special tokens again (the template already has them).
  Result<std::vector<std::int32_t>> encode(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Ids that end an assistant turn besides the model's EOS ids (e.g. gpt-oss's <|return|>,
  // <|call|>; GLM's <|user|>, <|observation|>), when the vocabulary has them.
  const std::vector<std::int32_t>& turn_end_ids() const { return turn_end_ids_; }
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
