// The event-stream parser against hand-written streams, cut at every byte and at random.
#include <QtTest>

#include <random>
#include <string>
#include <vector>

#include "remote/sse_parser.h"

using day0::remote::SseParser;

namespace {

// Feeds `stream` in the pieces that `cuts` (ascending offsets) make; returns the events' data.
std::vector<std::string> parse_cut(const std::string& stream, const std::vector<std::size_t>& cuts) {
  SseParser parser;
  std::vector<std::string> events;
  std::size_t at = 0;
  const auto collect = [&](const std::string& d) {
    events.push_back(d);
    return true;
  };
  for (const std::size_t cut : cuts) {
    parser.feed(std::string_view(stream).substr(at, cut - at), collect);
    at = cut;
  }
  parser.feed(std::string_view(stream).substr(at), collect);
  return events;
}

// An OpenAI-style stream with every line-ending style, comments, fields to ignore and a
// two-line data event.
const std::string kStream =
    ": keep-alive\r\n\r\n"
    "data: {\"a\":1}\n\n"
    "event: message\r\nid: 7\r\ndata: {\"b\":\r\ndata:  2}\r\n\r\n"
    "retry: 100\rdata:no-space\r\r"
    ":comment without a blank line\n"
    "data\n\n"
    "data: [DONE]\n\n"
    "data: never dispatched";

const std::vector<std::string> kEvents = {"{\"a\":1}", "{\"b\":\n 2}", "no-space", "", "[DONE]"};

}  // namespace

class TestSseParser : public QObject {
  Q_OBJECT
 private slots:
  void wholeStream() { QCOMPARE(parse_cut(kStream, {}), kEvents); }

  void everySingleCut() {
    for (std::size_t cut = 0; cut <= kStream.size(); ++cut) QCOMPARE(parse_cut(kStream, {cut}), kEvents);
  }

  void byteByByte() {
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < kStream.size(); ++i) cuts.push_back(i);
    QCOMPARE(parse_cut(kStream, cuts), kEvents);
  }

  void randomCuts() {
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<std::size_t> cuts;
      std::size_t at = 0;
      while (true) {
        at += 1 + rng() % 9;
        if (at >= kStream.size()) break;
        cuts.push_back(at);
      }
      QCOMPARE(parse_cut(kStream, cuts), kEvents);
    }
  }

  void stopsWhenAsked() {
    SseParser parser;
    int seen = 0;
    const bool went_on =
        parser.feed("data: 1\n\ndata: 2\n\ndata: 3\n\n", [&](const std::string&) { return ++seen < 2; });
    QVERIFY(!went_on);
    QCOMPARE(seen, 2);
  }

  void overlongLineIsAnError() {
    SseParser parser(64);
    const bool ok = parser.feed("data: " + std::string(100, 'x'), [](const std::string&) { return true; });
    QVERIFY(!ok);
    QVERIFY(QString::fromStdString(parser.error()).contains("longer than 64 bytes"));
  }

  // Random bytes (with many line breaks and colons) never crash it, and every event it delivers
  // is made of bytes that were in a data line.
  void randomBytes() {
    std::mt19937 rng(99);
    const char alphabet[] = {'d', 'a', 't', ':', ' ', '\r', '\n', 'x', '\0', '\xff'};
    for (int trial = 0; trial < 500; ++trial) {
      std::string bytes;
      for (int i = 0; i < 400; ++i) bytes.push_back(alphabet[rng() % sizeof alphabet]);
      SseParser parser(128);
      std::size_t total = 0;
      for (std::size_t at = 0; at < bytes.size(); at += 37)
        parser.feed(std::string_view(bytes).substr(at, 37), [&](const std::string& d) {
          total += d.size();
          return true;
        });
      QVERIFY(total <= bytes.size());
    }
  }
};

QTEST_APPLESS_MAIN(TestSseParser)
#include "test_sse_parser.moc"
