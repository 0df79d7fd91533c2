// `day0-cli template` as a user runs it: byte-exact renderings of real templates (checked
// against transformers' fixtures), templates found in model folders, and clear errors.
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "app/process_runner.h"
#include "engine/chat_template/fixtures.h"

using day0::test::read_file;
using day0::test::quiet_env;
using day0::test::run_program;
using day0::test::template_data_dir;
using ordered_json = nlohmann::ordered_json;

namespace {
const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");


QString data(const std::string& relative) { return QString::fromStdString((template_data_dir() / relative).string()); }

std::string expected_output(const std::string& stem, const std::string& context) {
  const auto e = ordered_json::parse(read_file(template_data_dir() / "expected" / (stem + ".json")));
  return e[context]["output"].get<std::string>();
}

void write(const QString& path, const std::string& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text.data(), static_cast<qint64>(text.size()));
}
}  // namespace

class TestTemplateCli : public QObject {
  Q_OBJECT
 private slots:
  void rendersTemplateFileExactly() {
    // Llama 3.1 reads strftime_now: --now gives it the fixtures' clock.
    for (const auto& [stem, context] :
         {std::pair{"meta-llama-Llama-3.1-8B-Instruct", "tools"}, std::pair{"openai-gpt-oss-120b", "reasoning"},
          std::pair{"GLM-4.7-Flash", "tools_final_answer"}}) {
      const auto r =
          run_program(kCli,
                      {"template", "--template", data(std::string(stem) + ".jinja"), "--context",
                       data(std::string("expected/contexts/") + context + ".json"), "--now", "2025-03-07T09:04:05"},
                      quiet_env());
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      QCOMPARE(r.out, QString::fromStdString(expected_output(stem, context)));
    }
  }

  void findsTheModelsTemplate() {
    QTemporaryDir dir;
    const std::string qwen = read_file(template_data_dir() / "Qwen-Qwen3-0.6B.jinja");
    const QString context = data("expected/contexts/multi_turn.json");
    const QString want = QString::fromStdString(expected_output("Qwen-Qwen3-0.6B", "multi_turn"));
    // tokenizer_config.json with the template as a string.
    write(dir.filePath("tokenizer_config.json"), ordered_json{{"chat_template", qwen}}.dump());
    auto r = run_program(kCli, {"template", "--model", dir.path(), "--context", context}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(r.out, want);
    // As a list of named templates: "default" is the one.
    ordered_json list = ordered_json::array();
    list.push_back({{"name", "tool_use"}, {"template", "TOOLS"}});
    list.push_back({{"name", "default"}, {"template", qwen}});
    write(dir.filePath("tokenizer_config.json"), ordered_json{{"chat_template", list}}.dump());
    r = run_program(kCli, {"template", "--model", dir.path(), "--context", context}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(r.out, want);
    // chat_template.jinja wins over tokenizer_config.json.
    write(dir.filePath("chat_template.jinja"), "{{ messages | length }} messages");
    r = run_program(kCli, {"template", "--model", dir.path(), "--context", context}, quiet_env());
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(r.out, QString("3 messages"));
  }

  void errors() {
    QTemporaryDir dir;
    write(dir.filePath("bad.jinja"), "line one\n{% for m in messages %}\n{{ m.content + }}\n{% endfor %}");
    write(dir.filePath("ctx.json"), "{\"messages\": [{\"role\": \"system\", \"content\": \"x\"}]}");
    auto r =
        run_program(kCli, {"template", "--template", dir.filePath("bad.jinja"), "--context", dir.filePath("ctx.json")},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("bad.jinja:3:"), qPrintable(r.err));
    QVERIFY(r.err.contains("TemplateSyntaxError"));
    QVERIFY(r.out.isEmpty());

    // gemma-2 rejects a system role through raise_exception, as in transformers.
    r = run_program(
        kCli, {"template", "--template", data("google-gemma-2-2b-it.jinja"), "--context", dir.filePath("ctx.json")},
        quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("TemplateError: System role not supported"), qPrintable(r.err));

    write(dir.filePath("notjson.json"), "{\"messages\": [");
    r = run_program(
        kCli, {"template", "--template", data("google-gemma-2-2b-it.jinja"), "--context", dir.filePath("notjson.json")},
        quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("not valid JSON"), qPrintable(r.err));

    r = run_program(kCli, {"template", "--model", dir.filePath("nowhere"), "--context", dir.filePath("ctx.json")},
                    quiet_env());
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("is not a folder"), qPrintable(r.err));

    r = run_program(kCli, {"template", "--context", dir.filePath("ctx.json")}, quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("usage: day0-cli template"));
  }
};

QTEST_GUILESS_MAIN(TestTemplateCli)
#include "test_template_cli.moc"
