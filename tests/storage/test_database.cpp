// The SQLite connection: durability settings, numbered migrations, integrity check, backup.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "storage/database.h"

using namespace day0::storage;

class TestDatabase : public QObject {
  Q_OBJECT
 private slots:
  void settingsAndMigrations() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    auto db = Database::open(path);
    QVERIFY2(db.is_ok(), db.is_ok() ? "" : db.error().message.c_str());
    QCOMPARE(db->query_text("PRAGMA journal_mode").value(), std::string("wal"));
    QCOMPARE(db->query_int("PRAGMA synchronous").value(), std::int64_t{2});  // FULL
    QCOMPARE(db->query_int("PRAGMA foreign_keys").value(), std::int64_t{1});
    QCOMPARE(db->user_version().value(), 0);
    QVERIFY(db->migrate(history_migrations()).is_ok());
    QCOMPARE(db->user_version().value(), history_migrations().back().version);
    QVERIFY(db->migrate(history_migrations()).is_ok());  // idempotent
    QCOMPARE(db->quick_check().value(), std::string("ok"));

    // The schema works: cascades, full-text search, constraints.
    QVERIFY(db->exec("INSERT INTO conversations(title, created_at, updated_at) VALUES ('Rust lifetimes', 1, 1)").is_ok());
    QVERIFY(db->exec("INSERT INTO messages(conversation_id, role, content, created_at) "
                     "VALUES (1, 'user', 'explain borrow checking please', 2)").is_ok());
    QCOMPARE(db->query_int("SELECT count(*) FROM message_search WHERE message_search MATCH 'borrow'").value(),
             std::int64_t{1});
    QCOMPARE(db->query_int("SELECT count(*) FROM conversation_search WHERE conversation_search MATCH 'lifetimes'").value(),
             std::int64_t{1});
    QVERIFY(!db->exec("INSERT INTO messages(conversation_id, role, content, created_at) VALUES (1, 'robot', '', 3)").is_ok());
    QVERIFY(!db->exec("INSERT INTO messages(conversation_id, role, created_at) VALUES (99, 'user', 3)").is_ok());
    QVERIFY(db->exec("DELETE FROM conversations WHERE id = 1").is_ok());
    QCOMPARE(db->query_int("SELECT count(*) FROM messages").value(), std::int64_t{0});
    QCOMPARE(db->query_int("SELECT count(*) FROM message_search WHERE message_search MATCH 'borrow'").value(),
             std::int64_t{0});
  }

  void refusesNewerSchema() {
    QTemporaryDir tmp;
    auto db = Database::open(tmp.filePath("h.db").toStdString());
    QVERIFY(db.is_ok());
    QVERIFY(db->exec("PRAGMA user_version=999").is_ok());
    auto s = db->migrate(history_migrations());
    QVERIFY(!s.is_ok());
    QVERIFY(s.error().message.find("newer") != std::string::npos);
    QCOMPARE(db->user_version().value(), 999);
  }

  void failedMigrationRollsBack() {
    QTemporaryDir tmp;
    auto db = Database::open(tmp.filePath("h.db").toStdString());
    QVERIFY(db.is_ok());
    const std::vector<Migration> migrations = {{1, "good", "CREATE TABLE a(x);"},
                                               {2, "bad", "CREATE TABLE b(y); INSERT INTO nope VALUES (1);"}};
    auto s = db->migrate(migrations);
    QVERIFY(!s.is_ok());
    QVERIFY(s.error().message.find("migration 2 (bad)") != std::string::npos);
    QCOMPARE(db->user_version().value(), 1);
    QCOMPARE(db->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'b'").value(), std::int64_t{0});
  }

  void backupAndCorruption() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("h.db").toStdString();
    {
      auto db = Database::open(path);
      QVERIFY(db.is_ok());
      QVERIFY(db->migrate(history_migrations()).is_ok());
      QVERIFY(db->backup_to(tmp.filePath("backup.db").toStdString()).is_ok());
    }
    auto copy = Database::open(tmp.filePath("backup.db").toStdString());
    QVERIFY(copy.is_ok());
    QCOMPARE(copy->user_version().value(), history_migrations().back().version);

    // A file that is not a database gives an error, not a crash.
    const std::filesystem::path junk = tmp.filePath("junk.db").toStdString();
    std::ofstream(junk) << std::string(8192, 'x');
    auto bad = Database::open(junk);
    QVERIFY(!bad.is_ok());
    QVERIFY(bad.error().message.find("junk.db") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestDatabase)
#include "test_database.moc"
