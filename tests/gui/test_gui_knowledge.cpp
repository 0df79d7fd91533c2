// Documents and folders as knowledge, end to end as the window drives them: the real engine
// with the demo model, the real history and knowledge index in a temporary folder. The prompt
// the engine receives is observed through the bridge's prompt tap (the request's tokens,
// decoded), independently of what the chat stored.
#include <QClipboard>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "bridge/engine_bridge.h"
#include "gui/app_controller.h"
#include "gui/app_fixture.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/knowledge_controller.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"
#include "knowledge/context.h"
#include "knowledge/document.h"

using namespace day0::app;

namespace {

using day0::gui_test::kDemo;
using day0::gui_test::kWaitMs;
using day0::gui_test::loadModel;

const QString kData = QStringLiteral(DAY0_TEST_DATA_DIR "/knowledge");

std::unique_ptr<AppController> makeApp(const QString& root) {
  auto app = day0::gui_test::makeApp(root, 6);
  app->bridge()->setPromptTap(true);
  return app;
}


// Sends and waits for the reply; returns the prompt the engine received (empty on failure).
QString sendAndCapture(AppController& app, const QString& text) {
  QString prompt;
  auto c = QObject::connect(app.bridge(), &EngineBridge::promptSubmitted,
                            [&](quint64, const QString& p, qint64) { prompt = p; });
  QSignalSpy finished(app.chat(), &ChatController::replyFinished);
  const bool sent = app.chat()->send(text);
  const bool done = sent && finished.wait(kWaitMs);
  QObject::disconnect(c);
  return done && finished.at(0).at(1).toBool() ? prompt : QString();
}

std::vector<day0::storage::Message> stored(ChatController* chat, qint64 conversation) {
  auto r = chat->store().messages(conversation).get();
  return r.is_ok() ? r.value() : std::vector<day0::storage::Message>{};
}

QString write(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return {};
  return path;
}

QVariant row(MessageListModel* m, int r, int role) { return m->data(m->index(r), role); }

std::int64_t blobCount(ChatController* chat) {
  return chat->store()
      .run<std::int64_t>([](day0::storage::HistoryDb& db) -> day0::storage::StoreResult<std::int64_t> {
        return db.database().query_int("SELECT count(*) FROM blobs");
      })
      .get()
      .value();
}

}  // namespace

class TestGuiKnowledge : public QObject {
  Q_OBJECT
 private slots:
  void documentsAreCheckedSentAndStored() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QVERIFY(loadModel(*app));
    QSignalSpy errors(chat, &ChatController::errorOccurred);

