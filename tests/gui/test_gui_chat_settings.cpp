// Per-conversation settings: the system prompt, sampling and stop strings a conversation keeps
// in the history (across a restart), what its requests send, presets, and the load options
// (context length) chosen before loading. The real engine with the demo model, the real SQLite
// history in a temporary folder.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "bridge/engine_bridge.h"
#include "gui/app_controller.h"
#include "gui/app_fixture.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"

using namespace day0::app;

namespace {

using day0::gui_test::kDemo;
using day0::gui_test::kWaitMs;
using day0::gui_test::loadModel;
using day0::gui_test::makeApp;




qint64 createConversation(ChatController* chat, const std::string& title) {
  day0::storage::NewConversation c;
  c.title = title;
  auto r = chat->store().create_conversation(c).get();
  return r.is_ok() ? r.value().id : 0;
}

bool openAndWait(ChatController* chat, qint64 id) {
  QSignalSpy loaded(chat, &ChatController::conversationLoaded);
  chat->openConversation(id);
  return loaded.wait(kWaitMs);
}

nlohmann::json storedSettings(ChatController* chat, qint64 id) {
  auto r = chat->store().conversation(id).get();
  return r.is_ok() ? r.value().settings : nlohmann::json();
}

bool waitPresets(ChatController* chat, const QStringList& expected) {
  return QTest::qWaitFor([&]() { return chat->presets() == expected; }, kWaitMs);
}

}  // namespace

