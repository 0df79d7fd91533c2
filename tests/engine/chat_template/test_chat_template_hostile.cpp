// Hostile and random templates: every one must end with a rendering or a clear error (never a
// crash or a hang), quickly, within the step, size, output and depth budgets.
#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <random>

#include "day0/chat_template.h"
#include "engine/chat_template/fixtures.h"

using day0::test::read_file;
using day0::test::template_data_dir;

namespace {

day0::Result<std::string> render(const std::string& source, const std::string& context,
                                 const day0::ChatTemplateLimits& limits = {}) {
  auto t = day0::ChatTemplate::parse(source, "hostile.jinja");
  if (!t) return t.status();
  day0::ChatTemplateRenderOptions options;
  options.limits = limits;
  options.fixed_now = day0::test::fixture_clock();
  return t->render_json(context, options);
}

day0::ChatTemplateLimits small_limits() {
  day0::ChatTemplateLimits l;
  l.max_steps = 200'000;
  l.max_output_bytes = 256 * 1024;
  l.max_depth = 200;
  return l;
}

const char* const kFragments[] = {"{{",
                                  "}}",
                                  "{%",
                                  "%}",
                                  "{#",
                                  "#}",
                                  "{%-",
                                  "-%}",
                                  "{{-",
                                  "-}}",
                                  " if ",
                                  " elif ",
                                  " else ",
                                  " endif ",
                                  " for ",
                                  " in ",
                                  " endfor ",
                                  " set ",
                                  " endset ",
                                  " macro ",
                                  " endmacro ",
                                  " call ",
                                  " endcall ",
                                  " filter ",
                                  " endfilter ",
                                  " raw ",
                                  " endraw ",
                                  " break ",
                                  " continue ",
                                  " with ",
                                  " endwith ",
                                  " not ",
                                  " and ",
                                  " or ",
                                  " is ",
                                  " defined ",
                                  " none ",
                                  " true ",
                                  "x",
                                  "y",
                                  "messages",
                                  "m",
                                  "loop",
                                  "loop.index",
                                  "ns",
                                  "namespace(",
                                  "range(",
                                  "caller()",
                                  "'a'",
                                  "\"b\"",
                                  "'\\n'",
                                  "0",
                                  "1",
                                  "-1",
                                  "2.5",
                                  "1e308",
                                  "9223372036854775807",
                                  "(",
                                  ")",
                                  "[",
                                  "]",
                                  "{",
                                  "}",
                                  ",",
                                  ":",
                                  ".",
                                  "|",
                                  "~",
                                  "+",
                                  "-",
                                  "*",
                                  "/",
                                  "//",
                                  "%",
                                  "**",
                                  "==",
                                  "!=",
                                  "<",
                                  ">=",
                                  "=",
                                  "|length",
                                  "|tojson",
                                  "|upper",
                                  "|join(',')",
                                  "|map(attribute='x')",
                                  "|selectattr('role')",
                                  "|list",
                                  "|first",
                                  "|default('d')",
                                  "|items",
                                  "|dictsort",
                                  "|indent(2)",
                                  "|int",
                                  "|trim",
                                  "|replace('a','b')",
                                  "|sort",
                                  "|unique",
                                  "|batch(2)",
                                  ".split(',')",
                                  ".strip()",
                                  ".items()",
                                  ".get('k')",
                                  "[0]",
                                  "[-1]",
                                  "[1:]",
                                  "[::-1]",
                                  "raise_exception('r')",
                                  "strftime_now('%Y')",
                                  "\n",
                                  "  ",
                                  "text ",
                                  "é",
                                  "🎉",
                                  "\xff",
                                  "\xc3",
                                  "\r\n",
                                  "\t"};

std::string random_soup(std::mt19937& rng) {
  std::uniform_int_distribution<int> count(1, 40);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kFragments) - 1);
  std::string out;
  const int n = count(rng);
  for (int i = 0; i < n; ++i) out += kFragments[pick(rng)];
  return out;
}

std::string random_bytes(std::mt19937& rng) {
  std::uniform_int_distribution<int> len(0, 200), byte(0, 255);
  std::string out(static_cast<std::size_t>(len(rng)), '\0');
  for (char& c : out) c = static_cast<char>(byte(rng));
  return out;
}