    const QString notes = write(tmp.filePath("notes.txt"), "Remember the milk.\n");
    const QString code = write(tmp.filePath("tool.cpp"), "int answer() { return 42; }\n");
    const QString guide = write(tmp.filePath("guide.md"), "# Guide\n\nPress the red button.\n");
    const QString pdf = kData + "/notes/bike-insurance.pdf";
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(notes), QUrl::fromLocalFile(code), QUrl::fromLocalFile(guide),
                               QUrl::fromLocalFile(pdf)}),
             4);
    QCOMPARE(errors.count(), 0);
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(notes)}), 0);  // already attached
    const QVariantList pending = chat->pendingDocuments();
    QCOMPARE(pending.size(), 4);
    QStringList kinds;
    for (const QVariant& v : pending) kinds << v.toMap().value("kind").toString();
    QCOMPARE(kinds, (QStringList{"Text", "C++ code", "Markdown", "PDF"}));
    QCOMPARE(pending[0].toMap().value("sizeText").toString(), QString("19 bytes"));

    // Refused, each with a sentence naming the file; nothing is added.
    QByteArray elf(
        "\x7f"
        "ELF\x02\x01\x01",
        7);
    elf.append(QByteArray(4000, '\0'));
    const struct {
      QString path;
      QString words;
    } refused[] = {
        {write(tmp.filePath("program.bin"), elf), "binary"},
        {write(tmp.filePath("huge.txt"), QByteArray(9 << 20, 'a')), "up to 8"},
        {write(tmp.filePath("empty.md"), ""), "empty"},
        {write(tmp.filePath("latin1.txt"), "caf\xe9 cr\xe8me\n"), "UTF-8"},
        {kData + "/hostile/encrypted.pdf", "encrypted"},
        {kData + "/hostile/damaged.pdf", "damaged"},
        {kData + "/hostile/truncated.pdf", "truncated.pdf"},
        {tmp.path(), "folder"},
    };
    for (const auto& r : refused) {
      errors.clear();
      QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(r.path)}), 0);
      QTRY_COMPARE_WITH_TIMEOUT(chat->readingDocuments(), 0, kWaitMs);  // the large one is read in the background
      QCOMPARE(errors.count(), 1);
      const QString message = errors.at(0).at(0).toString();
      QVERIFY2(message.contains(QFileInfo(r.path).fileName()), qPrintable(message));
      QVERIFY2(message.contains(r.words, Qt::CaseInsensitive), qPrintable(message));
    }
    QCOMPARE(chat->pendingDocuments().size(), 4);

    const QString prompt = sendAndCapture(*app, "What do these say?");
    QVERIFY(!prompt.isEmpty());
    QVERIFY(chat->pendingDocuments().isEmpty());
    // The engine read every document, fenced under a numbered header, before the question.
    QVERIFY2(prompt.contains("[1] notes.txt (attached)\n```\nRemember the milk.\n```\n"), qPrintable(prompt));
    QVERIFY(prompt.contains("[2] tool.cpp (attached)\n```cpp\nint answer() { return 42; }\n```\n"));
    QVERIFY(prompt.contains("[3] guide.md (attached)\n```markdown\n# Guide\n\nPress the red button.\n```\n"));
    const auto pdfText = day0::knowledge::read_document(pdf.toStdString());
    QVERIFY(pdfText.ok);
    QVERIFY(prompt.contains("[4] bike-insurance.pdf (attached)\n```\n" +
                            QString::fromStdString(pdfText.document.text.substr(0, 40))));
    QVERIFY(prompt.indexOf("[4] bike-insurance.pdf") < prompt.indexOf("What do these say?"));

    const auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.size(), std::size_t{2});
    const auto& user = messages[0];
    QStringList mimes;
    for (const auto& a : user.attachments) mimes << QString::fromStdString(a.mime_type);
    QCOMPARE(mimes, (QStringList{"text/plain", "text/x-cpp", "text/markdown", "application/pdf"}));
    QVERIFY(prompt.contains(QString::fromStdString(user.context + user.content)));
    QCOMPARE(user.sources.size(), std::size_t{4});
    // The reply keeps the sources it was written from, and shows them: one chip per document,
    // an attached one opening from the history; the question shows none.
    QCOMPARE(messages[1].sources, user.sources);
    MessageListModel* m = chat->messages();
    QCOMPARE(row(m, 0, MessageListModel::DocumentsRole).toList().size(), 4);
    QCOMPARE(row(m, 0, MessageListModel::AttachmentsRole).toList().size(), 0);  // no images
    QCOMPARE(row(m, 0, MessageListModel::SourcesRole).toList().size(), 0);
    const QVariantList chips = row(m, 1, MessageListModel::SourcesRole).toList();
    QCOMPARE(chips.size(), 4);
    QCOMPARE(chips[0].toMap().value("label").toString(), QString("notes.txt"));
    QCOMPARE(chips[0].toMap().value("sha256").toString(), QString::fromStdString(user.attachments[0].sha256));

    // Edit and resend keeps the documents and assembles the edited question's context.
    const qint64 userId = row(m, 0, MessageListModel::MessageIdRole).toLongLong();
    QString edited;
    auto tap = connect(app->bridge(), &EngineBridge::promptSubmitted, this,
                       [&](quint64, const QString& p, qint64) { edited = p; });
    QSignalSpy editFinished(chat, &ChatController::replyFinished);
    chat->editAndResend(userId, "Only the milk, please.");
    QVERIFY(editFinished.wait(kWaitMs));
    disconnect(tap);
    QVERIFY(edited.contains("[1] notes.txt (attached)\n```\nRemember the milk.\n```\n"));
    QVERIFY(edited.contains("Only the milk, please."));
    QVERIFY(!edited.contains("What do these say?"));
    QCOMPARE(row(m, 0, MessageListModel::DocumentsRole).toList().size(), 4);
    QCOMPARE(row(m, 0, MessageListModel::BranchCountRole).toInt(), 2);
    QCOMPARE(blobCount(chat), std::int64_t{4});
    chat->switchBranch(row(m, 0, MessageListModel::MessageIdRole).toLongLong(), -1);

    // The same file again, in a later message: stored once.
    QCOMPARE(blobCount(chat), std::int64_t{4});
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(notes)}), 1);
    QVERIFY(!sendAndCapture(*app, "And this one again?").isEmpty());
    QCOMPARE(blobCount(chat), std::int64_t{4});
    QCOMPARE(stored(chat, chat->currentConversationId()).size(), std::size_t{6});
  }

  // Large documents are read on a pool thread: attaching returns at once, send waits, and the
  // chip (or the refusal) comes when the check is done.
  void largeDocumentsAreReadInTheBackground() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QSignalSpy errors(chat, &ChatController::errorOccurred);
    QByteArray big;
    while (big.size() < (3 << 20)) big += "A long line of plain text that fills the file up to three mebibytes.\n";
    const QString text = write(tmp.filePath("big.txt"), big);
    QByteArray bad = big;
    bad[1 << 20] = '\0';
    const QString binary = write(tmp.filePath("bad.txt"), bad);
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(text), QUrl::fromLocalFile(binary)}), 0);
    QCOMPARE(chat->readingDocuments(), 2);
    QVERIFY(!chat->send("now"));
    QVERIFY(errors.last().at(0).toString().contains("still being read"));
    QTRY_COMPARE_WITH_TIMEOUT(chat->readingDocuments(), 0, kWaitMs);
    QCOMPARE(chat->pendingDocuments().size(), 1);
    QCOMPARE(chat->pendingDocuments()[0].toMap().value("name").toString(), QString("big.txt"));
    QVERIFY(errors.last().at(0).toString().contains("bad.txt"));
    QVERIFY(errors.last().at(0).toString().contains("binary"));
    // The chat may go while a read is in flight.
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(binary)}), 0);
    app.reset();
    QTest::qWait(200);
  }

  void longPastesAndFileListsBecomeAttachments() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QGuiApplication::clipboard()->setText("short text");
    QVERIFY(!chat->pasteImage());  // the text field pastes it
    QGuiApplication::clipboard()->setText(QString(12000, 'x') + "\n");
    QVERIFY(chat->pasteImage());
    QCOMPARE(chat->pendingDocuments().size(), 1);
    QCOMPARE(chat->pendingDocuments()[0].toMap().value("name").toString(), QString("pasted text.txt"));
    const QString notes = write(tmp.filePath("n.md"), "# n\n");
    QGuiApplication::clipboard()->setText(QUrl::fromLocalFile(notes).toString() + "\n");
    QVERIFY(chat->pasteImage());
    QCOMPARE(chat->pendingDocuments().size(), 2);
    chat->removeDocument(0);
    QCOMPARE(chat->pendingDocuments().size(), 1);
    QCOMPARE(chat->pendingDocuments()[0].toMap().value("name").toString(), QString("n.md"));
  }

  // Random and mutated bytes under document names: each is attached or refused with a
  // sentence, never a crash, and what is attached has a media type the history accepts.
  void randomFilesAreAttachedOrRefused() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QSignalSpy errors(chat, &ChatController::errorOccurred);
    QFile pdfFile(kData + "/notes/tax-checklist.pdf");
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    const QByteArray pdf = pdfFile.readAll();
    const QStringList names = {"a.txt", "b.md", "c.cpp", "d.pdf", "e", "f.py", "g.json", "h.bin"};
    std::mt19937 rng(7);
    int attached = 0;
    for (int i = 0; i < 300; ++i) {
      QByteArray bytes;
      if (i % 3 == 0) {
        bytes = pdf;  // a real PDF with a few bytes changed or cut
        for (int k = 0; k < 1 + static_cast<int>(rng() % 8); ++k)
          bytes[static_cast<int>(rng() % bytes.size())] = static_cast<char>(rng());
        if (rng() % 2) bytes.truncate(static_cast<int>(rng() % bytes.size()));
      } else {
        bytes.resize(static_cast<int>(rng() % 2000));
        const bool text = rng() % 2;
        for (char& c : bytes) c = text ? "abc \n\t{}#*`"[rng() % 11] : static_cast<char>(rng());
      }
      errors.clear();
      const int n = chat->attachData(bytes, names[static_cast<int>(rng() % names.size())]);
      QVERIFY(n == 0 || n == 1);
      if (n == 0 && errors.count() > 0) QVERIFY(!errors.at(0).at(0).toString().isEmpty());
      attached += n;
      if (chat->pendingDocuments().size() >= 9) {
        for (const QVariant& d : chat->pendingDocuments()) {
          const QString mime = d.toMap().value("mimeType").toString();
          QVERIFY2(mime == "application/pdf" || mime.startsWith("text/"), qPrintable(mime));
        }
        while (!chat->pendingDocuments().isEmpty()) chat->removeDocument(0);
      }
    }
    QVERIFY(attached > 20);  // the text-like ones
  }

  void folderAnswersCiteTheirSourcesAcrossRestarts() {
    QTemporaryDir tmp;
    qint64 folderId = 0, conversation = 0;
    QString firstPrompt, userPrompt;
    std::string firstContext;
    {
      auto app = makeApp(tmp.path());
      KnowledgeController* knowledge = app->knowledge();
      ChatController* chat = app->chat();
      QSignalSpy indexed(knowledge, &KnowledgeController::folderIndexed);
      QSignalSpy notices(knowledge, &KnowledgeController::noticeOccurred);
      knowledge->addFolder(QUrl::fromLocalFile(kData + "/e2e"));
      QVERIFY(indexed.wait(kWaitMs));
      QVERIFY(indexed.at(0).at(1).toBool());
      QVERIFY(!notices.isEmpty());
      QVERIFY2(notices.last().at(0).toString().contains("3 files"), qPrintable(notices.last().at(0).toString()));
      QTRY_COMPARE_WITH_TIMEOUT(knowledge->folders().size(), 1, kWaitMs);
      // The list is refreshed from the index on the query thread: the refresh after the last file
      // can arrive after folderIndexed, so wait for the whole folder, not its first chunks.
      QTRY_VERIFY_WITH_TIMEOUT(knowledge->folders()[0].toMap().value("files").toLongLong() == 3 &&
                                   knowledge->folders()[0].toMap().value("chunks").toLongLong() >= 3,
                               kWaitMs);
      const QVariantMap folder = knowledge->folders()[0].toMap();
      folderId = folder.value("id").toLongLong();
      QCOMPARE(folder.value("files").toLongLong(), qint64(3));
      QCOMPARE(folder.value("name").toString(), QString("e2e"));

      QVERIFY(loadModel(*app));
      chat->setFolderEnabled(folderId, true);
      QCOMPARE(chat->knowledgeFolders(), QVariantList{folderId});
      firstPrompt = sendAndCapture(*app, "How many gigawatts does the flux capacitor need?");
      QVERIFY(!firstPrompt.isEmpty());
      // The prompt holds the cited chunk, under its file and line range, and asks for [n].
      QVERIFY2(firstPrompt.contains("constexpr double kRequiredGigawatts = 1.21;"), qPrintable(firstPrompt));
      QVERIFY(firstPrompt.contains("[1] src/flux_capacitor.cpp:"));
      QVERIFY(firstPrompt.contains("Cite them as [n]"));
      conversation = chat->currentConversationId();
      const auto messages = stored(chat, conversation);
      QCOMPARE(messages.size(), std::size_t{2});
      firstContext = messages[0].context;
      userPrompt = QString::fromStdString(firstContext + messages[0].content);
      QVERIFY(firstPrompt.contains(userPrompt));
      QVERIFY(messages[0].sources.size() >= 1);
      QCOMPARE(QString::fromStdString(messages[0].sources[0].value("path", "")),
               QDir(kData + "/e2e/src/flux_capacitor.cpp").canonicalPath());
      QVERIFY(row(chat->messages(), 0, MessageListModel::SourcesRole).toList().isEmpty());
      const QVariantList sources = row(chat->messages(), 1, MessageListModel::SourcesRole).toList();
      QVERIFY(sources[0].toMap().value("label").toString().startsWith("src/flux_capacitor.cpp:"));
      QCOMPARE(sources[0].toMap().value("line").toInt(), messages[0].sources[0].value("first_line", 0));
      QCOMPARE(messages[1].sources, messages[0].sources);

      // A follow-up sends the first question with the same context again.
      const QString second = sendAndCapture(*app, "And what about plutonium?");
      QVERIFY(second.contains(userPrompt));
      QVERIFY(second.contains("plutonium pellet"));
      const auto conv = chat->store().conversation(conversation).get().value();
      QCOMPARE(conv.settings.value("knowledge_folders", nlohmann::json()), nlohmann::json::array({folderId}));
    }
    // A new start on the same data: the sources show, and regenerating the first reply sends
    // exactly the first prompt again.
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QSignalSpy loaded(chat, &ChatController::conversationLoaded);
    chat->openConversation(conversation);
    QVERIFY(loaded.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(chat->knowledgeFolders(), QVariantList{folderId}, kWaitMs);
    MessageListModel* m = chat->messages();
    QCOMPARE(m->rowCount(), 4);
    QVERIFY(row(m, 1, MessageListModel::SourcesRole)
                .toList()[0]
                .toMap()
                .value("label")
                .toString()
                .startsWith("src/flux_capacitor.cpp:"));
    QVERIFY(loadModel(*app));
    QString again;
    connect(app->bridge(), &EngineBridge::promptSubmitted, this, [&](quint64, const QString& p, qint64) { again = p; });
    QSignalSpy finished(chat, &ChatController::replyFinished);
    chat->regenerate(row(m, 1, MessageListModel::MessageIdRole).toLongLong());
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(again, firstPrompt);
  }

  // The notice after indexing counts what was skipped, by reason.
  void skippedFilesAreCounted() {
    QTemporaryDir tmp;
    QVERIFY(QDir().mkpath(tmp.filePath("folder")));
    QVERIFY(!write(tmp.filePath("folder/notes.md"), "# Notes\n\nSome text.\n").isEmpty());
    QByteArray elf(
        "\x7f"
        "ELF\x02\x01\x01",
        7);
    elf.append(QByteArray(4000, '\0'));
    QVERIFY(!write(tmp.filePath("folder/tool"), elf).isEmpty());
    QVERIFY(!write(tmp.filePath("folder/blob.txt"), QByteArray(3000, '\0')).isEmpty());
    auto app = makeApp(tmp.path());
    QSignalSpy indexed(app->knowledge(), &KnowledgeController::folderIndexed);
    QSignalSpy notices(app->knowledge(), &KnowledgeController::noticeOccurred);
    app->knowledge()->addFolder(tmp.filePath("folder"));
    QVERIFY(indexed.wait(kWaitMs));
    QVERIFY(!notices.isEmpty());
    const QString notice = notices.last().at(0).toString();
    QVERIFY2(notice.startsWith("folder is indexed: 1 file, 1 chunk; 2 skipped (2 binary)"), qPrintable(notice));
  }

  void wholeFolderGoesInWhenItFits() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    KnowledgeController* knowledge = app->knowledge();
    ChatController* chat = app->chat();
    QSignalSpy indexed(knowledge, &KnowledgeController::folderIndexed);
    knowledge->addFolder(kData + "/e2e");
    QVERIFY(indexed.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(knowledge->folders().size(), 1, kWaitMs);
    const qint64 id = knowledge->folders()[0].toMap().value("id").toLongLong();
    QVERIFY(loadModel(*app));
    chat->setFolderEnabled(id, true);
    chat->setWholeFolders(true);
    const QString prompt = sendAndCapture(*app, "Summarise the project.");
    QVERIFY(!prompt.isEmpty());
    // Every file, each cited once, whether or not the question names it.
    for (const char* text : {"Firmware notes for the time circuits.", "bool calibrate_flux_capacitor(",
                             "the hook\nmust touch the wire at 10:04 pm exactly."})
      QVERIFY2(prompt.contains(QString::fromUtf8(text)), text);
    const auto user = stored(chat, chat->currentConversationId())[0];
    QCOMPARE(user.sources.size(), std::size_t{3});
    QStringList labels;
    for (const auto& s : user.sources) labels << QString::fromStdString(s.value("label", ""));
    labels.sort();
    QCOMPARE(labels, (QStringList{"README.md:1-4", "docs/plutonium.md:1-9", "src/flux_capacitor.cpp:1-18"}));

    // Removing the folder switches it off for the conversation.
    QSignalSpy removed(knowledge, &KnowledgeController::folderRemoved);
    knowledge->removeFolder(id);
    QVERIFY(removed.wait(kWaitMs));
    QVERIFY(chat->knowledgeFolders().isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(knowledge->folders().size(), 0, kWaitMs);
  }

  // A reply stored before replies kept their sources shows those of the question it answers.
  void olderRepliesShowTheirQuestionsSources() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    day0::storage::NewConversation c;
    c.title = "older";
    const qint64 conversation = chat->store().create_conversation(c).get().value().id;
    day0::knowledge::Citation cited;
    cited.number = 1;
    cited.path = "/notes/plan.md";
    cited.label = "plan.md:3-9";
    cited.first_line = 3;
    cited.last_line = 9;
    day0::storage::NewMessage question;
    question.conversation_id = conversation;
    question.content = "What is the plan?";
    question.context = "[1] plan.md:3-9\nThe plan.";
    question.sources = nlohmann::json::parse(day0::knowledge::citations_to_json({cited}));
    const qint64 asked = chat->store().add_message(question).get().value().id;
    day0::storage::NewMessage answer;
    answer.conversation_id = conversation;
    answer.parent_id = asked;
    answer.role = day0::storage::Role::assistant;
    answer.content = "The plan [1].";
    QVERIFY(chat->store().add_message(answer).get().is_ok());
    QSignalSpy loaded(chat, &ChatController::conversationLoaded);
    chat->openConversation(conversation);
    QVERIFY(loaded.wait(kWaitMs));
    MessageListModel* m = chat->messages();
    QCOMPARE(m->rowCount(), 2);
    QVERIFY(row(m, 0, MessageListModel::SourcesRole).toList().isEmpty());
    const QVariantList chips = row(m, 1, MessageListModel::SourcesRole).toList();
    QCOMPARE(chips.size(), 1);
    QCOMPARE(chips[0].toMap().value("line").toInt(), 3);
    QCOMPARE(chips[0].toMap().value("path").toString(), QString("/notes/plan.md"));
  }
};

QTEST_MAIN(TestGuiKnowledge)
#include "test_gui_knowledge.moc"
