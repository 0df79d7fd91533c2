// Durability under SIGKILL: a writer process (storage_crash_writer) streams replies into one
// history database and is killed at a random moment, 200 times over. After every kill the
// database must pass PRAGMA integrity_check, and everything the writer reported as committed
// must be there: conversations, user messages word for word, at least the reported prefix
// of each reply (and never text that was not sent), finished replies whole and complete, cut
// replies marked incomplete.
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "storage/crash_text.h"
#include "storage/database.h"
#include "storage/statement.h"

using namespace day0::storage;

namespace {

struct Reply {
  int run = 0, k = 0;
  std::size_t committed = 0;  // bytes reported on disk
  bool finished = false;
};

struct Reported {
  std::set<std::int64_t> conversations;
  std::map<std::int64_t, std::pair<int, int>> users;  // message -> (run, k)
  std::map<std::int64_t, Reply> replies;
  int commit_lines = 0;
};

void parse(const QByteArray& out, Reported* r) {
  for (const QByteArray& line : out.split('\n')) {
    const QList<QByteArray> f = line.split(' ');
    if (f.isEmpty() || f[0].isEmpty()) continue;
    const std::int64_t id = f.size() > 1 ? f[1].toLongLong() : 0;
    if (f[0] == "C") r->conversations.insert(id);
    if (f[0] == "U") r->users[id] = {f[2].toInt(), f[3].toInt()};
    if (f[0] == "B") r->replies[id] = {f[2].toInt(), f[3].toInt(), 0, false};
    if (f[0] == "R") {
      r->replies[id].committed = std::max(r->replies[id].committed, static_cast<std::size_t>(f[2].toLongLong()));
      ++r->commit_lines;
    }
    if (f[0] == "F") r->replies[id].finished = true;
  }
}

struct Row {
  std::int64_t conversation;
  std::string role, content, state;
};

// Checks the database against everything reported so far; returns "" or the first problem.
std::string verify(const std::filesystem::path& path, const Reported& reported, int* cut_replies) {
  auto db = Database::open(path);
  if (!db) return "cannot open: " + db.error().message;
  auto integrity = db->integrity_check();
  if (!integrity || integrity.value() != "ok") return "integrity_check: " + (integrity ? integrity.value() : "failed");
  auto fk = db->query_text("PRAGMA foreign_key_check");
  if (!fk || !fk.value().empty()) return "broken foreign keys";
  std::map<std::int64_t, Row> rows;
  if (db->user_version().value() == 0) {
    // Killed before the first start-up finished: nothing can have been reported.
    return reported.conversations.empty() ? "" : "the schema is gone";
  }
  auto s = Statement::prepare(*db, "SELECT id, conversation_id, role, content, state FROM messages");
  if (!s) return s.error().message;
  for (;;) {
    auto row = s->step();
    if (!row) return row.error().message;
    if (!row.value()) break;
    rows[s->column_int(0)] = {s->column_int(1), s->column_text(2), s->column_text(3), s->column_text(4)};
  }
  for (const auto c : reported.conversations) {
    auto n = db->query_int("SELECT count(*) FROM conversations WHERE id = " + std::to_string(c));
    if (!n || n.value() != 1) return "conversation " + std::to_string(c) + " is missing";
  }
  for (const auto& [id, rk] : reported.users) {
    const auto it = rows.find(id);
    if (it == rows.end()) return "user message " + std::to_string(id) + " is missing";
    if (it->second.content != day0::test::crash_user_text(rk.first, rk.second) || it->second.state != "complete")
      return "user message " + std::to_string(id) + " differs: " + it->second.content;
  }
  *cut_replies = 0;
  for (const auto& [id, row] : rows) {
    if (row.role != "assistant") continue;
    const auto it = reported.replies.find(id);
    if (it == reported.replies.end()) {
      // Begun, but killed before it said so: nothing can have been appended yet.
      if (!row.content.empty() || row.state != "incomplete")
        return "unreported reply " + std::to_string(id) + " has text";
      continue;
    }
    const Reply& r = it->second;
    const std::string full = day0::test::crash_reply_text(r.run, r.k);
    if (full.compare(0, row.content.size(), row.content) != 0 || row.content.size() > full.size())
      return "reply " + std::to_string(id) + " holds text that was never sent";
    if (row.content.size() < r.committed)
      return "reply " + std::to_string(id) + " lost committed text: " + std::to_string(row.content.size()) + " < " +
             std::to_string(r.committed);
    if (row.state == "complete" && row.content != full) return "reply " + std::to_string(id) + " complete but cut";
    if (r.finished && row.state != "complete") return "finished reply " + std::to_string(id) + " is " + row.state;
    if (row.state != "complete" && row.state != "incomplete") return "reply state " + row.state;
    if (row.state == "incomplete" && !row.content.empty()) ++*cut_replies;
  }
  return "";
}

}  // namespace

class TestCrash : public QObject {
  Q_OBJECT
 private slots:
  void killedWriterLosesNothingCommitted() {
    QTemporaryDir tmp;
    const std::filesystem::path path = tmp.filePath("history.db").toStdString();
    std::mt19937 rng(20240601);
    Reported reported;
    int kills = 0, cut_replies = 0;
    QElapsedTimer timer;
    timer.start();
    for (int run = 0; run < 200; ++run) {
      QProcess writer;
      writer.setProcessChannelMode(QProcess::SeparateChannels);
      writer.start(DAY0_CRASH_WRITER, {QString::fromStdString(path.string()), QString::number(run), "5"});
      QVERIFY2(writer.waitForStarted(10000), qPrintable(writer.errorString()));
      // Mostly while replies stream, sometimes during start-up (recovery of the last crash).
      // Sanitizer builds run the writer several times slower (tests/sanitizers.cmake sets
      // DAY0_TEST_TIME_SCALE): the kills are stretched alike so they land in the same phases.
      const int scale = std::max(1, qEnvironmentVariableIntValue("DAY0_TEST_TIME_SCALE"));
      const int delay_ms =
          scale * (run % 10 == 0 ? static_cast<int>(rng() % 10) : 5 + static_cast<int>(rng() % 120));
      const bool exited = writer.waitForFinished(delay_ms);
      QVERIFY2(!exited, writer.readAllStandardError().constData());
      writer.kill();  // SIGKILL
      QVERIFY(writer.waitForFinished(10000));
      QCOMPARE(writer.exitStatus(), QProcess::CrashExit);
      ++kills;
      parse(writer.readAllStandardOutput(), &reported);
      const QByteArray errors = writer.readAllStandardError();
      QVERIFY2(errors.isEmpty(), errors.constData());
      const std::string problem = verify(path, reported, &cut_replies);
      QVERIFY2(problem.empty(), qPrintable(QString("after kill %1: %2").arg(kills).arg(problem.c_str())));
    }
    int finished = 0;
    for (const auto& [id, r] : reported.replies) finished += r.finished;
    qInfo(
        "%d kills in %.1f s: %zu conversations, %zu user messages, %zu replies (%d finished, %d cut with text), "
        "%d batch commits reported",
        kills, timer.elapsed() / 1000.0, reported.conversations.size(), reported.users.size(), reported.replies.size(),
        finished, cut_replies, reported.commit_lines);
    // The kills landed in every phase: some replies finished, many were cut mid-stream.
    QCOMPARE(kills, 200);
    QVERIFY(finished >= 10);
    QVERIFY(cut_replies >= 20);
    QVERIFY(reported.commit_lines >= 200);
  }
};

QTEST_APPLESS_MAIN(TestCrash)
#include "test_crash.moc"
