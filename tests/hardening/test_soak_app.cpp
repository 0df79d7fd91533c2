// Soak through the app's bridge: 1000 short replies with the demo model via EngineBridge (chat
// template, pool thread, engine thread, queued signals on a Qt event loop), starting a new
// conversation every 20 replies. After a warm-up of 50, resident memory may grow by less than 2%,
// and file descriptors and threads must be as before, both counted with the Qt thread pool's
// threads ended (they come and go with its expiry timeout, each with an event descriptor).
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QThreadPool>
#include <QtTest>

#include "bridge/engine_bridge.h"
#include "hardening/malformed_cases.h"
#include "hardening/proc_usage.h"

using namespace day0::app;

namespace {

constexpr int kGenerations = 1000;
constexpr int kWarmup = 50;

// The message list EngineBridge::generate takes (its element type is an aggregate whose first
// fields are role, content and reasoning).
template <typename R, typename C, typename V, typename P>
V first_argument(R (C::*)(V, P));
using Messages = decltype(first_argument(&EngineBridge::generate));

}  // namespace

class TestSoakApp : public QObject {
  Q_OBJECT
 private slots:
  void soak() {
    QElapsedTimer clock;
    clock.start();
    EngineBridge bridge(2);
    QSignalSpy loaded(&bridge, &EngineBridge::modelLoaded);
    bridge.loadModel(QString::fromStdString(day0::test::demo_model().string()), "cpu");
    QVERIFY(loaded.wait(30000));
    Messages conversation;
    day0::test::ProcUsage warm;
    std::string warm_descriptors;
    std::int64_t tokens = 0;
    for (int i = 0; i < kGenerations; ++i) {
      if (i == kWarmup) {
        // Counted without the Qt pool's threads (and the event descriptors they hold), which come
        // and go with its expiry timeout: waitForDone() also ends them.
        QThreadPool::globalInstance()->waitForDone();
        warm = day0::test::settled_proc_usage();
        warm_descriptors = day0::test::open_descriptors();
      }
      if (i % 20 == 0) conversation.clear();
      conversation.push_back({"user", "message " + std::to_string(i), ""});
      GenerationParams params;
      params.max_new_tokens = 2;
      params.temperature = i % 2 ? 0.7f : 0.0f;
      params.seed = static_cast<std::uint64_t>(i);
      QString reply;
      const auto text = connect(&bridge, &EngineBridge::textArrived, this,
                                [&](quint64, const QString& content, const QString&) { reply += content; });
      QSignalSpy finished(&bridge, &EngineBridge::generationFinished);
      QVERIFY(bridge.generate(conversation, params) != 0);
      QVERIFY(finished.wait(10000));
      disconnect(text);
      const auto outcome = finished.at(0).at(0).value<GenerationOutcome>();
      QVERIFY2(outcome.ok, qPrintable(outcome.message));
      tokens += outcome.stats.generated_tokens;
      conversation.push_back({"assistant", reply.toStdString(), ""});
    }
    // As after the warm-up: without the pool's threads. A leak holds on; a descriptor that a
    // thread on its way out still holds for a moment does not, so give them a second.
    QThreadPool::globalInstance()->waitForDone();
    day0::test::ProcUsage end = day0::test::settled_proc_usage();
    for (int i = 0; i < 20 && (end.fds != warm.fds || end.threads != warm.threads); ++i) {
      QTest::qWait(50);
      end = day0::test::proc_usage();
    }
    const double growth = 100.0 * (static_cast<double>(end.rss_kib) - static_cast<double>(warm.rss_kib)) /
                          static_cast<double>(warm.rss_kib);
    qInfo(
        "soak (app bridge): %d replies, %lld tokens in %.1f s; RSS %llu KiB after %d, %llu KiB at the end "
        "(%+.2f%%); fds %zu -> %zu; threads %zu -> %zu",
        kGenerations, static_cast<long long>(tokens), clock.elapsed() / 1000.0,
        static_cast<unsigned long long>(warm.rss_kib), kWarmup, static_cast<unsigned long long>(end.rss_kib), growth,
        warm.fds, end.fds, warm.threads, end.threads);
    if (day0::test::kResidentMemoryTracksLeaks) QVERIFY2(growth < 2.0, qPrintable(QString::number(growth)));
    QVERIFY2(end.fds == warm.fds, qPrintable(QString("fds %1 after the warm-up, %2 at the end:\n%3\nafter the warm-up:\n%4")
                                                 .arg(warm.fds)
                                                 .arg(end.fds)
                                                 .arg(QString::fromStdString(day0::test::open_descriptors()))
                                                 .arg(QString::fromStdString(warm_descriptors))));
    QCOMPARE(end.threads, warm.threads);
  }
};

QTEST_GUILESS_MAIN(TestSoakApp)
#include "test_soak_app.moc"
