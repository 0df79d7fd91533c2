// The model-running commands of day0-cli as users and tools call them (VERIFY.md's CLI
// contract): generate --ids, logits .npy, chat over a pipe, verify, make-demo-model.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>

#include "app/process_runner.h"
#include "io/safetensors.h"

using day0::test::quiet_env;
using day0::test::run_program;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const QString kData = QStringLiteral(DAY0_TEST_DATA_DIR);


struct Reference {
  std::vector<std::int32_t> input_ids, greedy_prompt, greedy_ids;
  std::vector<float> logits_prefill;
  std::int64_t vocab = 0;
};

Reference load_reference(const QString& name) {
  Reference r;
  auto file = day0::io::SafetensorsFile::open((kData + "/reference/gpt-oss/" + name + ".safetensors").toStdString());
  if (!file) return r;
  const auto ints = [&](const char* tensor) {
    std::vector<std::int32_t> v;
    const auto* t = file->find(tensor);
    if (t == nullptr || t->dtype != day0::DType::i32) return v;
    v.resize(static_cast<std::size_t>(t->numel));
    std::memcpy(v.data(), file->data(*t).data(), v.size() * 4);
    return v;
  };
  r.input_ids = ints("input_ids");
  r.greedy_prompt = ints("greedy_prompt");
  r.greedy_ids = ints("greedy_ids");
  if (const auto* t = file->find("logits_prefill")) {
    r.logits_prefill.resize(static_cast<std::size_t>(t->numel));
    std::memcpy(r.logits_prefill.data(), file->data(*t).data(), r.logits_prefill.size() * 4);
    r.vocab = static_cast<std::int64_t>(t->shape.back());
  }
  return r;
}

QString join(const std::vector<std::int32_t>& ids) {
  QStringList parts;
  for (auto id : ids) parts << QString::number(id);
  return parts.join(',');
}

}  // namespace

class TestCliEngine : public QObject {
  Q_OBJECT
 private slots:
  void generateIdsMatchesTransformersGreedy() {
    const Reference ref = load_reference("tiny-gpt-oss-wide");
    QVERIFY(!ref.greedy_ids.empty());
    const auto r = run_program(kCli, {"generate", "--model", kData + "/models/tiny-gpt-oss-wide", "--tokens",
                                      join(ref.greedy_prompt), "--max-new-tokens", QString::number(ref.greedy_ids.size()),
                                      "--ids", "--threads", "2"},
                               quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QStringList lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.last(), join(ref.greedy_ids));
  }

  void logitsWritesNpy() {
    const Reference ref = load_reference("tiny-gpt-oss");
    QTemporaryDir tmp;
    const QString out = tmp.filePath("logits.npy");
    const auto r = run_program(kCli, {"logits", "--model", kData + "/models/tiny-gpt-oss", "--tokens",
                                      join(ref.input_ids), "--out", out, "--device", "cpu"},
                               quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    QVERIFY(bytes.startsWith("\x93NUMPY"));
    const int header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    const QByteArray header = bytes.mid(10, header_len);
    QVERIFY2(header.contains(QByteArray("'shape': (") + QByteArray::number(qsizetype(ref.input_ids.size())) + ", " +
                             QByteArray::number(ref.vocab) + ")"),
             header.constData());
    QVERIFY(header.contains("'descr': '<f4'"));
    QCOMPARE((10 + header_len) % 64, 0);
    const auto n = static_cast<std::size_t>(bytes.size() - 10 - header_len) / 4;
    QCOMPARE(n, ref.logits_prefill.size());
    std::vector<float> got(n);
    std::memcpy(got.data(), bytes.constData() + 10 + header_len, n * 4);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      num += (got[i] - ref.logits_prefill[i]) * static_cast<double>(got[i] - ref.logits_prefill[i]);
      den += static_cast<double>(ref.logits_prefill[i]) * ref.logits_prefill[i];
    }
    QVERIFY(std::sqrt(num / den) < 1e-4);
  }

  void badArgumentsAreRejected() {
    auto r = run_program(kCli, {"generate", "--model", kData + "/models/tiny-gpt-oss", "--tokens", "1,x,3"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("'x' in the token list is not a token id"));
    r = run_program(kCli, {"generate", "--model", kData + "/models/tiny-gpt-oss", "--tokens", "1,99999"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("outside the vocabulary"), qPrintable(r.err));
    r = run_program(kCli, {"generate", "--model", kData + "/models/tiny-gpt-oss", "--tokens", "1", "--temperature", "-1"},
                    quiet_env());
    QCOMPARE(r.exit_code, 2);
  }

  void chatOverAPipeWithTheDemoModel() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    auto r = run_program(kCli, {"make-demo-model", demo}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = run_program(kCli, {"inspect", "--model", demo}, quiet_env());
    QVERIFY(r.out.contains("random-weight demo model"));

    QProcess p;
    p.setProcessEnvironment(quiet_env());
    const QString db = tmp.filePath("history.db");
    p.start(kCli, {"chat", "--model", demo, "--max-new-tokens", "8", "--seed", "1", "--threads", "2", "--db", db});
    QVERIFY(p.waitForStarted());
    p.write("Hello there\n/system You are terse.\nWhat is MXFP4?\nAnd FP8?\n/quit\nnever read\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    QCOMPARE(err.count(QRegularExpression(R"(\[\d+ tokens, )")), 3);  // three replies, /quit ends
    QVERIFY(out.contains("(system prompt set; conversation cleared)"));

    // Both conversations are in the history: the first turn, then the system prompt and two turns.
    r = run_program(kCli, {"history", "list", "--db", db}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("Hello there") && r.out.contains("What is MXFP4?"), qPrintable(r.out));
    r = run_program(kCli, {"history", "search", "MXFP4", "--db", db}, quiet_env());
    QVERIFY2(r.exit_code == 0 && r.out.contains("MXFP4"), qPrintable(r.out + r.err));
  }

  void chatNeedsATemplate() {
    // tiny-gpt-oss has a tokenizer but no chat template.
    const auto r = run_program(kCli, {"chat", "--model", kData + "/models/tiny-gpt-oss"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("chat template"), qPrintable(r.err));
  }

  void verifyExitCodes() {
    auto r = run_program(kCli, {"verify", "--model", kData + "/models/tiny-gpt-oss", "--reference",
                                kData + "/reference/gpt-oss/tiny-gpt-oss.safetensors"},
                         quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QVERIFY(r.out.contains("all within thresholds"));
    QVERIFY(r.out.contains("hidden.3"));
    r = run_program(kCli, {"verify", "--model", kData + "/models/tiny-gpt-oss-full", "--reference",
                           kData + "/reference/gpt-oss/tiny-gpt-oss.safetensors"},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.out.contains("FAIL"));
  }
};

QTEST_GUILESS_MAIN(TestCliEngine)
#include "test_cli_engine.moc"
