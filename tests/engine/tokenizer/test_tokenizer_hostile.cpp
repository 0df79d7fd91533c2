// Hostile tokenizer.json files give clear errors (never a crash), and random bytes never break
// encoding or decoding.
#include <QtTest>

#include <random>

#include "day0/tokenizer.h"
#include "engine/tokenizer/fixtures.h"
#include "tokenizer/unicode.h"

using day0::ErrorCode;
using day0::Tokenizer;

namespace {

// A small valid byte-level-free BPE; tests replace parts of it.
std::string base_json(const std::string& model_extra = "", const std::string& vocab = "{\"a\":0,\"b\":1,\"ab\":2}",
                      const std::string& merges = "[\"a b\"]", const std::string& top_extra = "") {
  return "{\"version\":\"1.0\"," + top_extra + "\"model\":{\"type\":\"BPE\",\"vocab\":" + vocab +
         ",\"merges\":" + merges + model_extra + "}}";
}

// Loads `json` and expects an error whose message contains `needle`.
void expect_error(const std::string& json, const QString& needle) {
  const auto tok = Tokenizer::from_json(json, "hostile.json");
  QVERIFY2(!tok, qPrintable("loaded: " + QString::fromStdString(json.substr(0, 200))));
  const QString message = QString::fromStdString(tok.status().to_string());
  QVERIFY2(message.contains(needle), qPrintable(message + "\n  expected to mention: " + needle));
  QVERIFY(message.contains("hostile.json"));
}

}  // namespace

class TestTokenizerHostile : public QObject {
  Q_OBJECT
 private slots:
  void validBaseLoads() {
    const auto tok = Tokenizer::from_json(base_json(), "base.json");
    QVERIFY2(tok, qPrintable(QString::fromStdString(tok.status().to_string())));
    QCOMPARE(*tok->encode("abba"), (std::vector<std::uint32_t>{2, 1, 0}));
  }

  void notJson() {
    expect_error("{\"model\": ", "is not valid JSON");
    expect_error("[1,2,3]", "expected a tokenizer.json object");
    expect_error("{\"version\":\"1.0\"}", "model");
  }

