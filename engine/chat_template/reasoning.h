#pragma once
// Splits a model's streamed output into reasoning and answer as it arrives, so the app can show
// them apart: gpt-oss's harmony channels (<|channel|>analysis / final / commentary ...
// <|message|> ... <|end|>) and GLM's <think>...</think> blocks. Pieces may cut markers
// anywhere; text that could still become a marker is held back until it is decided.
#include <string>
#include <string_view>
#include <vector>

namespace day0::chat_template {

enum class OutputChannel {
  reasoning,   // harmony "analysis", text inside <think>...</think>
  answer,      // harmony "final", text outside think blocks
  commentary,  // harmony "commentary" without a recipient (a preamble the user may see)
  tool_call,   // harmony message addressed to a tool (`to=functions.name`): its arguments
};
const char* output_channel_name(OutputChannel channel);

struct OutputSegment {
  OutputChannel channel;
  std::string text;
  std::string recipient;  // tool calls: "functions.get_weather"
};

enum class ReasoningFormat {
  harmony,     // gpt-oss
  think_tags,  // GLM and others: <think>...</think>
};

class ReasoningParser {
 public:
  // `starts_in_reasoning`: the prompt already opened a think block (GLM-4.7's generation
  // prompt ends with <think>), so the output begins as reasoning.
  explicit ReasoningParser(ReasoningFormat format, bool starts_in_reasoning = false);

  // Consumes one piece of decoded text; returns what is now certain, in order, with adjacent
  // text of one channel merged.
  std::vector<OutputSegment> feed(std::string_view piece);
  // End of the stream: returns the text still held back.
  std::vector<OutputSegment> finish();

 private:
  enum class State { content, header_role, header_channel, between };

  void process(std::vector<OutputSegment>& out, bool final);
  void append_text(std::vector<OutputSegment>& out, std::string_view text);
  void on_marker(std::string_view marker);
  void open_harmony_message();

  ReasoningFormat format_;
  State state_ = State::content;
  OutputChannel channel_;
  std::string recipient_;
  std::string header_;  // role and channel header of the harmony message being read
  std::string pending_;
};

}  // namespace day0::chat_template
