// Export and import: a JSON round trip into a fresh database is exact, importing twice adds
// nothing, a grown conversation merges, Markdown reads well, and hostile files (hand-made
// and randomly mutated) are refused with a message and change nothing.
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "storage/history_db.h"
#include "storage/open_history.h"
#include "storage/transfer.h"
#include "storage/validate.h"

using namespace day0::storage;
using json = nlohmann::json;

namespace {

struct Db {
  QTemporaryDir tmp;
  std::unique_ptr<HistoryDb> history;
  Db() {
    OpenOptions options;
    options.daily_backup = false;
    auto opened = open_history_database(tmp.filePath("history.db").toStdString(), options);
    if (opened) history = std::make_unique<HistoryDb>(std::move(opened->db));
  }
  std::int64_t count(const char* table) {
    return history->database().query_int(std::string("SELECT count(*) FROM ") + table).value();
  }
  // Row counts of every table, to show that a refused import changed nothing.
  std::string counts() {
    std::string s;
    for (const char* t : {"conversations", "messages", "attachments", "blobs"}) s += std::to_string(count(t)) + " ";
    return s;
  }
};

const std::string kPng = std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) + std::string(300, '\x07');
const std::string kGif = std::string("GIF89a", 6) + std::string(64, '\0');

// Everything the format carries: branches, reasoning, every state, statistics (with values
// that need all 17 digits), attachments shared across conversations, an empty attachment,
// nested settings, CJK, emoji, control characters and a NUL inside text.
void fill(HistoryDb& h) {
  auto a =
      h.create_conversation({"東京 trip 🗼", "glm5_next",
                             json{{"temperature", 0.1 + 0.2}, {"stop", {"</s>", "\n\n"}}, {"nested", {{"k", {1, 2}}}}}})
          .value();
  auto b = h.create_conversation({"", "", json::object()}).value();
  ConversationPatch patch;
  patch.pinned = true;
  patch.archived = true;
  QVERIFY(h.update_conversation(b.id, patch).is_ok());

  NewMessage sys;
  sys.conversation_id = a.id;
  sys.role = Role::system;
  sys.content = "You are helpful.";
  const auto s = h.add_message(sys).value();
  NewMessage q;
  q.conversation_id = a.id;
  q.parent_id = s.id;
  q.content = std::string("What is this?\n\ttab \"quote\" \\ back\x01slash and NUL:\0end", 52);
  q.attachments = {
      {"image/png", "tower.png", kPng}, {"image/gif", "", kGif}, {"application/octet-stream", "empty", ""}};
  const auto question = h.add_message(q).value();
  auto r1 = h.begin_reply({a.id, question.id, "glm5_next"}).value();
  QVERIFY(h.append_reply({{r1.id, "東京タワーです。", "画像を見る"}}).is_ok());
  ReplyEnd end;
  end.stats = {1234, 56, 123.456789012345678, 0.1 + 0.7, "stop_string"};
  QVERIFY(h.finish_reply(r1.id, end).is_ok());
  auto r2 = h.begin_reply({a.id, question.id, "glm5_next"}).value();  // a second branch, cut off
  QVERIFY(h.append_reply({{r2.id, "It is", ""}}).is_ok());
  auto r3 = h.begin_reply({a.id, question.id, "glm5_next"}).value();
  ReplyEnd failed;
  failed.state = MessageState::error;
  failed.error = "out of memory";
  QVERIFY(h.finish_reply(r3.id, failed).is_ok());
  NewMessage follow;
  follow.conversation_id = a.id;
  follow.parent_id = r1.id;
  follow.role = Role::user;
  follow.content = "ありがとう 😀";
  QVERIFY(h.add_message(follow).is_ok());

  NewMessage other;
  other.conversation_id = b.id;
  other.content = "same picture again";
  other.attachments = {{"image/png", "copy.png", kPng}};
  QVERIFY(h.add_message(other).is_ok());
  NewMessage tool;
  tool.conversation_id = b.id;
  tool.role = Role::tool;
  tool.content = "{\"result\": 42}";
  QVERIFY(h.add_message(tool).is_ok());
}

std::string without_export_time(const std::string& text) {
  auto doc = json::parse(text);
  doc.erase("exported_at");
  return doc.dump();
}

