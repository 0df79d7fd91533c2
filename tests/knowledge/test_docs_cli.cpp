// day0-cli docs: index, search (the `path:first-last score` lines, best first), folders,
// remove, and the errors a person can make.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "app/process_runner.h"
#include "knowledge_test_util.h"

using day0::test::quiet_env;
using day0::test::run_program;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");

QString data(const char* sub) { return QString::fromStdString((day0::test::knowledge_data() / sub).string()); }

day0::test::ProcessOutput docs(const QStringList& args) {
  return run_program(kCli, QStringList{"docs"} + args, quiet_env());
}

struct Line {
  QString path;
  int first = 0;
  int last = 0;
  double score = 0;
  QString snippet;
};

// Hit lines, each followed by its snippet line (indented by 4 spaces).
std::vector<Line> parse_hits(const QString& out) {
  static const QRegularExpression re("^(.+):(\\d+)-(\\d+) (-?\\d+\\.\\d{3})$");
  std::vector<Line> lines;
  const QStringList text = out.split('\n', Qt::SkipEmptyParts);
  for (qsizetype i = 0; i < text.size(); i += 2) {
    const auto m = re.match(text[i]);
    if (!m.hasMatch()) qFatal("not a hit line: %s", qPrintable(text[i]));
    if (i + 1 >= text.size() || !text[i + 1].startsWith("    ") || text[i + 1].trimmed().isEmpty())
      qFatal("no snippet after: %s", qPrintable(text[i]));
    lines.push_back(
        {m.captured(1), m.captured(2).toInt(), m.captured(3).toInt(), m.captured(4).toDouble(), text[i + 1].trimmed()});
  }
  return lines;
}

// 1-based line of the first line of `file` containing `needle` (read independently).
int line_of(const QString& file, const char* needle) {
  const std::string text = day0::test::read_file(file.toStdString());
  const auto at = text.find(needle);
  if (at == std::string::npos) return -1;
  return 1 + int(std::count(text.begin(), text.begin() + long(at), '\n'));
}

}  // namespace

class TestDocsCli : public QObject {
  Q_OBJECT
 private slots:
  void indexSearchFoldersRemove() {
    QTemporaryDir dir;
    const QString db = dir.filePath("k.db");
    auto r = docs({"index", "--db", db, data("repo")});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(": 37 files, "), qPrintable(r.out));
    QVERIFY(r.out.contains("(37 read, 0 unchanged, 0 renamed, 0 removed, 0 skipped"));
    QVERIFY(!r.out.contains("skipped "));
    r = docs({"index", "--db", db, data("repo")});
    QVERIFY(r.out.contains("(0 read, 37 unchanged"));

    // One folder: paths relative to it, best first, `path:a-b score`.
    r = docs({"search", "--db", db, "how", "is", "the", "CRC-8", "checksum", "computed?"});
    QCOMPARE(r.exit_code, 0);
    auto hits = parse_hits(r.out);
    QVERIFY(!hits.empty() && hits.size() <= 10);
    QCOMPARE(hits.front().path, QString("src/station/sensor_reader.cpp"));
    const int crc = line_of(data("repo") + "/src/station/sensor_reader.cpp", "std::uint8_t crc8_maxim(");
    QVERIFY(hits.front().first <= crc && crc <= hits.front().last);
    // The snippet shows the passage where the question's words are.
    QVERIFY2(hits.front().snippet.contains("crc", Qt::CaseInsensitive), qPrintable(hits.front().snippet));
    QVERIFY(hits.front().snippet.size() <= 170);
    for (std::size_t i = 1; i < hits.size(); ++i) QVERIFY(hits[i - 1].score >= hits[i].score);
    QVERIFY(hits.front().score > 0);

    r = docs({"search", "--db", db, "frost warning", "--top", "2"});
    QVERIFY(parse_hits(r.out).size() <= 2);

