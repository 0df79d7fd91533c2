// The app with a model larger than the memory it may use (DAY0_MEMORY_LIMIT_BYTES just below
// what the whole model needs): the bridge loads it with its experts streamed from disk, says so
// when it is loaded, replies, and reports after each reply how many of its experts were already
// in memory and how fast the rest came from disk.
#include <QSignalSpy>
#include <QtTest>

#include "bridge/engine_bridge.h"
#include "day0/engine.h"

using namespace day0;
using namespace day0::app;

namespace {

const QString kModel = QStringLiteral(DAY0_TEST_DATA_DIR "/models/demo-random");

}  // namespace

class TestGuiStreaming : public QObject {
  Q_OBJECT
 private slots:
  void streamedModelSaysSo() {
    // What the whole model needs at 4096 positions, from the engine's own plan.
    std::uint64_t whole = 0;
    {
      auto engine = Engine::create({.threads = 1});
      auto model = engine->load_model(kModel.toStdString(), {.max_context = 4096});
      QVERIFY2(model, model.status().message().c_str());
      QVERIFY(!describe(**model).experts.streamed);
      whole = describe(**model).planned_bytes;
    }
    qputenv("DAY0_MEMORY_LIMIT_BYTES", QByteArray::number(static_cast<qulonglong>(whole - 1)));
    EngineBridge bridge(2);
    QSignalSpy loaded(&bridge, &EngineBridge::modelLoaded);
    QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
    bridge.loadModel(kModel, "cpu", 4096);
    QVERIFY(loaded.wait(30000));
    QVERIFY(failed.isEmpty());
    const QString notice = loaded.at(0).at(2).toString();
    QVERIFY2(notice.contains("read from disk as tokens need them"), qPrintable(notice));
    QVERIFY(bridge.expertText().isEmpty());  // nothing read yet

    std::vector<ContextMessage> conversation;
    conversation.push_back({"user", "Hello there", ""});
    GenerationParams params;
    params.max_new_tokens = 8;
    QSignalSpy finished(&bridge, &EngineBridge::generationFinished);
    QVERIFY(bridge.generate(conversation, params) != 0);
    QVERIFY(finished.wait(30000));
    const auto outcome = finished.at(0).at(0).value<GenerationOutcome>();
    QVERIFY2(outcome.ok, qPrintable(outcome.message));
    const QString text = bridge.expertText();
    QVERIFY2(QRegularExpression(R"(^experts \d+% in memory, \d+\.\d\d GB/s from disk$)").match(text).hasMatch(),
             qPrintable(text));

    bridge.unloadModel();
    QVERIFY(bridge.expertText().isEmpty());
    qunsetenv("DAY0_MEMORY_LIMIT_BYTES");
  }
};

QTEST_GUILESS_MAIN(TestGuiStreaming)
#include "test_gui_streaming.moc"
