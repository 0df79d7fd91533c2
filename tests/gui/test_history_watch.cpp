// Conversations another program writes into the history (day0-cli, an import) appear in the
// running app's list, and the open conversation stays open.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/app_controller.h"
#include "gui/chat_controller.h"
#include "gui/conversation_list_model.h"
#include "storage/history_store.h"

using namespace day0::app;

namespace {

bool listHas(ConversationListModel* list, const QString& title) {
  for (int r = 0; r < list->rowCount(); ++r)
    if (list->data(list->index(r), ConversationListModel::TitleRole).toString() == title) return true;
  return false;
}

}  // namespace

class TestHistoryWatch : public QObject {
  Q_OBJECT
 private slots:
  void othersWritesAppear() {
    QTemporaryDir tmp;
    AppController app(AppPaths{tmp.filePath("data"), tmp.filePath("day0.ini")});
    ChatController* chat = app.chat();
    chat->setExternalCheckInterval(100);
    day0::storage::NewConversation c;
    c.title = "Open one";
    const qint64 open = chat->store().create_conversation(c).get().value().id;
    QSignalSpy loaded(chat, &ChatController::conversationLoaded);
    chat->openConversation(open);
    QVERIFY(loaded.wait(10000));
    chat->refreshConversations();
    QTRY_VERIFY_WITH_TIMEOUT(listHas(chat->conversations(), "Open one"), 10000);

    // The app's own writes are not "external".
    QSignalSpy external(chat, &ChatController::externalChange);
    chat->renameConversation(open, "Open one, renamed");
    QTRY_VERIFY_WITH_TIMEOUT(listHas(chat->conversations(), "Open one, renamed"), 10000);
    QTest::qWait(400);
    QCOMPARE(external.count(), 0);

    // Another connection to the same file, as day0-cli has.
    {
      day0::storage::HistoryStore other((tmp.filePath("data") + "/history.db").toStdString());
      day0::storage::NewConversation cli;
      cli.title = "Written by the CLI";
      QVERIFY(other.create_conversation(cli).get().is_ok());
    }
    QTRY_VERIFY_WITH_TIMEOUT(listHas(chat->conversations(), "Written by the CLI"), 10000);
    QVERIFY(external.count() >= 1);
    QCOMPARE(chat->currentConversationId(), open);

    // An import through another connection too.
    const std::string exported = chat->store().export_json({open}).get().value();
    {
      day0::storage::HistoryStore other((tmp.filePath("data") + "/history.db").toStdString());
      QVERIFY(other.delete_conversation(open).get().is_ok());
    }
    QTRY_VERIFY_WITH_TIMEOUT(!listHas(chat->conversations(), "Open one, renamed"), 10000);
    {
      day0::storage::HistoryStore other((tmp.filePath("data") + "/history.db").toStdString());
      QVERIFY(other.import_json(exported).get().is_ok());
    }
    QTRY_VERIFY_WITH_TIMEOUT(listHas(chat->conversations(), "Open one, renamed"), 10000);
  }
};

QTEST_MAIN(TestHistoryWatch)
#include "test_history_watch.moc"
