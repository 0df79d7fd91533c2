// HistoryDb: conversations, messages with branches, attachments stored once per SHA-256, and
// the life of a streaming reply.
#include <QCryptographicHash>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <thread>

#include "storage/history_db.h"
#include "storage/open_history.h"

using namespace day0::storage;

namespace {

struct Fixture {
  QTemporaryDir tmp;
  std::unique_ptr<HistoryDb> history;

  Fixture() {
    OpenOptions options;
    options.daily_backup = false;
    auto opened = open_history_database(tmp.filePath("history.db").toStdString(), options);
    if (opened) history = std::make_unique<HistoryDb>(std::move(opened->db));
  }
  std::int64_t count(const char* sql) { return history->database().query_int(sql).value(); }
};

std::string sha256_of(const std::string& bytes) {
  return QCryptographicHash::hash(QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size())),
                                  QCryptographicHash::Sha256)
      .toHex()
      .toStdString();
}

NewMessage user_message(std::int64_t conversation, std::string text, std::optional<std::int64_t> parent = {}) {
  NewMessage m;
  m.conversation_id = conversation;
  m.parent_id = parent;
  m.content = std::move(text);
  return m;
}

}  // namespace

class TestHistoryDb : public QObject {
  Q_OBJECT
 private slots:
  void conversations() {
    Fixture f;
    QVERIFY(f.history);
    auto& h = *f.history;
    auto a = h.create_conversation({"First", "gpt-oss-20b", {{"temperature", 0.5}, {"top_p", 0.9}}});
    QVERIFY(a.is_ok());
    QCOMPARE(a->title, std::string("First"));
    QCOMPARE(a->settings["top_p"].get<double>(), 0.9);
    QVERIFY(a->created_at > 1600000000000 && a->created_at == a->updated_at);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto b = h.create_conversation({"Second", "", nlohmann::json::object()});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto c = h.create_conversation({"Third", "", nlohmann::json::object()});
    QVERIFY(b.is_ok() && c.is_ok());
    QVERIFY(a->uuid != b->uuid && b->uuid != c->uuid);

    // Newest first; pinned above all; archived hidden unless asked for.
    auto list = h.list_conversations();
    QCOMPARE(list->size(), std::size_t{3});
    QCOMPARE(list->at(0).title, std::string("Third"));
    QCOMPARE(list->at(2).title, std::string("First"));
    ConversationPatch pin;
    pin.pinned = true;
    QVERIFY(h.update_conversation(a->id, pin).is_ok());
    ConversationPatch archive;
    archive.archived = true;
    QVERIFY(h.update_conversation(c->id, archive).is_ok());
    list = h.list_conversations();
    QCOMPARE(list->size(), std::size_t{2});
    QCOMPARE(list->at(0).title, std::string("First"));
    QVERIFY(list->at(0).pinned);
    QCOMPARE(h.list_conversations({true, -1, 0})->size(), std::size_t{3});
    QCOMPARE(h.list_conversations({true, 1, 1})->front().title, std::string("Third"));

    // A patch changes only what it names.
    ConversationPatch rename;
    rename.title = "First, renamed";
    rename.settings = nlohmann::json{{"temperature", 1.0}};
    QVERIFY(h.update_conversation(a->id, rename).is_ok());
    auto a2 = h.conversation(a->id);
    QCOMPARE(a2->title, std::string("First, renamed"));
    QCOMPARE(a2->model, std::string("gpt-oss-20b"));
    QVERIFY(a2->pinned);
    QCOMPARE(a2->settings, (nlohmann::json{{"temperature", 1.0}}));
    QCOMPARE(f.history->database().query_text("SELECT settings FROM conversations WHERE id = 1").value(),
             std::string("{\"temperature\":1.0}"));

    // Finding a conversation by number, uuid and unique uuid prefix.
    QCOMPARE(h.find_conversation(std::to_string(b->id))->uuid, b->uuid);
    QCOMPARE(h.find_conversation(b->uuid)->id, b->id);
    QCOMPARE(h.find_conversation(b->uuid.substr(0, 8))->id, b->id);
    QVERIFY(!h.find_conversation("999").is_ok());
    QVERIFY(!h.find_conversation("zz").is_ok());
    QVERIFY(!h.find_conversation("%").is_ok());
    QVERIFY(!h.find_conversation("ffffffff-ffff").is_ok());
    // A uuid prefix made only of digits is not mistaken for a conversation number that does
    // not exist; a number that is an id still means that id.
    QVERIFY(f.history->database()
                .exec("UPDATE conversations SET uuid = '19216100-aaaa-4aaa-8aaa-aaaaaaaaaaaa' WHERE id = " +
                      std::to_string(b->id))
                .is_ok());
    QCOMPARE(h.find_conversation("192161")->id, b->id);
    QCOMPARE(h.find_conversation(std::to_string(a->id))->id, a->id);
    QVERIFY(!h.find_conversation("192162").is_ok());

    // Errors name what is wrong.
    auto missing = h.update_conversation(42, rename);
    QVERIFY(!missing.is_ok());
    QVERIFY(missing.error().message.find("no conversation 42") != std::string::npos);
    QVERIFY(!h.create_conversation({std::string(70000, 'x'), "", nlohmann::json::object()}).is_ok());
    QVERIFY(!h.create_conversation({"bad settings", "", nlohmann::json::array()}).is_ok());
    QVERIFY(h.delete_conversation(b->id).is_ok());
    QVERIFY(!h.delete_conversation(b->id).is_ok());
    QCOMPARE(f.count("SELECT count(*) FROM conversations"), std::int64_t{2});
  }

