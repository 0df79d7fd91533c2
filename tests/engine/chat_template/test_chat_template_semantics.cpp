// Python behaviours jinja2 inherits that differential testing against jinja2 turned up, with
// the results Python gives (beyond the transformers fixtures).
#include <QtTest>

#include "day0/chat_template.h"

namespace {

day0::Result<std::string> render(const std::string& source, const std::string& context = "{}") {
  auto t = day0::ChatTemplate::parse(source, "semantics.jinja");
  if (!t) return t.status();
  return t->render_json(context);
}

void expect(const std::string& source, const std::string& want, const std::string& context = "{}") {
  const auto r = render(source, context);
  QVERIFY2(r.is_ok(), (source + ": " + r.status().message()).c_str());
  QCOMPARE(QString::fromStdString(*r), QString::fromStdString(want));
}

void expect_error(const std::string& source, const std::string& fragment, const std::string& context = "{}") {
  const auto r = render(source, context);
  QVERIFY2(!r.is_ok(), (source + " rendered " + (r.is_ok() ? *r : "")).c_str());
  QVERIFY2(r.status().message().find(fragment) != std::string::npos, r.status().message().c_str());
}

}  // namespace

class TestChatTemplateSemantics : public QObject {
  Q_OBJECT
 private slots:
  void slicesUsePythonSubscription() {
    expect("{{ x[1:] }}|{{ s[::-1] }}|{{ (x | first, 2)[:1] }}", "[2, 3]|cba|(1,)",
           "{\"x\": [1, 2, 3], \"s\": \"abc\", \"t\": [1, 2]}");
    expect_error("{{ n[1:] }}", "TypeError: 'int' object is not subscriptable", "{\"n\": 1}");
    expect_error("{{ d[1:] }}", "TypeError: unhashable type: 'slice'", "{\"d\": {}}");
    // Items and attributes of missing things are Undefined, not errors.
    expect("[{{ n[0] }}][{{ d.x }}]", "[][]", "{\"n\": 1, \"d\": {}}");
  }

  void truncateMeasuresTheValueItself() {
    expect("{{ x | truncate(5) }}", "[1, 2]", "{\"x\": [1, 2]}");
    expect("{{ 'a b c d e f g h i j k l' | truncate(9) }}", "a b c...");
    expect_error("{{ true | truncate(5) }}", "TypeError: object of type 'bool' has no len()");
  }

  void markupIteratesToPlainStrings() {
    expect("{{ ('ab' | safe) | list }}|{{ ('<' | safe) + '<' }}|{{ ('ab' | e)[0] is escaped }}",
           "['a', 'b']|<&lt;|True");
  }

  void indentTakesStrings() {
    expect("{{ 'a\\nb' | indent(2, true) }}", "  a\n  b");
    expect_error("{{ [1] | indent }}", "'list' object has no attribute 'splitlines'");
  }
};

QTEST_APPLESS_MAIN(TestChatTemplateSemantics)
#include "test_chat_template_semantics.moc"
