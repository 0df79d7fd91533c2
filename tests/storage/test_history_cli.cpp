// day0-cli history as a user runs it: list, show, search (CJK too), export -> import round
// trip through files, re-import without duplicates, a damaged database moved aside, and
// errors with exit codes 1 (failure) and 2 (usage).
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <QSettings>

#include "app/process_runner.h"
#include "storage/history_db.h"
#include "storage/open_history.h"

using day0::test::run_program;
using namespace day0::storage;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");

QProcessEnvironment env_for(const QTemporaryDir& tmp) {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("DAY0_LOG_TO_FILE", "0");
  env.insert("XDG_DATA_HOME", tmp.filePath("xdg"));
  env.insert("XDG_CONFIG_HOME", tmp.filePath("config"));  // no app settings unless a test writes them
  env.insert("TZ", "UTC");
  return env;
}

// Three conversations written through the storage API (as the app would).
void make_history(const QString& path) {
  OpenOptions o;
  o.daily_backup = false;
  auto opened = open_history_database(path.toStdString(), o);
  QVERIFY(opened.is_ok());
  HistoryDb h(std::move(opened->db));
  const auto rust = h.create_conversation({"Rust lifetimes", "gpt-oss-20b", nlohmann::json::object()}).value();
  NewMessage q;
  q.conversation_id = rust.id;
  q.content = "Explain the borrow checker";
  const auto question = h.add_message(q).value();
  const auto reply = h.begin_reply({rust.id, question.id, "gpt-oss-20b"}).value();
  QVERIFY(h.append_reply({{reply.id, "It checks that references never outlive their data.", ""}}).is_ok());
  QVERIFY(h.finish_reply(reply.id, {}).is_ok());
  ConversationPatch pin;
  pin.pinned = true;
  QVERIFY(h.update_conversation(rust.id, pin).is_ok());

  const auto tokyo = h.create_conversation({"東京旅行", "glm5_next", nlohmann::json::object()}).value();
  NewMessage t;
  t.conversation_id = tokyo.id;
  t.content = "明日の東京の天気は？";
  t.attachments = {{"image/png", "map.png", std::string("\x89PNG\r\n\x1a\n", 8) + "pixels"}};
  QVERIFY(h.add_message(t).is_ok());

  const auto old = h.create_conversation({"Old notes", "", nlohmann::json::object()}).value();
  ConversationPatch archive;
  archive.archived = true;
  QVERIFY(h.update_conversation(old.id, archive).is_ok());
}

QJsonObject without_time(const QByteArray& json) {
  QJsonObject o = QJsonDocument::fromJson(json).object();
  o.remove("exported_at");
  return o;
}

}  // namespace

