// day0-cli as a user runs it: exit codes, output, and errors on bad input.
#include <QDir>
#include <QFile>
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

  void helpEverywhere() {
    // The command list: every summary starts in the same column, help itself included.
    auto r = run_program(kCli, {"help"}, quiet_env());
    QCOMPARE(r.exit_code, 0);
    int column = -1;
    int rows = 0;
    for (const QString& line : r.out.split('\n')) {
      const auto m = QRegularExpression(R"(^  ([a-z-]+)( +)\S)").match(line);
      if (!m.hasMatch()) continue;
      const int at = int(m.capturedLength(1) + m.capturedLength(2));
      if (column < 0) column = at;
      QVERIFY2(at == column, qPrintable(line));
      ++rows;
    }
    QVERIFY2(rows >= 15, qPrintable(r.out));
    QVERIFY(r.out.contains("quantize-experts") && r.out.contains("make-demo-model") && r.out.contains("  help "));
    QCOMPARE(run_program(kCli, {"-h"}, quiet_env()).out, r.out);

    // help CMD, CMD --help and CMD -h print the same usage on stdout and succeed.
    for (const char* command : {"chat", "inspect", "history", "docs", "serve", "generate", "make-demo-model"}) {
      const auto help = run_program(kCli, {"help", command}, quiet_env());
      QVERIFY2(help.exit_code == 0, command);
      QVERIFY2(help.out.contains(QString("day0-cli ") + command), qPrintable(help.out));
      QCOMPARE(run_program(kCli, {command, "--help"}, quiet_env()).out, help.out);
      QCOMPARE(run_program(kCli, {command, "-h"}, quiet_env()).out, help.out);
    }
    r = run_program(kCli, {"help", "frobnicate"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("unknown command 'frobnicate'"));
  }

  void modelFolderAsAWord() {
    const QString model = kData + "/models/tiny-gpt-oss";
    const auto with_option = run_program(kCli, {"inspect", "--model", model}, quiet_env());
    QCOMPARE(with_option.exit_code, 0);
    auto r = run_program(kCli, {"inspect", model}, quiet_env());
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(r.out, with_option.out);
    r = run_program(kCli, {"inspect", model, "--json"}, quiet_env());
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.startsWith("{"));
    r = run_program(kCli, {"tokenize", model, "--text", "hi", "--ids"}, quiet_env());
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(r.out, run_program(kCli, {"tokenize", "--model", model, "--text", "hi", "--ids"}, quiet_env()).out);
    // Twice is an error, and so is a stray word after it.
    r = run_program(kCli, {"inspect", model, "--model", model}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("the model is given twice"), qPrintable(r.err));
    r = run_program(kCli, {"inspect", model, "extra"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("unexpected argument 'extra'"), qPrintable(r.err));
    r = run_program(kCli, {"inspect", "-x"}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("unknown option -x"), qPrintable(r.err));
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

  // Broken or hostile JSON in a model folder or an import: the message names the file and says
  // what is wrong in plain words (line and column for a syntax error), never the JSON library's
  // own text ("[json.exception.parse_error.101] ...").
  void jsonErrorsArePlain() {
    QTemporaryDir tmp;
    const QString demo = QStringLiteral(DAY0_SOURCE_DIR "/tests/data/models/demo-random");
    const auto copyModel = [&](const QString& name) {
      const QString dir = tmp.filePath(name);
      QDir().mkpath(dir);
      for (const QString& f : QDir(demo).entryList(QDir::Files)) QFile::copy(demo + "/" + f, dir + "/" + f);
      return dir;
    };
    const auto write = [](const QString& path, const QByteArray& bytes) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(bytes);
    };
    const auto plain = [](const QString& err, const QString& file) {
      return err.contains(file) && !err.contains("json.exception") && !err.contains("[json") &&
             !err.contains("parse_error") && !err.contains("type_error");
    };
    struct Case {
      QString file;     // in the model folder
      QByteArray text;  // its new contents
      QStringList command;
      QString words;    // what the message says
    };
    const QList<Case> cases = {
        {"config.json", "{\"model_type\": \"gpt_oss\",\n  \"num_hidden_layers\": 2,\n}", {"inspect"},
         "is not valid JSON (line 3, column 1): unexpected '}'"},
        {"config.json", "{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": \"two\"", {"inspect"},
         "is not valid JSON (line 1, column 53): it ends too early; expected '}'"},
        {"config.json", "", {"inspect"}, "is not valid JSON (line 1, column 1): it is empty"},
        {"config.json", "{\"model_type\": tru}", {"inspect"}, "is not valid JSON (line 1, column 19): invalid literal"},
        {"config.json", "{\"model_type\": 1e999}", {"inspect"}, "the number 1e999 is too large"},
        {"config.json", "s|\"num_hidden_layers\": 4|\"num_hidden_layers\": \"four\"", {"inspect"},
         "num_hidden_layers must be"},
        {"model.safetensors.index.json", "{\"weight_map\": {\"a\": ", {"inspect"}, "is not valid JSON (line 1"},
        {"tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": [", {"tokenize", "--text", "hi"},
         "is not valid JSON (line 1"},
        {"tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": 5, \"merges\": []}}", {"tokenize", "--text", "hi"},
         "vocab"},
        {"tokenizer_config.json", "{\"chat_template\": \"{{ x }}\", \"bos_token\": }", {"chat", "--no-history"},
         "is not valid JSON (line 1, column 43): unexpected '}'; expected a value"},
        {"tokenizer_config.json", "{\"chat_template\": 5}", {"chat", "--no-history"}, "chat_template"},
    };
    int n = 0;
    for (const auto& c : cases) {
      const QString dir = copyModel(QString("m%1").arg(n++));
      if (c.file == "tokenizer_config.json") QFile::remove(dir + "/chat_template.jinja");
      if (c.text.startsWith("s|")) {  // a change to the file as it is
        const QList<QByteArray> parts = c.text.split('|');
        QFile f(dir + "/" + c.file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        QVERIFY(text.contains(parts[1]));
        write(dir + "/" + c.file, text.replace(parts[1], parts[2]));
      } else {
        write(dir + "/" + c.file, c.text);
      }
      QStringList args{c.command.front(), "--model", dir};
      args += c.command.mid(1);
      const auto r = run_program(kCli, args, quiet_env());
      QVERIFY2(!r.crashed && r.exit_code == 1, qPrintable(c.file + ": " + r.err));
      QVERIFY2(plain(r.err, c.file), qPrintable(r.err));
      QVERIFY2(r.err.contains(c.words), qPrintable(c.words + " not in: " + r.err));
    }

    // A shard whose header is not JSON.
    const QString dir = copyModel("shard");
    QFile shard(dir + "/model-00002-of-00002.safetensors");
    QVERIFY(shard.open(QIODevice::ReadWrite));
    const QByteArray header = "{\"x\": [1, 2,, 3]}      ";
    QByteArray bytes(8, '\0');
    bytes[0] = static_cast<char>(header.size());
    shard.write(bytes + header);
    shard.close();
    auto r = run_program(kCli, {"inspect", "--model", dir}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(plain(r.err, "model-00002-of-00002.safetensors"), qPrintable(r.err));
    QVERIFY2(r.err.contains("the header is not valid JSON (line 1, column 13)"), qPrintable(r.err));

    // A history import that is not JSON, or JSON of the wrong shape.
    const QString db = tmp.filePath("history.db");
    write(tmp.filePath("broken.json"), "{\"format\": \"day0-history\", \"conversations\": [{]}");
    r = run_program(kCli, {"history", "import", tmp.filePath("broken.json"), "--db", db}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(plain(r.err, "broken.json"), qPrintable(r.err));
    QVERIFY2(r.err.contains("the file is not valid JSON (line 1, column 47)"), qPrintable(r.err));
    write(tmp.filePath("shape.json"), "{\"format\": \"day0-history\", \"version\": \"one\"}");
    r = run_program(kCli, {"history", "import", tmp.filePath("shape.json"), "--db", db}, quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(plain(r.err, "shape.json"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
