// The file and folder pickers of the real window (Main.qml), offscreen, where Qt has no native
// dialog and falls back to its own QML ones, as on most Debian desktops: the model folder, the
// knowledge folder, the data folder, the composer's attachments and the file an export writes
// (the conversation menu's Export as JSON…). The QML engine sees only
// the QML modules of the Debian packages the .deb depends on: an import folder is built here
// from those packages' files (dpkg-query -L), and the engine looks nowhere else. So a module
// that Qt's dialogs need and Depends lacks makes this test fail.
//
// Each picker's dialog must open with its contents (its title bar and its file list) and no
// "Failed to load" warning; a path typed into its field must do what the dialog would.
//
// With DAY0_TEST_HIDE_PACKAGE set (ctest runs it with qml6-module-qt-labs-folderlistmodel),
// that package's files are left out: Browse must then say what is missing under the field,
// never open the dialog (Qt 6.4 crashes opening a file dialog whose QML cannot load), and the
// composer's draft stays as it was.
#include <QtQml/qqmlextensionplugin.h>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLibraryInfo>
#include <QProcess>
#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>

#include "gui/app_controller.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/image_attachments.h"
#include "gui/knowledge_controller.h"
#include "gui/model_manager.h"
#include "gui/user_path.h"
#include "storage/history_store.h"

Q_IMPORT_QML_PLUGIN(Day0_UiPlugin)

using namespace day0::app;

namespace {
const QString kDemo = QStringLiteral(DAY0_SOURCE_DIR "/tests/data/models/demo-random");
constexpr int kWaitMs = 30000;
QStringList g_warnings;
void collect(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type != QtDebugMsg && type != QtInfoMsg) g_warnings << message;
}

QQuickItem* findItem(QQuickItem* root, const std::function<bool(QQuickItem*)>& match) {
  if (root == nullptr) return nullptr;
  if (match(root)) return root;
  for (QQuickItem* child : root->childItems())
    if (QQuickItem* found = findItem(child, match)) return found;
  return nullptr;
}
}  // namespace

