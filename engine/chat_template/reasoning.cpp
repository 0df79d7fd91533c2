#include "chat_template/reasoning.h"

#include <algorithm>
#include <array>

namespace day0::chat_template {

namespace {

constexpr std::array<std::string_view, 7> kHarmonyMarkers = {"<|start|>",  "<|channel|>", "<|message|>",  "<|end|>",
                                                             "<|return|>", "<|call|>",    "<|constrain|>"};
constexpr std::array<std::string_view, 2> kThinkMarkers = {"<think>", "</think>"};

// First marker occurrence in `text` (position and which), or npos.
template <std::size_t N>
std::size_t find_marker(std::string_view text, const std::array<std::string_view, N>& markers,
                        std::string_view* which) {
  std::size_t best = std::string_view::npos;
  for (const auto m : markers) {
    const std::size_t p = text.find(m);
    if (p < best) {
      best = p;
      *which = m;
    }
  }
  return best;
}

// Length of the longest suffix of `text` that is a proper prefix of a marker: that much must
// wait for the next piece.
template <std::size_t N>
std::size_t held_back(std::string_view text, const std::array<std::string_view, N>& markers) {
  std::size_t keep = 0;
  for (const auto m : markers) {
    const std::size_t max_len = std::min(text.size(), m.size() - 1);
    for (std::size_t len = max_len; len > keep; --len) {
      if (text.substr(text.size() - len) == m.substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  return keep;
}

// "to=functions.get_weather" anywhere in a harmony header.
std::string find_recipient(std::string_view header) {
  const std::size_t p = header.find("to=");
  if (p == std::string_view::npos) return {};
  std::size_t e = p + 3;
  while (e < header.size() && header[e] != ' ' && header[e] != '<' && header[e] != '\n' && header[e] != '\x1f') ++e;
  return std::string(header.substr(p + 3, e - p - 3));
}

}  // namespace

const char* output_channel_name(OutputChannel channel) {
  switch (channel) {
    case OutputChannel::reasoning:
      return "reasoning";
    case OutputChannel::answer:
      return "answer";
    case OutputChannel::commentary:
      return "commentary";
    case OutputChannel::tool_call:
      return "tool_call";
  }
  return "answer";
}

ReasoningParser::ReasoningParser(ReasoningFormat format, bool starts_in_reasoning)
    : format_(format), channel_(starts_in_reasoning ? OutputChannel::reasoning : OutputChannel::answer) {}

std::vector<OutputSegment> ReasoningParser::feed(std::string_view piece) {
  pending_.append(piece);
  std::vector<OutputSegment> out;
  process(out, false);
  return out;
}

std::vector<OutputSegment> ReasoningParser::finish() {
  std::vector<OutputSegment> out;
  process(out, true);
  return out;
}

void ReasoningParser::append_text(std::vector<OutputSegment>& out, std::string_view text) {
  if (text.empty()) return;
  if (state_ == State::header_role || state_ == State::header_channel) {
    header_.append(text);
    return;
  }
  // Text between harmony messages (after <|end|>, before <|start|>) is not expected; keep it
  // visible as answer rather than lose it.
  const OutputChannel channel = state_ == State::between ? OutputChannel::answer : channel_;
  const std::string& recipient = channel == OutputChannel::tool_call ? recipient_ : std::string();
  if (!out.empty() && out.back().channel == channel && out.back().recipient == recipient) {
    out.back().text.append(text);
  } else {
    out.push_back({channel, std::string(text), recipient});
  }
}

void ReasoningParser::open_harmony_message() {
  // header_: "assistant to=functions.x" + "<|channel|>" part, e.g. "commentary to=... json".
  const std::string recipient = find_recipient(header_);
  const std::size_t ch = header_.find('\x1f');
  std::string channel_part = ch == std::string::npos ? header_ : header_.substr(ch + 1);
  const std::size_t space = channel_part.find_first_of(" \n<");
  const std::string name = channel_part.substr(0, space);
  if (!recipient.empty()) {
    channel_ = OutputChannel::tool_call;
  } else if (name == "analysis") {
    channel_ = OutputChannel::reasoning;
  } else if (name == "commentary") {
    channel_ = OutputChannel::commentary;
  } else {
    channel_ = OutputChannel::answer;
  }
  recipient_ = recipient;
  header_.clear();
  state_ = State::content;
}

void ReasoningParser::on_marker(std::string_view marker) {
  if (format_ == ReasoningFormat::think_tags) {
    channel_ = marker == "<think>" ? OutputChannel::reasoning : OutputChannel::answer;
    return;
  }
  if (marker == "<|start|>") {
    header_.clear();
    state_ = State::header_role;
  } else if (marker == "<|channel|>") {
    if (state_ != State::header_role) header_.clear();
    header_ += '\x1f';  // separates the role part from the channel part
    state_ = State::header_channel;
  } else if (marker == "<|message|>") {
    open_harmony_message();
  } else if (marker == "<|constrain|>") {
    if (state_ == State::header_role || state_ == State::header_channel) header_ += " <|constrain|>";
  } else {  // <|end|>, <|return|>, <|call|>
    state_ = State::between;
    recipient_.clear();
  }
}

void ReasoningParser::process(std::vector<OutputSegment>& out, bool final) {
  std::string_view rest = pending_;
  while (!rest.empty()) {
    std::string_view marker;
    const std::size_t at = format_ == ReasoningFormat::harmony ? find_marker(rest, kHarmonyMarkers, &marker)
                                                               : find_marker(rest, kThinkMarkers, &marker);
    if (at == std::string_view::npos) {
      const std::size_t keep = final                                 ? 0
                               : format_ == ReasoningFormat::harmony ? held_back(rest, kHarmonyMarkers)
                                                                     : held_back(rest, kThinkMarkers);
      append_text(out, rest.substr(0, rest.size() - keep));
      rest = rest.substr(rest.size() - keep);
      break;
    }
    append_text(out, rest.substr(0, at));
    on_marker(marker);
    rest = rest.substr(at + marker.size());
  }
  pending_ = std::string(rest);
  if (final && (state_ == State::header_role || state_ == State::header_channel) && !header_.empty()) {
    // The stream ended inside a header: show what there was rather than drop it.
    std::string header;
    for (const char c : header_) header += c == '\x1f' ? ' ' : c;
    header_.clear();
    state_ = State::between;
    append_text(out, header);
  }
}

}  // namespace day0::chat_template