class TestGuiChatSettings : public QObject {
  Q_OBJECT
 private slots:
  void valuesPersistPerConversation() {
    QTemporaryDir tmp;
    qint64 a = 0, b = 0;
    {
      auto app = makeApp(tmp.path());
      app->settings()->setTemperature(0.3);
      ChatController* chat = app->chat();
      // A new chat shows the defaults.
      QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 0.3);
      QCOMPARE(chat->chatSettings().value("custom").toBool(), false);

      a = createConversation(chat, "A");
      b = createConversation(chat, "B");
      QVERIFY(a > 0 && b > 0);
      QVERIFY(openAndWait(chat, a));
      QVERIFY(chat->setChatSetting("temperature", 1.5));
      QVERIFY(chat->setChatSetting("topK", 40));
      QVERIFY(chat->setChatSetting("minP", 0.05));
      QVERIFY(chat->setChatSetting("repetitionPenalty", 1.1));
      QVERIFY(chat->setChatSetting("maxNewTokens", 77));
      QVERIFY(chat->setChatSetting("stopStrings", QString("END\n\nSTOP\nEND")));
      QVERIFY(chat->setChatSetting("systemPrompt", QString("Be brief.")));

      // Impossible values and unknown keys are refused with a message; nothing changes.
      QSignalSpy errors(chat, &ChatController::errorOccurred);
      QVERIFY(!chat->setChatSetting("temperature", 7.0));
      QVERIFY(!chat->setChatSetting("topK", 2.5));
      QVERIFY(!chat->setChatSetting("maxNewTokens", 0));
      QVERIFY(!chat->setChatSetting("topP", QString("lots")));
      QVERIFY(!chat->setChatSetting("bogus", 1));
      QCOMPARE(errors.count(), 5);
      QVERIFY(errors.at(0).at(0).toString().contains("between 0 and 2"));

      const QVariantMap v = chat->chatSettings();
      QCOMPARE(v.value("custom").toBool(), true);
      QCOMPARE(v.value("temperature").toDouble(), 1.5);
      QCOMPARE(v.value("topK").toInt(), 40);
      QCOMPARE(v.value("stopStrings").toStringList(), QStringList({"END", "STOP"}));

      const GenerationParams p = chat->generationParams();
      QCOMPARE(p.temperature, 1.5f);
      QCOMPARE(p.top_k, 40);
      QCOMPARE(p.min_p, 0.05f);
      QCOMPARE(p.repetition_penalty, 1.1f);
      QCOMPARE(p.max_new_tokens, std::int64_t(77));
      QCOMPARE(p.stop_strings, std::vector<std::string>({"END", "STOP"}));

      // The other conversation still follows the defaults.
      QVERIFY(openAndWait(chat, b));
      QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 0.3);
      QCOMPARE(chat->generationParams().max_new_tokens, std::int64_t(12));
    }
    // A restart of the app (the controller and the database) keeps them.
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    app->settings()->setTemperature(0.9);
    QVERIFY(openAndWait(chat, a));
    QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 1.5);
    QCOMPARE(chat->chatSettings().value("systemPrompt").toString(), QString("Be brief."));
    QCOMPARE(chat->generationParams().max_new_tokens, std::int64_t(77));
    QCOMPARE(storedSettings(chat, a)["generation"]["top_k"].get<int>(), 40);
    QVERIFY(openAndWait(chat, b));
    QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 0.9);

    // Values a database holds that are impossible (edited by hand, another version) are not
    // used: the defaults stand in for them.
    day0::storage::ConversationPatch patch;
    patch.settings = nlohmann::json{{"generation", {{"temperature", 99}, {"top_k", "many"}, {"max_new_tokens", 5}}}};
    QVERIFY(chat->store().update_conversation(b, patch).get().is_ok());
    QVERIFY(openAndWait(chat, b));
    QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 0.9);
    QCOMPARE(chat->generationParams().top_k, 0);
    QCOMPARE(chat->generationParams().max_new_tokens, std::int64_t(5));
  }

  void requestUsesTheChatsValues() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    app->settings()->setSystemPrompt("You are a pirate zebra.");
    QVERIFY(loadModel(*app));
    app->bridge()->setPromptTap(true);
    QSignalSpy prompts(app->bridge(), &EngineBridge::promptSubmitted);

    // A new chat's changes are stored with it when it is created.
    QVERIFY(chat->setChatSetting("maxNewTokens", 2));
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("Hello"));
    QVERIFY(finished.wait(kWaitMs));
    const qint64 conversation = chat->currentConversationId();
    QVERIFY(conversation > 0);
    QCOMPARE(storedSettings(chat, conversation)["generation"]["max_new_tokens"].get<int>(), 2);
    auto messages = chat->store().messages(conversation).get().value();
    QCOMPARE(messages.back().role, day0::storage::Role::assistant);
    QVERIFY(messages.back().stats.completion_tokens.value_or(99) <= 2);
    // Why it ended is stored and shown with the reply's figures.
    const std::string why = messages.back().stats.stop_reason;
    QVERIFY2(why == "max_tokens" || why == "eos", why.c_str());
    if (messages.back().stats.completion_tokens.value_or(0) == 2 && why == "max_tokens") {
      MessageListModel* m = chat->messages();
      QVERIFY(m->data(m->index(m->rowCount() - 1), MessageListModel::StatsRole)
                  .toString()
                  .contains("cut at the longest reply"));
    }
    QCOMPARE(prompts.count(), 1);
    QVERIFY(prompts.at(0).at(1).toString().contains("You are a pirate zebra."));

    // The conversation's system prompt replaces the one it started with.
    QVERIFY(chat->setChatSetting("systemPrompt", QString("Speak as a violet owl.")));
    finished.clear();
    chat->regenerate(messages.back().id);
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(prompts.count(), 2);
    QVERIFY(prompts.at(1).at(1).toString().contains("Speak as a violet owl."));
    QVERIFY(!prompts.at(1).at(1).toString().contains("pirate zebra"));
    messages = chat->store().messages(conversation).get().value();
    QVERIFY(messages.back().stats.completion_tokens.value_or(99) <= 2);
  }

  // The conversation's system message follows its system prompt at once: in the history (what
  // an export or day0-cli shows) and in the messages the next reply is built from; emptied, it
  // goes; given again, it leads the conversation again.
  void systemMessageFollowsTheChatsPrompt() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    app->settings()->setSystemPrompt("You are a pirate zebra.");
    QVERIFY(loadModel(*app));
    QVERIFY(chat->setChatSetting("maxNewTokens", 2));
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("Hello"));
    QVERIFY(finished.wait(kWaitMs));
    const qint64 id = chat->currentConversationId();
    MessageListModel* m = chat->messages();
    const auto stored = [&] { return chat->store().messages(id).get().value(); };
    const auto storedSystem = [&]() -> QString {
      const auto list = stored();
      return !list.empty() && list.front().role == day0::storage::Role::system
                 ? QString::fromStdString(list.front().content)
                 : QString("(none)");
    };
    const auto shownSystem = [&]() -> QString {
      const auto chain = m->chainTo(*m->lastId());
      return !chain.empty() && chain.front().role == day0::storage::Role::system
                 ? QString::fromStdString(chain.front().content)
                 : QString("(none)");
    };
    QCOMPARE(storedSystem(), QString("You are a pirate zebra."));
    QCOMPARE(m->rowCount(), 2);

    QSignalSpy changed(chat, &ChatController::systemMessageChanged);
    QVERIFY(chat->setChatSetting("systemPrompt", QString("Speak as a violet owl.")));
    QVERIFY(changed.wait(kWaitMs));
    QCOMPARE(changed.at(0).at(0).toLongLong(), id);
    QCOMPARE(storedSystem(), QString("Speak as a violet owl."));
    QCOMPARE(shownSystem(), QString("Speak as a violet owl."));
    QCOMPARE(m->rowCount(), 2);
    QVERIFY(QString::fromStdString(chat->store().export_markdown({id}).get().value()).contains("violet owl"));

    // Emptied: no system message; the question leads.
    changed.clear();
    QVERIFY(chat->setChatSetting("systemPrompt", QString("")));
    QVERIFY(changed.wait(kWaitMs));
    QCOMPARE(storedSystem(), QString("(none)"));
    QCOMPARE(shownSystem(), QString("(none)"));
    QVERIFY(!stored().front().parent_id.has_value());
    QCOMPARE(m->rowCount(), 2);

    // Given again: a new first message leads every branch; export, import and copies still work.
    changed.clear();
    QVERIFY(chat->setChatSetting("systemPrompt", QString("Be a quiet heron.")));
    QVERIFY(changed.wait(kWaitMs));
    const auto list = stored();
    QCOMPARE(QString::fromStdString(list.front().content), QString("Be a quiet heron."));
    QCOMPARE(list[1].parent_id.value_or(0), list.front().id);
    QCOMPARE(shownSystem(), QString("Be a quiet heron."));
    QCOMPARE(m->rowCount(), 2);
    const auto json = chat->store().export_json({id}).get();
    QVERIFY2(json.is_ok(), json.is_ok() ? "" : json.error().message.c_str());
    day0::storage::HistoryStore other((tmp.path() + "/other.db").toStdString());
    const auto imported = other.import_json(json.value()).get();
    QVERIFY2(imported.is_ok(), imported.is_ok() ? "" : imported.error().message.c_str());
    const auto copy = chat->store().duplicate_conversation(id, "copy").get();
    QVERIFY2(copy.is_ok(), copy.is_ok() ? "" : copy.error().message.c_str());

    // The next reply is built from it.
    app->bridge()->setPromptTap(true);
    QSignalSpy prompts(app->bridge(), &EngineBridge::promptSubmitted);
    finished.clear();
    QVERIFY(chat->send("And now?"));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(prompts.count(), 1);
    QVERIFY(prompts.at(0).at(1).toString().contains("Be a quiet heron."));
    QCOMPARE(storedSystem(), QString("Be a quiet heron."));

    // Reset to the defaults: the Settings' prompt again.
    changed.clear();
    chat->resetChatSettings();
    QVERIFY(changed.wait(kWaitMs));
    QCOMPARE(storedSystem(), QString("You are a pirate zebra."));
  }

  void presets() {
    QTemporaryDir tmp;
    qint64 b = 0;
    {
      auto app = makeApp(tmp.path());
      ChatController* chat = app->chat();
      const qint64 a = createConversation(chat, "A");
      b = createConversation(chat, "B");
      QVERIFY(openAndWait(chat, a));
      QVERIFY(chat->setChatSetting("temperature", 1.25));
      QVERIFY(chat->setChatSetting("stopStrings", QStringList{"###"}));
      chat->savePreset("  Terse  ");
      QVERIFY(waitPresets(chat, {"Terse"}));
      QSignalSpy errors(chat, &ChatController::errorOccurred);
      chat->savePreset("   ");
      QCOMPARE(errors.count(), 1);
    }
    auto app = makeApp(tmp.path());
    ChatController* chat = app->chat();
    QVERIFY(waitPresets(chat, {"Terse"}));
    QVERIFY(openAndWait(chat, b));
    QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 0.7);
    QSignalSpy applied(chat, &ChatController::presetApplied);
    chat->applyPreset("Terse");
    QVERIFY(applied.wait(kWaitMs));
    QCOMPARE(chat->chatSettings().value("temperature").toDouble(), 1.25);
    QCOMPARE(chat->generationParams().stop_strings, std::vector<std::string>({"###"}));
    QTRY_COMPARE_WITH_TIMEOUT(storedSettings(chat, b)["generation"].value("temperature", 0.0), 1.25, kWaitMs);

    QSignalSpy errors(chat, &ChatController::errorOccurred);
    chat->applyPreset("Missing");
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY(errors.at(0).at(0).toString().contains("Missing"));
    chat->deletePreset("Terse");
    QVERIFY(waitPresets(chat, {}));
  }

  void loadOptionsBeforeLoading() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    app->settings()->setContextLength(4096);
    QVERIFY(loadModel(*app));
    QCOMPARE(app->bridge()->contextWindow(), qint64(4096));

    // More than the model holds: a clear refusal, and nothing loaded.
    app->models()->unload();
    app->settings()->setContextLength(1 << 20);
    QSignalSpy failed(app->bridge(), &EngineBridge::loadFailed);
    app->models()->load(kDemo);
    QVERIFY(failed.wait(kWaitMs));
    QVERIFY(!failed.at(0).at(1).toString().isEmpty());
    QVERIFY(!app->models()->loaded());
  }
};

QTEST_MAIN(TestGuiChatSettings)
#include "test_gui_chat_settings.moc"
