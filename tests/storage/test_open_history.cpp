// Start-up: damaged files (not a database, corrupt pages, truncated) are moved aside under a
// timestamped name and never deleted; the newest good backup is restored, else a new history
// starts; backups are taken before migrations and once a day, and old ones are pruned. Files
// that are not damaged but not ours to change (newer schema, another program's database,
// locked) are refused and left exactly as they were.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "storage/backups.h"
#include "storage/history_db.h"
#include "storage/migrations.h"
#include "storage/open_history.h"

using namespace day0::storage;
namespace fs = std::filesystem;
using SysClock = std::chrono::system_clock;

namespace {

QByteArray read_all(const fs::path& p) {
  QFile f(QString::fromStdString(p.string()));
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

void write_all(const fs::path& p, const QByteArray& bytes) {
  QFile f(QString::fromStdString(p.string()));
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

// A history with `n` conversations of one message each, closed (its WAL checkpointed into
// the main file, as after a clean exit).
void make_history(const fs::path& path, int n, const std::string& prefix = "conversation") {
  OpenOptions o;
  o.daily_backup = false;
  auto opened = open_history_database(path, o);
  QVERIFY(opened.is_ok());
  HistoryDb h(std::move(opened->db));
  for (int i = 0; i < n; ++i) {
    auto c = h.create_conversation({prefix + " " + std::to_string(i), "", nlohmann::json::object()});
    NewMessage m;
    m.conversation_id = c->id;
    m.content = std::string(3000, static_cast<char>('a' + i % 26));
    QVERIFY(h.add_message(m).is_ok());
  }
}

std::vector<fs::path> damaged_files(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().filename().string().find(".damaged-") != std::string::npos) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

OpenOptions at(SysClock::time_point now) {
  OpenOptions o;
  o.clock = [now] { return now; };
  return o;
}

const QRegularExpression kDamagedName(R"(^history\.db\.damaged-\d{8}-\d{6}$)");

}  // namespace

class TestOpenHistory : public QObject {
  Q_OBJECT
 private slots:
  void newFolderAndFile() {
    QTemporaryDir tmp;
    const fs::path path = fs::path(tmp.path().toStdString()) / "deep" / "er" / "history.db";
    auto opened = open_history_database(path);
    QVERIFY(opened.is_ok());
    QVERIFY(opened->report.notices.empty());
    QCOMPARE(opened->report.schema_before, 0);
    QCOMPARE(opened->report.schema_after, latest_history_version());
    QVERIFY(opened->report.backups_made.empty());  // nothing worth a backup yet
    QVERIFY(fs::exists(path));
  }

  void damagedFiles_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("not a database") << "garbage";
    QTest::newRow("corrupt pages") << "pages";
    QTest::newRow("truncated") << "truncated";
    QTest::newRow("header only") << "header";
  }

  void damagedFiles() {
    QFETCH(QString, kind);
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    const fs::path path = folder / "history.db";
    make_history(path, 60);
    QVERIFY(!fs::exists(folder / "history.db-wal"));  // a clean close leaves no log
    QByteArray bytes = read_all(path);
    QVERIFY(bytes.size() > 20 * 4096);
    std::mt19937 rng(11);
    if (kind == "garbage") {
      bytes = QByteArray(8192, 'x');
    } else if (kind == "pages") {
      for (int i = 4096 * 3; i < 4096 * 9; ++i) bytes[i] = static_cast<char>(rng());
    } else if (kind == "truncated") {
      bytes.truncate(bytes.size() / 2 + 100);
    } else {
      bytes.truncate(100);
    }
    write_all(path, bytes);

    auto opened = open_history_database(path, at(SysClock::now()));
    QVERIFY2(opened.is_ok(), opened.is_ok() ? "" : opened.error().message.c_str());
    const auto& r = opened->report;
    QVERIFY(r.moved_aside);
    QVERIFY2(kDamagedName.match(QString::fromStdString(r.moved_aside->filename().string())).hasMatch(),
             r.moved_aside->c_str());
    QCOMPARE(read_all(*r.moved_aside), bytes);  // kept byte for byte
    QVERIFY(!r.restored_from);
    QCOMPARE(r.notices.size(), std::size_t{2});
    QVERIFY(r.notices[0].find("was damaged") != std::string::npos);
    QVERIFY(r.notices[0].find(r.moved_aside->string()) != std::string::npos);
    QVERIFY(r.notices[1].find("new, empty history") != std::string::npos);
    // The new database works.
    HistoryDb h(std::move(opened->db));
    QVERIFY(h.list_conversations()->empty());
    QVERIFY(h.create_conversation({"after", "", nlohmann::json::object()}).is_ok());
    QCOMPARE(h.database().integrity_check().value(), std::string("ok"));
  }

  void restoresTheNewestGoodBackup() {
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    const fs::path path = folder / "history.db";
    const auto day0 = SysClock::now() - std::chrono::hours(24 * 10);
    make_history(path, 3, "early");
    { QVERIFY(open_history_database(path, at(day0)).is_ok()); }  // daily backup: 3 conversations
    {
      auto h = open_history_database(path, at(day0 + std::chrono::hours(1)));
      QVERIFY(h->report.backups_made.empty());  // not due yet
    }
    make_history(path, 2, "middle");
    { QVERIFY(open_history_database(path, at(day0 + std::chrono::hours(25))).is_ok()); }  // 5 conversations
    make_history(path, 4, "late");  // 9 conversations, in no backup
    auto backups = list_backups(folder / "backups", "history");
    QCOMPARE(backups.size(), std::size_t{2});
    // The newest backup is itself damaged: the one before it is used.
    write_all(backups[0].file, QByteArray(5000, 'z'));
    write_all(path, QByteArray("SQLite format 3") + QByteArray(4000, '\x7f'));

    auto opened = open_history_database(path, at(day0 + std::chrono::hours(48)));
    QVERIFY2(opened.is_ok(), opened.is_ok() ? "" : opened.error().message.c_str());
    const auto& r = opened->report;
    QVERIFY(r.moved_aside);
    QVERIFY(r.restored_from);
    QCOMPARE(*r.restored_from, backups[1].file);
    QVERIFY(r.notices[1].find("Restored the backup") != std::string::npos);
    HistoryDb h(std::move(opened->db));
    QCOMPARE(h.list_conversations()->size(), std::size_t{3});
    QCOMPARE(h.database().integrity_check().value(), std::string("ok"));
    QVERIFY(fs::exists(backups[1].file));  // the backup itself is copied, not used in place
  }

  void sideFilesMoveWithTheDatabase() {
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    const fs::path path = folder / "history.db";
    write_all(path, QByteArray(8192, 'x'));
    const QByteArray wal = QByteArray("a log that must not be replayed into a new database") + QByteArray(4000, '\1');
    write_all(folder / "history.db-wal", wal);
    write_all(folder / "history.db-shm", QByteArray(32768, '\0'));
    auto opened = open_history_database(path, at(SysClock::now()));
    QVERIFY(opened.is_ok());
    const fs::path aside = *opened->report.moved_aside;
    QCOMPARE(read_all(aside), QByteArray(8192, 'x'));
    QCOMPARE(read_all(fs::path(aside.string() + "-wal")), wal);
    QVERIFY(fs::exists(aside.string() + "-shm"));
    QVERIFY(opened->report.notices[0].find("(with its -wal)") != std::string::npos);
    QCOMPARE(opened->db.integrity_check().value(), std::string("ok"));

    // A second damage the same second gets its own name; nothing is overwritten.
    opened->db = Database();  // closed, so that its file can be damaged again
    write_all(path, QByteArray(8192, 'y'));
    auto again = open_history_database(path, at(SysClock::now()));
    QVERIFY(again.is_ok());
    QVERIFY(*again->report.moved_aside != aside);
    QCOMPARE(read_all(*again->report.moved_aside), QByteArray(8192, 'y'));
    QCOMPARE(read_all(aside), QByteArray(8192, 'x'));
  }

  void logWithoutDatabase() {
    // SQLite would delete a log beside an empty database file without reading it.
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    const fs::path path = folder / "history.db";
    const QByteArray wal(5000, '\2');
    write_all(folder / "history.db-wal", wal);
    auto opened = open_history_database(path, at(SysClock::now()));
    QVERIFY(opened.is_ok());
    QVERIFY(opened->report.moved_aside);
    QCOMPARE(read_all(fs::path(opened->report.moved_aside->string() + "-wal")), wal);
    QVERIFY(opened->report.notices[0].find("write-ahead log was moved") != std::string::npos);
    write_all(folder / "empty.db", QByteArray());
    write_all(folder / "empty.db-wal", wal);
    auto empty = open_history_database(folder / "empty.db", at(SysClock::now()));
    QVERIFY(empty.is_ok());
    QCOMPARE(read_all(*empty->report.moved_aside), QByteArray());
    QCOMPARE(read_all(fs::path(empty->report.moved_aside->string() + "-wal")), wal);
  }

  void refusedFilesAreLeftAlone() {
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    // Written by a newer Day0.
    const fs::path newer = folder / "newer.db";
    {
      auto db = Database::open(newer);
      QVERIFY(db->exec("CREATE TABLE future(x); PRAGMA user_version = 999").is_ok());
    }
    const QByteArray before = read_all(newer);
    auto r = open_history_database(newer);
    QVERIFY(!r.is_ok());
    QVERIFY(r.error().message.find("newer") != std::string::npos);
    QCOMPARE(read_all(newer), before);

    // Another program's database.
    const fs::path foreign = folder / "foreign.db";
    {
      auto db = Database::open(foreign);
      QVERIFY(db->exec("CREATE TABLE contacts(name)").is_ok());
    }
    r = open_history_database(foreign);
    QVERIFY(!r.is_ok());
    QVERIFY(r.error().message.find("not a Day0 history") != std::string::npos);

    // Locked by another writer while it needs an upgrade: busy, not damaged.
    const fs::path locked = folder / "history.db";
    {
      auto db = Database::open(locked);
      const auto& all = history_migrations();
      QVERIFY(db->migrate({all.begin(), all.begin() + 1}).is_ok());
    }
    auto holder = Database::open(locked);
    QVERIFY(holder->exec("BEGIN IMMEDIATE; INSERT INTO conversations(title, created_at, updated_at) VALUES ('x', 1, 1)")
                .is_ok());
    OpenOptions quick;
    quick.connection.busy_timeout_ms = 50;
    r = open_history_database(locked, quick);
    QVERIFY(!r.is_ok());
    QVERIFY2(r.error().message.find("locked") != std::string::npos, r.error().message.c_str());
    QVERIFY(holder->exec("COMMIT").is_ok());
    QVERIFY(damaged_files(folder).empty());
    QCOMPARE(holder->user_version().value(), 1);
    holder = Database();
    auto later = open_history_database(locked, quick);
    QVERIFY2(later.is_ok(), later.is_ok() ? "" : later.error().message.c_str());
    QCOMPARE(later->db.query_int("SELECT count(*) FROM conversations").value(), std::int64_t{1});
  }

  void backupsAreKeptAndPruned() {
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    const fs::path path = folder / "history.db";
    const fs::path backups = folder / "backups";
    make_history(path, 1);
    const auto start = SysClock::now() - std::chrono::hours(24 * 30);
    // Opened every day for 8 days, twice a day: one daily backup per day, the last 5 kept.
    for (int day = 0; day < 8; ++day) {
      for (int hour : {9, 17}) {
        auto opened = open_history_database(path, at(start + std::chrono::hours(24 * day + hour)));
        QVERIFY(opened.is_ok());
        QCOMPARE(opened->report.backups_made.size(), std::size_t(hour == 9 ? 1 : 0));
      }
    }
    auto list = list_backups(backups, "history");
    QCOMPARE(list.size(), std::size_t{5});
    QCOMPARE(list.front().taken, SysClock::from_time_t(SysClock::to_time_t(start + std::chrono::hours(24 * 7 + 9))));
    for (const auto& b : list) {
      QCOMPARE(b.kind, std::string("daily"));
      auto db = Database::open_read_only(b.file);
      QCOMPARE(db->query_int("SELECT count(*) FROM conversations").value(), std::int64_t{1});
    }

    // Before each migration: a backup at the old version, the last 3 kept.
    for (int i = 0; i < 4; ++i) {
      const fs::path old = folder / ("old" + std::to_string(i) + ".db");
      {
        auto db = Database::open(old);
        const auto& all = history_migrations();
        QVERIFY(db->migrate({all.begin(), all.begin() + 1}).is_ok());
      }
      OpenOptions o = at(start + std::chrono::hours(i));
      o.backup_folder = backups;
      o.daily_backup = false;
      auto opened = open_history_database(old, o);
      QVERIFY(opened.is_ok());
    }
    for (int i = 0; i < 4; ++i) {
      const auto own = list_backups(backups, "old" + std::to_string(i));
      QCOMPARE(own.size(), std::size_t{1});
      QCOMPARE(Database::open_read_only(own[0].file)->user_version().value(), 1);
    }
    // Each database's backups are pruned on their own; the folder holds them all.
    QCOMPARE(list_backups(backups, "history").size(), std::size_t{5});
    QVERIFY(!fs::exists(backups / "history.db.partial"));
  }

  void migrationBackupsArePruned() {
    QTemporaryDir tmp;
    const fs::path folder = tmp.path().toStdString();
    const fs::path path = folder / "history.db";
    const auto start = SysClock::now() - std::chrono::hours(24 * 30);
    const auto& all = history_migrations();
    for (int i = 0; i < 5; ++i) {
      // Rewind the schema to version 1 so that every open migrates (and backs up) again.
      fs::remove(path);
      {
        auto db = Database::open(path);
        QVERIFY(db->migrate({all.begin(), all.begin() + 1}).is_ok());
      }
      OpenOptions o = at(start + std::chrono::hours(i));
      o.daily_backup = false;
      QVERIFY(open_history_database(path, o).is_ok());
    }
    auto list = list_backups(folder / "backups", "history");
    QCOMPARE(list.size(), std::size_t{3});
    QCOMPARE(list[0].kind, "before-v" + std::to_string(latest_history_version()));
    QCOMPARE(list[0].taken, SysClock::from_time_t(SysClock::to_time_t(start + std::chrono::hours(4))));
  }

  void relativePath() {
    QTemporaryDir tmp;
    const QString previous = QDir::currentPath();
    QVERIFY(QDir::setCurrent(tmp.path()));
    write_all("history.db", QByteArray(5000, 'r'));
    auto opened = open_history_database("history.db");
    QVERIFY(QDir::setCurrent(previous));
    QVERIFY2(opened.is_ok(), opened.is_ok() ? "" : opened.error().message.c_str());
    QVERIFY(opened->report.moved_aside);
    QCOMPARE(read_all(fs::path(tmp.path().toStdString()) / *opened->report.moved_aside), QByteArray(5000, 'r'));
  }

  void emptyFileIsANewDatabase() {
    QTemporaryDir tmp;
    const fs::path path = fs::path(tmp.path().toStdString()) / "history.db";
    write_all(path, QByteArray());
    auto opened = open_history_database(path);
    QVERIFY(opened.is_ok());
    QVERIFY(!opened->report.moved_aside);
    QCOMPARE(opened->db.user_version().value(), latest_history_version());
  }
};

QTEST_APPLESS_MAIN(TestOpenHistory)
#include "test_open_history.moc"
