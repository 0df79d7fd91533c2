// Upgrading a history written by every earlier schema version: the database is built by
// applying the first N migrations, filled with rows in that version's own shape (the SQL
// below is the fixture), then opened by today's code. Nothing may be lost, the new columns
// must be filled, search must work (CJK included), and a backup of the old file must exist.
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "storage/backups.h"
#include "storage/codec.h"
#include "storage/history_db.h"
#include "storage/migrations.h"
#include "storage/open_history.h"
#include "storage/statement.h"

using namespace day0::storage;

namespace {

// Rows a version-1 database could hold: two conversations, a branch (two replies to one
// question), reasoning, statistics, an incomplete reply, CJK text, one image used twice.
const char* kSeedV1 = R"sql(
INSERT INTO conversations (id, title, created_at, updated_at, model, settings, pinned, archived) VALUES
  (1, 'Trip to Tokyo', 1000, 5000, 'glm5_next', '{ "temperature": 0.7 }', 1, 0),
  (2, 'Old notes', 2000, 2000, '', '{}', 0, 1);
INSERT INTO messages (id, conversation_id, parent_id, role, content, reasoning, state, prompt_tokens,
                      completion_tokens, ttft_ms, tokens_per_second, model, created_at) VALUES
  (1, 1, NULL, 'user', '東京都の天気はどうですか', '', 'complete', NULL, NULL, NULL, NULL, '', 1100),
  (2, 1, 1, 'assistant', 'Sunny in Tokyo today.', 'The user asks about weather.', 'complete', 12, 6, 85.5, 41.25,
   'glm5_next', 1200),
  (3, 1, 1, 'assistant', 'It may rain', '', 'incomplete', NULL, NULL, NULL, NULL, 'glm5_next', 1300),
  (4, 2, NULL, 'user', 'remember the borrow checker', '', 'complete', NULL, NULL, NULL, NULL, '', 2100);
INSERT INTO blobs (sha256, mime_type, size, data) VALUES
  ('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'image/png', 5, CAST('hello' AS BLOB));
INSERT INTO attachments (message_id, sha256, file_name, position) VALUES
  (1, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'map.png', 0),
  (4, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'copy.png', 0);
)sql";

// The same rows as version 2 holds them: with uuids, which must survive unchanged, and the
// error text of a failed reply.
const char* kSeedV2 = R"sql(
INSERT INTO conversations (id, uuid, title, created_at, updated_at, model, settings, pinned, archived) VALUES
  (1, '11111111-1111-4111-8111-111111111111', 'Trip to Tokyo', 1000, 5000, 'glm5_next', '{ "temperature": 0.7 }', 1, 0),
  (2, '22222222-2222-4222-8222-222222222222', 'Old notes', 2000, 2000, '', '{}', 0, 1);
INSERT INTO messages (id, uuid, conversation_id, parent_id, role, content, reasoning, state, error, prompt_tokens,
                      completion_tokens, ttft_ms, tokens_per_second, model, created_at) VALUES
  (1, 'aaaaaaaa-0000-4000-8000-000000000001', 1, NULL, 'user', '東京都の天気はどうですか', '', 'complete', '', NULL,
   NULL, NULL, NULL, '', 1100),
  (2, 'aaaaaaaa-0000-4000-8000-000000000002', 1, 1, 'assistant', 'Sunny in Tokyo today.',
   'The user asks about weather.', 'complete', '', 12, 6, 85.5, 41.25, 'glm5_next', 1200),
  (3, 'aaaaaaaa-0000-4000-8000-000000000003', 1, 1, 'assistant', 'It may rain', '', 'error', 'out of memory', NULL,
   NULL, NULL, NULL, 'glm5_next', 1300),
  (4, 'aaaaaaaa-0000-4000-8000-000000000004', 2, NULL, 'user', 'remember the borrow checker', '', 'complete', '',
   NULL, NULL, NULL, NULL, '', 2100);
INSERT INTO blobs (sha256, mime_type, size, data) VALUES
  ('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'image/png', 5, CAST('hello' AS BLOB));
INSERT INTO attachments (message_id, sha256, file_name, position) VALUES
  (1, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'map.png', 0),
  (4, '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', 'copy.png', 0);
)sql";

const char* seed_for(int version) {
  switch (version) {
    case 1:
      return kSeedV1;
    case 2:
    case 3:  // version 3 changed only the search indexes
    case 4:  // version 4 added message columns with defaults
    case 5:  // version 5 added the presets table
      return kSeedV2;
    default:
      return nullptr;  // version 0: an empty file
  }
}

std::vector<Migration> first(int n) {
  const auto& all = history_migrations();
  return {all.begin(), all.begin() + n};
}

std::set<std::string> message_search(Database& db, const std::string& match) {
  std::set<std::string> out;
  auto s = Statement::prepare(db,
                              "SELECT m.content FROM message_search JOIN messages m ON m.id = message_search.rowid "
                              "WHERE message_search MATCH ?1");
  if (!s) return out;
  s->bind(1, match);
  while (s->step().value()) out.insert(s->column_text(0));
  return out;
}

}  // namespace

