// The knowledge a user message was sent with (schema version 4): the context text and the
// sources JSON are stored with the message, read back exactly, bounded, and carried through
// a JSON export and import; hostile values in an import are refused.
#include <QTemporaryDir>
#include <QtTest>

#include "storage/history_db.h"
#include "storage/open_history.h"
#include "storage/transfer.h"

using namespace day0::storage;
using json = nlohmann::json;

namespace {

std::unique_ptr<HistoryDb> open_db(const QTemporaryDir& tmp, const char* name) {
  OpenOptions options;
  options.daily_backup = false;
  auto opened = open_history_database(tmp.filePath(name).toStdString(), options);
  if (!opened) return nullptr;
  return std::make_unique<HistoryDb>(std::move(opened->db));
}

const json kSources = json::array({{{"n", 1}, {"path", "/src/a.cpp"}, {"first_line", 10}, {"last_line", 42}},
                                   {{"n", 2}, {"path", "/doc/r.pdf"}, {"page", 3}}});
const std::string kContext = "[1] src/a.cpp:10-42\n```cpp\nint main() {}\n```\n";

}  // namespace

class TestMessageContext : public QObject {
  Q_OBJECT
 private slots:
  void storedAndReadBack() {
    QTemporaryDir tmp;
    auto h = open_db(tmp, "h.db");
    QVERIFY(h);
    const auto c = h->create_conversation({"t", "", json::object()}).value();
    NewMessage m;
    m.conversation_id = c.id;
    m.content = "Where is main?";
    m.context = kContext;
    m.sources = kSources;
    const auto added = h->add_message(m);
    QVERIFY(added.is_ok());
    QCOMPARE(added->context, kContext);
    QCOMPARE(added->sources, kSources);
    const auto all = h->messages(c.id).value();
    QCOMPARE(all.size(), std::size_t{1});
    QCOMPARE(all[0].context, kContext);
    QCOMPARE(all[0].sources, kSources);
    // A message without knowledge reads back with none.
    NewMessage plain;
    plain.conversation_id = c.id;
    plain.content = "hi";
    const auto p = h->add_message(plain).value();
    QVERIFY(p.context.empty());
    QVERIFY(p.sources.is_array() && p.sources.empty());
    // The context is not searched: only what the person wrote is.
    QCOMPARE(h->search("main").value().size(), std::size_t{1});
  }

  void badValuesAreRefused() {
    QTemporaryDir tmp;
    auto h = open_db(tmp, "h.db");
    const auto c = h->create_conversation({"t", "", json::object()}).value();
    NewMessage m;
    m.conversation_id = c.id;
    m.sources = json::object();
    QVERIFY(!h->add_message(m).is_ok());
    m.sources = json::array({std::string(2u << 20, 'x')});
    QVERIFY(!h->add_message(m).is_ok());
    m.sources = json::array();
    m.context = std::string((64u << 20) + 1, 'x');
    QVERIFY(!h->add_message(m).is_ok());
    QCOMPARE(h->database().query_int("SELECT count(*) FROM messages").value(), std::int64_t{0});
  }

  // A reply carries the sources of the question it answers (the answer they informed), kept
  // through an export and an import; a reply to a question without any has none.
  void repliesCarryTheirQuestionsSources() {
    QTemporaryDir tmp;
    auto h = open_db(tmp, "h.db");
    const auto c = h->create_conversation({"t", "", json::object()}).value();
    NewMessage m;
    m.conversation_id = c.id;
    m.content = "Where is main?";
    m.context = kContext;
    m.sources = kSources;
    const auto asked = h->add_message(m).value();
    NewReply r;
    r.conversation_id = c.id;
    r.parent_id = asked.id;
    const auto reply = h->begin_reply(r).value();
    QCOMPARE(reply.sources, kSources);
    QVERIFY(h->finish_reply(reply.id, {}, {}).is_ok());
    NewMessage plain;
    plain.conversation_id = c.id;
    plain.parent_id = reply.id;
    plain.content = "thanks";
    const auto thanks = h->add_message(plain).value();
    r.parent_id = thanks.id;
    QVERIFY(h->begin_reply(r).value().sources.empty());
    auto b = open_db(tmp, "b.db");
    QVERIFY(import_json(*b, export_json(*h).value()).is_ok());
    const auto copied = b->messages(b->list_conversations({}).value()[0].id).value();
    QCOMPARE(copied[1].sources, kSources);
  }

  void exportAndImportKeepThem() {
    QTemporaryDir tmp;
    auto a = open_db(tmp, "a.db");
    const auto c = a->create_conversation({"t", "", json::object()}).value();
    NewMessage m;
    m.conversation_id = c.id;
    m.content = "Where is main?";
    m.context = kContext;
    m.sources = kSources;
    QVERIFY(a->add_message(m).is_ok());
    NewMessage plain;
    plain.conversation_id = c.id;
    plain.content = "no knowledge";
    QVERIFY(a->add_message(plain).is_ok());
    const std::string text = export_json(*a).value();
    const json doc = json::parse(text);
    const json& messages = doc["conversations"][0]["messages"];
    QCOMPARE(messages[0]["context"].get<std::string>(), kContext);
    QCOMPARE(messages[0]["sources"], kSources);
    QVERIFY(!messages[1].contains("context"));  // absent when empty: older readers see the same file
    QVERIFY(!messages[1].contains("sources"));

    auto b = open_db(tmp, "b.db");
    QVERIFY(import_json(*b, text).is_ok());
    const auto imported = b->messages(b->list_conversations().value().front().id).value();
    QCOMPARE(imported[0].context, kContext);
    QCOMPARE(imported[0].sources, kSources);
    QVERIFY(imported[1].context.empty());
    QCOMPARE(export_json(*b).value().substr(text.find("\"conversations\"")),
             text.substr(text.find("\"conversations\"")));

    const std::string markdown = export_markdown(*a).value();
    QVERIFY(markdown.find("Context given to the model") != std::string::npos);
    QVERIFY(markdown.find(kContext) != std::string::npos);
  }

  void hostileImportIsRefused() {
    QTemporaryDir tmp;
    auto a = open_db(tmp, "a.db");
    const auto c = a->create_conversation({"t", "", json::object()}).value();
    NewMessage m;
    m.conversation_id = c.id;
    m.content = "q";
    QVERIFY(a->add_message(m).is_ok());
    const json good = json::parse(export_json(*a).value());
    auto b = open_db(tmp, "b.db");
    for (const json& bad : {json(json::object()), json("[]"), json(7), json(nullptr)}) {
      json doc = good;
      doc["conversations"][0]["messages"][0]["sources"] = bad;
      QVERIFY(!import_json(*b, doc.dump()).is_ok());
    }
    for (const json& bad : {json(7), json::array(), json::object()}) {
      json doc = good;
      doc["conversations"][0]["messages"][0]["context"] = bad;
      QVERIFY(!import_json(*b, doc.dump()).is_ok());
    }
    QCOMPARE(b->database().query_int("SELECT count(*) FROM messages").value(), std::int64_t{0});
  }
};

QTEST_APPLESS_MAIN(TestMessageContext)
#include "test_message_context.moc"
