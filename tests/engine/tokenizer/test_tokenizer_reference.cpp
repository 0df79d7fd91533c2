// Day0's tokenizer against Hugging Face tokenizers 0.23 (fixtures made by
// tools/reference/make_tokenizer_fixtures.py): for every corpus line and seeded random string,
// identical ids with and without special tokens, identical decodes with and without
// skip_special_tokens, and for random id sequences identical decodes, also when streamed.
#include <QtTest>

#include "day0/tokenizer.h"
#include "engine/tokenizer/fixtures.h"

using day0::StreamDecoder;
using day0::Tokenizer;
using day0::test::Fixture;

namespace {

constexpr int kMaxReported = 5;

QString describe(const std::string& what, const std::string& input, const std::string& got, const std::string& want) {
  return QString::fromStdString(what + "\n  input (hex) " + day0::test::hex(input) + "\n  got  " + got + "\n  want " +
                                want);
}

std::string streamed(const Tokenizer& tok, const std::vector<std::uint32_t>& ids, bool skip) {
  StreamDecoder stream(tok, skip);
  std::string out;
  for (std::uint32_t id : ids) out += stream.feed(id);
  return out + stream.flush();
}

}  // namespace

class TestTokenizerReference : public QObject {
  Q_OBJECT
 private slots:
  void matchesTokenizers_data() {
    QTest::addColumn<QString>("name");
    for (const auto& n : day0::test::fixture_names()) QTest::newRow(n.c_str()) << QString::fromStdString(n);
    QTest::newRow("tiny-gpt-oss") << QString("tiny-gpt-oss");
    QTest::newRow("tiny-glm5-next") << QString("tiny-glm5-next");
  }

  void matchesTokenizers() {
    QFETCH(QString, name);
    const Fixture f = day0::test::load_fixture(name.toStdString());
    QVERIFY(f.cases.size() > 400);
    QVERIFY(f.decode_cases.size() > 200);
    const auto tok = Tokenizer::load(f.tokenizer_path);
    QVERIFY2(tok, qPrintable(QString::fromStdString(tok.status().to_string())));

    QStringList failures;
    auto check = [&](bool ok, const QString& message) {
      if (!ok && failures.size() < kMaxReported) failures << message;
      return ok;
    };
    int failed = 0;
    for (const auto& c : f.cases) {
      bool ok = true;
      const auto ids = tok->encode(c.input, true);
      ok &= check(ids.is_ok(), QString::fromStdString("encode failed: " + ids.status().to_string()));
      if (!ids) {
        ++failed;
        continue;
      }
      ok &= check(*ids == c.ids, describe("ids", c.input, day0::test::join_ids(*ids), day0::test::join_ids(c.ids)));
      const auto plain = tok->encode(c.input, false);
      ok &= check(plain && *plain == c.ids_plain,
                  describe("ids without special tokens", c.input, plain ? day0::test::join_ids(*plain) : "error",
                           day0::test::join_ids(c.ids_plain)));
      const std::string d = tok->decode(c.ids, false);
      ok &= check(d == c.decoded, describe("decode", c.input, d, c.decoded));
      const std::string ds = tok->decode(c.ids, true);
      ok &= check(ds == c.decoded_skip, describe("decode skipping special tokens", c.input, ds, c.decoded_skip));
      failed += ok ? 0 : 1;
    }
    for (const auto& c : f.decode_cases) {
      bool ok = true;
      const std::string ids = day0::test::join_ids(c.ids);
      ok &= check(tok->decode(c.ids, false) == c.decoded,
                  describe("decode " + ids, "", tok->decode(c.ids, false), c.decoded));
      ok &= check(tok->decode(c.ids, true) == c.decoded_skip,
                  describe("decode skipping special " + ids, "", tok->decode(c.ids, true), c.decoded_skip));
      ok &= check(streamed(*tok, c.ids, false) == c.decoded,
                  describe("streamed decode " + ids, "", streamed(*tok, c.ids, false), c.decoded));
      ok &= check(streamed(*tok, c.ids, true) == c.decoded_skip,
                  describe("streamed decode skipping special " + ids, "", streamed(*tok, c.ids, true), c.decoded_skip));
      failed += ok ? 0 : 1;
    }
    QVERIFY2(failed == 0, qPrintable(QString("%1 of %2 cases differ from tokenizers; first ones:\n")
                                         .arg(failed)
                                         .arg(f.cases.size() + f.decode_cases.size()) +
                                     failures.join("\n")));
  }
};

QTEST_APPLESS_MAIN(TestTokenizerReference)
#include "test_tokenizer_reference.moc"
