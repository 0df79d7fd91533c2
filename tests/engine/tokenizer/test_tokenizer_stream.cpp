// StreamDecoder: pieces never split a UTF-8 character, nothing is lost, and the concatenation of
// every piece and the final flush equals the full decode, over random id sequences (unknown ids,
// special tokens, lone bytes of multi-byte characters, <0xNN> runs ending mid-character).
#include <QtTest>

#include <random>

#include "day0/tokenizer.h"
#include "engine/tokenizer/fixtures.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

using day0::StreamDecoder;
using day0::Tokenizer;

namespace {

Tokenizer load(const std::string& name) {
  auto tok = Tokenizer::load(std::string(DAY0_TEST_DATA_DIR) + "/tokenizers/" + name + "/tokenizer.json");
  if (!tok) qFatal("%s", tok.status().to_string().c_str());
  return std::move(*tok);
}

// Feeds `ids`; returns the pieces (the last one from flush()).
std::vector<std::string> stream_pieces(StreamDecoder& stream, const std::vector<std::uint32_t>& ids) {
  std::vector<std::string> pieces;
  for (std::uint32_t id : ids) pieces.push_back(stream.feed(id));
  pieces.push_back(stream.flush());
  return pieces;
}

std::string concat(const std::vector<std::string>& pieces) {
  std::string s;
  for (const auto& p : pieces) s += p;
  return s;
}

}  // namespace

class TestTokenizerStream : public QObject {
  Q_OBJECT
 private slots:
  void randomSequencesMatchFullDecode() {
    std::mt19937 rng(7);
    for (const auto& name : day0::test::fixture_names()) {
      const Tokenizer tok = load(name);
      // Ids that are single bytes or <0xNN> tokens make half characters likely.
      std::vector<std::uint32_t> byte_ids;
      for (int b = 0x80; b < 0x100; ++b) {
        char token[8];
        std::snprintf(token, sizeof token, "<0x%02X>", b);
        if (const auto id = tok.token_to_id(token)) byte_ids.push_back(*id);
      }
      // Byte-level vocabularies: tokens that are one stand-in character (mostly bytes >= 0x80).
      for (std::uint32_t id = 0; id < tok.vocab_size() && byte_ids.size() < 200; ++id) {
        const auto s = tok.id_to_token(id);
        if (s && s->size() == 2 && static_cast<unsigned char>((*s)[0]) >= 0xC2) byte_ids.push_back(id);
      }
      for (int round = 0; round < 300; ++round) {
        std::vector<std::uint32_t> ids;
        const int n = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < n; ++i) {
          if (!byte_ids.empty() && rng() % 3 == 0) {
            ids.push_back(byte_ids[rng() % byte_ids.size()]);
          } else {
            ids.push_back(static_cast<std::uint32_t>(rng() % (tok.vocab_size() + 5)));
          }
        }
        for (bool skip : {false, true}) {
          StreamDecoder stream(tok, skip);
          const auto pieces = stream_pieces(stream, ids);
          for (const auto& p : pieces)
            QVERIFY2(day0::tokenizer::is_valid_utf8(p),
                     qPrintable(QString::fromStdString(name + ": a piece is not UTF-8")));
          QVERIFY2(concat(pieces) == tok.decode(ids, skip),
                   qPrintable(QString::fromStdString(name + ": stream " + concat(pieces) + " vs full " +
                                                     tok.decode(ids, skip) + " for " + day0::test::join_ids(ids))));
          // The decoder is reusable after flush.
          QVERIFY(concat(stream_pieces(stream, ids)) == tok.decode(ids, skip));
        }
      }
    }
  }

  void byteLevelWaitsForWholeCharacters() {
    const Tokenizer tok = load("o200k");
    // "😀" is F0 9F 98 80; feed one byte token at a time.
    std::vector<std::uint32_t> ids;
    for (unsigned char b : std::string("\xF0\x9F\x98\x80")) {
      const auto id = tok.token_to_id(day0::tokenizer::byte_level_table().byte_to_utf8[b]);
      QVERIFY(id);
      ids.push_back(*id);
    }
    StreamDecoder stream(tok);
    QCOMPARE(stream.feed(ids[0]), std::string());
    QCOMPARE(stream.feed(ids[1]), std::string());
    QCOMPARE(stream.feed(ids[2]), std::string());
    QCOMPARE(stream.feed(ids[3]), std::string("\xF0\x9F\x98\x80"));
    QCOMPARE(stream.flush(), std::string());
    // Cut after three bytes: flush gives U+FFFD, as the full decode does.
    for (int k = 0; k < 3; ++k) QCOMPARE(stream.feed(ids[k]), std::string());
    QCOMPARE(stream.flush(), std::string("\xEF\xBF\xBD"));
    QCOMPARE(tok.decode(std::vector<std::uint32_t>(ids.begin(), ids.begin() + 3)), std::string("\xEF\xBF\xBD"));
  }

  void textIsReleasedAsItSettles() {
    const Tokenizer tok = load("glm");
    const std::string text = "Streaming text: 中文 and emoji 😀 arrive piece by piece.";
    const auto ids = tok.encode(text, false);
    QVERIFY(ids);
    StreamDecoder stream(tok);
    std::string before_flush;
    int non_empty = 0;
    for (std::uint32_t id : *ids) {
      const std::string piece = stream.feed(id);
      non_empty += piece.empty() ? 0 : 1;
      before_flush += piece;
    }
    // Complete characters never wait for flush.
    QCOMPARE(before_flush, text);
    QVERIFY(non_empty > static_cast<int>(ids->size()) / 2);
    QCOMPARE(stream.flush(), std::string());
  }

  void byteFallbackRunsWaitForTheirEnd() {
    const Tokenizer tok = load("llama_legacy");
    const auto a = tok.token_to_id("<0x41>");
    const auto e2 = tok.token_to_id("<0xE2>");
    const auto hello = tok.token_to_id("▁the");
    QVERIFY(a && e2 && hello);
    StreamDecoder stream(tok);
    // A run of byte tokens is decided as a whole: "A" then a lone E2 makes the whole run invalid.
    QCOMPARE(stream.feed(*hello), std::string("the"));
    QCOMPARE(stream.feed(*a), std::string());
    QCOMPARE(stream.feed(*e2), std::string());
    QCOMPARE(stream.flush(), std::string("\xEF\xBF\xBD\xEF\xBF\xBD"));
    QCOMPARE(tok.decode(std::vector<std::uint32_t>{*hello, *a, *e2}), std::string("the\xEF\xBF\xBD\xEF\xBF\xBD"));
  }
};

QTEST_APPLESS_MAIN(TestTokenizerStream)
#include "test_tokenizer_stream.moc"
