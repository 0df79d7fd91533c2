// The command that opens a cited source: the editor named by the desktop's default for the
// file type, with the line in that editor's own syntax; PDF viewers with the page; anything
// else the default handler with the file URL (browsers get #page=N).
#include <QtTest>

#include "gui/source_opener.h"

using namespace day0::app;

class TestSourceOpener : public QObject {
  Q_OBJECT
 private slots:
  void editorsTakeTheLine_data() {
    QTest::addColumn<QString>("desktopId");
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("arguments");
    const QString f = QStringLiteral("/home/me/src/a b.cpp");
    QTest::newRow("vscode") << "code.desktop"
                            << "code" << QStringList{"--goto", f + ":42"};
    QTest::newRow("vscode-url-handler-id") << "visual-studio-code.desktop"
                                           << "code" << QStringList{"--goto", f + ":42"};
    QTest::newRow("codium") << "codium.desktop"
                            << "codium" << QStringList{"--goto", f + ":42"};
    QTest::newRow("gedit") << "org.gnome.gedit.desktop"
                           << "gedit" << QStringList{"+42", f};
    QTest::newRow("kate") << "org.kde.kate.desktop"
                          << "kate" << QStringList{"--line", "42", f};
    QTest::newRow("kwrite") << "org.kde.kwrite.desktop"
                            << "kwrite" << QStringList{"--line", "42", f};
    QTest::newRow("gvim") << "gvim.desktop"
                          << "gvim" << QStringList{"+42", f};
    QTest::newRow("emacs") << "emacs.desktop"
                           << "emacs" << QStringList{"+42", f};
    QTest::newRow("geany") << "geany.desktop"
                           << "geany" << QStringList{"--line=42", f};
    QTest::newRow("sublime") << "sublime_text.desktop"
                             << "subl" << QStringList{f + ":42"};
    QTest::newRow("no .desktop suffix") << "kate"
                                        << "kate" << QStringList{"--line", "42", f};
    QTest::newRow("whitespace from xdg-mime") << "  gedit.desktop\n"
                                              << "gedit" << QStringList{"+42", f};
  }
  void editorsTakeTheLine() {
    QFETCH(QString, desktopId);
    QFETCH(QString, program);
    QFETCH(QStringList, arguments);
    const OpenPlan plan = plan_open(desktopId, QStringLiteral("/home/me/src/a b.cpp"), 42, 0);
    QCOMPARE(plan.program, program);
    QCOMPARE(plan.arguments, arguments);
    QCOMPARE(plan.url, QUrl::fromLocalFile(QStringLiteral("/home/me/src/a b.cpp")));
  }

  void othersGetTheDefaultHandler() {
    for (const QString& id :
         {QString(), QStringLiteral("libreoffice-writer.desktop"), QStringLiteral("org.gnome.TextEditor.desktop"),
          QStringLiteral("code.desktop.evil"), QStringLiteral("../../bin/sh")}) {
      const OpenPlan plan = plan_open(id, QStringLiteral("/tmp/x.txt"), 7, 0);
      QVERIFY2(plan.program.isEmpty(), qPrintable(id));
      QCOMPARE(plan.url, QUrl::fromLocalFile(QStringLiteral("/tmp/x.txt")));
    }
    // Without a line, even a known editor is left to the default handler.
    QVERIFY(plan_open(QStringLiteral("code.desktop"), QStringLiteral("/tmp/x.txt"), 0, 0).program.isEmpty());
  }

  void pdfViewersTakeThePage() {
    const QString f = QStringLiteral("/docs/report.pdf");
    OpenPlan plan = plan_open(QStringLiteral("org.gnome.Evince.desktop"), f, 1, 3);
    QCOMPARE(plan.program, QStringLiteral("evince"));
    QCOMPARE(plan.arguments, (QStringList{"-p", "3", f}));
    plan = plan_open(QStringLiteral("okularApplication_pdf.desktop"), f, 1, 12);
    QCOMPARE(plan.program, QStringLiteral("okular"));
    QCOMPARE(plan.arguments, (QStringList{"-p", "12", f}));
    plan = plan_open(QStringLiteral("firefox-esr.desktop"), f, 1, 5);
    QVERIFY(plan.program.isEmpty());
    QCOMPARE(plan.url.toString(), QStringLiteral("file:///docs/report.pdf#page=5"));
    // A viewer that is not known to read a page: the file, without a fragment it may not understand.
    plan = plan_open(QStringLiteral("xreader.desktop"), f, 1, 5);
    QVERIFY(plan.program.isEmpty());
    QCOMPARE(plan.url.toString(), QStringLiteral("file:///docs/report.pdf"));
  }

  void missingFilesAreNotOpened() { QVERIFY(!open_source(QStringLiteral("/nonexistent/day0/file.cpp"), 3, 0)); }
};

QTEST_GUILESS_MAIN(TestSourceOpener)
#include "test_source_opener.moc"
