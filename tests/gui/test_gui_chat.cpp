// The chat end to end, as the window drives it: the real engine with the demo model (a tiny
// random-weight gpt-oss with a real tokenizer and chat template), the real SQLite history in a
// temporary folder, and the view-models checked with QAbstractItemModelTester and QSignalSpy.
// Replies are capped at a few tokens so the program stays fast on slow machines.
#include <QAbstractItemModelTester>
#include <QBuffer>
#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "bridge/engine_bridge.h"
#include "day0/devices.h"
#include "gui/app_controller.h"
#include "gui/app_fixture.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/conversation_list_model.h"
#include "gui/image_attachments.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"

using namespace day0::app;
using day0::storage::Role;

namespace {

using day0::gui_test::kDemo;
using day0::gui_test::kWaitMs;
using day0::gui_test::loadModel;
using day0::gui_test::makeApp;




QVariant row(MessageListModel* m, int r, int role) { return m->data(m->index(r), role); }

// Sends `text` and waits for the reply; returns the reply's id (0 on failure).
qint64 sendAndWait(ChatController* chat, const QString& text) {
  QSignalSpy finished(chat, &ChatController::replyFinished);
  if (!chat->send(text)) return 0;
  if (!finished.wait(kWaitMs)) return 0;
  return finished.at(0).at(1).toBool() ? finished.at(0).at(0).toLongLong() : 0;
}

std::vector<day0::storage::Message> stored(ChatController* chat, qint64 conversation) {
  auto r = chat->store().messages(conversation).get();
  return r.is_ok() ? r.value() : std::vector<day0::storage::Message>{};
}

QByteArray pngBytes(int w, int h) {
  QImage image(w, h, QImage::Format_RGB32);
  image.fill(qRgb(30, 120, 200));
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return bytes;
}

}  // namespace

// Letters and spaces, `n` of them, reproducibly.
QString noise(int n, quint32 seed) {
  QString s;
  for (int i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    s += QLatin1Char("abcdefghijklmnopqrstuvwxyz "[(seed >> 16) % 27]);
  }
  return s;
}

