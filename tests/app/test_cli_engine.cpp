// The model-running commands of day0-cli as users and tools call them (VERIFY.md's CLI
// contract): generate --ids, logits .npy, chat over a pipe, verify, make-demo-model.
#include <signal.h>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <QElapsedTimer>
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
    const auto r =
        run_program(kCli,
                    {"generate", "--model", kData + "/models/tiny-gpt-oss-wide", "--tokens", join(ref.greedy_prompt),
                     "--max-new-tokens", QString::number(ref.greedy_ids.size()), "--ids", "--threads", "2"},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QStringList lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.last(), join(ref.greedy_ids));
  }

  void logitsWritesNpy() {
    const Reference ref = load_reference("tiny-gpt-oss");
    QTemporaryDir tmp;
    const QString out = tmp.filePath("logits.npy");
    const auto r = run_program(kCli,
                               {"logits", "--model", kData + "/models/tiny-gpt-oss", "--tokens", join(ref.input_ids),
                                "--out", out, "--device", "cpu"},
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
    auto r =
        run_program(kCli, {"generate", "--model", kData + "/models/tiny-gpt-oss", "--tokens", "1,x,3"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("'x' in the token list is not a token id"));
    r = run_program(kCli, {"generate", "--model", kData + "/models/tiny-gpt-oss", "--tokens", "1,99999"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("outside the vocabulary"), qPrintable(r.err));
    r = run_program(kCli,
                    {"generate", "--model", kData + "/models/tiny-gpt-oss", "--tokens", "1", "--temperature", "-1"},
                    quiet_env());
    QCOMPARE(r.exit_code, 2);
  }

  void chatOverAPipeWithTheDemoModel() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    auto r = run_program(kCli, {"make-demo-model", demo}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = run_program(kCli, {"inspect", "--model", demo}, quiet_env());
    QVERIFY2(r.out.contains("demo model: a tiny gpt-oss"), qPrintable(r.out));

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

  void chatKeepsLongPipedLinesWhole() {
    // Longer than the terminal's canonical-mode limit (4095 bytes), with UTF-8, and a """ block.
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    auto r = run_program(kCli, {"make-demo-model", demo}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QString long_line;
    for (int i = 0; long_line.toUtf8().size() < 9000; ++i) long_line += QString("word%1 caf\u00e9 ").arg(i);
    long_line += "THE END";
    QProcess p;
    p.setProcessEnvironment(quiet_env());
    const QString db = tmp.filePath("history.db");
    p.start(kCli, {"chat", "--model", demo, "--max-new-tokens", "2", "--seed", "1", "--threads", "2", "--db", db});
    QVERIFY(p.waitForStarted());
    p.write(long_line.toUtf8() + "\r\n\"\"\"\nfirst line\n\nthird line\n\"\"\"\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QCOMPARE(err.count(QRegularExpression(R"(\[\d+ tokens, )")), 2);

    r = run_program(kCli, {"history", "export", "--format", "json", "--db", db}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const auto doc = QJsonDocument::fromJson(r.out.toUtf8());
    QStringList user;
    for (const auto c : doc.object()["conversations"].toArray())
      for (const auto m : c.toObject()["messages"].toArray())
        if (m.toObject()["role"].toString() == "user") user << m.toObject()["content"].toString();
    QCOMPARE(user.size(), 2);
    QCOMPARE(user[0].size(), long_line.size());
    QVERIFY(user[0] == long_line);
    QCOMPARE(user[1], QString("first line\n\nthird line"));
  }

  void chatMultilineReadsAPipedFileAsOneMessage() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    auto r = run_program(kCli, {"make-demo-model", demo}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QProcess p;
    p.setProcessEnvironment(quiet_env());
    const QString db = tmp.filePath("history.db");
    p.start(kCli, {"chat", "--model", demo, "--max-new-tokens", "2", "--threads", "2", "--db", db, "--multiline"});
    QVERIFY(p.waitForStarted());
    p.write("one\ntwo\n\"\"\"\nthree\nfour");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    r = run_program(kCli, {"history", "export", "--format", "json", "--db", db}, quiet_env());
    QStringList user;
    for (const auto c : QJsonDocument::fromJson(r.out.toUtf8()).object()["conversations"].toArray())
      for (const auto m : c.toObject()["messages"].toArray())
        if (m.toObject()["role"].toString() == "user") user << m.toObject()["content"].toString();
    QCOMPARE(user, (QStringList{"one\ntwo", "three\nfour"}));
  }

  // A piped run says in its exit status that a turn failed (here: longer than the context the
  // memory limit leaves), after answering the rest.
  void chatPipedExitsNonZeroWhenATurnFails() {
    const QString demo = kData + "/models/demo-random";  // the memory limit below is sized for it
    QByteArray too_long;
    quint32 x = 1;
    while (too_long.size() < 20000) {
      x = x * 1103515245u + 12345u;
      too_long += "abcdefghijklmnopqrstuvwxyz "[(x >> 16) % 27];
    }
    auto env = quiet_env();
    env.insert("DAY0_MEMORY_LIMIT_BYTES", "9000000");  // a context of 4096 tokens
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(kCli, {"chat", demo, "--max-new-tokens", "2", "--threads", "2", "--no-history"});
    QVERIFY(p.waitForStarted());
    p.write(too_long + "\nhi\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains("the model's context holds 4096"), qPrintable(err));
    QCOMPARE(err.count(QRegularExpression(R"(\[\d+ tokens, )")), 1);  // "hi" was still answered

    // Without a failure the same run succeeds.
    QProcess ok;
    ok.setProcessEnvironment(env);
    ok.start(kCli, {"chat", demo, "--max-new-tokens", "2", "--threads", "2", "--no-history"});
    QVERIFY(ok.waitForStarted());
    ok.write("hi\n");
    ok.closeWriteChannel();
    QVERIFY(ok.waitForFinished(60000));
    QCOMPARE(ok.exitCode(), 0);
  }

  // A conversation longer than the context (--context 1024): truncate-middle (the default) and
  // rolling-window leave earlier messages out and say so, every turn is answered; stop fails the
  // turns that do not fit and the run exits with 1. Piped, no prefill status line is written.
  void chatContextOverflowPolicies() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    QByteArray input;
    quint32 x = 5;
    for (int line = 0; line < 8; ++line) {
      for (int i = 0; i < 400; ++i) {
        x = x * 1103515245u + 12345u;
        input += "abcdefghijklmnopqrstuvwxyz "[(x >> 16) % 27];
      }
      input += '\n';
    }
    const auto run = [&](const QStringList& policy) {
      QProcess p;
      p.setProcessEnvironment(quiet_env());
      p.start(kCli, QStringList{"chat", demo, "--context", "1024", "--max-new-tokens", "4", "--threads", "2",
                                "--no-history", "--system", "Be brief."} +
                        policy);
      p.waitForStarted();
      p.write(input);
      p.closeWriteChannel();
      p.waitForFinished(120000);
      return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
    };
    for (const QStringList& policy : {QStringList{}, QStringList{"--context-overflow", "truncate-middle"},
                                      QStringList{"--context-overflow", "rolling"}}) {
      const auto [code, err] = run(policy);
      QVERIFY2(code == 0, qPrintable(err));
      QCOMPARE(err.count(QRegularExpression(R"(\[\d+ tokens, )")), 8);
      QVERIFY2(err.contains(QRegularExpression(R"(\(\d+ earlier messages left out to fit the context\))")),
               qPrintable(err));
      QVERIFY(!err.contains("Reading the prompt"));
    }
    const auto [code, err] = run({"--context-overflow", "stop"});
    QCOMPARE(code, 1);
    QVERIFY2(err.contains("tokens long and the model's context holds 1024"), qPrintable(err));
    QVERIFY(!err.contains("left out"));
    QVERIFY(err.count(QRegularExpression(R"(\[\d+ tokens, )")) < 8);
    // A policy it does not know is refused at once.
    QCOMPARE(run({"--context-overflow", "sideways"}).first, 2);
  }

  // SIGINT stops the reply in progress (here still in a long prefill): the piped run ends with
  // 130 at once, the message and the stopped reply saved.
  void chatSigintStopsTheReply() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    QByteArray prompt;
    quint32 x = 7;
    while (prompt.size() < 30000) {
      x = x * 1103515245u + 12345u;
      prompt += "abcdefghijklmnopqrstuvwxyz "[(x >> 16) % 27];
    }
    const QString db = tmp.filePath("history.db");
    QProcess p;
    p.setProcessEnvironment(quiet_env());
    p.start(kCli, {"chat", demo, "--max-new-tokens", "4", "--threads", "2", "--db", db});
    QVERIFY(p.waitForStarted());
    p.write(prompt + "\nnever sent\n");
    p.closeWriteChannel();
    QTest::qWait(1500);
    QElapsedTimer timer;
    timer.start();
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(30000));
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(p.exitCode() == 130, qPrintable(err));
    QVERIFY2(err.contains("cancelled"), qPrintable(err));

    const auto r = run_program(kCli, {"history", "export", "--format", "json", "--db", db}, quiet_env());
    const auto messages =
        QJsonDocument::fromJson(r.out.toUtf8()).object()["conversations"].toArray()[0].toObject()["messages"].toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].toObject()["content"].toString().toUtf8(), prompt);
    QCOMPARE(messages[1].toObject()["state"].toString(), QString("incomplete"));
  }

  // Commands in a piped chat: unknown ones are not sent to the model, /image is refused at once
  // by a text-only model, // sends a line starting with /, /help lists them. The history
  // exports as Markdown with --format md.
  void chatCommandsAndErrors() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    const QString db = tmp.filePath("history.db");
    QProcess p;
    p.setProcessEnvironment(quiet_env());
    p.start(kCli, {"chat", demo, "--max-new-tokens", "2", "--threads", "2", "--db", db});
    QVERIFY(p.waitForStarted());
    p.write(
        ("/frobnicate now\n/image " + kData + "/vision/small_56x84.png\n//etc is a folder\n/help\n/usr/bin is too\n")
            .toUtf8());
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QVERIFY2(out.contains("unknown command /frobnicate; /help lists them"), qPrintable(out));
    QVERIFY2(out.contains("gpt_oss reads text only"), qPrintable(out));
    QVERIFY(!out.contains("image attached"));
    QVERIFY(out.contains("/system TEXT") && out.contains("\"\"\""));
    QCOMPARE(err.count(QRegularExpression(R"(\[\d+ tokens, )")), 2);  // the two messages only

    auto r = run_program(kCli, {"history", "export", "--format", "json", "--db", db}, quiet_env());
    QStringList user;
    for (const auto c : QJsonDocument::fromJson(r.out.toUtf8()).object()["conversations"].toArray())
      for (const auto m : c.toObject()["messages"].toArray())
        if (m.toObject()["role"].toString() == "user") user << m.toObject()["content"].toString();
    QCOMPARE(user, (QStringList{"/etc is a folder", "/usr/bin is too"}));

    r = run_program(kCli, {"history", "export", "--format", "md", "--db", db}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("/etc is a folder"));
    QCOMPARE(r.out, run_program(kCli, {"history", "export", "--format", "markdown", "--db", db}, quiet_env()).out);
    r = run_program(kCli, {"history", "export", "--format", "pdf", "--db", db}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("json, markdown or md"));
  }

  // Errors read as sentences: no JSON-library codes, no log lines for a user's choice.
  void errorsInOneStyle() {
    QTemporaryDir tmp;
    QFile config(tmp.filePath("config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{\"model_type\": ");
    config.close();
    for (const char* command : {"inspect", "chat", "serve"}) {
      const auto r = run_program(kCli, {command, tmp.path()}, quiet_env());
      QCOMPARE(r.exit_code, 1);
      QVERIFY2(r.err.startsWith(QString("day0-cli ") + command + ": "), qPrintable(r.err));
      QVERIFY2(r.err.contains("config.json is not valid JSON (line 1, column 16): it ends too early; expected a value"),
               qPrintable(r.err));
      QVERIFY2(!r.err.contains("json.exception") && !r.err.contains("syntax error"), qPrintable(r.err));
    }
    // chat looks at the folder and config.json before the tokenizer, as inspect does.
    const auto r = run_program(kCli, {"chat", tmp.filePath("missing")}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("missing is not a folder"), qPrintable(r.err));

    QTemporaryDir tmp2;
    const QString demo = tmp2.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    QProcess cuda;
    cuda.setProcessEnvironment(quiet_env());
    cuda.start(kCli, {"chat", demo, "--device", "cuda", "--no-history"});
    QVERIFY(cuda.waitForStarted());
    cuda.closeWriteChannel();
    QVERIFY(cuda.waitForFinished(60000));
    const QString err = QString::fromUtf8(cuda.readAllStandardError());
    QCOMPARE(cuda.exitCode(), 0);
    QVERIFY2(!err.contains("[warning]"), qPrintable(err));
  }

  void chatNeedsATemplate() {
    // tiny-gpt-oss has a tokenizer but no chat template.
    const auto r = run_program(kCli, {"chat", "--model", kData + "/models/tiny-gpt-oss"}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("chat template"), qPrintable(r.err));
  }

  void benchExpertsReadsEveryExpert() {
    // tiny-gpt-oss: 4 layers x 8 experts of 6,912 bytes (MXFP4 blocks and scales, bf16 biases).
    for (const char* mode : {"", "--direct"}) {
      QStringList args{"bench-experts", kData + "/models/tiny-gpt-oss", "--json", "--readers", "3"};
      if (*mode) args << mode;
      const auto r = run_program(kCli, args, quiet_env());
      QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
      const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
      QCOMPARE(o["experts"].toInt(), 32);
      QCOMPARE(o["bytes"].toInteger(), 32 * 6912);
      QVERIFY(o["gb_per_s"].toDouble() > 0);
      if (!*mode) QCOMPARE(o["direct"].toBool(), false);
    }
    const auto r = run_program(kCli, {"bench-experts", kData + "/models/tiny-gpt-oss", "--readers", "0"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
  }

  // plan says what loading does: mapped when the model fits, experts streamed through a cache of
  // what is left when --ram is just short of the whole model, and the same through chat's
  // --expert-cache; with measurements, every rate and prediction is a positive number.
  // make-model --layers N: the first N decoder layers of a configuration, every per-layer
  // schedule cut to match, a checkpoint that loads and generates; more layers than the
  // configuration has is refused.
  void makeModelKeepsTheFirstLayers() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString config = kData + "/models/tiny-glm5-next/config.json";
    const QString out = dir.path() + "/two";
    auto r =
        run_program(kCli, {"make-model", "--config", config, "--random", "--out", out, "--layers", "2"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QFile f(out + "/config.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject text = QJsonDocument::fromJson(f.readAll()).object()["text_config"].toObject();
    QCOMPARE(text["num_hidden_layers"].toInt(), 2);
    QCOMPARE(text["layer_types"].toArray().size(), 2);
    QCOMPARE(text["layer_types"].toArray()[1].toString(), QString("deepseek_sparse_attention"));
    QCOMPARE(text["mlp_layer_types"].toArray().size(), 2);
    QCOMPARE(text["indexer_types"].toArray().size(), 2);
    r = run_program(kCli, {"generate", "--model", out, "--tokens", "1,2,3", "--max-new-tokens", "3", "--ids"},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QCOMPARE(r.out.trimmed().split('\n').last().split(',').size(), 3);
    r = run_program(kCli,
                    {"make-model", "--config", config, "--random", "--out", dir.path() + "/nine", "--layers", "9"},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("has 6 layers"), qPrintable(r.err));
    QCOMPARE(
        run_program(kCli, {"make-model", "--config", config, "--random", "--out", out, "--layers", "0"}, quiet_env())
            .exit_code,
        2);
  }

  void makeModelWritesMxfp4Experts() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString config = kData + "/models/tiny-glm5-next/config.json";
    const QString out = dir.path() + "/mx";
    auto r = run_program(kCli, {"make-model", "--config", config, "--random", "--out", out, "--mxfp4-experts"},
                         quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QFile f(out + "/config.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(root["quantization_config"].toObject()["quant_method"].toString(), QString("mxfp4"));
    // The experts are stored as blocks and scales, and the model runs.
    QFile index(out + "/model.safetensors.index.json");
    QVERIFY(index.open(QIODevice::ReadOnly));
    const QJsonObject map = QJsonDocument::fromJson(index.readAll()).object()["weight_map"].toObject();
    int blocks = 0, bf16_experts = 0;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (it.key().contains(".mlp.experts.") && it.key().endsWith("_blocks")) ++blocks;
      if (it.key().contains(".mlp.experts.") && it.key().endsWith("up_proj.weight")) ++bf16_experts;
    }
    QVERIFY(blocks > 0);
    QCOMPARE(bf16_experts, 0);
    r = run_program(kCli, {"generate", "--model", out, "--tokens", "1,2,3", "--max-new-tokens", "2", "--ids"},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    // A configuration quantized some other way is refused with the reason.
    QFile src(config);
    QVERIFY(src.open(QIODevice::ReadOnly));
    QJsonObject other = QJsonDocument::fromJson(src.readAll()).object();
    other["quantization_config"] = QJsonObject{{"quant_method", "fp8"}};
    QFile fp8(dir.path() + "/fp8.json");
    QVERIFY(fp8.open(QIODevice::WriteOnly));
    fp8.write(QJsonDocument(other).toJson());
    fp8.close();
    r = run_program(kCli, {"make-model", "--config", fp8.fileName(), "--random", "--out", dir.path() + "/no",
                           "--mxfp4-experts"},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("quantized otherwise"), qPrintable(r.err));
  }

  void planSaysWhatLoadingDoes() {
    const QString model = kData + "/models/tiny-glm5-hc4-mxfp4";
    auto r = run_program(kCli, {"plan", model, "--json", "--no-measure", "--context", "4096"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["streamed"].toBool(), false);
    QCOMPARE(o["context"].toInteger(), 4096);
    const qint64 whole = o["planned_bytes"].toInteger();
    const qint64 experts = o["expert_bytes"].toInteger();
    QVERIFY(whole > 0 && experts > 0 && o["weight_bytes"].toInteger() > experts);
    QVERIFY(!o.contains("predicted"));

    r = run_program(kCli,
                    {"plan", model, "--json", "--no-measure", "--context", "4096", "--ram", QString::number(whole - 1)},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["streamed"].toBool(), true);
    QVERIFY(o["expert_cache_bytes"].toInteger() > 0 && o["expert_cache_bytes"].toInteger() < experts);
    QVERIFY(o["planned_bytes"].toInteger() <= whole - 1);

    r = run_program(kCli,
                    {"plan", model, "--no-measure", "--context", "4096", "--ram", QString::number(whole - experts)},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("even with its experts read from disk"), qPrintable(r.err));
    QCOMPARE(run_program(kCli, {"plan", model, "--ram", "lots"}, quiet_env()).exit_code, 2);

    // The GPU program's plan for a GPU of a given size: resident when it fits, else the reason
    // (and the CPU plan above is what --device cuda does).
    r = run_program(kCli, {"plan", model, "--json", "--no-measure", "--vram", "80G"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QJsonObject gpu = QJsonDocument::fromJson(r.out.toUtf8()).object()["gpu"].toObject();
    QCOMPARE(gpu["memory_bytes"].toInteger(), 80ll << 30);
    const bool gpu_path = !gpu["reason"].toString().contains("no GPU path");
    if (gpu_path) {
      QCOMPARE(gpu["fits"].toBool(), true);
      QVERIFY(gpu["weight_bytes"].toInteger() > 0 && gpu["weight_bytes"].toInteger() <= whole);
      QVERIFY(gpu["workspace_bytes"].toInteger() > 0 && gpu["context"].toInteger() >= 4096);
    }
    r = run_program(kCli, {"plan", model, "--json", "--no-measure", "--vram", "5M"}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    gpu = QJsonDocument::fromJson(r.out.toUtf8()).object()["gpu"].toObject();
    QCOMPARE(gpu["fits"].toBool(), false);
    if (gpu_path) QVERIFY2(gpu["reason"].toString().contains("needs"), qPrintable(gpu["reason"].toString()));
    QCOMPARE(run_program(kCli, {"plan", model, "--vram", "big"}, quiet_env()).exit_code, 2);

    r = run_program(kCli, {"plan", model, "--json", "--threads", "2", "--prompt-tokens", "16", "--expert-cache", "40K"},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["streamed"].toBool(), true);
    const QJsonObject m = o["measured"].toObject(), p = o["predicted"].toObject();
    for (const char* key : {"ram_gbps", "disk_gbps", "dense_gemv_gbps", "dense_gflops", "expert_gemv_gbps",
                            "expert_gflops", "decode_step_s"})
      QVERIFY2(m[key].toDouble() > 0, key);
    QVERIFY(p["decode_tokens_per_s"].toDouble() > 0 && p["prefill_tokens_per_s"].toDouble() > 0);
    QVERIFY(p["hit_rate"].toDouble() > 0 && p["hit_rate"].toDouble() < 1);

    // generate (as chat and serve) streams when asked.
    r = run_program(
        kCli, {"generate", "--model", model, "--tokens", "1,2,3", "--max-new-tokens", "4", "--expert-cache", "40K"},
        quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QCOMPARE(run_program(kCli, {"generate", "--model", model, "--tokens", "1,2,3", "--expert-cache", "0"}, quiet_env())
                 .exit_code,
             2);
  }

  void verifyExitCodes() {
    auto r = run_program(kCli,
                         {"verify", "--model", kData + "/models/tiny-gpt-oss", "--reference",
                          kData + "/reference/gpt-oss/tiny-gpt-oss.safetensors"},
                         quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.err));
    QVERIFY(r.out.contains("all within thresholds"));
    QVERIFY(r.out.contains("hidden.3"));
    r = run_program(kCli,
                    {"verify", "--model", kData + "/models/tiny-gpt-oss-full", "--reference",
                     kData + "/reference/gpt-oss/tiny-gpt-oss.safetensors"},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.out.contains("FAIL"));
  }
};

QTEST_GUILESS_MAIN(TestCliEngine)
#include "test_cli_engine.moc"