  void wrongTypes() {
    expect_error(base_json("", "[1,2]"), "model.vocab");
    expect_error(base_json("", "{\"a\":\"zero\"}"), "model.vocab[\"a\"]");
    expect_error(base_json("", "{\"a\":0.5}"), "model.vocab[\"a\"]");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "{\"x\":1}"), "model.merges");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[42]"), "model.merges[0]");
    expect_error(base_json(",\"unk_token\":5"), "unk_token");
    expect_error(base_json(",\"fuse_unk\":\"yes\""), "fuse_unk");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"normalizer\":42,"), "normalizer");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"pre_tokenizer\":{\"pattern\":1},"),
                 "no \"type\"");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"added_tokens\":{\"a\":1},"),
                 "added_tokens");
    expect_error(
        base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"added_tokens\":[{\"id\":3,\"content\":7}],"),
        "added_tokens[0].content");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]",
                           "\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"ab\"},"),
                 "exactly one character");
  }

  void hugeAndNegativeIds() {
    expect_error(base_json("", "{\"a\":-1,\"b\":1,\"ab\":2}"), "negative");
    expect_error(base_json("", "{\"a\":0,\"b\":99999999999,\"ab\":2}"), "over the limit");
    expect_error(base_json("", "{\"a\":0,\"b\":16000000,\"ab\":2}"), "largest id 16000000");
    expect_error(
        base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"added_tokens\":[{\"id\":-4,\"content\":\"<x>\"}],"),
        "negative");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]",
                           "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":"
                           "\"<s>\"}}],\"special_tokens\":{\"<s>\":{\"ids\":[1e30]}}},"),
                 "post_processor.special_tokens");
  }

  void duplicateTokensAndBadMerges() {
    expect_error(base_json("", "{\"a\":0,\"b\":0,\"ab\":2}"), "both have id 0");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a c\"]"), "\"c\", which is not in the vocab");
    expect_error(base_json("", "{\"a\":0,\"b\":1}"), "merged token \"ab\" is not in the vocab");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b c\"]"), "not two tokens");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[[\"a\"]]"), "model.merges[0]");
  }

  void unsupportedComponentsAreNamed() {
    expect_error("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}", "model type \"Unigram\"");
    expect_error("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}", "model type \"WordPiece\"");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"normalizer\":{\"type\":\"Precompiled\"},"),
                 "normalizer type \"Precompiled\"");
    expect_error(
        base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"pre_tokenizer\":{\"type\":\"UnicodeScripts\"},"),
        "pre-tokenizer type \"UnicodeScripts\"");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"decoder\":{\"type\":\"WordPiece\"},"),
                 "decoder type \"WordPiece\"");
    expect_error(
        base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"post_processor\":{\"type\":\"Whatever\"},"),
        "post-processor type \"Whatever\"");
    expect_error(
        base_json(
            "", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]",
            "\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(unclosed\"},\"behavior\":\"Isolated\"},"),
        "does not compile");
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]",
                           "\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[a-z&&[^aeiou]]\"}},"),
                 "class intersection");
  }

  void absurdSizesAndDepth() {
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]",
                           "\"decoder\":{\"type\":\"Strip\",\"content\":\" \",\"start\":1e12,\"stop\":0},"),
                 "decoder.start");
    // Components nested 200 deep.
    std::string nested = "{\"type\":\"Lowercase\"}";
    for (int i = 0; i < 200; ++i) nested = "{\"type\":\"Sequence\",\"normalizers\":[" + nested + "]}";
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]", "\"normalizer\":" + nested + ","),
                 "nested more than");
    // Raw JSON nesting a hundred thousand arrays deep: an error, not a stack overflow.
    std::string deep(100000, '[');
    deep += std::string(100000, ']');
    const auto tok = Tokenizer::from_json("{\"model\":" + deep + "}", "deep.json");
    QVERIFY(!tok);
    // A 40 MB vocab string is refused as an added token, not copied into a trie.
    expect_error(base_json("", "{\"a\":0,\"b\":1,\"ab\":2}", "[\"a b\"]",
                           "\"added_tokens\":[{\"id\":3,\"content\":\"" + std::string(100000, 'x') + "\"}],"),
                 "over the limit");
  }

  void missingUnkTokenFailsWhenNeeded() {
    const auto tok = Tokenizer::from_json(base_json(",\"unk_token\":\"<unk>\""), "unk.json");
    QVERIFY(tok);
    QVERIFY(tok->encode("ab"));
    const auto ids = tok->encode("abc");
    QVERIFY(!ids);
    QVERIFY(QString::fromStdString(ids.status().message()).contains("unk_token \"<unk>\" is not in the vocab"));
  }

  void loadErrors() {
    auto tok = Tokenizer::load("/nonexistent/folder");
    QVERIFY(!tok);
    QVERIFY(QString::fromStdString(tok.status().message()).contains("/nonexistent/folder"));
  }

  // Random bytes (mostly invalid UTF-8, long whitespace runs, added-token fragments) through every
  // test tokenizer: encoding succeeds, ids are in the vocabulary, decoding yields valid UTF-8, and
  // invalid input encodes exactly as its U+FFFD-repaired form.
  void randomBytesNeverBreakEncoding() {
    std::mt19937 rng(20240611);
    const std::vector<std::string> atoms = {
        " ", "\t",   "\n",   "\r\n",     "a",    "Z",  "1", "'s", "<|",           "|>",     "<s>",   "@@",
        "▁", "\xff", "\xc3", "\xe2\x82", "\x80", "中", "😀", "é",  "\xed\xa0\x80", "<0x41>", "[USER]"};
    for (const auto& name : day0::test::fixture_names()) {
      const auto tok = Tokenizer::load(std::string(DAY0_TEST_DATA_DIR) + "/tokenizers/" + name + "/tokenizer.json");
      QVERIFY(tok);
      for (int round = 0; round < 150; ++round) {
        std::string text;
        const int n = static_cast<int>(rng() % 60);
        for (int i = 0; i < n; ++i) {
          if (rng() % 3 == 0) {
            text.push_back(static_cast<char>(rng() & 0xFF));
          } else {
            text += atoms[rng() % atoms.size()];
          }
        }
        if (round % 50 == 0) text += std::string(5000 + rng() % 5000, rng() % 2 ? ' ' : '\n');
        const auto ids = tok->encode(text, true);
        QVERIFY2(ids, qPrintable(QString::fromStdString(name + ": " + ids.status().to_string())));
        for (std::uint32_t id : *ids) QVERIFY(id < tok->vocab_size());
        const auto repaired = tok->encode(day0::tokenizer::lossy_utf8(text), true);
        QVERIFY(repaired && *repaired == *ids);
        QVERIFY(day0::tokenizer::is_valid_utf8(tok->decode(*ids)));
        // Random ids, unknown ones included, decode to valid UTF-8 too.
        std::vector<std::uint32_t> random_ids;
        for (int i = 0; i < 20; ++i) random_ids.push_back(static_cast<std::uint32_t>(rng() % (tok->vocab_size() + 10)));
        QVERIFY(day0::tokenizer::is_valid_utf8(tok->decode(random_ids, rng() % 2 == 0)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestTokenizerHostile)
#include "test_tokenizer_hostile.moc"