  void messagesBranchesAndAttachments() {
    Fixture f;
    auto& h = *f.history;
    const auto conv = h.create_conversation({"Pictures", "", nlohmann::json::object()}).value();
    const auto other = h.create_conversation({"Other", "", nlohmann::json::object()}).value();
    const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(1000, '\x01');
    const std::string jpg = std::string("\xff\xd8\xff", 3) + std::string(500, '\0');

    // The same image twice in one message and again in another: stored once.
    NewMessage ask = user_message(conv.id, "What is in these?");
    ask.attachments = {{"image/png", "a.png", png}, {"image/jpeg", "b.jpg", jpg}, {"image/png", "a-again.png", png}};
    auto q = h.add_message(ask);
    QVERIFY2(q.is_ok(), q.is_ok() ? "" : q.error().message.c_str());
    QCOMPARE(q->role, Role::user);
    QCOMPARE(q->state, MessageState::complete);
    QCOMPARE(q->attachments.size(), std::size_t{3});
    QCOMPARE(q->attachments[0].sha256, sha256_of(png));
    QCOMPARE(q->attachments[0].size, std::int64_t{1008});
    QCOMPARE(q->attachments[1].mime_type, std::string("image/jpeg"));
    QCOMPARE(q->attachments[1].sha256, sha256_of(jpg));
    QCOMPARE(q->attachments[2].file_name, std::string("a-again.png"));
    QCOMPARE(q->attachments[2].position, 2);
    NewMessage again = user_message(other.id, "Same picture");
    again.attachments = {{"image/png", "copy.png", png}};
    QVERIFY(h.add_message(again).is_ok());
    QCOMPARE(f.count("SELECT count(*) FROM blobs"), std::int64_t{2});
    QCOMPARE(f.count("SELECT count(*) FROM attachments"), std::int64_t{4});
    QCOMPARE(h.attachment_data(sha256_of(png)).value(), png);
    QCOMPARE(h.attachment_data(sha256_of(jpg)).value(), jpg);  // NUL bytes survive

    // Two answers to one question are siblings (a branch); each path leads back to it.
    NewMessage first_answer = user_message(conv.id, "A cat.", q->id);
    first_answer.role = Role::assistant;
    NewMessage second_answer = user_message(conv.id, "Two cats.", q->id);
    second_answer.role = Role::assistant;
    const auto a1 = h.add_message(first_answer).value();
    const auto a2 = h.add_message(second_answer).value();
    const auto follow = h.add_message(user_message(conv.id, "Which one is older?", a2.id)).value();
    auto path = h.path_to(follow.id).value();
    QCOMPARE(path.size(), std::size_t{3});
    QCOMPARE(path[0].id, q->id);
    QCOMPARE(path[1].id, a2.id);
    QCOMPARE(path[2].id, follow.id);
    QCOMPARE(path[0].attachments.size(), std::size_t{3});
    QCOMPARE(h.path_to(a1.id)->size(), std::size_t{2});
    auto all = h.messages(conv.id).value();
    QCOMPARE(all.size(), std::size_t{4});
    QCOMPARE(all[0].attachments.size(), std::size_t{3});
    QCOMPARE(*all[2].parent_id, q->id);
    QVERIFY(h.conversation(conv.id)->updated_at >= follow.created_at);
    QCOMPARE(h.conversation(conv.id)->message_count, std::int64_t{4});

    // A parent must exist and belong to the same conversation; the conversation must exist.
    auto wrong = h.add_message(user_message(other.id, "cross", a1.id));
    QVERIFY(!wrong.is_ok());
    QVERIFY(wrong.error().message.find("another conversation") != std::string::npos);
    QVERIFY(!h.add_message(user_message(conv.id, "dangling", 9999)).is_ok());
    QVERIFY(!h.add_message(user_message(9999, "nowhere")).is_ok());
    NewMessage bad_type = user_message(conv.id, "x");
    bad_type.attachments = {{"image/png; charset=../../x", "x", "y"}};
    QVERIFY(!h.add_message(bad_type).is_ok());
    QCOMPARE(f.count("SELECT count(*) FROM messages"), std::int64_t{5});

    // Text that is not UTF-8 is repaired, not refused.
    auto repaired = h.add_message(user_message(conv.id, "caf\xe9"));
    QCOMPARE(repaired->content, std::string("caf\xef\xbf\xbd"));

    // Deleting the question deletes the whole branch below it; images no one uses go too.
    QVERIFY(h.delete_message(q->id).is_ok());
    QCOMPARE(h.messages(conv.id)->size(), std::size_t{1});
    QCOMPARE(f.count("SELECT count(*) FROM blobs"), std::int64_t{1});  // the png, still used by "Same picture"
    QVERIFY(!h.attachment_data(sha256_of(jpg)).is_ok());
    QVERIFY(h.delete_conversation(other.id).is_ok());
    QCOMPARE(f.count("SELECT count(*) FROM blobs"), std::int64_t{0});
    QCOMPARE(f.history->database().integrity_check().value(), std::string("ok"));
  }

