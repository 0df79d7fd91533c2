// The desktop app starts, renders its window offscreen, and explains itself without a display.
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "app/process_runner.h"

using day0::test::run_program;

namespace {
const QString kDay0 = QStringLiteral(DAY0_BIN_DIR "/day0");
}

class TestGuiSmoke : public QObject {
  Q_OBJECT
 private slots:
  void version() {
    const auto r = run_program(kDay0, {"--version"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY2(r.out.contains(QRegularExpression(R"(^day0 \d+\.\d+\.\d+ \(\w+ build, CUDA (on|off))")),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("cpu: "), qPrintable(r.out));
  }

  void selftestRendersTheWindow() {
    QTemporaryDir tmp;
    const QString png = tmp.filePath("window.png");
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_DATA_HOME", tmp.filePath("data"));
    const auto r = run_program(kDay0, {"--selftest", "--screenshot", png}, env);
    QVERIFY2(!r.crashed && r.exit_code == 0, qPrintable(r.out + r.err));
    QVERIFY2(!r.err.contains("qrc:") && !r.err.contains("ReferenceError") && !r.err.contains("TypeError"),
             qPrintable(r.err));
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1200, 800));
    // The frame is not blank: the toolbar colour and text differ from the background.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
      for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    // The log file went to the XDG data folder.
    QVERIFY(QFile::exists(tmp.filePath("data/day0/logs/day0.log")));
  }

  void withoutDisplayItGivesGuidance() {
    auto env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");
    const auto r = run_program(kDay0, {}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY(!r.crashed);
    QVERIFY2(r.err.contains("no display was found") && r.err.contains("day0-cli"), qPrintable(r.err));
  }

  void badOptions() {
    const auto r = run_program(kDay0, {"--frobnicate"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("unknown option --frobnicate"));
  }
};

QTEST_GUILESS_MAIN(TestGuiSmoke)
#include "test_gui_smoke.moc"
