// The reasoning/answer splitter over streamed pieces: every test string is also fed cut at
// every position, byte by byte and at random cuts, and must give the same segments.
#include <QtTest>

#include <random>

#include "chat_template/reasoning.h"

using day0::chat_template::OutputChannel;
using day0::chat_template::OutputSegment;
using day0::chat_template::ReasoningFormat;
using day0::chat_template::ReasoningParser;

namespace {

struct Expected {
  OutputChannel channel;
  std::string text;
  std::string recipient;
};

// Segments of a whole stream, adjacent ones of one channel merged (pieces may split them).
std::vector<Expected> run(ReasoningFormat format, bool starts_in_reasoning, const std::vector<std::string>& pieces) {
  ReasoningParser parser(format, starts_in_reasoning);
  std::vector<Expected> out;
  auto take = [&out](const std::vector<OutputSegment>& segs) {
    for (const auto& s : segs) {
      if (s.text.empty()) QFAIL("empty segment");
      if (!out.empty() && out.back().channel == s.channel && out.back().recipient == s.recipient) {
        out.back().text += s.text;
      } else {
        out.push_back({s.channel, s.text, s.recipient});
      }
    }
  };
  for (const auto& p : pieces) take(parser.feed(p));
  take(parser.finish());
  return out;
}

std::string describe(const std::vector<Expected>& segs) {
  std::string s;
  for (const auto& e : segs)
    s += std::string("[") + day0::chat_template::output_channel_name(e.channel) +
         (e.recipient.empty() ? "" : " to " + e.recipient) + "] " + e.text + "\n";
  return s;
}

void check_all_splits(ReasoningFormat format, bool starts_in_reasoning, const std::string& text,
                      const std::vector<Expected>& want) {
  auto same = [&](const std::vector<std::string>& pieces, const char* how) {
    const auto got = run(format, starts_in_reasoning, pieces);
    const std::string g = describe(got), w = describe(want);
    if (g != w) {
      const std::string msg = std::string(how) + "\n got:\n" + g + " want:\n" + w;
      QFAIL(msg.c_str());
    }
  };
  same({text}, "whole");
  for (std::size_t i = 0; i <= text.size(); ++i) same({text.substr(0, i), text.substr(i)}, "two pieces");
  std::vector<std::string> bytes;
  for (const char c : text) bytes.emplace_back(1, c);
  same(bytes, "byte by byte");
  std::mt19937 rng(7);
  for (int k = 0; k < 200; ++k) {
    std::vector<std::string> pieces;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t len = 1 + rng() % 6;
      pieces.push_back(text.substr(pos, len));
      pos += len;
    }
    same(pieces, "random pieces");
  }
}

}  // namespace

class TestReasoning : public QObject {
  Q_OBJECT
 private slots:
  void harmonyAnalysisThenFinal() {
    check_all_splits(
        ReasoningFormat::harmony, false,
        "<|channel|>analysis<|message|>User asks 2+2. Easy.<|end|><|start|>assistant<|channel|>final"
        "<|message|>2 + 2 = 4 ✓<|return|>",
        {{OutputChannel::reasoning, "User asks 2+2. Easy.", ""}, {OutputChannel::answer, "2 + 2 = 4 ✓", ""}});
  }

  void harmonyToolCallAndPreamble() {
    check_all_splits(
        ReasoningFormat::harmony, false,
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary<|message|>"
        "Checking…<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        "<|message|>{\"city\":\"Zürich\"}<|call|>",
        {{OutputChannel::reasoning, "Need the weather.", ""},
         {OutputChannel::commentary, "Checking…", ""},
         {OutputChannel::tool_call, "{\"city\":\"Zürich\"}", "functions.get_weather"}});
    // The recipient may also stand in the role part of the header.
    check_all_splits(ReasoningFormat::harmony, false,
                     "<|start|>assistant to=functions.search<|channel|>commentary json<|message|>{\"q\":1}<|call|>",
                     {{OutputChannel::tool_call, "{\"q\":1}", "functions.search"}});
  }

  void harmonyPlainTextAndLookalikes() {
    check_all_splits(ReasoningFormat::harmony, false, "no markers at all: a < b <| c |> <|chan",
                     {{OutputChannel::answer, "no markers at all: a < b <| c |> <|chan", ""}});
    check_all_splits(ReasoningFormat::harmony, false, "<|channel|>final<|message|>uses <think> literally<|return|>",
                     {{OutputChannel::answer, "uses <think> literally", ""}});
  }

  void thinkTags() {
    check_all_splits(
        ReasoningFormat::think_tags, false, "<think>\nweigh options\n</think>\n\nThe answer.",
        {{OutputChannel::reasoning, "\nweigh options\n", ""}, {OutputChannel::answer, "\n\nThe answer.", ""}});
    // GLM-4.7's generation prompt already opened the block.
    check_all_splits(ReasoningFormat::think_tags, true, "planning… </think>Done <thin",
                     {{OutputChannel::reasoning, "planning… ", ""}, {OutputChannel::answer, "Done <thin", ""}});
    check_all_splits(ReasoningFormat::think_tags, false, "a<think>b</think>c<think>d</think>e",
                     {{OutputChannel::answer, "a", ""},
                      {OutputChannel::reasoning, "b", ""},
                      {OutputChannel::answer, "c", ""},
                      {OutputChannel::reasoning, "d", ""},
                      {OutputChannel::answer, "e", ""}});
    check_all_splits(ReasoningFormat::think_tags, false, "<think></think>only answer",
                     {{OutputChannel::answer, "only answer", ""}});
  }

  void holdsBackOnlyWhatCouldBeAMarker() {
    ReasoningParser p(ReasoningFormat::think_tags, false);
    auto segs = p.feed("hello <th");
    QCOMPARE(segs.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(segs[0].text), QString("hello "));
    segs = p.feed("ink>x");
    QCOMPARE(segs.size(), std::size_t{1});
    QCOMPARE(segs[0].channel, OutputChannel::reasoning);
    QCOMPARE(QString::fromStdString(segs[0].text), QString("x"));
    QVERIFY(p.finish().empty());
  }
};

QTEST_APPLESS_MAIN(TestReasoning)
#include "test_reasoning.moc"