class TestMigrations : public QObject {
  Q_OBJECT
 private slots:
  void versionsAreNumberedInOrder() {
    const auto& all = history_migrations();
    QVERIFY(all.size() >= 3);
    for (std::size_t i = 0; i < all.size(); ++i) QCOMPARE(all[i].version, static_cast<int>(i) + 1);
    QCOMPARE(latest_history_version(), static_cast<int>(all.size()));
  }

  void fromEveryEarlierVersion_data() {
    QTest::addColumn<int>("version");
    for (int v = 0; v < latest_history_version(); ++v) QTest::newRow(qPrintable("v" + QString::number(v))) << v;
  }

  void fromEveryEarlierVersion() {
    QFETCH(int, version);
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    {
      auto db = Database::open(path);
      QVERIFY(db.is_ok());
      QVERIFY(db->migrate(first(version)).is_ok());
      QCOMPARE(db->user_version().value(), version);
      if (const char* seed = seed_for(version)) {
        auto s = db->exec(seed);
        QVERIFY2(s.is_ok(), s.is_ok() ? "" : s.error().message.c_str());
      }
    }

    OpenOptions options;
    options.daily_backup = false;
    auto opened = open_history_database(path, options);
    QVERIFY2(opened.is_ok(), opened.is_ok() ? "" : opened.error().message.c_str());
    QCOMPARE(opened->report.schema_before, version);
    QCOMPARE(opened->report.schema_after, latest_history_version());
    QVERIFY(!opened->report.moved_aside);
    Database& db = opened->db;
    QCOMPARE(db.user_version().value(), latest_history_version());
    QCOMPARE(db.integrity_check().value(), std::string("ok"));
    QCOMPARE(db.query_text("PRAGMA foreign_key_check").value(), std::string());
    QCOMPARE(db.query_int("PRAGMA foreign_keys").value(), std::int64_t{1});

    if (version == 0) {
      // A new database: no backup of nothing, and the schema is usable.
      QVERIFY(opened->report.backups_made.empty());
      HistoryDb history(std::move(db));
      auto c = history.create_conversation({"first", "", nlohmann::json::object()});
      QVERIFY(c.is_ok());
      QVERIFY(is_uuid(c->uuid));
      return;
    }

    // A backup of the old file, at the old version, was written before the upgrade.
    QCOMPARE(opened->report.backups_made.size(), std::size_t{1});
    const auto backup = opened->report.backups_made.front();
    QVERIFY2(backup.filename().string().find("-before-v" + std::to_string(latest_history_version()) + ".db") !=
                 std::string::npos,
             backup.c_str());
    {
      auto old = Database::open_read_only(backup);
      QVERIFY(old.is_ok());
      QCOMPARE(old->user_version().value(), version);
      QCOMPARE(old->query_int("SELECT count(*) FROM messages").value(), std::int64_t{4});
    }

    // Every row and value survived.
    QCOMPARE(db.query_int("SELECT count(*) FROM conversations").value(), std::int64_t{2});
    QCOMPARE(db.query_int("SELECT count(*) FROM messages").value(), std::int64_t{4});
    QCOMPARE(db.query_int("SELECT count(*) FROM attachments").value(), std::int64_t{2});
    QCOMPARE(db.query_int("SELECT count(*) FROM blobs").value(), std::int64_t{1});
    QCOMPARE(db.query_text("SELECT title || '|' || created_at || '|' || updated_at || '|' || model || '|' || settings "
                           "|| '|' || pinned || '|' || archived FROM conversations ORDER BY id")
                 .value(),
             std::string("Trip to Tokyo|1000|5000|glm5_next|{ \"temperature\": 0.7 }|1|0\n"
                         "Old notes|2000|2000||{}|0|1"));
    QCOMPARE(
        db.query_text("SELECT id || '|' || conversation_id || '|' || ifnull(parent_id, '-') || '|' || role || '|' "
                      "|| content || '|' || reasoning || '|' || ifnull(prompt_tokens, '-') || '|' || "
                      "ifnull(completion_tokens, '-') || '|' || ifnull(ttft_ms, '-') || '|' || "
                      "ifnull(tokens_per_second, '-') || '|' || model || '|' || created_at FROM messages ORDER BY id")
            .value(),
        std::string(
            "1|1|-|user|東京都の天気はどうですか||-|-|-|-||1100\n"
            "2|1|1|assistant|Sunny in Tokyo today.|The user asks about weather.|12|6|85.5|41.25|glm5_next|1200\n"
            "3|1|1|assistant|It may rain||-|-|-|-|glm5_next|1300\n"
            "4|2|-|user|remember the borrow checker||-|-|-|-||2100"));
    QCOMPARE(db.query_text("SELECT message_id || ':' || file_name FROM attachments ORDER BY message_id").value(),
             std::string("1:map.png\n4:copy.png"));
    // Version 4's columns: no knowledge context, no sources.
    QCOMPARE(db.query_text("SELECT group_concat(length(context) || sources) FROM messages").value(),
             std::string("0[],0[],0[],0[]"));
    // Version 6's: no stop reason known; version 5's presets table, empty.
    QCOMPARE(db.query_text("SELECT group_concat('<' || stop_reason || '>') FROM messages").value(),
             std::string("<>,<>,<>,<>"));
    QCOMPARE(db.query_int("SELECT count(*) FROM presets").value(), std::int64_t{0});
    QCOMPARE(db.query_text("SELECT state || ':' || error FROM messages WHERE id = 3").value(),
             std::string(version == 1 ? "incomplete:" : "error:out of memory"));

    // uuids: filled in (version 1) or kept (version 2), well formed, unique.
    const auto uuids = db.query_text("SELECT uuid FROM conversations UNION ALL SELECT uuid FROM messages").value();
    std::set<std::string> distinct;
    for (const auto& line : QString::fromStdString(uuids).split('\n')) {
      const auto u = line.toStdString();
      QVERIFY2(is_uuid(u), u.c_str());
      QCOMPARE(u[14], '4');
      QVERIFY(u[19] == '8' || u[19] == '9' || u[19] == 'a' || u[19] == 'b');
      distinct.insert(u);
    }
    QCOMPARE(distinct.size(), std::size_t{6});
    if (version >= 2) {
      QCOMPARE(db.query_text("SELECT uuid FROM conversations WHERE id = 1").value(),
               std::string("11111111-1111-4111-8111-111111111111"));
      QCOMPARE(db.query_text("SELECT uuid FROM messages WHERE id = 4").value(),
               std::string("aaaaaaaa-0000-4000-8000-000000000004"));
    }

    // The rebuilt indexes cover the old rows and find CJK substrings.
    QCOMPARE(message_search(db, "\"天気は\""), std::set<std::string>{"東京都の天気はどうですか"});
    QCOMPARE(message_search(db, "\"borrow\""), std::set<std::string>{"remember the borrow checker"});
    QCOMPARE(message_search(db, "\"weather\""), std::set<std::string>{"Sunny in Tokyo today."});
    HistoryDb history(std::move(db));
    auto hits = history.search("天気");
    QVERIFY(hits.is_ok());
    QCOMPARE(hits->size(), std::size_t{1});
    QCOMPARE(hits->front().message_id, std::int64_t{1});
    hits = history.search("Tokyo");
    QVERIFY(hits.is_ok());
    QCOMPARE(hits->size(), std::size_t{2});  // the title, then the reply
    QCOMPARE(hits->at(0).message_id, std::int64_t{0});
    QCOMPARE(hits->at(1).message_id, std::int64_t{2});

    // Cascades still work on the rebuilt tables: deleting the question deletes both replies.
    QVERIFY(history.delete_message(1).is_ok());
    QCOMPARE(history.database().query_int("SELECT count(*) FROM messages WHERE conversation_id = 1").value(),
             std::int64_t{0});
    QCOMPARE(history.database().query_int("SELECT count(*) FROM blobs").value(), std::int64_t{1});  // still used by 4
    QVERIFY(history.delete_conversation(2).is_ok());
    QCOMPARE(history.database().query_int("SELECT count(*) FROM blobs").value(), std::int64_t{0});
    auto added = history.add_message({1, std::nullopt, Role::user, "again", "", "", {}});
    QVERIFY(added.is_ok());
    QCOMPARE(history.search("again").value().size(), std::size_t{1});
  }

  void upgradeIsIdempotent() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    {
      auto db = Database::open(path);
      QVERIFY(db->migrate(first(1)).is_ok());
      QVERIFY(db->exec(kSeedV1).is_ok());
    }
    OpenOptions options;
    options.daily_backup = false;
    std::string uuids;
    {
      auto opened = open_history_database(path, options);
      QVERIFY(opened.is_ok());
      uuids = opened->db.query_text("SELECT uuid FROM messages ORDER BY id").value();
    }
    auto again = open_history_database(path, options);
    QVERIFY(again.is_ok());
    QCOMPARE(again->report.schema_before, latest_history_version());
    QVERIFY(again->report.backups_made.empty());  // nothing to upgrade, so no backup
    QCOMPARE(again->db.query_text("SELECT uuid FROM messages ORDER BY id").value(), uuids);
  }
};

QTEST_APPLESS_MAIN(TestMigrations)
#include "test_migrations.moc"
