// The malformed-model corpus through the app's loading path (EngineBridge::loadModel, which the
// model manager calls): every case ends in loadFailed with a message naming the problem, the
// bridge holds no model afterwards, and it stays usable: the demo model then loads and replies.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "bridge/engine_bridge.h"
#include "hardening/malformed_cases.h"
#include "hardening/model_mutations.h"

using namespace day0::app;
using namespace day0::test;

namespace {

constexpr int kWaitMs = 15000;

// Loads `dir` and waits for the outcome: the failure message, or empty when it loaded.
std::optional<QString> load(EngineBridge& bridge, const QString& dir, bool* loaded) {
  QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
  QSignalSpy ok(&bridge, &EngineBridge::modelLoaded);
  bridge.loadModel(dir, QStringLiteral("cpu"));
  QElapsedTimer clock;
  clock.start();
  while (failed.isEmpty() && ok.isEmpty() && clock.elapsed() < kWaitMs) QTest::qWait(5);
  *loaded = !ok.isEmpty();
  if (!failed.isEmpty()) return failed.at(0).at(1).toString();
  if (*loaded) return QString();
  return std::nullopt;  // neither: a hang
}

template <typename R, typename C, typename V, typename P>
V first_argument(R (C::*)(V, P));
using Messages = decltype(first_argument(&EngineBridge::generate));

// One user message (the element type is an aggregate whose first fields are role and content).
Messages hi() {
  Messages m;
  m.push_back({"user", "hi"});
  return m;
}

}  // namespace

class TestMalformedApp : public QObject {
  Q_OBJECT
 private slots:
  void corpus_data() {
    QTest::addColumn<int>("index");
    const auto cases = malformed_cases();
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (cases[i].chat_fails) QTest::newRow(cases[i].name.c_str()) << static_cast<int>(i);
  }

  void corpus() {
    QFETCH(int, index);
    const auto cases = malformed_cases();
    const MalformedCase& c = cases[static_cast<std::size_t>(index)];
    QTemporaryDir tmp;
    const std::filesystem::path dir = std::filesystem::path(tmp.path().toStdString()) / "model";
    if (c.base.empty()) {
      std::filesystem::create_directories(dir);
    } else {
      copy_model(c.base, dir);
    }
    c.mutate(dir);
    bridge_->unloadModel();
    bool loaded = false;
    const auto message = load(*bridge_, QString::fromStdString((dir / c.open_path).string()), &loaded);
    QVERIFY2(message.has_value(), "the load neither finished nor failed");
    QVERIFY(!bridge_->loading());
    const QString fragment = QString::fromStdString(c.fragment);
    if (c.fails_at_generation) {
      // The folder is well formed; the first reply reports the problem and nothing is streamed.
      QVERIFY2(loaded, qPrintable(*message));
      QSignalSpy finished(bridge_.get(), &EngineBridge::generationFinished);
      QSignalSpy text(bridge_.get(), &EngineBridge::textArrived);
      QVERIFY(bridge_->generate(hi(), GenerationParams{}) != 0);
      QVERIFY(finished.wait(kWaitMs));
      const auto outcome = finished.at(0).at(0).value<GenerationOutcome>();
      QVERIFY(!outcome.ok);
      QVERIFY2(outcome.message.contains(fragment), qPrintable(outcome.message));
      QCOMPARE(outcome.stats.generated_tokens, std::int64_t{0});
      bridge_->unloadModel();
      return;
    }
    QVERIFY2(!loaded, "a malformed model was accepted");
    QVERIFY2(message->contains(fragment), qPrintable(*message));
    QVERIFY(!bridge_->hasModel());
  }

  // After every refusal the same bridge loads the demo model and replies.
  void stillUsable() {
    bool loaded = false;
    const auto message = load(*bridge_, QString::fromStdString(demo_model().string()), &loaded);
    QVERIFY2(message && loaded, message ? qPrintable(*message) : "hang");
    QSignalSpy finished(bridge_.get(), &EngineBridge::generationFinished);
    GenerationParams params;
    params.max_new_tokens = 3;
    QVERIFY(bridge_->generate(hi(), params) != 0);
    QVERIFY(finished.wait(kWaitMs));
    const auto outcome = finished.at(0).at(0).value<GenerationOutcome>();
    QVERIFY2(outcome.ok, qPrintable(outcome.message));
    QVERIFY(outcome.stats.generated_tokens >= 1);
  }

  // Impossible request parameters reach the engine's checks through the bridge too.
  void badParameters() {
    QVERIFY(bridge_->hasModel());
    QSignalSpy finished(bridge_.get(), &EngineBridge::generationFinished);
    GenerationParams params;
    params.temperature = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(bridge_->generate(hi(), params) != 0);
    QVERIFY(finished.wait(kWaitMs));
    const auto outcome = finished.at(0).at(0).value<GenerationOutcome>();
    QVERIFY(!outcome.ok);
    QVERIFY2(outcome.message.contains("temperature"), qPrintable(outcome.message));
  }

  void initTestCase() { bridge_ = std::make_unique<EngineBridge>(2); }
  void cleanupTestCase() { bridge_.reset(); }

 private:
  std::unique_ptr<EngineBridge> bridge_;
};

QTEST_GUILESS_MAIN(TestMalformedApp)
#include "test_malformed_app.moc"