std::string random_json(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 4 ? 4 : 7);
  switch (kind(rng)) {
    case 0:
      return "null";
    case 1:
      return rng() % 2 ? "true" : "false";
    case 2:
      return std::to_string(static_cast<int>(rng() % 2001) - 1000);
    case 3:
      return "2.5";
    case 4:
      return rng() % 2 ? "\"user\"" : "\"a\\u00e9 <b> \\\"q\\\"\"";
    case 5:
    case 6: {
      std::string out = "{";
      const int n = static_cast<int>(rng() % 4);
      const char* keys[] = {"role", "content", "x", "tool_calls", "name"};
      for (int i = 0; i < n; ++i) {
        if (i) out += ",";
        out += "\"" + std::string(keys[(i + rng()) % 5]) + std::to_string(i) + "\":" + random_json(rng, depth + 1);
      }
      return out + "}";
    }
    default: {
      std::string out = "[";
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) out += (i ? "," : "") + random_json(rng, depth + 1);
      return out + "]";
    }
  }
}

// Time limits in milliseconds, stretched in sanitizer builds, which run several times slower
// (tests/sanitizers.cmake sets DAY0_TEST_TIME_SCALE there).
qint64 time_limit_ms(qint64 ms) { return ms * std::max(1, qEnvironmentVariableIntValue("DAY0_TEST_TIME_SCALE")); }

std::string random_context(std::mt19937& rng) {
  return "{\"messages\": " + random_json(rng, 1) + ", \"x\": " + random_json(rng, 1) +
         ", \"add_generation_prompt\": true, \"bos_token\": \"<s>\", \"tools\": " + random_json(rng, 1) + "}";
}

void expect_budget_error(const std::string& source, const char* what, const day0::ChatTemplateLimits& limits = {}) {
  QElapsedTimer timer;
  timer.start();
  const auto r = render(source, "{}", limits);
  QVERIFY2(!r, what);
  QVERIFY2(timer.elapsed() < time_limit_ms(5000), what);
  QVERIFY2(r.status().message().find(what) != std::string::npos, r.status().message().c_str());
}

}  // namespace

