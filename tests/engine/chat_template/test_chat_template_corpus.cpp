// Every real chat template of tests/data/chat_templates rendered with every standard context,
// compared byte for byte with what transformers 5.17 rendered (tools/reference/
// make_template_fixtures.py); where transformers raised, Day0 must fail too. Also the feature
// templates (one behaviour each) rendered by the same reference.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "day0/chat_template.h"
#include "engine/chat_template/fixtures.h"

using day0::test::fixture_clock;
using day0::test::read_file;
using day0::test::template_data_dir;
using ordered_json = nlohmann::ordered_json;

namespace {

std::string first_difference(const std::string& got, const std::string& want) {
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  const std::size_t from = i > 40 ? i - 40 : 0;
  return "first difference at byte " + std::to_string(i) + "\n  got:  " + ordered_json(got.substr(from, 100)).dump() +
         "\n  want: " + ordered_json(want.substr(from, 100)).dump();
}

struct Outcome {
  bool passed = false;
  std::string detail;
};

// expected: {"output": text} or {"error": {"type", "message"}}
Outcome check(const std::string& name, const std::string& source, const std::string& context_json,
              const ordered_json& expected) {
  day0::ChatTemplateRenderOptions options;
  options.fixed_now = fixture_clock();
  // Real templates stay far inside the default budgets: a tenth of each must be enough.
  const day0::ChatTemplateLimits defaults;
  options.limits.max_steps = defaults.max_steps / 10;
  options.limits.max_output_bytes = defaults.max_output_bytes / 10;
  options.limits.max_depth = defaults.max_depth / 10;
  auto parsed = day0::ChatTemplate::parse(source, name);
  day0::Result<std::string> rendered =
      parsed ? parsed->render_json(context_json, options) : day0::Result<std::string>(parsed.status());
  if (expected.contains("output")) {
    const std::string want = expected["output"].get<std::string>();
    if (!rendered) return {false, "transformers rendered it, Day0 failed: " + rendered.status().message()};
    if (*rendered != want) return {false, first_difference(*rendered, want)};
    return {true, ""};
  }
  const auto& err = expected["error"];
  if (rendered)
    return {false, "transformers raised " + err["type"].get<std::string>() + " (" + err["message"].get<std::string>() +
                       "), Day0 rendered it"};
  // The same class of error as Python's (compile-time checks are all TemplateSyntaxError here).
  std::string want_type = err["type"].get<std::string>();
  if (want_type == "TemplateAssertionError" || want_type == "SyntaxError") want_type = "TemplateSyntaxError";
  if (rendered.status().message().find(": " + want_type + ": ") == std::string::npos)
    return {false, "transformers raised " + want_type + " (" + err["message"].get<std::string>() +
                       "), Day0: " + rendered.status().message()};
  // raise_exception's message is the template's own text: it must match exactly.
  if (err["type"] == "TemplateError") {
    const std::string want = "TemplateError: " + err["message"].get<std::string>();
    if (rendered.status().message().find(want) == std::string::npos)
      return {false, "wrong message: " + rendered.status().message() + " (want " + want + ")"};
  }
  return {true, ""};
}

}  // namespace

class TestChatTemplateCorpus : public QObject {
  Q_OBJECT
 private slots:
  void corpus() {
    const auto dir = template_data_dir();
    int pairs = 0, passed = 0, templates = 0;
    std::vector<std::string> failures;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".jinja") continue;
      ++templates;
      const std::string stem = entry.path().stem().string();
      const std::string source = read_file(entry.path());
      const auto expected = ordered_json::parse(read_file(dir / "expected" / (stem + ".json")));
      for (const auto& [context_name, want] : expected.items()) {
        const std::string context = read_file(dir / "expected" / "contexts" / (context_name + ".json"));
        ++pairs;
        const Outcome o = check(entry.path().filename().string(), source, context, want);
        if (o.passed) {
          ++passed;
        } else {
          failures.push_back(stem + " / " + context_name + ": " + o.detail);
        }
      }
    }
    for (const auto& f : failures) qWarning("%s", f.c_str());
    qInfo("chat template corpus: %d templates, %d of %d (template, context) pairs pass", templates, passed, pairs);
    QVERIFY(templates >= 50);
    QCOMPARE(passed, pairs);
  }

  void features() {
    const auto cases = ordered_json::parse(read_file(template_data_dir() / "expected" / "features.json"));
    int passed = 0;
    std::vector<std::string> failures;
    for (const auto& c : cases) {
      const std::string name = c["name"].get<std::string>();
      const Outcome o = check(name, c["template"].get<std::string>(), c["context"].dump(), c);
      if (o.passed) {
        ++passed;
      } else {
        failures.push_back(name + ": " + o.detail + "\n  template: " + c["template"].dump());
      }
    }
    for (const auto& f : failures) qWarning("%s", f.c_str());
    qInfo("feature templates: %d of %d pass", passed, static_cast<int>(cases.size()));
    QVERIFY(cases.size() >= 200);
    QCOMPARE(passed, static_cast<int>(cases.size()));
  }
};

QTEST_APPLESS_MAIN(TestChatTemplateCorpus)
#include "test_chat_template_corpus.moc"
