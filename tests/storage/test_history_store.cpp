// HistoryStore: calls return at once, results arrive through futures and callbacks on the
// store thread, and streamed reply text is committed in batches about every 250 ms.
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <thread>

#include "storage/history_store.h"
#include "storage/migrations.h"

using namespace day0::storage;
using Clock = std::chrono::steady_clock;

namespace {

StoreOptions quiet_options() {
  StoreOptions o;
  o.open.daily_backup = false;
  return o;
}

// What another connection (another process, after a crash) would read from the file.
std::string content_on_disk(const std::filesystem::path& path, std::int64_t id, std::string* state = nullptr) {
  auto db = Database::open(path);
  if (!db) return "<cannot open>";
  if (state) *state = db->query_text("SELECT state FROM messages WHERE id = " + std::to_string(id)).value();
  return db->query_text("SELECT content FROM messages WHERE id = " + std::to_string(id)).value();
}

}  // namespace

class TestHistoryStore : public QObject {
  Q_OBJECT
 private slots:
  void futuresAndCallbacks() {
    QTemporaryDir tmp;
    HistoryStore store(tmp.filePath("history.db").toStdString(), quiet_options());
    QVERIFY(store.open_report().get().is_ok());

    const auto caller = std::this_thread::get_id();
    std::atomic<bool> called{false};
    std::thread::id callback_thread;
    auto future =
        store.create_conversation({"Hello", "m", nlohmann::json::object()}, [&](const StoreResult<Conversation>& r) {
          callback_thread = std::this_thread::get_id();
          called = r.is_ok() && r->title == "Hello";
        });
    auto conv = future.get();
    QVERIFY(conv.is_ok());
    QVERIFY(called);  // the callback ran before the future became ready
    QVERIFY(callback_thread != caller);

    NewMessage m;
    m.conversation_id = conv->id;
    m.content = "first";
    auto msg = store.add_message(m).get();
    QVERIFY(msg.is_ok());
    QCOMPARE(store.messages(conv->id).get()->size(), std::size_t{1});
    QCOMPARE(store.list_conversations().get()->front().message_count, std::int64_t{1});
    QCOMPARE(store.search("first").get()->size(), std::size_t{1});
    QCOMPARE(store.path_to(msg->id).get()->size(), std::size_t{1});
    QCOMPARE(store.find_conversation(conv->uuid).get()->id, conv->id);
    QVERIFY(!store.conversation(999).get().is_ok());

    // Calls keep their order: a read queued after a write sees it.
    ConversationPatch patch;
    patch.title = "Renamed";
    auto update = store.update_conversation(conv->id, patch);
    auto read = store.conversation(conv->id);
    QCOMPARE(read.get()->title, std::string("Renamed"));
    QVERIFY(update.get().is_ok());
  }

  void callsNeverWait() {
    // While the store thread is busy, calls still return at once.
    QTemporaryDir tmp;
    HistoryStore store(tmp.filePath("history.db").toStdString(), quiet_options());
    std::promise<void> release;
    auto released = release.get_future().share();
    auto busy = store.run<Ok>([released](HistoryDb&) -> StoreStatus {
      released.wait();
      return Ok{};
    });
    const auto start = Clock::now();
    auto queued = store.create_conversation({"while busy", "", nlohmann::json::object()});
    store.append_reply(12345, "text");
    auto search = store.search("anything");
    const auto elapsed = Clock::now() - start;
    QVERIFY(elapsed < std::chrono::milliseconds(50));
    QCOMPARE(queued.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
    release.set_value();
    QVERIFY(busy.get().is_ok());
    QVERIFY(queued.get().is_ok());
    QVERIFY(search.get().is_ok());
  }

  void streamedTextIsCommittedInBatches() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    std::mutex mutex;
    std::vector<std::pair<Clock::time_point, std::size_t>> commits;
    StoreOptions options = quiet_options();
    options.on_reply_commit = [&](const std::vector<ReplyCommit>& c) {
      std::lock_guard lock(mutex);
      commits.emplace_back(Clock::now(), c.front().content_bytes);
    };
    HistoryStore store(path, options);
    const auto conv = store.create_conversation({"stream", "", nlohmann::json::object()}).get().value();
    NewMessage q;
    q.conversation_id = conv.id;
    q.content = "Tell me a story";
    const auto question = store.add_message(q).get().value();
    // The question is on disk before any reply exists.
    QCOMPARE(content_on_disk(path, question.id), std::string("Tell me a story"));
    const auto reply = store.begin_reply({conv.id, question.id, "m"}).get().value();
    std::string state;
    QCOMPARE(content_on_disk(path, reply.id, &state), std::string());
    QCOMPARE(state, std::string("incomplete"));

    // ~1.3 s of tokens, one every 10 ms.
    std::string sent;
    const auto start = Clock::now();
    bool seen_partial_on_disk = false;
    for (int i = 0; Clock::now() - start < std::chrono::milliseconds(1300); ++i) {
      const std::string token = "t" + std::to_string(i) + " ";
      store.append_reply(reply.id, token);
      sent += token;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (i == 60) {
        // Mid-stream, another connection sees a committed prefix, marked incomplete.
        const std::string on_disk = content_on_disk(path, reply.id, &state);
        seen_partial_on_disk = !on_disk.empty() && sent.rfind(on_disk, 0) == 0 && state == "incomplete";
      }
    }
    QVERIFY(seen_partial_on_disk);
    {
      std::lock_guard lock(mutex);
      // About every 250 ms: 1.3 s gives 4 to 6 batches, never two within ~200 ms.
      QVERIFY2(commits.size() >= 4 && commits.size() <= 6, qPrintable(QString::number(commits.size())));
      for (std::size_t i = 1; i < commits.size(); ++i) {
        QVERIFY(commits[i].first - commits[i - 1].first > std::chrono::milliseconds(200));
        QVERIFY(commits[i].second > commits[i - 1].second);
      }
      QVERIFY(commits.front().first - start < std::chrono::milliseconds(400));
    }
    ReplyEnd end;
    end.stats.completion_tokens = 130;
    QVERIFY(store.finish_reply(reply.id, end).get().is_ok());
    QCOMPARE(content_on_disk(path, reply.id, &state), sent);
    QCOMPARE(state, std::string("complete"));
  }

