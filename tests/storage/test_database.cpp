// The SQLite connection: durability settings, numbered migrations, integrity check, backup.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "storage/database.h"
#include "storage/migrations.h"

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

    // The schema works: cascades, full-text search, constraints. Each failing insert differs
    // from a valid one in one column only, so it fails for that column's reason.
    const std::string u1 = "'00000000-0000-4000-8000-000000000001'", u2 = "'00000000-0000-4000-8000-000000000002'";
    QVERIFY(db->exec("INSERT INTO conversations(uuid, title, created_at, updated_at) VALUES (" + u1 +
                     ", 'Rust lifetimes', 1, 1)")
                .is_ok());
    QVERIFY(db->exec("INSERT INTO messages(uuid, conversation_id, role, content, created_at) "
                     "VALUES (" +
                     u1 + ", 1, 'user', 'explain borrow checking please', 2)")
                .is_ok());
    QCOMPARE(db->query_int("SELECT count(*) FROM message_search WHERE message_search MATCH 'borrow'").value(),
             std::int64_t{1});
    QCOMPARE(
        db->query_int("SELECT count(*) FROM conversation_search WHERE conversation_search MATCH 'lifetimes'").value(),
        std::int64_t{1});
    QVERIFY(!db->exec("INSERT INTO messages(uuid, conversation_id, role, content, created_at) VALUES (" + u2 +
                      ", 1, 'robot', '', 3)")
                 .is_ok());
    QVERIFY(
        !db->exec("INSERT INTO messages(uuid, conversation_id, role, created_at) VALUES (" + u2 + ", 99, 'user', 3)")
             .is_ok());
    QVERIFY(!db->exec("INSERT INTO messages(uuid, conversation_id, role, created_at) VALUES (" + u1 + ", 1, 'user', 3)")
                 .is_ok());  // uuids are unique
    QVERIFY(!db->exec("INSERT INTO messages(conversation_id, role, created_at) VALUES (1, 'user', 3)").is_ok());
    QVERIFY(db->exec("INSERT INTO messages(uuid, conversation_id, role, created_at) VALUES (" + u2 + ", 1, 'user', 3)")
                .is_ok());
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
    QCOMPARE(db->query_int("PRAGMA foreign_keys").value(), std::int64_t{1});  // switched back on
  }

  void migrationMayRebuildAReferencedTable() {
    // With foreign keys on, DROP TABLE parent would cascade into child; migrate() turns them
    // off so the documented rebuild procedure keeps the rows.
    QTemporaryDir tmp;
    auto db = Database::open(tmp.filePath("h.db").toStdString());
    QVERIFY(db.is_ok());
    const std::vector<Migration> migrations = {
        {1, "tables",
         "CREATE TABLE parent(id INTEGER PRIMARY KEY, x); "
         "CREATE TABLE child(id INTEGER PRIMARY KEY, p INTEGER REFERENCES parent(id) ON DELETE CASCADE); "
         "INSERT INTO parent VALUES (1, 'a'); INSERT INTO child VALUES (10, 1);"},
        {2, "rebuild parent",
         "CREATE TABLE parent_new(id INTEGER PRIMARY KEY, x, y DEFAULT 0); "
         "INSERT INTO parent_new(id, x) SELECT id, x FROM parent; DROP TABLE parent; "
         "ALTER TABLE parent_new RENAME TO parent;"}};
    QVERIFY(db->migrate(migrations).is_ok());
    QCOMPARE(db->query_int("SELECT count(*) FROM child").value(), std::int64_t{1});
    QCOMPARE(db->query_int("SELECT y FROM parent WHERE id = 1").value(), std::int64_t{0});
    QCOMPARE(db->query_int("PRAGMA foreign_keys").value(), std::int64_t{1});
  }

  void migrationThatBreaksReferencesIsRolledBack() {
    QTemporaryDir tmp;
    auto db = Database::open(tmp.filePath("h.db").toStdString());
    QVERIFY(db.is_ok());
    const std::vector<Migration> migrations = {
        {1, "tables",
         "CREATE TABLE parent(id INTEGER PRIMARY KEY); "
         "CREATE TABLE child(id INTEGER PRIMARY KEY, p INTEGER REFERENCES parent(id)); "
         "INSERT INTO parent VALUES (1); INSERT INTO child VALUES (10, 1);"},
        {2, "loses the parent", "DELETE FROM parent;"}};
    auto s = db->migrate(migrations);
    QVERIFY(!s.is_ok());
    QVERIFY2(s.error().message.find("broken references") != std::string::npos, s.error().message.c_str());
    QCOMPARE(db->user_version().value(), 1);
    QCOMPARE(db->query_int("SELECT count(*) FROM parent").value(), std::int64_t{1});
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
    QCOMPARE(copy->integrity_check().value(), std::string("ok"));
    // Read-only opening of a backup leaves no -wal or -shm beside it.
    copy = Database();
    auto snapshot = Database::open_read_only(tmp.filePath("backup.db").toStdString());
    QVERIFY(snapshot.is_ok());
    QCOMPARE(snapshot->user_version().value(), history_migrations().back().version);
    QVERIFY(!snapshot->exec("CREATE TABLE x(y)").is_ok());
    QVERIFY(!QFile::exists(tmp.filePath("backup.db-shm")));

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
