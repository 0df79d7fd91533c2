// day0-cli as a user runs it: exit codes, output, and errors on bad input.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "app/process_runner.h"

using day0::test::quiet_env;
using day0::test::run_program;

namespace {
const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const QString kData = QStringLiteral(DAY0_TEST_DATA_DIR);

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private slots:
  void version() {
    for (const QStringList& args : {QStringList{"--version"}, QStringList{"version"}}) {
      const auto r = run_program(kCli, args, quiet_env());
      QCOMPARE(r.exit_code, 0);
      QVERIFY2(r.out.contains(QRegularExpression(R"(^day0-cli \d+\.\d+\.\d+ \(\w+ build, CUDA (on|off))")),
               qPrintable(r.out));
      QVERIFY(r.out.contains("cpu: "));
      // Either GPUs are listed or the reason there are none.
      QVERIFY(r.out.contains("cuda:0") || r.out.contains("gpu: none ("));
    }
  }

  void inspectTinyGptOss() {
    const auto r = run_program(kCli, {"inspect", "--model", kData + "/models/tiny-gpt-oss"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("gpt_oss (GptOssForCausalLM)"));
    QVERIFY(r.out.contains("gpt-oss: supported"));
    QVERIFY(r.out.contains("Expert format   MXFP4"));
    QVERIFY(r.out.contains("8 routed x 4 MoE layers (of 4), top-2"));
    QVERIFY(r.out.contains(QRegularExpression(R"(routed experts\s+24\s)")));
    QVERIFY(!r.out.contains("Warnings"));
  }

  void inspectJson() {
    const auto r = run_program(kCli, {"inspect", "--model", kData + "/models/tiny-glm5-next", "--json"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QJsonParseError error;
    const auto doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    const QJsonObject o = doc.object();
    QCOMPARE(o["model_type"].toString(), QString("glm5_next"));
    QCOMPARE(o["supported"].toBool(), true);
    QCOMPARE(o["has_vision"].toBool(), true);
    QCOMPARE(o["routed_experts"].toInt(), 16);
    QVERIFY(o["total_params"].toDouble() > o["active_params_per_token"].toDouble());
  }

  void inspectConfigOnly() {
    QTemporaryDir tmp;
    QVERIFY(QFile::copy(kData + "/configs/glm-5.3-flash-shape.config.json", tmp.filePath("config.json")));
    const auto r = run_program(kCli, {"inspect", "--model", tmp.path()}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("counts from config.json"));
    QVERIFY(r.out.contains("288 routed x 42 MoE layers (of 45), top-8, 1 shared"));
  }

  void errors() {
    auto r = run_program(kCli, {"inspect", "--model", "/nonexistent/folder"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("/nonexistent/folder is not a folder"));
    r = run_program(kCli, {"inspect"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("usage: day0-cli inspect"));
    r = run_program(kCli, {"frobnicate"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("unknown command 'frobnicate'"));
    r = run_program(kCli, {"inspect", "--model"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("--model needs a value"));
    r = run_program(kCli, {}, quiet_env());
    QCOMPARE(r.exit_code, 2);

    // A corrupt shard: a clear message naming the file, no crash.
    QTemporaryDir tmp;
    QVERIFY(QFile::copy(kData + "/models/tiny-gpt-oss/config.json", tmp.filePath("config.json")));
    QFile shard(kData + "/models/tiny-gpt-oss/model-00002-of-00002.safetensors");
    QVERIFY(shard.open(QIODevice::ReadOnly));
    QFile out(tmp.filePath("model.safetensors"));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(shard.read(shard.size() / 2));
    out.close();
    r = run_program(kCli, {"inspect", "--model", tmp.path()}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(!r.crashed);
    QVERIFY2(r.err.contains("model.safetensors") && r.err.contains("truncated"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
