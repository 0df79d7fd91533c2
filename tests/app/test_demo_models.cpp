// The shipped demo models (resources/demo-model, a gpt-oss with MXFP4 experts, and
// resources/demo-glm, a glm5_next) as a newcomer meets them: `day0-cli chat` answers "How do I
// read a file in Python?" with English words (the words of the text they were trained on, the
// Python standard library's docstrings in tools/demo_model/corpus.jsonl.xz), greedily and with
// the app's default sampling; the random-weight test model fails the same check, so the check can
// fail. Each model is also verified against transformers (tests/data/reference/demo/).
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

#include "app/process_runner.h"

using day0::test::quiet_env;
using day0::test::run_program;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const QString kSource = QStringLiteral(DAY0_SOURCE_DIR);
const QString kQuestion = QStringLiteral("How do I read a file in Python?");

struct Reply {
  QString text;   // stdout: the answer
  QString stats;  // stderr: "[N tokens, eos, ...]"
  int exit_code = -1;
};

Reply chat(const QString& model, const QStringList& sampling) {
  QProcess p;
  p.setProcessEnvironment(quiet_env());
  p.start(kCli, QStringList{"chat", "--model", model, "--no-history", "--max-new-tokens", "200", "--threads", "2"} +
                    sampling);
  Reply r;
  if (!p.waitForStarted(10000)) return r;
  p.write((kQuestion + "\n").toUtf8());
  p.closeWriteChannel();
  if (!p.waitForFinished(180000)) {
    p.kill();
    p.waitForFinished();
    return r;
  }
  r.exit_code = p.exitCode();
  r.text = QString::fromUtf8(p.readAllStandardOutput());
  r.stats = QString::fromUtf8(p.readAllStandardError());
  return r;
}

// Every word of the training text, lower-cased.
QSet<QString> corpus_words() {
  QProcess xz;
  xz.start(QStringLiteral("xz"), {"-dc", kSource + "/tools/demo_model/corpus.jsonl.xz"});
  QSet<QString> words;
  if (!xz.waitForFinished(60000) || xz.exitCode() != 0) return words;
  static const QRegularExpression word(QStringLiteral("[A-Za-z]+"));
  const QString text = QString::fromUtf8(xz.readAllStandardOutput());
  for (auto it = word.globalMatch(text); it.hasNext();) words.insert(it.next().captured().toLower());
  return words;
}

struct Judgement {
  int words = 0;
  double known = 0;  // share of the reply's words found in the training text
  bool clean = true;  // no replacement characters and no control characters but newlines and tabs
  QString why;
};

Judgement judge(const QString& reply, const QSet<QString>& vocabulary) {
  Judgement j;
  static const QRegularExpression word(QStringLiteral("[A-Za-z]+"));
  int known = 0;
  for (auto it = word.globalMatch(reply); it.hasNext();) {
    ++j.words;
    if (vocabulary.contains(it.next().captured().toLower())) ++known;
  }
  j.known = j.words > 0 ? static_cast<double>(known) / j.words : 0;
  for (const QChar c : reply)
    if (c == QChar::ReplacementCharacter || (c.category() == QChar::Other_Control && c != '\n' && c != '\t'))
      j.clean = false;
  j.why = QStringLiteral("%1 words, %2% in the training text, %3: %4")
              .arg(j.words)
              .arg(qRound(j.known * 100))
              .arg(j.clean ? "clean" : "replacement or control characters")
              .arg(reply.left(300));
  return j;
}

bool english(const Judgement& j, double known) { return j.clean && j.words >= 4 && j.known >= known; }

}  // namespace

class TestDemoModels : public QObject {
  Q_OBJECT
  QSet<QString> vocabulary_;

 private slots:
  void initTestCase() {
    vocabulary_ = corpus_words();
    QVERIFY2(vocabulary_.size() > 5000, "the training text (tools/demo_model/corpus.jsonl.xz) could not be read");
  }

  void repliesInEnglish_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt-oss") << kSource + "/resources/demo-model";
    QTest::newRow("glm5_next") << kSource + "/resources/demo-glm";
  }

  void repliesInEnglish() {
    QFETCH(QString, model);
    const Reply greedy = chat(model, {"--temperature", "0"});
    QCOMPARE(greedy.exit_code, 0);
    QVERIFY2(greedy.stats.contains("eos"), qPrintable(greedy.stats));  // the reply ends by itself
    const Judgement g = judge(greedy.text, vocabulary_);
    QVERIFY2(english(g, 0.9), qPrintable(g.why));
    qInfo("greedy: %s", qPrintable(g.why));
    // The app's defaults (temperature 0.7, top-p 0.95): four of five seeds at least.
    int passed = 0;
    for (int seed = 1; seed <= 5; ++seed) {
      const Reply r = chat(model, {"--temperature", "0.7", "--top-p", "0.95", "--seed", QString::number(seed)});
      QCOMPARE(r.exit_code, 0);
      const Judgement j = judge(r.text, vocabulary_);
      qInfo("seed %d: %s", seed, qPrintable(j.why));
      passed += english(j, 0.75) ? 1 : 0;
    }
    QVERIFY2(passed >= 4, qPrintable(QString("%1 of 5 sampled replies read as English").arg(passed)));
  }

  void theRandomModelFailsTheCheck() {
    const QString random = kSource + "/tests/data/models/demo-random";
    for (int seed = 1; seed <= 3; ++seed) {
      const Reply r = chat(random, {"--temperature", "0.7", "--top-p", "0.95", "--seed", QString::number(seed)});
      QCOMPARE(r.exit_code, 0);
      const Judgement j = judge(r.text, vocabulary_);
      QVERIFY2(!english(j, 0.75), qPrintable(j.why));
    }
  }

  void matchTransformers_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("reference");
    QTest::newRow("gpt-oss") << kSource + "/resources/demo-model" << kSource + "/tests/data/reference/demo/demo-gpt-oss.safetensors";
    QTest::newRow("glm5_next") << kSource + "/resources/demo-glm" << kSource + "/tests/data/reference/demo/demo-glm.safetensors";
  }

  void matchTransformers() {
    QFETCH(QString, model);
    QFETCH(QString, reference);
    const auto r = run_program(kCli, {"verify", "--model", model, "--reference", reference, "--threads", "2"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("all within thresholds") && r.out.contains("greedy (32 tokens)"), qPrintable(r.out));
  }

  void makeDemoModelCopiesEither() {
    QTemporaryDir tmp;
    auto r = run_program(kCli, {"make-demo-model", tmp.filePath("glm"), "--family", "glm5_next"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(tmp.filePath("glm/model.safetensors")) && QFile::exists(tmp.filePath("glm/README.md")));
    r = run_program(kCli, {"inspect", "--model", tmp.filePath("glm")}, quiet_env());
    QVERIFY2(r.exit_code == 0 && r.out.contains("glm5_next") && r.out.contains("demo model"), qPrintable(r.out + r.err));
    r = run_program(kCli, {"make-demo-model", tmp.filePath("x"), "--family", "llama"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("--family"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestDemoModels)
#include "test_demo_models.moc"