// Every field of every conversation and message, ids replaced by uuids, for comparing two
// databases.
std::string describe(HistoryDb& h) {
  std::string out;
  auto list = h.list_conversations({true, -1, 0}).value();
  std::sort(list.begin(), list.end(), [](const Conversation& a, const Conversation& b) { return a.uuid < b.uuid; });
  for (const auto& c : list) {
    out += c.uuid + "|" + c.title + "|" + std::to_string(c.created_at) + "|" + std::to_string(c.updated_at) + "|" +
           c.model + "|" + c.settings.dump() + "|" + std::to_string(c.pinned) + std::to_string(c.archived) + "\n";
    std::map<std::int64_t, std::string> uuid;
    for (const auto& m : h.messages(c.id).value()) {
      uuid[m.id] = m.uuid;
      char stats[200];
      std::snprintf(stats, sizeof stats, "%lld|%lld|%.17g|%.17g", (long long)m.stats.prompt_tokens.value_or(-1),
                    (long long)m.stats.completion_tokens.value_or(-1), m.stats.ttft_ms.value_or(-1),
                    m.stats.tokens_per_second.value_or(-1));
      out += "  " + m.uuid + "|" + (m.parent_id ? uuid[*m.parent_id] : "-") + "|" + to_string(m.role) + "|" +
             m.content + "|" + m.reasoning + "|" + to_string(m.state) + "|" + m.error + "|" + stats + "|" +
             m.stats.stop_reason + "|" + m.model +
             "|" + std::to_string(m.created_at) + "\n";
      for (const auto& a : m.attachments) {
        out += "    " + a.sha256 + "|" + a.mime_type + "|" + a.file_name + "|" + std::to_string(a.size) + "|" +
               std::to_string(a.position) + "|" + h.attachment_data(a.sha256).value() + "\n";
      }
    }
  }
  return out;
}

// The conversation fill() makes with branches.
StoreResult<Conversation> tokyo(HistoryDb& h) {
  for (const auto& c : h.list_conversations({true, -1, 0}).value())
    if (c.title == "東京 trip 🗼") return c;
  return store_error("no such conversation");
}

}  // namespace

class TestTransfer : public QObject {
  Q_OBJECT
  std::string valid_export_;

 private slots:
  void initTestCase() {
    Db source;
    fill(*source.history);
    valid_export_ = export_json(*source.history).value();
  }

  void roundTripIsExact() {
    Db a;
    fill(*a.history);
    const std::string exported = export_json(*a.history).value();

    // The file, read with Qt's JSON parser: the format's fields, and each blob's bytes and
    // hash checked against Qt's own base64 and SHA-256.
    const QJsonObject doc = QJsonDocument::fromJson(QByteArray::fromStdString(exported)).object();
    QCOMPARE(doc["format"].toString(), QString("day0-history"));
    QCOMPARE(doc["version"].toInt(), 1);
    QCOMPARE(doc["conversations"].toArray().size(), 2);
    const QJsonArray blobs = doc["blobs"].toArray();
    QCOMPARE(blobs.size(), 3);  // png (used twice), gif, empty
    for (const auto& v : blobs) {
      const QJsonObject b = v.toObject();
      const QByteArray bytes = QByteArray::fromBase64(b["data"].toString().toLatin1());
      QCOMPARE(bytes.size(), b["size"].toInt());
      QCOMPARE(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex(), b["sha256"].toString().toLatin1());
    }
    const QJsonArray messages = doc["conversations"].toArray()[0].toObject()["messages"].toArray();
    QCOMPARE(messages.size(), 6);
    QCOMPARE(messages[1].toObject()["content"].toString().size(), 52);  // the NUL is kept
    QCOMPARE(messages[2].toObject()["parent"].toString(), messages[1].toObject()["uuid"].toString());
    QCOMPARE(messages[2].toObject()["tokens_per_second"].toDouble(), 0.1 + 0.7);

    // Into a fresh database: the same records, and the same export.
    Db b;
    auto report = import_json(*b.history, exported);
    QVERIFY2(report.is_ok(), report.is_ok() ? "" : report.error().message.c_str());
    QCOMPARE(report->conversations_added, 2);
    QCOMPARE(report->messages_added, 8);
    QCOMPARE(report->attachments_added, 4);
    QCOMPARE(describe(*b.history), describe(*a.history));
    QCOMPARE(without_export_time(export_json(*b.history).value()), without_export_time(exported));
    QCOMPARE(b.count("blobs"), std::int64_t{3});
    // Search works on imported text.
    QCOMPARE(b.history->search("タワー")->size(), std::size_t{1});

    // Twice: nothing new, nothing duplicated.
    const std::string before = b.counts();
    report = import_json(*b.history, exported);
    QVERIFY(report.is_ok());
    QCOMPARE(report->conversations_added, 0);
    QCOMPARE(report->conversations_merged, 2);
    QCOMPARE(report->messages_added, 0);
    QCOMPARE(report->messages_skipped, 8);
    QCOMPARE(b.counts(), before);
    // Into the database it came from: the same.
    const std::string original = a.counts();
    QVERIFY(import_json(*a.history, exported).is_ok());
    QCOMPARE(a.counts(), original);
    QCOMPARE(b.history->database().integrity_check().value(), std::string("ok"));
  }