class TestChatTemplateHostile : public QObject {
  Q_OBJECT
 private slots:
  void budgetsStopRunawayTemplates() {
    // Nested loops that would run 10^10 steps hit the default step budget within seconds.
    expect_budget_error("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                        "step budget");
    // Doubling a string each iteration.
    expect_budget_error(
        "{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "would exceed the limit");
    expect_budget_error("{{ 'a' * 1000000000000 }}", "would exceed the limit");
    expect_budget_error("{{ ([1] * 100000) * 100000 }}", "would exceed the limit");
    // Unbounded macro recursion.
    expect_budget_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "deeper than");
    // Output beyond the limit.
    expect_budget_error("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "output limit");
    // Values nested through a loop, and a namespace holding itself (namespaces take plain data).
    expect_budget_error(
        "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}",
        "nest deeper");
    expect_budget_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", "a namespace attribute cannot hold");
    // A tight step budget is honoured exactly.
    day0::ChatTemplateLimits tight;
    tight.max_steps = 1000;
    expect_budget_error("{% for i in range(10000) %}{{ i }}{% endfor %}", "step budget", tight);
  }

  void deepNestingFailsToParseCleanly() {
    const std::string parens = "{{ " + std::string(50000, '(') + "1" + std::string(50000, ')') + " }}";
    auto r = render(parens, "{}");
    QVERIFY(!r);
    QVERIFY2(r.status().message().find("nests deeper than") != std::string::npos, r.status().message().c_str());
    std::string ifs;
    for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
    r = render(ifs, "{}");
    QVERIFY(!r);
    std::string nots = "{{ ";
    for (int i = 0; i < 50000; ++i) nots += "not ";
    r = render(nots + "x }}", "{}");
    QVERIFY(!r);
    std::string filters = "{{ x";
    for (int i = 0; i < 20000; ++i) filters += "|upper";
    r = render(filters + " }}", "{\"x\": \"a\"}");
    QVERIFY(!r);
    std::string sums = "{{ 1";
    for (int i = 0; i < 100000; ++i) sums += " + 1";
    r = render(sums + " }}", "{}");
    QVERIFY(!r);
    std::string contexts = "{\"x\": " + std::string(300, '[') + std::string(300, ']') + "}";
    r = render("{{ x }}", contexts);
    QVERIFY(!r);
  }

  void errorsNameLineAndColumn() {
    auto r = render("ok\n  {{ 1 + }}", "{}");
    QVERIFY(!r);
    QVERIFY2(r.status().message().rfind("hostile.jinja:2:", 0) == 0, r.status().message().c_str());
    r = render("a\nb\n{% for m in messages %}{{ m.x.y }}{% endfor %}", "{\"messages\": [{}]}");
    QVERIFY(!r);
    QVERIFY2(r.status().message().rfind("hostile.jinja:3:", 0) == 0, r.status().message().c_str());
    QVERIFY(r.status().message().find("UndefinedError: 'dict object' has no attribute 'x'") != std::string::npos);
  }

  void invalidUtf8IsRefused() {
    for (const std::string bad : {std::string("abc\xff"), std::string("\xc3"), std::string("\xed\xa0\x80"),
                                  std::string("{{ '\xe9' }}"), std::string("\xc0\xaf")}) {
      const auto r = render(bad, "{}");
      QVERIFY(!r);
      QVERIFY2(r.status().message().find("not valid UTF-8") != std::string::npos, r.status().message().c_str());
    }
    const auto r = render("{{ x }}", "{\"x\": \"\xff\"}");
    QVERIFY(!r);
  }

  void fixedClockAndRealClock() {
    const auto fixed = render("{{ strftime_now('%Y-%m-%d %A') }}", "{}");
    QVERIFY(fixed.is_ok());
    QCOMPARE(QString::fromStdString(*fixed), QString("2025-03-07 Friday"));
    auto t = day0::ChatTemplate::parse("{{ strftime_now('%Y') }}");
    QVERIFY(t.is_ok());
    const auto now = t->render_json("{}");
    QVERIFY(now.is_ok());
    QVERIFY(std::stoi(*now) >= 2025);
  }

  void randomTokenSoupNeverCrashes() {
    std::mt19937 rng(1234);
    QElapsedTimer timer;
    timer.start();
    int rendered = 0, failed = 0;
    for (int i = 0; i < 4000; ++i) {
      const std::string source = (i % 4 == 3) ? random_bytes(rng) : random_soup(rng);
      const auto r = render(source, random_context(rng), small_limits());
      if (r) {
        ++rendered;
      } else {
        ++failed;
        QVERIFY(!r.status().message().empty());
      }
    }
    qInfo("random templates: %d rendered, %d failed cleanly, %lld ms", rendered, failed,
          static_cast<long long>(timer.elapsed()));
    QVERIFY(rendered > 100);
    QVERIFY(timer.elapsed() < time_limit_ms(15000));
  }

  void mutatedRealTemplatesNeverCrash() {
    std::mt19937 rng(99);
    std::vector<std::string> sources;
    for (const auto& e : std::filesystem::directory_iterator(template_data_dir()))
      if (e.path().extension() == ".jinja") sources.push_back(read_file(e.path()));
    const std::string context = read_file(template_data_dir() / "expected" / "contexts" / "tools.json");
    QElapsedTimer timer;
    timer.start();
    int rendered = 0;
    for (int i = 0; i < 600; ++i) {
      std::string s = sources[rng() % sources.size()];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits && !s.empty(); ++k) {
        const std::size_t at = rng() % s.size();
        const std::size_t len = 1 + rng() % 40;
        switch (rng() % 3) {
          case 0:
            s.erase(at, len);
            break;
          case 1:
            s.insert(at, s.substr(rng() % s.size(), len));
            break;
          default:
            s.insert(at, kFragments[rng() % std::size(kFragments)]);
            break;
        }
      }
      const auto r = render(s, i % 2 ? context : random_context(rng), small_limits());
      if (r) ++rendered;
    }
    qInfo("mutated templates: %d of 600 rendered, %lld ms", rendered, static_cast<long long>(timer.elapsed()));
    QVERIFY(timer.elapsed() < time_limit_ms(15000));
  }
};

QTEST_APPLESS_MAIN(TestChatTemplateHostile)
#include "test_chat_template_hostile.moc"
