// Soak: 1000 short generations with the demo model through the engine API the app and the CLI
// use (Engine, sessions opened and dropped, greedy and sampled, prompts that reuse the cache
// and prompts that do not). After a warm-up of 50, resident memory may grow by less than 2% over
// the remaining 950, and the open file descriptors and threads must be exactly as before.
#include <QElapsedTimer>
#include <QtTest>

#include "day0/engine.h"
#include "hardening/malformed_cases.h"
#include "hardening/proc_usage.h"

using namespace day0;

namespace {

constexpr int kGenerations = 1000;
constexpr int kWarmup = 50;

}  // namespace

class TestSoakEngine : public QObject {
  Q_OBJECT
 private slots:
  void soak() {
    QElapsedTimer clock;
    clock.start();
    EngineOptions engine_options;
    engine_options.threads = 2;
    auto engine = Engine::create(engine_options);
    auto model = engine->load_model(test::demo_model());
    QVERIFY2(model, model ? "" : model.status().message().c_str());
    std::shared_ptr<Session> session;
    test::ProcUsage warm;
    std::int64_t tokens = 0;
    for (int i = 0; i < kGenerations; ++i) {
      if (i == kWarmup) warm = test::proc_usage();
      if (i % 25 == 0) session = engine->new_session(*model);  // the old one is dropped
      Request r;
      // Conversations that grow (cache reuse) and restart (no reuse), 3 to 14 tokens.
      for (int t = 0; t < 3 + (i * 7) % 12; ++t) r.context.push_back(static_cast<std::int32_t>(10 + (i / 3 + t) % 300));
      r.sampling.temperature = i % 2 ? 0.8f : 0.0f;
      r.sampling.top_p = 0.9f;
      r.sampling.seed = static_cast<std::uint64_t>(i);
      r.stop.max_new_tokens = 2 + i % 3;
      if (i % 10 == 0) r.stop.stop_strings = {"\n\n"};
      Event last;
      engine
          ->submit(session, std::move(r),
                   [&](const Event& e) {
                     if (e.kind == Event::Kind::token)
                       ++tokens;
                     else
                       last = e;
                   })
          ->wait();
      QVERIFY2(last.kind == Event::Kind::done, last.status.message().c_str());
    }
    const test::ProcUsage end = test::proc_usage();
    const double growth = 100.0 * (static_cast<double>(end.rss_kib) - static_cast<double>(warm.rss_kib)) /
                          static_cast<double>(warm.rss_kib);
    qInfo(
        "soak (engine): %d generations, %lld tokens in %.1f s; RSS %llu KiB after %d, %llu KiB at the end "
        "(%+.2f%%); fds %zu -> %zu; threads %zu -> %zu",
        kGenerations, static_cast<long long>(tokens), clock.elapsed() / 1000.0,
        static_cast<unsigned long long>(warm.rss_kib), kWarmup, static_cast<unsigned long long>(end.rss_kib), growth,
        warm.fds, end.fds, warm.threads, end.threads);
    if (day0::test::kResidentMemoryTracksLeaks) QVERIFY2(growth < 2.0, qPrintable(QString::number(growth)));
    QCOMPARE(end.fds, warm.fds);
    QCOMPARE(end.threads, warm.threads);
  }
};

QTEST_APPLESS_MAIN(TestSoakEngine)
#include "test_soak_engine.moc"