    // Two folders: absolute paths; --folder narrows to one, relative again.
    r = docs({"index", "--db", db, data("notes")});
    QCOMPARE(r.exit_code, 0);
    QVERIFY2(r.out.contains(": 9 files, "), qPrintable(r.out));
    r = docs({"search", "--db", db, "security deposit"});
    hits = parse_hits(r.out);
    QVERIFY(!hits.empty());
    QCOMPARE(hits.front().path, data("notes") + "/lease-agreement.pdf");
    for (const auto& h : hits) QVERIFY(h.path.startsWith('/'));
    r = docs({"search", "--db", db, "frost", "--folder", data("notes")});
    hits = parse_hits(r.out);
    QVERIFY(!hits.empty());
    for (const auto& h : hits) QVERIFY2(!h.path.startsWith('/') && !h.path.startsWith("src/"), qPrintable(h.path));

    r = docs({"search", "--db", db, "\"unbalanced (NEAR* -x"});
    QCOMPARE(r.exit_code, 0);
    r = docs({"search", "--db", db, "zzzqqq"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY(r.err.contains("nothing matches"));

    r = docs({"folders", "--db", db});
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(r.out.split('\n', Qt::SkipEmptyParts).size(), 3);  // header and two folders
    QVERIFY(r.out.contains(data("repo")) && r.out.contains(data("notes")));

    r = docs({"remove", "--db", db, data("repo")});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = docs({"folders", "--db", db});
    QVERIFY(!r.out.contains(data("repo") + "\n"));
    r = docs({"search", "--db", db, "checksum serial frame"});
    for (const auto& h : parse_hits(r.out)) QVERIFY(!h.path.contains("sensor_reader"));
    r = docs({"remove", "--db", db, data("repo")});
    QCOMPARE(r.exit_code, 1);
  }

  void skippedFilesAreListed() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.filePath("folder").toStdString();
    day0::test::write_file(root / "note.txt", "hello\n");
    day0::test::write_file(root / "blob.bin", std::string("\0\1\2\3", 4));
    day0::test::write_file(root / "latin.txt", "caf\xe9\n");
    const auto r = docs({"index", "--db", dir.filePath("k.db"), QString::fromStdString(root.string())});
    QCOMPARE(r.exit_code, 0);
    QVERIFY2(r.out.contains("skipped blob.bin: binary"), qPrintable(r.out));
    QVERIFY(r.out.contains("skipped latin.txt: not valid UTF-8 (byte 3)"));
    QVERIFY(r.out.contains(": 1 files, 1 chunks (1 read, 0 unchanged, 0 renamed, 0 removed, 2 skipped"));
  }

  void errorsSayWhatIsWrong() {
    QTemporaryDir dir;
    auto r = docs({"index", "--db", dir.filePath("k.db"), dir.filePath("no-such-folder")});
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("no-such-folder"), qPrintable(r.err));
    r = docs({"index", "--db", dir.filePath("missing/dir/k.db"), data("notes")});
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("cannot open the knowledge index"), qPrintable(r.err));
    day0::test::write_file(dir.filePath("corrupt.db").toStdString(), std::string(4096, '\x5a'));
    r = docs({"search", "--db", dir.filePath("corrupt.db"), "anything"});
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("corrupt.db") && r.err.contains("damaged"), qPrintable(r.err));
    r = docs({"frobnicate"});
    QCOMPARE(r.exit_code, 2);
    r = docs({"search", "--db", dir.filePath("k.db")});
    QCOMPARE(r.exit_code, 2);
    r = docs({"search", "--db", dir.filePath("k.db"), "x", "--top", "0"});
    QCOMPARE(r.exit_code, 2);
    r = docs({"search", "--db", dir.filePath("k.db"), "x", "--folder", dir.path()});
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("not in the index"));
    QVERIFY(!r.crashed);
  }
};

QTEST_GUILESS_MAIN(TestDocsCli)
#include "test_docs_cli.moc"