  void exportOfOneConversationAndMerge() {
    Db a;
    fill(*a.history);
    const auto list = a.history->list_conversations({true, -1, 0}).value();
    const Conversation& tokyo = list[0].title.empty() ? list[1] : list[0];
    const std::string first = export_json(*a.history, {tokyo.id}).value();
    const json doc = json::parse(first);
    QCOMPARE(doc["conversations"].size(), std::size_t{1});
    QCOMPARE(doc["blobs"].size(), std::size_t{3});

    // The conversation grows after the first export; importing the second export into a
    // database that has the first adds only the new message.
    NewMessage more;
    more.conversation_id = tokyo.id;
    more.content = "one more question";
    QVERIFY(a.history->add_message(more).is_ok());
    const std::string second = export_json(*a.history, {tokyo.id}).value();
    Db b;
    QVERIFY(import_json(*b.history, first).is_ok());
    auto report = import_json(*b.history, second);
    QVERIFY(report.is_ok());
    QCOMPARE(report->conversations_merged, 1);
    QCOMPARE(report->messages_added, 1);
    QCOMPARE(report->messages_skipped, 6);
    QCOMPARE(b.count("messages"), std::int64_t{7});
  }

  // A copy of a conversation: every branch, state, statistic and attachment, under new uuids
  // and the given title; the blobs are shared, not stored twice; the original is unchanged.
  void duplicateCopiesEveryBranch() {
    Db db;
    fill(*db.history);
    auto& h = *db.history;
    const auto original = tokyo(h);
    QVERIFY(original.is_ok());
    const auto a = h.messages(original->id).value();
    const auto blobs = db.count("blobs");
    auto copy = duplicate_conversation(h, original->id, "東京 trip 🗼 (copy)");
    QVERIFY2(copy.is_ok(), copy.is_ok() ? "" : copy.error().message.c_str());
    QVERIFY(copy->id != original->id && copy->uuid != original->uuid);
    QCOMPARE(copy->title, std::string("東京 trip 🗼 (copy)"));
    QCOMPARE(db.count("blobs"), blobs);
    const auto b = h.messages(copy->id).value();
    QCOMPARE(b.size(), a.size());
    std::map<std::int64_t, std::size_t> index;  // copy's id -> position
    for (std::size_t i = 0; i < b.size(); ++i) index[b[i].id] = i;
    std::map<std::int64_t, std::size_t> originalIndex;
    for (std::size_t i = 0; i < a.size(); ++i) originalIndex[a[i].id] = i;
    for (std::size_t i = 0; i < a.size(); ++i) {
      QVERIFY(b[i].uuid != a[i].uuid);
      QCOMPARE(b[i].content, a[i].content);
      QCOMPARE(b[i].reasoning, a[i].reasoning);
      QCOMPARE(to_string(b[i].state), to_string(a[i].state));
      QCOMPARE(b[i].stats.ttft_ms, a[i].stats.ttft_ms);
      QCOMPARE(b[i].attachments.size(), a[i].attachments.size());
      QCOMPARE(b[i].parent_id.has_value(), a[i].parent_id.has_value());
      if (a[i].parent_id) QCOMPARE(index.at(*b[i].parent_id), originalIndex.at(*a[i].parent_id));  // the same tree
    }
    // The original is as it was.
    const auto still = h.messages(original->id).value();
    QCOMPARE(still.size(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(still[i].uuid, a[i].uuid);
      QCOMPARE(still[i].content, a[i].content);
    }
    QVERIFY(!duplicate_conversation(h, 999999, "x").is_ok());
  }

  void editMessageReplacesTheText() {
    Db db;
    fill(*db.history);
    auto& h = *db.history;
    const auto found = tokyo(h);
    QVERIFY(found.is_ok());
    const auto conversation = found.value();
    auto messages = h.messages(conversation.id).value();
    const auto& reply = messages[2];
    QCOMPARE(to_string(reply.role), "assistant");
    QVERIFY(h.edit_message(reply.id, "Edited: the Tokyo Tower, 333 m").is_ok());
    const auto edited = h.message(reply.id).value();
    QCOMPARE(edited.content, std::string("Edited: the Tokyo Tower, 333 m"));
    QCOMPARE(edited.reasoning, reply.reasoning);
    QCOMPARE(edited.uuid, reply.uuid);
    auto hits = h.search("333").value();
    QCOMPARE(hits.size(), std::size_t{1});
    QCOMPARE(hits[0].message_id, reply.id);
    QVERIFY(!h.edit_message(999999, "x").is_ok());
    QVERIFY(!h.edit_message(reply.id, std::string(kMaxTextBytes + 1, 'x')).is_ok());
  }

  void markdown() {
    Db a;
    fill(*a.history);
    const std::string md = export_markdown(*a.history).value();
    for (const char* expected : {"# 東京 trip 🗼\n",
                                 "# Untitled conversation\n",
                                 "- Model: glm5_next\n",
                                 "- Pinned, Archived\n",
                                 "## 1. System",
                                 "## 2. User",
                                 "## 3. Assistant (glm5_next)",
                                 "<details><summary>Reasoning</summary>\n\n画像を見る",
                                 "東京タワーです。",
                                 "> *Incomplete: the reply was cut off.*",
                                 "> *Failed: out of memory*",
                                 "in reply to 2",
                                 "in reply to 3",
                                 "- Attachment: tower.png (image/png, 316 B, SHA-256 ",
                                 "- Attachment: (unnamed) (image/gif, 70 B",
                                 "1234 prompt tokens \xc2\xb7 56 tokens",
                                 "0.8 tokens/s",
                                 "first token after 123 ms",
                                 "## 1. User",
                                 "## 2. Tool"}) {
      QVERIFY2(md.find(expected) != std::string::npos, expected);
    }
  }

  void hostileFilesAreRefused_data() {
    QTest::addColumn<QString>("path");      // where to change the valid document ("" = replace it)
    QTest::addColumn<QByteArray>("value");  // JSON of the new value, or the whole file when path is ""
    QTest::addColumn<QString>("message");   // part of the expected error
    auto row = [](const char* name, const char* path, const QByteArray& value, const char* message) {
      QTest::newRow(name) << QString(path) << value << QString(message);
    };

    row("not json", "", QByteArray("{\"format\": \"day0-history\", "), "not valid JSON");
    row("array", "", QByteArray("[1, 2]"), "not a Day0 history export");
    row("invalid utf-8", "", QByteArray("{\"format\": \"day0-history\", \"x\": \"\xff\"}"), "not valid JSON");
    row("deep", "", QByteArray(100000, '['), "nested deeper");
    row("format", "/format", QByteArray("\"other\""), "not a Day0 history export");
    row("newer version", "/version", QByteArray("2"), "newer Day0");
    row("version type", "/version", QByteArray("\"1\""), "version: must be an integer");
    row("no conversations", "/conversations", QByteArray("null"), "conversations: must be an array");
    row("uuid", "/conversations/0/uuid", QByteArray("\"not-a-uuid\""), "conversations[0].uuid");
    row("uuid uppercase", "/conversations/0/uuid", QByteArray("\"AAAAAAAA-0000-4000-8000-000000000000\""),
        "not a lowercase UUID");
    row("duplicate conversation", "/conversations/1/uuid", QByteArray("@conversations/0/uuid"), "appears twice");
    row("duplicate message", "/conversations/1/messages/0/uuid", QByteArray("@conversations/0/messages/0/uuid"),
        "appears twice");
    row("role", "/conversations/0/messages/1/role", QByteArray("\"robot\""), "'robot' is not one of");
    row("state", "/conversations/0/messages/1/state", QByteArray("\"done\""), "'done' is not one of");
    row("content type", "/conversations/0/messages/1/content", QByteArray("42"), "content: must be a string");
    row("missing content", "/conversations/0/messages/1/content", QByteArray("#remove"), "content: missing");
    row("negative time", "/conversations/0/created_at", QByteArray("-5"), "created_at: -5 is outside");
    row("float time", "/conversations/0/messages/0/created_at", QByteArray("1.5"), "must be an integer");
    row("huge time", "/conversations/0/updated_at", QByteArray("18446744073709551615"), "out of range");
    row("tokens", "/conversations/0/messages/2/prompt_tokens", QByteArray("-1"), "prompt_tokens");
    row("rate", "/conversations/0/messages/2/tokens_per_second", QByteArray("\"fast\""), "must be a number");
    row("rate range", "/conversations/0/messages/2/ttft_ms", QByteArray("1e300"), "ttft_ms: out of range");
    row("forward parent", "/conversations/0/messages/1/parent", QByteArray("@conversations/0/messages/2/uuid"),
        "is not an earlier message");
    row("self parent", "/conversations/0/messages/1/parent", QByteArray("@conversations/0/messages/1/uuid"),
        "is not an earlier message");
    row("foreign parent", "/conversations/1/messages/1/parent", QByteArray("@conversations/0/messages/0/uuid"),
        "is not an earlier message");
    row("unknown parent", "/conversations/0/messages/1/parent", QByteArray("\"aaaaaaaa-0000-4000-8000-000000000000\""),
        "is not an earlier message");
    row("pinned", "/conversations/0/pinned", QByteArray("1"), "pinned: must be true or false");
    row("settings", "/conversations/0/settings", QByteArray("[1]"), "settings: must be an object");
    row("long title", "/conversations/0/title", "\"" + QByteArray(70000, 'x') + "\"", "title: longer than");
    row("attachment missing blob", "/conversations/0/messages/1/attachments/0/sha256",
        "\"" + QByteArray(64, 'a') + "\"", "not among the file's blobs");
    row("blob hash", "/blobs/0/sha256", "\"" + QByteArray(64, 'b') + "\"", "do not have the SHA-256");
    row("blob size", "/blobs/0/size", QByteArray("3"), "says size 3");
    row("blob base64", "/blobs/0/data", QByteArray("\"@@@@\""), "not valid base64");
    row("blob padding", "/blobs/0/data", QByteArray("\"Zh==\""), "not valid base64");
    row("blob type", "/blobs/0/mime_type", QByteArray("\"../../etc/passwd\""), "is not a media type");
    row("blob huge size", "/blobs/0/size", QByteArray("1000000000000"), "size: 1000000000000 is outside");
    row("blob beyond int64", "/blobs/0/size", QByteArray("18446744073709551615"), "size: out of range");
    row("attachments type", "/conversations/0/messages/1/attachments", QByteArray("{}"), "must be an array");
  }

  void hostileFilesAreRefused() {
    QFETCH(QString, path);
    QFETCH(QByteArray, value);
    QFETCH(QString, message);
    json doc = json::parse(valid_export_);
    std::string text;
    if (path.isEmpty()) {
      text = value.toStdString();
    } else {
      const json::json_pointer pointer(path.toStdString());
      if (value == "#remove")
        doc[pointer.parent_pointer()].erase(pointer.back());
      else if (value.startsWith('@'))
        doc[pointer] = doc[json::json_pointer("/" + value.mid(1).toStdString())];
      else
        doc[pointer] = json::parse(value.toStdString());
      text = doc.dump();
    }
    // A valid history already there: a refused file must not touch it.
    Db target;
    QVERIFY(import_json(*target.history, valid_export_).is_ok());
    const std::string before = target.counts();
    auto report = import_json(*target.history, text);
    QVERIFY2(!report.is_ok(), qPrintable(path));
    QVERIFY2(report.error().message.find(message.toStdString()) != std::string::npos, report.error().message.c_str());
    QCOMPARE(target.counts(), before);
  }

  void messageOfAnotherConversationIsRefusedAtomically() {
    Db a;
    fill(*a.history);
    Db b;
    QVERIFY(import_json(*b.history, export_json(*a.history).value()).is_ok());
    // A new conversation (valid on its own) reuses a message uuid that b has elsewhere.
    json doc = json::parse(export_json(*a.history).value());
    json stolen = doc["conversations"][0];
    stolen["uuid"] = "cccccccc-0000-4000-8000-000000000000";
    stolen["messages"] = json::array({doc["conversations"][0]["messages"][0]});
    json fresh = doc["conversations"][1];
    fresh["uuid"] = "dddddddd-0000-4000-8000-000000000000";
    fresh["messages"] = json::array();
    doc["conversations"] = json::array({fresh, stolen});
    const std::string before = b.counts();
    auto report = import_json(*b.history, doc.dump());
    QVERIFY(!report.is_ok());
    QVERIFY2(report.error().message.find("under another conversation") != std::string::npos,
             report.error().message.c_str());
    QCOMPARE(b.counts(), before);  // the valid first conversation was rolled back too
  }

  void randomMutationsNeverCrash() {
    const std::string& valid = valid_export_;
    const json valid_doc = json::parse(valid);
    Db target;
    std::mt19937 rng(99);
    int accepted = 0, refused = 0;
    // Byte-level damage: flips, cuts, insertions.
    for (int i = 0; i < 300; ++i) {
      std::string text = valid;
      for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
        const std::size_t at = rng() % text.size();
        switch (rng() % 4) {
          case 0:
            text[at] = static_cast<char>(rng());
            break;
          case 1:
            text.erase(at, 1 + rng() % 20);
            break;
          case 2:
            text.insert(at, 1, "{}[]\",:0\\"[rng() % 9]);
            break;
          default:
            text.resize(at);
            break;
        }
      }
      auto r = import_json(*target.history, text);
      r.is_ok() ? ++accepted : ++refused;
    }
    // Structural damage: a random value anywhere replaced by a value of another type.
    const std::vector<json> replacements = {nullptr,
                                            -1,
                                            0,
                                            1.5,
                                            "",
                                            std::string(100, 'x'),
                                            json::array(),
                                            json::object(),
                                            true,
                                            "00000000-0000-4000-8000-000000000000"};
    std::vector<json::json_pointer> pointers;
    const json flat = valid_doc.flatten();
    for (auto it = flat.begin(); it != flat.end(); ++it) pointers.emplace_back(it.key());
    for (int i = 0; i < 300; ++i) {
      json doc = valid_doc;
      json::json_pointer p = pointers[rng() % pointers.size()];
      if (rng() % 3 == 0 && !p.empty()) p = p.parent_pointer();
      doc[p] = replacements[rng() % replacements.size()];
      auto r = import_json(*target.history, doc.dump());
      r.is_ok() ? ++accepted : ++refused;
    }
    QVERIFY(refused > 300);
    QVERIFY(accepted > 0);
    // Whatever was accepted left a consistent database with no duplicates.
    auto& db = target.history->database();
    QCOMPARE(db.integrity_check().value(), std::string("ok"));
    QCOMPARE(db.query_text("PRAGMA foreign_key_check").value(), std::string());
    QCOMPARE(db.query_int("SELECT count(*) - count(DISTINCT uuid) FROM messages").value(), std::int64_t{0});
    QCOMPARE(db.query_int("SELECT count(*) FROM messages m JOIN messages p ON p.id = m.parent_id "
                          "WHERE p.conversation_id != m.conversation_id OR p.id >= m.id")
                 .value(),
             std::int64_t{0});
    QCOMPARE(db.query_int("SELECT count(*) FROM blobs WHERE length(data) != size").value(), std::int64_t{0});
  }
};

QTEST_APPLESS_MAIN(TestTransfer)
#include "test_transfer.moc"