class TestHistoryCli : public QObject {
  Q_OBJECT
 private slots:
  void listShowSearch() {
    QTemporaryDir tmp;
    const QString db = tmp.filePath("history.db");
    make_history(db);
    const auto env = env_for(tmp);

    auto r = run_program(kCli, {"history", "list", "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);  // header + 2: the archived one is hidden
    QVERIFY(lines[0].contains("TITLE"));
    QVERIFY2(lines[1].contains("Rust lifetimes  [pinned]"), qPrintable(r.out));  // pinned first
    QVERIFY(lines[1].contains(QRegularExpression("^\\s+1\\s+\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}\\s+2\\s")));
    QVERIFY(lines[2].contains("東京旅行"));
    r = run_program(kCli, {"history", "list", "--all", "--db=" + db}, env);
    QVERIFY(r.out.contains("Old notes  [archived]"));

    r = run_program(kCli, {"history", "list", "--json", "--all", "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QJsonArray list = QJsonDocument::fromJson(r.out.toUtf8()).array();
    QCOMPARE(list.size(), 3);
    QCOMPARE(list[0].toObject()["title"].toString(), QString("Rust lifetimes"));
    QCOMPARE(list[0].toObject()["messages"].toInt(), 2);
    QJsonObject tokyo;
    for (const auto& c : list)
      if (c.toObject()["title"].toString() == "東京旅行") tokyo = c.toObject();
    QCOMPARE(tokyo["model"].toString(), QString("glm5_next"));
    QCOMPARE(tokyo["archived"].toBool(), false);
    const QString tokyo_uuid = tokyo["uuid"].toString();

    r = run_program(kCli, {"history", "show", "1", "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(r.out.startsWith("# Rust lifetimes\n"));
    QVERIFY(r.out.contains("## 1. User"));
    QVERIFY(r.out.contains("## 2. Assistant (gpt-oss-20b)"));
    QVERIFY(r.out.contains("It checks that references never outlive their data."));
    r = run_program(kCli, {"history", "show", tokyo_uuid.left(6), "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("明日の東京の天気は？"));
    QVERIFY(r.out.contains("- Attachment: map.png (image/png, 14 B"));
    r = run_program(kCli, {"history", "show", "--json", "2", "--db", db}, env);
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["conversations"].toArray().size(), 1);

    r = run_program(kCli, {"history", "search", "天気", "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QRegularExpression("^\\s+2  東京旅行  #3 user: 明日の東京の天気は？\\n$")),
             qPrintable(r.out));
    r = run_program(kCli, {"history", "search", "東京旅行", "--db", db}, env);
    QVERIFY(r.out.contains("東京旅行  (title)"));
    r = run_program(kCli, {"history", "search", "borrow", "checker", "--json", "--db", db}, env);
    const QJsonArray hits = QJsonDocument::fromJson(r.out.toUtf8()).array();
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].toObject()["match"].toString(), QString("borrow"));
    QCOMPARE(hits[0].toObject()["role"].toString(), QString("user"));
    r = run_program(kCli, {"history", "search", "nowhere-to-be-found", "--db", db}, env);
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY(r.err.contains("nothing matches"));
  }

  // Without --db the CLI uses the app's data folder, as the app's settings file names it
  // (written here by QSettings, as the app writes it: quoting and escapes included).
  void followsTheAppsDataFolder() {
    QTemporaryDir tmp;
    const auto env = env_for(tmp);
    // No settings: $XDG_DATA_HOME/day0.
    auto r = run_program(kCli, {"history", "list"}, env);
    QVERIFY(r.err.contains(tmp.filePath("xdg") + "/day0/history.db"));

    const QString folder = tmp.filePath("my data, \"quoted\" é 東京");
    QVERIFY(QDir().mkpath(folder));
    make_history(folder + "/history.db");
    {
      QSettings ini(tmp.filePath("config/day0/day0.ini"), QSettings::IniFormat);
      ini.setValue("data/folder", folder);
      ini.setValue("sampling/temperature", 0.5);
    }
    r = run_program(kCli, {"history", "list"}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("Rust lifetimes"), qPrintable(r.out + r.err));

    // A move the app does at its next start: until then the old folder is the one in use.
    const QString next = tmp.filePath("next");
    {
      QSettings ini(tmp.filePath("config/day0/day0.ini"), QSettings::IniFormat);
      ini.setValue("data/folder", next);
      ini.setValue("data/moveFrom", folder);
    }
    r = run_program(kCli, {"history", "list"}, env);
    QVERIFY2(r.out.contains("Rust lifetimes"), qPrintable(r.out + r.err));
    // --db still names another file.
    r = run_program(kCli, {"history", "list", "--db", tmp.filePath("other.db")}, env);
    QVERIFY(!r.out.contains("Rust lifetimes"));
  }

  void exportImportRoundTrip() {
    QTemporaryDir tmp;
    const QString db = tmp.filePath("history.db");
    make_history(db);
    const auto env = env_for(tmp);
    const QString file = tmp.filePath("all.json");
    auto r = run_program(kCli, {"history", "export", "--out", file, "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY(r.err.contains("(json, 3 conversations)"));
    QFile exported(file);
    QVERIFY(exported.open(QIODevice::ReadOnly));
    const QByteArray original = exported.readAll();

    // Into the default history (XDG_DATA_HOME), which does not exist yet.
    r = run_program(kCli, {"history", "import", file}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("3 conversations added, 0 merged; 3 messages added, 0 already present; 1 attachment"),
             qPrintable(r.out));
    QVERIFY(QFile::exists(tmp.filePath("xdg/day0/history.db")));
    r = run_program(kCli, {"history", "import", file}, env);
    QVERIFY(r.out.contains("0 conversations added, 3 merged; 0 messages added, 3 already present"));
    r = run_program(kCli, {"history", "export"}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(without_time(r.out.toUtf8()), without_time(original));

    // One conversation as Markdown, the format chosen by the file name.
    const QString md = tmp.filePath("one.md");
    r = run_program(kCli, {"history", "export", "2", "--out", md, "--db", db}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QFile markdown(md);
    QVERIFY(markdown.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(markdown.readAll()).startsWith("# 東京旅行\n"));
  }

  void damagedDatabaseIsMovedAside() {
    QTemporaryDir tmp;
    const QString db = tmp.filePath("history.db");
    QFile f(db);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(10000, 'Z'));
    f.close();
    auto r = run_program(kCli, {"history", "list", "--db", db}, env_for(tmp));
    QCOMPARE(r.exit_code, 0);
    QVERIFY2(r.err.contains("was damaged") && r.err.contains("moved, untouched, to"), qPrintable(r.err));
    QVERIFY(r.err.contains("new, empty history"));
    const QStringList aside = QDir(tmp.path()).entryList({"history.db.damaged-*"});
    QCOMPARE(aside.size(), 1);
    QFile kept(tmp.filePath(aside[0]));
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(kept.readAll(), QByteArray(10000, 'Z'));
    r = run_program(kCli, {"history", "list", "--db", db}, env_for(tmp));
    QCOMPARE(r.exit_code, 0);
    QVERIFY(!r.err.contains("damaged"));
  }

  void errors() {
    QTemporaryDir tmp;
    const auto env = env_for(tmp);
    const QString db = tmp.filePath("history.db");
    auto r = run_program(kCli, {"history"}, env);
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("usage: day0-cli history"));
    r = run_program(kCli, {"history", "frobnicate"}, env);
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("unknown command 'frobnicate'"));
    r = run_program(kCli, {"history", "list", "--colour"}, env);
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("unknown option --colour"));
    r = run_program(kCli, {"history", "search", "x", "--limit", "0"}, env);
    QCOMPARE(r.exit_code, 2);
    r = run_program(kCli, {"history", "--help"}, env);
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("import FILE"));

    // No history yet: listing is fine, showing is not.
    r = run_program(kCli, {"history", "list", "--db", db}, env);
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.err.contains("no history at"));
    QVERIFY(!QFile::exists(db));  // reading does not create one
    r = run_program(kCli, {"history", "show", "1", "--db", db}, env);
    QCOMPARE(r.exit_code, 1);

    make_history(db);
    r = run_program(kCli, {"history", "show", "99", "--db", db}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("there is no conversation 99"));
    r = run_program(kCli, {"history", "export", "--format", "pdf", "--db", db}, env);
    QCOMPARE(r.exit_code, 2);

    // A hostile import is refused with the field named, and changes nothing.
    const QString bad = tmp.filePath("bad.json");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "{\"format\": \"day0-history\", \"version\": 1, \"conversations\": [{\"uuid\": "
        "\"00000000-0000-4000-8000-000000000001\", \"created_at\": 1, \"updated_at\": 1, \"messages\": "
        "[{\"uuid\": \"00000000-0000-4000-8000-000000000002\", \"role\": \"wizard\", \"content\": \"hi\", "
        "\"created_at\": 1}]}]}");
    f.close();
    r = run_program(kCli, {"history", "import", bad, "--db", db}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("conversations[0].messages[0].role: 'wizard' is not one of"), qPrintable(r.err));
    r = run_program(kCli, {"history", "list", "--all", "--json", "--db", db}, env);
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array().size(), 3);
    r = run_program(kCli, {"history", "import", tmp.filePath("missing.json"), "--db", db}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("cannot read"));
  }
};

QTEST_APPLESS_MAIN(TestHistoryCli)
#include "test_history_cli.moc"