  void presets() {
    Fixture f;
    auto& h = *f.history;
    QVERIFY(h.presets()->empty());
    QVERIFY(h.save_preset("Precise", {{"temperature", 0.1}}).is_ok());
    QVERIFY(h.save_preset("Creative", {{"temperature", 1.2}, {"stop", {"###"}}}).is_ok());
    QVERIFY(h.save_preset("Precise", {{"temperature", 0.2}}).is_ok());  // replaces
    auto list = h.presets().value();
    QCOMPARE(list.size(), std::size_t{2});
    QCOMPARE(list[0].name, std::string("Creative"));  // by name
    QCOMPARE(list[0].settings["stop"][0].get<std::string>(), std::string("###"));
    QCOMPARE(list[1].settings["temperature"].get<double>(), 0.2);
    QVERIFY(!h.save_preset("", nlohmann::json::object()).is_ok());
    QVERIFY(!h.save_preset("Array", nlohmann::json::array()).is_ok());
    QVERIFY(h.delete_preset("Precise").is_ok());
    QVERIFY(!h.delete_preset("Precise").is_ok());
    QCOMPARE(h.presets()->size(), std::size_t{1});
  }

  void streamingReply() {
    Fixture f;
    auto& h = *f.history;
    const auto conv = h.create_conversation({"Stream", "", nlohmann::json::object()}).value();
    const auto q = h.add_message(user_message(conv.id, "Count to three")).value();
    auto r = h.begin_reply({conv.id, q.id, "gpt-oss-20b"});
    QVERIFY(r.is_ok());
    QCOMPARE(r->role, Role::assistant);
    QCOMPARE(r->state, MessageState::incomplete);
    QCOMPARE(r->content, std::string());
    QCOMPARE(*r->parent_id, q.id);

    auto commits = h.append_reply({{r->id, "One, ", "counting"}});
    QVERIFY(commits.is_ok());
    QCOMPARE(commits->size(), std::size_t{1});
    QCOMPARE(commits->front().content_bytes, std::size_t{5});
    QCOMPARE(commits->front().reasoning_bytes, std::size_t{8});
    commits = h.append_reply({{r->id, "two, \xe4\xb8\x89", ""}});  // 三
    QCOMPARE(commits->front().content_bytes, std::size_t{13});
    QCOMPARE(h.message(r->id)->content, std::string("One, two, \xe4\xb8\x89"));
    QCOMPARE(h.message(r->id)->state, MessageState::incomplete);

    ReplyEnd end;
    end.stats = {12, 3, 80.5, std::numeric_limits<double>::infinity(), "max_tokens"};
    QVERIFY(h.finish_reply(r->id, end, {{r->id, ".", ""}}).is_ok());
    auto done = h.message(r->id).value();
    QCOMPARE(done.state, MessageState::complete);
    QCOMPARE(done.content, std::string("One, two, \xe4\xb8\x89."));
    QCOMPARE(done.reasoning, std::string("counting"));
    QCOMPARE(*done.stats.prompt_tokens, std::int64_t{12});
    QCOMPARE(*done.stats.completion_tokens, std::int64_t{3});
    QCOMPARE(*done.stats.ttft_ms, 80.5);
    QVERIFY(!done.stats.tokens_per_second);  // infinite: stored as unknown
    QCOMPARE(done.stats.stop_reason, std::string("max_tokens"));

    // A finished reply takes no more text and cannot be finished again.
    auto late = h.append_reply({{r->id, "more", ""}});
    QVERIFY(!late.is_ok());
    QVERIFY(late.error().message.find("not a reply being written") != std::string::npos);
    QVERIFY(!h.finish_reply(r->id, end).is_ok());
    QCOMPARE(h.message(r->id)->content, std::string("One, two, \xe4\xb8\x89."));

    // A failed generation keeps its partial text and says why.
    auto failed = h.begin_reply({conv.id, q.id, "gpt-oss-20b"}).value();
    QVERIFY(h.append_reply({{failed.id, "Partial", ""}}).is_ok());
    ReplyEnd error_end;
    error_end.state = MessageState::error;
    error_end.error = "CUDA out of memory";
    QVERIFY(h.finish_reply(failed.id, error_end).is_ok());
    QCOMPARE(h.message(failed.id)->state, MessageState::error);
    QCOMPARE(h.message(failed.id)->error, std::string("CUDA out of memory"));
    QCOMPARE(h.message(failed.id)->content, std::string("Partial"));

    // One bad delta in a batch rolls the whole batch back.
    auto third = h.begin_reply({conv.id, q.id, ""}).value();
    auto mixed = h.append_reply({{third.id, "kept?", ""}, {r->id, "no", ""}});
    QVERIFY(!mixed.is_ok());
    QCOMPARE(h.message(third.id)->content, std::string());
    QVERIFY(!h.begin_reply({conv.id, 99999, ""}).is_ok());
  }
};

QTEST_APPLESS_MAIN(TestHistoryDb)
#include "test_history_db.moc"