class TestGuiChat : public QObject {
  Q_OBJECT
 private slots:
  // A long prompt shows how far it has been read (bridge and chat), and the text goes once the
  // reply starts.
  void prefillProgressIsShown() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QVERIFY(loadModel(*app));
    QList<std::pair<qint64, qint64>> bridged;
    connect(app->bridge(), &EngineBridge::prefillProgress, this,
            [&](quint64, qint64 done, qint64 total) { bridged.append({done, total}); });
    QStringList texts;
    connect(chat, &ChatController::prefillChanged, this, [&] { texts << chat->prefillText(); });
    QVERIFY(sendAndWait(chat, noise(3000, 1)) > 0);
    QVERIFY(!bridged.isEmpty());
    const qint64 total = bridged.last().second;
    QVERIFY2(total > 256, qPrintable(QString::number(total)));
    QCOMPARE(bridged.last().first, total);
    for (const auto& [done, t] : bridged) QVERIFY(done >= 0 && done <= t && t == total);
    const QRegularExpression shown(R"(^Reading the prompt: [\d,.\s]+ / [\d,.\s]+ tokens \(\d+%\)$)");
    QVERIFY2(!texts.isEmpty() && texts.first().contains(shown), qPrintable(texts.join('|')));
    QVERIFY(chat->prefillText().isEmpty());
    QCOMPARE(chat->prefillTotal(), qint64{0});
  }

  // A conversation past the model's context (4096 tokens here) goes on: truncate-middle (the
  // default) keeps the system prompt and the first turn, rolling-window (this chat's choice,
  // stored with it) the system prompt; a notice says how many messages were left out, and the
  // history keeps them all. Under stop the turn fails with the reason.
  void longConversationLeavesEarlierTurnsOut() {
    qputenv("DAY0_MEMORY_LIMIT_BYTES", "9000000");
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    app->settings()->setSystemPrompt("Be brief.");
    ChatController* chat = app->chat();
    const bool loaded = loadModel(*app);
    qunsetenv("DAY0_MEMORY_LIMIT_BYTES");
    QVERIFY(loaded);
    QCOMPARE(app->bridge()->contextTotal(), qint64{4096});
    QCOMPARE(app->settings()->contextOverflow(), QString("truncate-middle"));
    app->bridge()->setPromptTap(true);
    QSignalSpy prompts(app->bridge(), &EngineBridge::promptSubmitted);
    QSignalSpy notices(chat, &ChatController::noticeOccurred);
    QSignalSpy trimmed(chat, &ChatController::contextTrimmed);
    int turns = 0;
    while (trimmed.isEmpty() && turns < 12) {
      QVERIFY(sendAndWait(chat, QString("turn%1 ").arg(turns) + noise(1500, turns + 1)) > 0);
      ++turns;
    }
    QVERIFY2(!trimmed.isEmpty(), "the conversation never outgrew the context");
    QVERIFY(turns >= 3);
    QString prompt = prompts.last().at(1).toString();
    QVERIFY(prompt.contains("Be brief."));
    QVERIFY(prompt.contains("turn0 "));
    QVERIFY(!prompt.contains("turn1 "));
    QVERIFY(prompt.contains(QString("turn%1 ").arg(turns - 1)));
    QVERIFY(prompts.last().at(2).toLongLong() <= 4096 - 12);
    const int dropped = trimmed.last().at(1).toInt();
    QVERIFY(dropped >= 2 && dropped % 2 == 0);
    bool said = false;
    for (const auto& n : notices)
      said = said || n.at(0).toString() == QString("%1 earlier messages left out to fit the context").arg(dropped);
    QVERIFY(said);
    const qint64 conversation = chat->currentConversationId();
    QCOMPARE(stored(chat, conversation).size(), std::size_t(1 + 2 * turns));

    chat->setContextOverflow("rolling-window");
    QVERIFY(sendAndWait(chat, QString("turn%1 ").arg(turns) + noise(1500, 99)) > 0);
    ++turns;
    prompt = prompts.last().at(1).toString();
    QVERIFY(prompt.contains("Be brief."));
    QVERIFY(!prompt.contains("turn0 "));
    QVERIFY(prompt.contains(QString("turn%1 ").arg(turns - 1)));
    QCOMPARE(stored(chat, conversation).size(), std::size_t(1 + 2 * turns));
    // The choice is kept with the conversation.
    const auto c = chat->store().conversation(conversation).get();
    QVERIFY(c.is_ok());
    QCOMPARE(c.value().settings.value("context_overflow", std::string()), std::string("rolling-window"));
    chat->newConversation();
    QCOMPARE(chat->contextOverflow(), QString());
    QSignalSpy opened(chat, &ChatController::conversationLoaded);
    chat->openConversation(conversation);
    // Nothing can be sent until its messages are in (it would hang off the wrong parent).
    if (opened.isEmpty()) {
      QVERIFY(!chat->send("too early"));
      QVERIFY(opened.wait(kWaitMs));
    }
    QTRY_COMPARE(chat->contextOverflow(), QString("rolling-window"));

    chat->setContextOverflow("stop");
    QSignalSpy errors(chat, &ChatController::errorOccurred);
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("one more"));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(finished.last().at(1).toBool(), false);
    QVERIFY(!errors.isEmpty());
    const QString why = errors.last().at(0).toString();
    QVERIFY2(why.contains(QRegularExpression(R"(the model's context holds 4[,.\s]?096)")), qPrintable(why));
    QVERIFY2(why.contains("Truncate the middle"), qPrintable(why));
    // Bad input is ignored, not stored.
    chat->setContextOverflow("sideways");
    QCOMPARE(chat->contextOverflow(), QString("stop"));
  }

  void sendAndStream() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QAbstractItemModelTester messagesTester(chat->messages(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester listTester(chat->conversations(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(loadModel(*app));
    QCOMPARE(app->models()->loadedType(), QString("gpt_oss"));

    // What the bridge streamed, collected independently of the view-model.
    QString content, reasoning;
    QList<qint64> at;
    QElapsedTimer clock;
    clock.start();
    connect(app->bridge(), &EngineBridge::textArrived, this, [&](quint64, const QString& c, const QString& r) {
      content += c;
      reasoning += r;
      at << clock.elapsed();
    });
    const qint64 reply = sendAndWait(chat, "Hello there");
    QVERIFY(reply > 0);
    QVERIFY(!at.isEmpty());
    QVERIFY(!(content + reasoning).isEmpty());
    // Coalesced: text reaches the GUI thread on a 25 ms timer (the last piece comes with done),
    // so a reply streamed over T ms arrives in at most T / 25 + 2 pieces (T / 20 for the timer's
    // slack). Counted over the whole reply, not gap by gap: a busy machine (a sanitizer build
    // beside other jobs) can deliver two late timer ticks back to back.
    const qint64 span = at.last() - at.first();
    QVERIFY2(at.size() <= span / 20 + 2, qPrintable(QString("%1 pieces in %2 ms").arg(at.size()).arg(span)));

    MessageListModel* m = chat->messages();
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(row(m, 0, MessageListModel::RoleRole).toString(), QString("user"));
    QCOMPARE(row(m, 0, MessageListModel::ContentRole).toString(), QString("Hello there"));
    QCOMPARE(row(m, 1, MessageListModel::MessageIdRole).toLongLong(), reply);
    QCOMPARE(row(m, 1, MessageListModel::ContentRole).toString(), content);
    QCOMPARE(row(m, 1, MessageListModel::ReasoningRole).toString(), reasoning);
    QCOMPARE(row(m, 1, MessageListModel::StreamingRole).toBool(), false);
    QCOMPARE(row(m, 1, MessageListModel::StateRole).toString(), QString("complete"));

    // The history holds the same text, finished, with statistics.
    const auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(messages[1].content), content);
    QCOMPARE(QString::fromStdString(messages[1].reasoning), reasoning);
    QCOMPARE(messages[1].parent_id.value_or(0), messages[0].id);
    QCOMPARE(messages[1].state, day0::storage::MessageState::complete);
    QVERIFY(messages[1].stats.completion_tokens.value_or(0) >= 1);
    QVERIFY(messages[1].stats.completion_tokens.value_or(0) <= 12);
    QCOMPARE(chat->currentTitle(), QString("Hello there"));

    // The status bar's figures.
    QVERIFY(app->contextUsed() > 0);
    QCOMPARE(app->contextTotal(), qint64(131072));
    QVERIFY(app->timeToFirstTokenMs() > 0);

    // A follow-up continues the branch.
    const qint64 second = sendAndWait(chat, "And again");
    QVERIFY(second > 0);
    QCOMPARE(m->rowCount(), 4);
    const auto after = stored(chat, chat->currentConversationId());
    QCOMPARE(after.size(), std::size_t(4));
    QCOMPARE(after[2].parent_id.value_or(0), reply);
  }

  void stopEndsTheReply() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    app->settings()->setMaxNewTokens(100000);
    ChatController* chat = app->chat();
    QVERIFY(loadModel(*app));
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QElapsedTimer stoppedAt;
    connect(chat, &ChatController::replyStarted, this, [&]() {
      QVERIFY(chat->generating());
      stoppedAt.start();
      chat->stop();
    });
    QVERIFY(chat->send("Write forever"));
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY2(stoppedAt.elapsed() < 2000, qPrintable(QString::number(stoppedAt.elapsed())));
    QVERIFY(!chat->generating());
    MessageListModel* m = chat->messages();
    QCOMPARE(row(m, 1, MessageListModel::StateRole).toString(), QString("incomplete"));
    const auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.size(), std::size_t(2));
    QCOMPARE(messages[1].state, day0::storage::MessageState::incomplete);
    QVERIFY(messages[1].stats.completion_tokens.value_or(0) < 100);
    // Stop does nothing when nothing streams, and the next message goes through.
    chat->stop();
    app->settings()->setMaxNewTokens(8);
    QVERIFY(sendAndWait(chat, "Short now") > 0);
  }

  // A local model with a vision encoder reads the attached images: the tiny GLM-5 fixture with
  // a GLM chat template beside it. transformers' processor gives the 112x140 image 20 image
  // tokens, so the prompt grows by those plus its begin and end markers. A BMP of the same
  // pixels (converted to PNG for the engine) gives the same prompt and the same greedy reply.
  void visionModelReadsImages() {
    QTemporaryDir tmp;
    const QString model = tmp.filePath("tiny-glm5-vision");
    QVERIFY(QDir().mkpath(model));
    for (const QFileInfo& f :
         QDir(QStringLiteral(DAY0_TEST_DATA_DIR "/models/tiny-glm5-next")).entryInfoList(QDir::Files))
      QVERIFY(QFile::link(f.absoluteFilePath(), model + "/" + f.fileName()));
    QVERIFY(QFile::copy(QStringLiteral(DAY0_TEST_DATA_DIR "/chat_templates/GLM-4.7-Flash.jinja"),
                        model + "/chat_template.jinja"));
    auto app = makeApp(tmp.path());
    app->settings()->setTemperature(0);
    app->settings()->setMaxNewTokens(4);
    ChatController* chat = app->chat();
    QVERIFY(loadModel(*app, model));
    QVERIFY(app->models()->acceptsImages());

    const auto ask = [&](const QByteArray& image, const QString& name) -> day0::storage::Message {
      chat->newConversation();
      if (!image.isEmpty() && chat->attachData(image, name) != 1) return {};
      if (sendAndWait(chat, "What is this?") == 0) return {};
      const auto messages = stored(chat, chat->currentConversationId());
      return messages.empty() ? day0::storage::Message{} : messages.back();
    };
    QFile file(QStringLiteral(DAY0_TEST_DATA_DIR "/vision/aligned_112x140.png"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray png = file.readAll();
    const auto textOnly = ask({}, {});
    const auto withPng = ask(png, "aligned.png");
    QCOMPARE(withPng.state, day0::storage::MessageState::complete);
    QCOMPARE(*withPng.stats.prompt_tokens - *textOnly.stats.prompt_tokens, std::int64_t(20 + 2));

    QImage pixels;
    QVERIFY(pixels.loadFromData(png));
    QByteArray bmp;
    QBuffer buffer(&bmp);
    buffer.open(QIODevice::WriteOnly);
    QVERIFY(pixels.save(&buffer, "BMP"));
    const auto withBmp = ask(bmp, "aligned.bmp");
    QCOMPARE(withBmp.state, day0::storage::MessageState::complete);
    QCOMPARE(*withBmp.stats.prompt_tokens, *withPng.stats.prompt_tokens);
    QCOMPARE(QString::fromStdString(withBmp.content + withBmp.reasoning),
             QString::fromStdString(withPng.content + withPng.reasoning));
  }

  void regenerateMakesABranch() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QAbstractItemModelTester tester(chat->messages(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(loadModel(*app));
    const qint64 first = sendAndWait(chat, "Pick a number");
    QVERIFY(first > 0);
    MessageListModel* m = chat->messages();
    const qint64 user = row(m, 0, MessageListModel::MessageIdRole).toLongLong();

    QSignalSpy finished(chat, &ChatController::replyFinished);
    chat->regenerate(first);
    QVERIFY(finished.wait(kWaitMs));
    const qint64 second = finished.at(0).at(0).toLongLong();
    QVERIFY(second != first);
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(row(m, 1, MessageListModel::MessageIdRole).toLongLong(), second);
    QCOMPARE(row(m, 1, MessageListModel::BranchCountRole).toInt(), 2);
    QCOMPARE(row(m, 1, MessageListModel::BranchIndexRole).toInt(), 2);

    const auto messages = stored(chat, chat->currentConversationId());
    int replies = 0;
    for (const auto& msg : messages)
      if (msg.role == Role::assistant && msg.parent_id.value_or(0) == user) ++replies;
    QCOMPARE(replies, 2);

    chat->switchBranch(second, -1);
    QCOMPARE(row(m, 1, MessageListModel::MessageIdRole).toLongLong(), first);
    QCOMPARE(row(m, 1, MessageListModel::BranchIndexRole).toInt(), 1);
    chat->switchBranch(first, 1);
    QCOMPARE(row(m, 1, MessageListModel::MessageIdRole).toLongLong(), second);

    // Reopened from the history, the newest branch shows, with both versions counted.
    QSignalSpy loaded(chat, &ChatController::conversationLoaded);
    const qint64 conversation = chat->currentConversationId();
    chat->newConversation();
    QCOMPARE(m->rowCount(), 0);
    chat->openConversation(conversation);
    QVERIFY(loaded.wait(kWaitMs));
    QCOMPARE(row(m, 1, MessageListModel::MessageIdRole).toLongLong(), second);
    QCOMPARE(row(m, 1, MessageListModel::BranchCountRole).toInt(), 2);
  }

  void editResendsAsABranch() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    app->settings()->setSystemPrompt("You are terse.");
    ChatController* chat = app->chat();
    QAbstractItemModelTester tester(chat->messages(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(loadModel(*app));
    const qint64 reply = sendAndWait(chat, "Original question");
    QVERIFY(reply > 0);
    MessageListModel* m = chat->messages();
    QCOMPARE(m->rowCount(), 2);  // the system prompt is stored but not a row
    const qint64 original = row(m, 0, MessageListModel::MessageIdRole).toLongLong();

    QSignalSpy finished(chat, &ChatController::replyFinished);
    chat->editAndResend(original, "Edited question");
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(row(m, 0, MessageListModel::ContentRole).toString(), QString("Edited question"));
    QCOMPARE(row(m, 0, MessageListModel::BranchCountRole).toInt(), 2);
    const qint64 edited = row(m, 0, MessageListModel::MessageIdRole).toLongLong();

    const auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.size(), std::size_t(5));  // system, original, reply, edited, its reply
    QCOMPARE(messages[0].role, Role::system);
    QCOMPARE(messages[0].content, std::string("You are terse."));
    const auto find = [&](qint64 id) {
      return *std::find_if(messages.begin(), messages.end(), [&](const auto& x) { return x.id == id; });
    };
    QCOMPARE(find(edited).parent_id, find(original).parent_id);
    QCOMPARE(find(edited).parent_id.value_or(0), messages[0].id);
    QCOMPARE(find(finished.at(0).at(0).toLongLong()).parent_id.value_or(0), edited);

    chat->switchBranch(edited, -1);
    QCOMPARE(row(m, 0, MessageListModel::ContentRole).toString(), QString("Original question"));
    QCOMPARE(row(m, 1, MessageListModel::MessageIdRole).toLongLong(), reply);
  }

  // The conversation menu and the message actions: export (JSON that imports back, Markdown),
  // edit a reply in place, duplicate a conversation, delete one message.
  void exportEditDuplicateAndDelete() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QVERIFY(loadModel(*app));
    const qint64 reply = sendAndWait(chat, "Tell me about lighthouses");
    QVERIFY(reply > 0);
    const qint64 conversation = chat->currentConversationId();
    MessageListModel* m = chat->messages();

    // Export as JSON: the history's own format, which another history imports whole.
    QSignalSpy exported(chat, &ChatController::exported);
    QVERIFY(chat->exportConversation(tmp.filePath("chat.json"), "json"));
    QVERIFY(exported.wait(kWaitMs));
    QCOMPARE(exported.at(0).at(0).toString(), tmp.filePath("chat.json"));
    QFile json(tmp.filePath("chat.json"));
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QByteArray jsonBytes = json.readAll();
    QVERIFY(jsonBytes.contains("\"day0-history\""));
    {
      day0::storage::HistoryStore other(tmp.filePath("other.db").toStdString());
      auto imported = other.import_json(jsonBytes.toStdString()).get();
      QVERIFY2(imported.is_ok(), imported.is_ok() ? "" : imported.error().message.c_str());
      QCOMPARE(imported.value().conversations_added, 1);
      QCOMPARE(imported.value().messages_added, 2);
    }
    // Markdown, the format read from the file name.
    exported.clear();
    QVERIFY(chat->exportConversation(tmp.filePath("chat.md"), QString()));
    QVERIFY(exported.wait(kWaitMs));
    QFile md(tmp.filePath("chat.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QByteArray mdBytes = md.readAll();
    QVERIFY(mdBytes.contains("Tell me about lighthouses"));
    QVERIFY(!mdBytes.trimmed().startsWith('{'));
    // Bad paths and formats: a message each, nothing written.
    QSignalSpy errors(chat, &ChatController::errorOccurred);
    QVERIFY(!chat->exportConversation(tmp.path(), "json"));
    QVERIFY(errors.last().at(0).toString().contains("folder"));
    QVERIFY(!chat->exportConversation(tmp.filePath("no/such/folder/chat.json"), "json"));
    QVERIFY(errors.last().at(0).toString().contains("does not exist"));
    QVERIFY(!chat->exportConversation(tmp.filePath("chat.pdf"), "pdf"));
    QVERIFY(!chat->exportConversation(QString("   "), "json"));
    QCOMPARE(errors.count(), 4);
    QVERIFY(!QFile::exists(tmp.filePath("chat.pdf")));
    QVERIFY(chat->suggestedExportPath("markdown").endsWith(".md"));

    // Edit the reply: saved in the history (and its search), shown in place, no new branch.
    QSignalSpy edited(chat, &ChatController::messageEdited);
    chat->editMessage(reply, "Lighthouses guide ships with zebra-striped towers.");
    QVERIFY(edited.wait(kWaitMs));
    auto messages = stored(chat, conversation);
    QCOMPARE(messages.size(), std::size_t{2});
    QCOMPARE(messages[1].id, reply);
    QCOMPARE(messages[1].content, std::string("Lighthouses guide ships with zebra-striped towers."));
    QTRY_COMPARE(row(m, 1, MessageListModel::ContentRole).toString(),
                 QString("Lighthouses guide ships with zebra-striped towers."));
    auto hits = chat->store().search("zebra").get();
    QVERIFY(hits.is_ok());
    QVERIFY(
        std::any_of(hits.value().begin(), hits.value().end(), [&](const auto& h) { return h.message_id == reply; }));
    errors.clear();
    chat->editMessage(reply, "   ");  // an empty text is refused
    QCOMPARE(errors.count(), 1);
    QCOMPARE(stored(chat, conversation)[1].content, std::string("Lighthouses guide ships with zebra-striped towers."));

    // Duplicate: a new conversation, opened, with the same messages under new ids.
    QSignalSpy duplicated(chat, &ChatController::conversationDuplicated);
    chat->duplicateConversation(conversation);
    QVERIFY(duplicated.wait(kWaitMs));
    const qint64 copy = duplicated.at(0).at(0).toLongLong();
    QVERIFY(copy > 0 && copy != conversation);
    QTRY_COMPARE(chat->currentConversationId(), copy);
    QVERIFY(chat->currentTitle().endsWith("(copy)"));
    const auto copied = stored(chat, copy);
    QCOMPARE(copied.size(), std::size_t{2});
    QCOMPARE(copied[0].content, messages[0].content);
    QCOMPARE(copied[1].content, messages[1].content);
    QVERIFY(copied[0].id != messages[0].id && copied[0].uuid != messages[0].uuid);
    QCOMPARE(copied[1].parent_id.value_or(0), copied[0].id);
    QTRY_COMPARE(m->rowCount(), 2);

    // Delete the copy's reply: gone from the copy, the original keeps its own.
    QSignalSpy deleted(chat, &ChatController::messageDeleted);
    chat->deleteMessage(copied[1].id);
    QVERIFY(deleted.wait(kWaitMs));
    QCOMPARE(stored(chat, copy).size(), std::size_t{1});
    QCOMPARE(stored(chat, conversation).size(), std::size_t{2});
    QTRY_COMPARE(m->rowCount(), 1);
    QCOMPARE(row(m, 0, MessageListModel::ContentRole).toString(), QString("Tell me about lighthouses"));
  }

  // What no longer applies goes: the previous model's speed once it is unloaded, a model's
  // error once a model loads; another part's error stays until dismissed.
  void staleFiguresAndBannersGo() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    app->models()->load(tmp.filePath("no-such-model"));
    QTRY_VERIFY_WITH_TIMEOUT(!app->errorMessage().isEmpty(), kWaitMs);
    QVERIFY(loadModel(*app));
    QTRY_VERIFY2(app->errorMessage().isEmpty(), qPrintable(app->errorMessage()));

    QVERIFY(sendAndWait(app->chat(), "Hi") > 0);
    QVERIFY(app->tokensPerSecond() > 0);
    QVERIFY(app->timeToFirstTokenMs() > 0);
    app->models()->unload();
    QTRY_COMPARE(app->tokensPerSecond(), 0.0);
    QCOMPARE(app->timeToFirstTokenMs(), 0.0);

    app->showError("The disk is full");
    QVERIFY(loadModel(*app));
    QCOMPARE(app->errorMessage(), QString("The disk is full"));
    app->dismissError();
    QVERIFY(app->errorMessage().isEmpty());
  }

  void searchFindsConversations() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QAbstractItemModelTester tester(chat->conversations(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(loadModel(*app));
    QVERIFY(sendAndWait(chat, "Tell me about the zebrafish genome") > 0);
    chat->newConversation();
    QVERIFY(sendAndWait(chat, "Something else entirely") > 0);

    ConversationListModel* list = chat->conversations();
    QSignalSpy searched(chat, &ChatController::searchFinished);
    chat->setSearchQuery("zebrafish");
    QVERIFY(searched.wait(kWaitMs));
    QCOMPARE(list->rowCount(), 1);
    QCOMPARE(list->data(list->index(0), ConversationListModel::TitleRole).toString(),
             QString("Tell me about the zebrafish genome"));
    chat->setSearchQuery("GENOME");  // case-insensitive, in message text
    QVERIFY(searched.wait(kWaitMs));
    QCOMPARE(list->rowCount(), 1);
    QVERIFY2(list->data(list->index(0), ConversationListModel::SnippetRole).toString().contains("<b>genome</b>"),
             qPrintable(list->data(list->index(0), ConversationListModel::SnippetRole).toString()));
    const qint64 hitMessage = list->data(list->index(0), ConversationListModel::MatchMessageIdRole).toLongLong();
    QVERIFY(hitMessage > 0);
    chat->setSearchQuery("quokka");
    QVERIFY(searched.wait(kWaitMs));
    QCOMPARE(list->rowCount(), 0);

    QSignalSpy listed(chat, &ChatController::conversationsLoaded);
    chat->setSearchQuery("");
    QVERIFY(listed.wait(kWaitMs));
    QCOMPARE(list->rowCount(), 2);
  }

  void attachAnImage() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QVERIFY(loadModel(*app));
    const QByteArray bytes = pngBytes(64, 48);
    const QString path = tmp.filePath("photo.png");
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(bytes);
    }
    QSignalSpy errors(chat, &ChatController::errorOccurred);
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(path)}), 1);
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(path)}), 0);  // the same image once
    QCOMPARE(chat->pendingAttachments().size(), 1);
    const QString sha = QString(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
    QCOMPARE(chat->pendingAttachments()[0].toMap().value("source").toString(), "image://day0/" + sha);

    // The thumbnail is served before the message is sent...
    AttachmentImageProvider provider(app->attachmentSource());
    QSize size;
    QImage thumb = provider.requestImage(sha, &size, QSize(32, 32));
    QCOMPARE(size, QSize(32, 24));

    // ...and the message with its image is stored; the model cannot read images, which the
    // banner says, and no reply is generated.
    QSignalSpy storedSpy(chat, &ChatController::messageStored);
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("What is in this picture?"));
    QCOMPARE(chat->pendingAttachments().size(), 0);
    QVERIFY(storedSpy.wait(kWaitMs));
    QTRY_VERIFY(!chat->generating());
    QVERIFY(errors.count() >= 1);
    QVERIFY2(errors.last().at(0).toString().contains("cannot read images"), qPrintable(errors.last().at(0).toString()));
    QVERIFY(app->errorMessage().contains("cannot read images"));
    app->dismissError();
    QVERIFY(app->errorMessage().isEmpty());
    QCOMPARE(finished.count(), 0);
    MessageListModel* m = chat->messages();
    QCOMPARE(m->rowCount(), 1);
    const QVariantList shown = row(m, 0, MessageListModel::AttachmentsRole).toList();
    QCOMPARE(shown.size(), 1);
    QCOMPARE(shown[0].toMap().value("sha256").toString(), sha);
    QCOMPARE(shown[0].toMap().value("mimeType").toString(), QString("image/png"));
    const auto data = chat->store().attachment_data(sha.toStdString()).get();
    QVERIFY(data.is_ok());
    QCOMPARE(QByteArray::fromStdString(data.value()), bytes);
    // Served from the history now.
    thumb = provider.requestImage(sha, &size, QSize());
    QCOMPARE(size, QSize(64, 48));

    // Hostile or unusable files are refused, each with a sentence naming it.
    const QString junk = tmp.filePath("junk.png");
    {
      QFile f(junk);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray(5000, '\x7f'));
    }
    errors.clear();
    QCOMPARE(chat->attachUrls({QUrl::fromLocalFile(junk), QUrl::fromLocalFile(tmp.path()),
                               QUrl::fromLocalFile(tmp.filePath("missing.jpg"))}),
             0);
    QCOMPARE(errors.count(), 3);
    QVERIFY(errors.at(0).at(0).toString().contains("junk.png"));
    QVERIFY(errors.at(2).at(0).toString().contains("missing.jpg"));
    QCOMPARE(chat->pendingAttachments().size(), 0);
  }

  void restartFindsTheHistory() {
    QTemporaryDir tmp;
    qint64 conversation = 0;
    QString reply;
    {
      auto app = makeApp(tmp.path());
      QVERIFY(loadModel(*app));
      QVERIFY(sendAndWait(app->chat(), "Remember the lighthouse") > 0);
      conversation = app->chat()->currentConversationId();
      reply = row(app->chat()->messages(), 1, MessageListModel::ContentRole).toString() +
              row(app->chat()->messages(), 1, MessageListModel::ReasoningRole).toString();
      QVERIFY(!reply.isEmpty());
    }
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QSignalSpy listed(chat, &ChatController::conversationsLoaded);
    QVERIFY(listed.wait(kWaitMs));
    QCOMPARE(chat->conversations()->rowCount(), 1);
    QCOMPARE(chat->conversations()->idAt(0), conversation);
    QCOMPARE(chat->conversations()->data(chat->conversations()->index(0), ConversationListModel::TitleRole).toString(),
             QString("Remember the lighthouse"));
    // The model used last is remembered.
    QCOMPARE(app->settings()->recentModels().value(0), QDir(kDemo).canonicalPath());
    QSignalSpy loaded(chat, &ChatController::conversationLoaded);
    chat->openConversation(conversation);
    QVERIFY(loaded.wait(kWaitMs));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(row(chat->messages(), 0, MessageListModel::ContentRole).toString(), QString("Remember the lighthouse"));
    QCOMPARE(row(chat->messages(), 1, MessageListModel::ContentRole).toString() +
                 row(chat->messages(), 1, MessageListModel::ReasoningRole).toString(),
             reply);
  }

  void renamePinDeleteAndUndo() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QAbstractItemModelTester tester(chat->conversations(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(loadModel(*app));
    QVERIFY(sendAndWait(chat, "First chat") > 0);
    const qint64 first = chat->currentConversationId();
    chat->newConversation();
    QVERIFY(sendAndWait(chat, "Second chat") > 0);
    ConversationListModel* list = chat->conversations();
    QTRY_COMPARE(list->rowCount(), 2);
    QCOMPARE(list->idAt(1), first);  // most recent first

    QSignalSpy listed(chat, &ChatController::conversationsLoaded);
    chat->renameConversation(first, "  Renamed   chat ");
    QTRY_COMPARE_WITH_TIMEOUT(list->titleOf(first), QString("Renamed chat"), kWaitMs);
    chat->setPinned(first, true);
    QTRY_COMPARE_WITH_TIMEOUT(list->idAt(0), first, kWaitMs);
    QCOMPARE(list->data(list->index(0), ConversationListModel::SectionRole).toString(), QString("Pinned"));

    chat->openConversation(first);
    chat->deleteConversation(first);
    QCOMPARE(list->rowCount(), 1);
    QCOMPARE(chat->currentConversationId(), qint64(0));  // the open chat closed
    QVERIFY(chat->undoText().contains("Renamed chat"));
    chat->undoDelete();
    QCOMPARE(list->rowCount(), 2);
    QVERIFY(chat->undoText().isEmpty());
    QCOMPARE(chat->store().list_conversations().get().value().size(), std::size_t(2));

    chat->deleteConversation(first);
    chat->commitPendingDelete();
    QVERIFY(listed.wait(kWaitMs));
    QTRY_COMPARE_WITH_TIMEOUT(list->rowCount(), 1, kWaitMs);
    const auto remaining = chat->store().list_conversations().get().value();
    QCOMPARE(remaining.size(), std::size_t(1));
    QVERIFY(remaining[0].id != first);
  }

  void engineErrorsReachTheBanner() {
    QTemporaryDir tmp;
    const QString broken = tmp.filePath("broken-model");
    QDir().mkpath(broken);
    for (const QString& name : QDir(kDemo).entryList(QDir::Files)) QFile::copy(kDemo + "/" + name, broken + "/" + name);
    {
      QFile t(broken + "/chat_template.jinja");
      QVERIFY(t.open(QIODevice::WriteOnly | QIODevice::Truncate));
      t.write("{{ raise_exception('this template refuses every conversation') }}");
    }
    auto app = makeApp(tmp.path());
    QVERIFY(loadModel(*app, broken));
    QSignalSpy finished(app->chat(), &ChatController::replyFinished);
    QVERIFY(app->chat()->send("Hello"));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(finished.at(0).at(1).toBool(), false);
    QVERIFY2(app->errorMessage().contains("this template refuses every conversation"), qPrintable(app->errorMessage()));
    QCOMPARE(row(app->chat()->messages(), 1, MessageListModel::StateRole).toString(), QString("error"));
    app->dismissError();
    QVERIFY(app->errorMessage().isEmpty());
  }

  void loadingProblemsAreExplained() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    QSignalSpy errors(app->models(), &ModelManager::errorOccurred);
    app->models()->load(tmp.filePath("no-such-model"));
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY(app->errorMessage().contains("no-such-model"));
    QVERIFY(!app->models()->loaded());
    // Sending without a model keeps the text in the composer (send returns false).
    QVERIFY(!app->chat()->send("Anyone there?"));

    if (!day0::discover_devices().gpus.empty()) QSKIP("a GPU is present: the CPU fallback is not exercised");
    app->settings()->setDevice("cuda:0");
    QSignalSpy notices(app->models(), &ModelManager::noticeOccurred);
    QVERIFY(loadModel(*app));
    QCOMPARE(notices.count(), 1);
    QVERIFY2(notices.at(0).at(0).toString().contains("cuda:0 is not available") &&
                 notices.at(0).at(0).toString().contains("CPU instead"),
             qPrintable(notices.at(0).at(0).toString()));
    QVERIFY(app->noticeMessage().contains("CPU instead"));
    QCOMPARE(app->models()->device(), QString("cpu"));
    QCOMPARE(app->models()->progress(), 1.0);
  }

  void loadReportsBytesRead() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    QSignalSpy progress(app->bridge(), &EngineBridge::loadProgress);
    QVERIFY(loadModel(*app));
    qint64 shards = 0;
    for (const QFileInfo& f : QDir(kDemo).entryInfoList({"*.safetensors"}, QDir::Files)) shards += f.size();
    QVERIFY(shards > 0);
    QVERIFY(progress.count() >= 2);  // "checking", then the bytes read
    const auto last = progress.last();
    QCOMPARE(last.at(0).toLongLong(), shards);
    QCOMPARE(last.at(1).toLongLong(), shards);
    qint64 previous = -1;
    for (const auto& p : progress) {
      QVERIFY(p.at(0).toLongLong() >= previous);  // never goes backwards
      previous = p.at(0).toLongLong();
    }
    QCOMPARE(app->models()->progress(), 1.0);
    QVERIFY(app->models()->progressText().contains("CPU"));
  }

  void firstRunOpensTheDemoModel() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    QVERIFY(app->settings()->firstRun());
    QVERIFY(!app->models()->demoModelPath().isEmpty());
    QSignalSpy ready(app->models(), &ModelManager::modelReady);
    app->start({});
    QVERIFY(ready.wait(kWaitMs));
    QVERIFY(app->models()->loadedIsDemo());
    QVERIFY(!app->settings()->firstRun());
    app->models()->unload();
    QVERIFY(!app->models()->loaded());
  }
};

QTEST_MAIN(TestGuiChat)
#include "test_gui_chat.moc"