  void splitCharactersAreHeldBack() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    HistoryStore store(path, quiet_options());
    const auto conv = store.create_conversation({"utf8", "", nlohmann::json::object()}).get().value();
    const auto reply = store.begin_reply({conv.id, std::nullopt, ""}).get().value();
    // 東 is e6 9d b1: the stream cuts it in two.
    store.append_reply(reply.id, "ab\xe6", "think\xe6\x9d");
    QVERIFY(store.flush().get().is_ok());
    QCOMPARE(content_on_disk(path, reply.id), std::string("ab"));
    store.append_reply(reply.id, "\x9d\xb1!", "\xb1");
    QVERIFY(store.flush().get().is_ok());
    QCOMPARE(content_on_disk(path, reply.id), std::string("ab\xe6\x9d\xb1!"));
    QCOMPARE(store.messages(conv.id).get()->front().reasoning, std::string("think\xe6\x9d\xb1"));
    // A character still cut at the end of the stream becomes U+FFFD.
    store.append_reply(reply.id, "\xe4\xb8");
    QVERIFY(store.finish_reply(reply.id, {}).get().is_ok());
    QCOMPARE(content_on_disk(path, reply.id), std::string("ab\xe6\x9d\xb1!\xef\xbf\xbd\xef\xbf\xbd"));
  }

  void closingCommitsBufferedText() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    std::int64_t id = 0;
    {
      StoreOptions options = quiet_options();
      options.flush_interval = std::chrono::hours(1);
      HistoryStore store(path, options);
      const auto conv = store.create_conversation({"close", "", nlohmann::json::object()}).get().value();
      id = store.begin_reply({conv.id, std::nullopt, ""}).get().value().id;
      store.append_reply(id, "buffered only");
    }
    std::string state;
    QCOMPARE(content_on_disk(path, id, &state), std::string("buffered only"));
    QCOMPARE(state, std::string("incomplete"));
  }

  void textForAFinishedReplyIsDropped() {
    QTemporaryDir tmp;
    std::vector<std::string> errors;
    std::mutex mutex;
    StoreOptions options = quiet_options();
    options.on_background_error = [&](const StoreError& e) {
      std::lock_guard lock(mutex);
      errors.push_back(e.message);
    };
    HistoryStore store(tmp.filePath("history.db").toStdString(), options);
    const auto conv = store.create_conversation({"late", "", nlohmann::json::object()}).get().value();
    const auto good = store.begin_reply({conv.id, std::nullopt, ""}).get().value();
    const auto finished = store.begin_reply({conv.id, std::nullopt, ""}).get().value();
    QVERIFY(store.finish_reply(finished.id, {}).get().is_ok());
    store.append_reply(finished.id, "too late");
    store.append_reply(good.id, "still fine");
    QVERIFY(!store.flush().get().is_ok());
    QVERIFY(store.flush().get().is_ok());  // dropped, not retried forever
    QCOMPARE(store.messages(conv.id).get()->at(0).content, std::string("still fine"));
    QCOMPARE(store.messages(conv.id).get()->at(1).content, std::string());
    std::lock_guard lock(mutex);
    QCOMPARE(errors.size(), std::size_t{1});
    QVERIFY(errors[0].find("not a reply being written") != std::string::npos);
  }

  void openFailureIsReportedToEveryCall() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    {
      auto db = Database::open(path);
      QVERIFY(db->exec("PRAGMA user_version=999").is_ok());
    }
    HistoryStore store(path, quiet_options());
    auto report = store.open_report().get();
    QVERIFY(!report.is_ok());
    QVERIFY(report.error().message.find("newer") != std::string::npos);
    auto c = store.create_conversation({"x", "", nlohmann::json::object()}).get();
    QVERIFY(!c.is_ok());
    QCOMPARE(c.error().message, report.error().message);
    store.append_reply(1, "nowhere to go");
    QVERIFY(!store.flush().get().is_ok());
    QCOMPARE(Database::open(path)->user_version().value(), 999);
  }
};

QTEST_APPLESS_MAIN(TestHistoryStore)
#include "test_history_store.moc"
