// The sanitizer setup catches Day0's bugs and excuses only Qt's: sanitizer_probe does what the
// suppression files name (Qt's leaked textures, Qt's invisible thread hand-offs), with and
// without them, and then adds a leak and a race of its own, which must still be reported.
// Built only in sanitizer builds (tests/sanitizers.cmake); the checks follow the build's
// sanitizer (DAY0_TEST_SANITIZER: address or thread).
#include <QProcessEnvironment>
#include <QtTest>

#include "app/process_runner.h"

using day0::test::run_program;

namespace {

const QString kProbe = QStringLiteral(DAY0_SANITIZER_PROBE);
const QString kSupp = QStringLiteral(DAY0_SOURCE_DIR "/tools/sanitizers/");
const bool kAddress = QLatin1String(DAY0_TEST_SANITIZER) == QLatin1String("address");

// The test's own environment (the sanitizer options tests/sanitizers.cmake gives it), with one
// variable replaced.
QProcessEnvironment env_with(const QString& name, const QString& value) {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  env.insert(name, value);
  return env;
}

QProcessEnvironment lsan(bool with_suppressions) {
  return env_with("LSAN_OPTIONS", with_suppressions ? "suppressions=" + kSupp + "lsan.supp:print_suppressions=0"
                                                    : QStringLiteral("print_suppressions=0"));
}

QProcessEnvironment tsan(bool with_suppressions) {
  QString options = "halt_on_error=1:history_size=7:ignore_noninstrumented_modules=1:print_suppressions=0";
  if (with_suppressions) options += ":suppressions=" + kSupp + "tsan-qt.supp";
  return env_with("TSAN_OPTIONS", options);
}

}  // namespace

class TestSanitizerSetup : public QObject {
  Q_OBJECT
 private slots:
  void qtTexturesLeakAndAreExcused() {
    if (!kAddress) QSKIP("an AddressSanitizer build checks leaks");
    const auto bare = run_program(kProbe, {"render"}, lsan(false));
    // Without the suppression the probe is reported: the entry is needed, and it is Qt's texture.
    QVERIFY2(bare.exit_code != 0 && bare.err.contains("LeakSanitizer") && bare.err.contains("QSGTexture"),
             qPrintable(QString::number(bare.exit_code)));
    const auto excused = run_program(kProbe, {"render"}, lsan(true));
    QVERIFY2(excused.exit_code == 0 && !excused.err.contains("LeakSanitizer"), qPrintable(excused.err.left(4000)));
  }

  void day0LeaksThroughQtObjectsAreReported() {
    if (!kAddress) QSKIP("an AddressSanitizer build checks leaks");
    const auto r = run_program(kProbe, {"render-and-leak"}, lsan(true));
    QVERIFY(r.exit_code != 0);
    QVERIFY(r.err.contains("ERROR: LeakSanitizer"));
    // The report names the leak made by the probe, and Qt's textures stay excused.
    QVERIFY(r.err.contains("leak_on_purpose"));
    QVERIFY(!r.err.contains("QSGTexture::QSGTexture"));
  }

  void qtHandOffsAreExcused() {
    if (kAddress) QSKIP("a ThreadSanitizer build checks races");
    const auto bare = run_program(kProbe, {"handoff"}, tsan(false));
    QVERIFY2(bare.exit_code != 0 && bare.err.contains("ThreadSanitizer: data race"),
             qPrintable(QString::number(bare.exit_code)));
    const auto excused = run_program(kProbe, {"handoff"}, tsan(true));
    QVERIFY2(excused.exit_code == 0 && !excused.err.contains("ThreadSanitizer"), qPrintable(excused.err.left(4000)));
    QVERIFY(excused.out.contains("handoff: 300 rounds"));
  }

  void day0RacesBehindQtHandOffsAreReported() {
    if (kAddress) QSKIP("a ThreadSanitizer build checks races");
    const auto r = run_program(kProbe, {"handoff-race"}, tsan(true));
    QVERIFY(r.exit_code != 0);
    QVERIFY(r.err.contains("ThreadSanitizer: data race"));
    QVERIFY2(r.err.contains("sanitizer_probe.cpp"), qPrintable(r.err.left(4000)));
  }
};

QTEST_GUILESS_MAIN(TestSanitizerSetup)
#include "test_sanitizer_setup.moc"
