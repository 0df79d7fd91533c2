// day0-cli tokenize as a user runs it, on the tiny models' tokenizers: ids equal to the
// tokenizers reference, decoding, and errors.
#include <QtTest>

#include "app/process_runner.h"
#include "engine/tokenizer/fixtures.h"

using day0::test::quiet_env;
using day0::test::run_program;

namespace {
const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const QString kData = QStringLiteral(DAY0_TEST_DATA_DIR);


QString last_line(const QString& out) { return out.trimmed().split('\n').last(); }
}  // namespace

class TestTokenizeCli : public QObject {
  Q_OBJECT
 private slots:
  void encodesLikeTokenizers_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt-oss") << "tiny-gpt-oss";
    QTest::newRow("glm5_next") << "tiny-glm5-next";
  }
  void encodesLikeTokenizers() {
    QFETCH(QString, model);
    const auto fixture = day0::test::load_fixture(model.toStdString());
    // A corpus line with special tokens, and one in Chinese.
    for (int index : {0, 16, 59}) {
      const auto& c = fixture.cases[static_cast<std::size_t>(index)];
      const QString text = QString::fromStdString(c.input);
      auto r =
          run_program(kCli, {"tokenize", "--model", kData + "/models/" + model, "--text", text, "--ids"}, quiet_env());
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      QCOMPARE(last_line(r.out), QString::fromStdString(day0::test::join_ids(c.ids)));
      r = run_program(kCli, {"tokenize", "--model", kData + "/models/" + model, "--text", text, "--no-special"},
                      quiet_env());
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      QCOMPARE(last_line(r.out), QString::fromStdString(day0::test::join_ids(c.ids_plain)));
      // One line per token before the ids line.
      QCOMPARE(r.out.trimmed().split('\n').size(), static_cast<int>(c.ids_plain.size()) + 1);
      r = run_program(kCli,
                      {"tokenize", "--model", kData + "/models/" + model, "--decode",
                       QString::fromStdString(day0::test::join_ids(c.ids))},
                      quiet_env());
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      QCOMPARE(r.out, QString::fromStdString(c.decoded) + "\n");
    }
  }

  void specialTokensMatchTheConfig() {
    // gpt-oss: eos 382 = <|return|>, pad 380 = <|endoftext|> (config.json).
    auto r = run_program(kCli,
                         {"tokenize", "--model", kData + "/models/tiny-gpt-oss", "--text",
                          "<|start|>assistant<|message|>hi<|return|><|endoftext|>", "--ids"},
                         quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(last_line(r.out).startsWith("374,"));
    QVERIFY(last_line(r.out).endsWith(",382,380"));
    // glm5_next: image 358 between begin/end 334/335, video 359 between 336/337, pad 324.
    r = run_program(kCli,
                    {"tokenize", "--model", kData + "/models/tiny-glm5-next", "--text",
                     "<|begin_of_image|><|image|><|end_of_image|><|begin_of_video|><|video|><|end_of_video|>"
                     "<|endoftext|>",
                     "--ids"},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(last_line(r.out), QString("334,358,335,336,359,337,324"));
  }

  void errors() {
    auto r = run_program(kCli, {"tokenize", "--model", "/nonexistent/folder", "--text", "x"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("/nonexistent/folder"));
    r = run_program(kCli, {"tokenize", "--model", kData + "/models/tiny-gpt-oss", "--decode", "1,x,3"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("'x' is not a token id"));
    r = run_program(kCli, {"tokenize", "--model", kData + "/models/tiny-gpt-oss"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("usage: day0-cli tokenize"));
    // A folder without tokenizer.json.
    r = run_program(kCli, {"tokenize", "--model", kData + "/configs", "--text", "x"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("tokenizer.json"));
  }
};

QTEST_GUILESS_MAIN(TestTokenizeCli)
#include "test_tokenize_cli.moc"
