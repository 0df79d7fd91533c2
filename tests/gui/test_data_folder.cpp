// Changing the data folder in the Settings: what the check says of a folder, the move of the
// history (the database with its attachments, the knowledge index, the backups) at the next
// start, using a history the new folder already holds, and a move that fails (nothing lost,
// the old folder kept).
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/app_controller.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/data_folder.h"

using namespace day0::app;

namespace {

// The app as it starts: the data folder its settings file names.
std::unique_ptr<AppController> startApp(const QString& ini) {
  return std::make_unique<AppController>(AppPaths{AppSettings::storedDataFolder(ini), ini});
}

qint64 addConversation(AppController& app, const std::string& title) {
  day0::storage::NewConversation c;
  c.title = title;
  day0::storage::NewMessage m;
  auto r = app.chat()->store().create_conversation(c).get();
  if (!r.is_ok()) return 0;
  m.conversation_id = r.value().id;
  m.content = "with an attachment";
  m.attachments = {{"text/plain", "notes.txt", "attached bytes"}};
  return app.chat()->store().add_message(m).get().is_ok() ? r.value().id : 0;
}

QStringList titles(AppController& app) {
  QStringList out;
  auto r = app.chat()->store().list_conversations().get();
  if (r.is_ok())
    for (const auto& c : r.value()) out << QString::fromStdString(c.title);
  return out;
}

}  // namespace

class TestDataFolder : public QObject {
  Q_OBJECT
 private slots:
  void checkSaysWhatAFolderIs() {
    QTemporaryDir tmp;
    const QString current = tmp.filePath("current");
    QCOMPARE(checkDataFolder("relative/path", current).state, QString("invalid"));
    QFile file(tmp.filePath("a-file"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    const auto isFile = checkDataFolder(tmp.filePath("a-file"), current);
    QCOMPARE(isFile.state, QString("invalid"));
    QVERIFY(isFile.message.contains("is a file"));
    QCOMPARE(checkDataFolder(current + "/", current).state, QString("same"));
    QCOMPARE(checkDataFolder(current + "/inside", current).state, QString("invalid"));
    QCOMPARE(checkDataFolder(tmp.filePath("new/deeper"), current).state, QString("empty"));
    QVERIFY(QDir().mkpath(tmp.filePath("other")));
    QFile db(tmp.filePath("other/history.db"));
    QVERIFY(db.open(QIODevice::WriteOnly));
    db.close();
    QCOMPARE(checkDataFolder(tmp.filePath("other"), current).state, QString("history"));
  }

  void historyMovesAtTheNextStart() {
    QTemporaryDir tmp;
    const QString ini = tmp.filePath("config/day0.ini");
    const QString oldFolder = tmp.filePath("old");
    const QString newFolder = tmp.filePath("new place");
    {
      QSettings s(ini, QSettings::IniFormat);
      s.setValue("data/folder", oldFolder);
    }
    {
      auto app = startApp(ini);
      QCOMPARE(app->settings()->activeDataFolder(), oldFolder);
      QVERIFY(addConversation(*app, "Kept") > 0);
      QVERIFY(QDir().mkpath(oldFolder + "/backups"));
      QFile backup(oldFolder + "/backups/history-daily.db");
      QVERIFY(backup.open(QIODevice::WriteOnly));
      backup.close();
      QCOMPARE(app->checkDataFolder(newFolder).value("state").toString(), QString("empty"));
      QVERIFY(app->changeDataFolder(newFolder, true));
      QCOMPARE(app->settings()->dataFolder(), newFolder);
      QVERIFY(app->noticeMessage().contains("when it starts next"));
      // Until the restart this run keeps its folder.
      QCOMPARE(app->settings()->activeDataFolder(), oldFolder);
    }
    auto app = startApp(ini);
    QCOMPARE(app->settings()->activeDataFolder(), newFolder);
    QVERIFY2(app->noticeMessage().contains("Moved the history"), qPrintable(app->noticeMessage()));
    QCOMPARE(titles(*app), QStringList{"Kept"});
    const auto messages = app->chat()->store().messages(app->chat()->store().list_conversations().get().value()[0].id).get();
    QVERIFY(messages.is_ok());
    QCOMPARE(app->chat()->store().attachment_data(messages.value()[0].attachments[0].sha256).get().value(),
             std::string("attached bytes"));
    QVERIFY(QFile::exists(newFolder + "/backups/history-daily.db"));
    QVERIFY(!QFile::exists(oldFolder + "/knowledge.db"));
    QVERIFY(!QFile::exists(oldFolder + "/history.db"));
    QVERIFY(app->settings()->pendingMove().isEmpty());
  }

  void aFolderWithAHistoryIsUsed() {
    QTemporaryDir tmp;
    const QString ini = tmp.filePath("day0.ini");
    const QString a = tmp.filePath("a"), b = tmp.filePath("b");
    {
      QSettings s(ini, QSettings::IniFormat);
      s.setValue("data/folder", b);
    }
    { QVERIFY(addConversation(*startApp(ini), "In B") > 0); }
    {
      QSettings s(ini, QSettings::IniFormat);
      s.setValue("data/folder", a);
    }
    {
      auto app = startApp(ini);
      QVERIFY(addConversation(*app, "In A") > 0);
      QCOMPARE(app->checkDataFolder(b).value("state").toString(), QString("history"));
      QVERIFY(app->changeDataFolder(b, false));
    }
    {
      auto app = startApp(ini);
      QCOMPARE(titles(*app), QStringList{"In B"});
    }
    QVERIFY(QFile::exists(a + "/history.db"));  // left where it was

    // Asked to move into a folder that meanwhile got a history: that one is used, nothing is
    // overwritten, and the banner says so.
    {
      QSettings s(ini, QSettings::IniFormat);
      s.setValue("data/folder", b);
      s.setValue("data/moveFrom", a);
    }
    auto app = startApp(ini);
    QCOMPARE(titles(*app), QStringList{"In B"});
    QVERIFY(app->noticeMessage().contains("already holds a history"));
    QVERIFY(QFile::exists(a + "/history.db"));
  }

  void aFailedMoveLosesNothing() {
    QTemporaryDir tmp;
    const QString ini = tmp.filePath("day0.ini");
    const QString oldFolder = tmp.filePath("old"), newFolder = tmp.filePath("new");
    {
      QSettings s(ini, QSettings::IniFormat);
      s.setValue("data/folder", oldFolder);
    }
    {
      auto app = startApp(ini);
      QVERIFY(addConversation(*app, "Precious") > 0);
      QVERIFY(QDir().mkpath(oldFolder + "/backups"));
      QVERIFY(app->changeDataFolder(newFolder, true));
      QVERIFY(!app->changeDataFolder("not/absolute", true));
      QVERIFY(!app->errorMessage().isEmpty());
      QCOMPARE(app->settings()->dataFolder(), newFolder);
    }
    // The target has a file where the backups folder must go: the move cannot finish.
    QVERIFY(QDir().mkpath(newFolder));
    QFile blocker(newFolder + "/backups");
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    auto app = startApp(ini);
    QVERIFY2(app->errorMessage().contains("could not be moved"), qPrintable(app->errorMessage()));
    QCOMPARE(app->settings()->activeDataFolder(), oldFolder);
    QCOMPARE(app->settings()->dataFolder(), oldFolder);
    QCOMPARE(titles(*app), QStringList{"Precious"});
    QVERIFY(!QFile::exists(newFolder + "/history.db"));
  }
};

QTEST_MAIN(TestDataFolder)
#include "test_data_folder.moc"