class TestGuiDialogs : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString hidden_;  // a package whose files the engine does not see
  std::unique_ptr<AppController> app_;
  std::unique_ptr<QQmlApplicationEngine> engine_;
  QQuickWindow* window_ = nullptr;

  QObject* picker(const char* name) const {
    QObject* found = window_->findChild<QObject*>(name);
    if (found == nullptr) qWarning("no picker named %s", name);
    return found;
  }
  void openPage(const char* page) { QMetaObject::invokeMethod(window_, "openPage", Q_ARG(QVariant, QString(page))); }
  bool browse(QObject* field) {
    QVariant opened;
    QMetaObject::invokeMethod(field, "browse", Q_RETURN_ARG(QVariant, opened));
    return opened.toBool();
  }
  void submit(QObject* field, const QString& text) {
    field->setProperty("text", text);
    QMetaObject::invokeMethod(field, "submit");
  }
  // The title label of the open dialog, inside Qt's dialog QML (whichever style variant).
  QQuickItem* dialogTitle(const QString& title) const {
    return findItem(window_->contentItem(), [&](QQuickItem* i) {
      return i->objectName() == QLatin1String("dialogTitleBarLabel") && i->isVisible() &&
             i->property("text").toString() == title;
    });
  }
  QQuickItem* dialogList() const {
    return findItem(window_->contentItem(), [](QQuickItem* i) {
      return (i->objectName() == QLatin1String("fileDialogListView") ||
              i->objectName() == QLatin1String("folderDialogListView")) &&
             i->isVisible();
    });
  }
  void openConversationWithAMessage() {
    auto& store = app_->chat()->store();
    day0::storage::NewConversation c;
    c.title = "To export";
    auto conversation = store.create_conversation(c).get();
    QVERIFY(conversation.is_ok());
    day0::storage::NewMessage m;
    m.conversation_id = conversation->id;
    m.content = "Export me";
    QVERIFY(store.add_message(m).get().is_ok());
    app_->chat()->openConversation(conversation->id);
    QTRY_COMPARE(app_->chat()->currentConversationId(), conversation->id);
  }
  QStringList dialogWarnings() const {
    QStringList found;
    for (const QString& w : g_warnings)
      if (w.contains("Failed to load") || w.contains("is not installed") || w.contains("Dialog")) found << w;
    return found;
  }

  // Opens `field`'s dialog and checks that Qt's QML implementation is up, then closes it.
  void checkDialogOpens(QObject* field) {
    QVERIFY(field);
    g_warnings.clear();
    QVERIFY2(browse(field), qPrintable(field->property("problem").toString() + '\n' + g_warnings.join('\n')));
    auto* dialog = field->property("dialog").value<QObject*>();
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->property("visible").toBool());
    const QString title = field->property("title").toString();
    QVERIFY(!title.isEmpty());
    QTRY_VERIFY2(dialogTitle(title) != nullptr, qPrintable("no dialog titled " + title));
    QTRY_VERIFY(dialogList() != nullptr);
    QVERIFY2(dialogWarnings().isEmpty(), qPrintable(dialogWarnings().join('\n')));
    QVERIFY(field->property("problem").toString().isEmpty());
    QMetaObject::invokeMethod(dialog, "reject");
    QTRY_VERIFY(!dialog->property("visible").toBool());
    QTRY_VERIFY(dialogTitle(title) == nullptr);
  }

  // Browse with the package hidden: a message naming the module and the package, no dialog.
  void checkDialogRefused(QObject* field) {
    QVERIFY(field);
    g_warnings.clear();
    QVERIFY(!browse(field));
    const QString problem = field->property("problem").toString();
    QVERIFY2(problem.contains("Qt.labs.folderlistmodel") && problem.contains(hidden_),
             qPrintable(problem + '\n' + g_warnings.join('\n')));
    auto* dialog = field->property("dialog").value<QObject*>();
    QVERIFY(dialog);
    QTest::qWait(50);
    QVERIFY(!dialog->property("visible").toBool());
    // The message is on screen, under the field.
    auto* label = field->findChild<QQuickItem*>("pathProblem");
    QVERIFY(label);
    QVERIFY(label->isVisible());
    for (const QString& w : g_warnings) QVERIFY2(!w.contains("Failed to load non-native"), qPrintable(w));
  }

 private slots:
  void initTestCase() {
    qInstallMessageHandler(collect);
    hidden_ = qEnvironmentVariable("DAY0_TEST_HIDE_PACKAGE");
    if (QStandardPaths::findExecutable("dpkg-query").isEmpty()) QSKIP("not a Debian system: no dpkg-query");

    // The import folder: the files of the run-time packages under Qt's QML folder, linked.
    const QString qmlRoot = QDir(QLibraryInfo::path(QLibraryInfo::QmlImportsPath)).canonicalPath();
    const QString imports = tmp_.filePath("qml");
    int linked = 0;
    for (const QString& package : QString(DAY0_QT_RUNTIME_PACKAGES).split(' ', Qt::SkipEmptyParts)) {
      if (package == hidden_) continue;
      QProcess dpkg;
      dpkg.start("dpkg-query", {"-L", package});
      QVERIFY(dpkg.waitForFinished(30000));
      QVERIFY2(dpkg.exitCode() == 0, qPrintable(package + " is not installed (tools/install-deps.sh installs it): " +
                                                QString::fromLocal8Bit(dpkg.readAllStandardError())));
      for (const QString& file : QString::fromLocal8Bit(dpkg.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts)) {
        const QFileInfo info(file);
        if (!info.isFile()) continue;
        const QString canonical = info.canonicalFilePath();
        if (!canonical.startsWith(qmlRoot + '/')) continue;
        const QString target = imports + canonical.mid(qmlRoot.size());
        QVERIFY(QDir().mkpath(QFileInfo(target).path()));
        QVERIFY2(QFile::link(canonical, target), qPrintable(target));
        ++linked;
      }
    }
    QVERIFY2(linked > 20, qPrintable(QString::number(linked)));

    QQuickStyle::setStyle("Fusion");
    app_ = std::make_unique<AppController>(AppPaths{tmp_.filePath("data"), tmp_.filePath("day0.ini")});
    engine_ = std::make_unique<QQmlApplicationEngine>();
    engine_->setImportPathList({imports, "qrc:/qt/qml", "qrc:/qt-project.org/imports"});

    // The engine is really confined: QtTest is installed here (install-deps.sh) but no
    // dependency of the package.
    {
      QQmlComponent probe(engine_.get());
      probe.setData("import QtTest\nimport QtQml\nQtObject {}", QUrl("qrc:/probe.qml"));
      QVERIFY2(probe.isError(), "the engine finds QML modules outside the package's dependencies");
    }

    engine_->addImageProvider("day0", new AttachmentImageProvider(app_->attachmentSource()));
    engine_->setInitialProperties({{"controller", QVariant::fromValue(app_.get())}});
    engine_->load(QUrl("qrc:/qt/qml/Day0/Ui/Main.qml"));
    QVERIFY2(!engine_->rootObjects().isEmpty(), qPrintable(g_warnings.join('\n')));
    window_ = qobject_cast<QQuickWindow*>(engine_->rootObjects().constFirst());
    QVERIFY(window_);
    QVERIFY(QTest::qWaitForWindowExposed(window_));
  }

  void modelFolder() {
    if (!hidden_.isEmpty()) QSKIP("the package is hidden: see withoutThePackage");
    openPage("models");
    QObject* field = picker("modelFolderPath");
    checkDialogOpens(field);
    // A typed path does what the dialog would.
    submit(field, kDemo);
    QTRY_COMPARE_WITH_TIMEOUT(app_->models()->info().value("dir").toString(), QDir(kDemo).canonicalPath(), kWaitMs);
  }

  void knowledgeFolder() {
    if (!hidden_.isEmpty()) QSKIP("the package is hidden: see withoutThePackage");
    openPage("knowledge-panel");
    QObject* field = picker("knowledgeFolderPath");
    checkDialogOpens(field);
    QVERIFY(QDir().mkpath(tmp_.filePath("notes")));
    QFile note(tmp_.filePath("notes/a.md"));
    QVERIFY(note.open(QIODevice::WriteOnly));
    note.write("# Notes\nSome text.\n");
    note.close();
    submit(field, "  '" + tmp_.filePath("notes") + "'  ");  // quoted, as pasted from a shell
    QTRY_COMPARE_WITH_TIMEOUT(app_->knowledge()->folders().size(), qsizetype(1), kWaitMs);
    QCOMPARE(field->property("text").toString(), QString());
  }

  void dataFolder() {
    if (!hidden_.isEmpty()) QSKIP("the package is hidden: see withoutThePackage");
    openPage("settings");
    QObject* field = picker("dataFolderPath");
    checkDialogOpens(field);
    const QString active = app_->settings()->activeDataFolder();
    submit(field, tmp_.filePath("elsewhere"));
    // Nothing changes before the move is confirmed.
    QObject* confirm = window_->findChild<QObject*>("dataFolderConfirm");
    QVERIFY(confirm);
    QTRY_VERIFY_WITH_TIMEOUT(confirm->property("opened").toBool(), kWaitMs);
    QCOMPARE(app_->settings()->dataFolder(), active);
    QMetaObject::invokeMethod(confirm, "accept");
    QTRY_COMPARE_WITH_TIMEOUT(app_->settings()->dataFolder(), tmp_.filePath("elsewhere"), kWaitMs);
    QCOMPARE(app_->settings()->pendingMove(), active);
  }

  void attachFile() {
    if (!hidden_.isEmpty()) QSKIP("the package is hidden: see withoutThePackage");
    QObject* field = picker("attachPath");
    checkDialogOpens(field);
    QImage image(8, 8, QImage::Format_RGB32);
    image.fill(Qt::red);
    QVERIFY(image.save(tmp_.filePath("red.png")));
    submit(field, tmp_.filePath("red.png"));
    QTRY_COMPARE(app_->chat()->pendingAttachments().size(), qsizetype(1));
    // A path that names nothing keeps the text for a correction, and the banner says why.
    submit(field, tmp_.filePath("missing.png"));
    QTRY_VERIFY(app_->errorMessage().contains("missing.png"));
    QCOMPARE(field->property("text").toString(), tmp_.filePath("missing.png"));
    QCOMPARE(app_->chat()->pendingAttachments().size(), qsizetype(1));
  }

  void exportFile() {
    if (!hidden_.isEmpty()) QSKIP("the package is hidden: see withoutThePackage");
    openConversationWithAMessage();
    openPage("export");
    QObject* field = picker("exportPath");
    QVERIFY(field->property("text").toString().endsWith(".json"));  // a suggested file
    checkDialogOpens(field);
    QSignalSpy exported(app_->chat(), &ChatController::exported);
    submit(field, tmp_.filePath("chat.json"));
    QVERIFY(exported.wait(kWaitMs));
    QFile file(tmp_.filePath("chat.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("Export me"));
  }

  void withoutThePackage() {
    if (hidden_.isEmpty()) QSKIP("run with DAY0_TEST_HIDE_PACKAGE (ctest: test_gui_dialogs_missing_module)");
    // A draft in the composer, then the paperclip.
    auto* input = window_->findChild<QQuickItem*>("composerInput");
    QVERIFY(input);
    input->setProperty("text", QString("A draft that must survive"));
    auto* attachButton = window_->findChild<QQuickItem*>("attachButton");
    QVERIFY(attachButton);
    QMetaObject::invokeMethod(attachButton, "clicked");
    auto* popup = window_->findChild<QObject*>("attachPopup");
    QVERIFY(popup);
    QTRY_VERIFY(popup->property("opened").toBool());
    checkDialogRefused(picker("attachPath"));
    QCOMPARE(input->property("text").toString(), QString("A draft that must survive"));

    openPage("models");
    checkDialogRefused(picker("modelFolderPath"));
    openPage("knowledge-panel");
    checkDialogRefused(picker("knowledgeFolderPath"));
    openPage("settings");
    checkDialogRefused(picker("dataFolderPath"));
    openConversationWithAMessage();
    openPage("export");
    checkDialogRefused(picker("exportPath"));

    // Typing the path still works.
    QObject* field = picker("modelFolderPath");
    submit(field, kDemo);
    QTRY_COMPARE_WITH_TIMEOUT(app_->models()->info().value("dir").toString(), QDir(kDemo).canonicalPath(), kWaitMs);
    QCOMPARE(input->property("text").toString(), QString("A draft that must survive"));
  }

  void pathsAsTyped() {
    QCOMPARE(localPathFromUser(QString("  ~/notes ")), QDir::homePath() + "/notes");
    QCOMPARE(localPathFromUser(QString("~")), QDir::homePath());
    QCOMPARE(localPathFromUser(QString("'/tmp/a b'")), QString("/tmp/a b"));
    QCOMPARE(localPathFromUser(QString("\"/tmp/x\"")), QString("/tmp/x"));
    QCOMPARE(localPathFromUser(QString("file:///tmp/a%20b")), QString("/tmp/a b"));
    QCOMPARE(localPathFromUser(QUrl::fromLocalFile("/tmp/c d")), QString("/tmp/c d"));
    QCOMPARE(localPathFromUser(QString("relative/x")), QString("relative/x"));
    QCOMPARE(localPathFromUser(QString("   ")), QString());
    QCOMPARE(localPathFromUser(QString("~user")), QString("~user"));
  }

  void cleanupTestCase() {
    engine_.reset();
    app_.reset();
  }
};

QTEST_MAIN(TestGuiDialogs)
#include "test_gui_dialogs.moc"
