// .gitignore semantics (pattern by pattern, as gitignore(5) states them) and the folder walker,
// checked against git itself where git is installed: `git ls-files --others --exclude-standard`
// lists exactly the files git would not ignore.
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "knowledge/gitignore.h"
#include "knowledge/walker.h"
#include "knowledge_test_util.h"

namespace fs = std::filesystem;
using namespace day0::knowledge;

namespace {

bool match(const char* pattern, const char* path, bool is_dir = false) {
  GitignorePattern p;
  if (!GitignorePattern::parse(pattern, &p)) return false;
  return p.matches(path, is_dir);
}

std::set<std::string> walked(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& f : walk_folder(root, {}, nullptr).files) out.insert(f.relative);
  return out;
}

// What git itself leaves in (untracked and not ignored), or nothing without git.
std::optional<std::set<std::string>> git_listing(const fs::path& root) {
  const QString git = QStandardPaths::findExecutable("git");
  if (git.isEmpty()) return std::nullopt;
  QProcess p;
  p.setWorkingDirectory(QString::fromStdString(root.string()));
  p.start(git, {"init", "-q"});
  if (!p.waitForFinished(20000) || p.exitCode() != 0) return std::nullopt;
  p.start(git, {"ls-files", "--others", "--exclude-standard", "-z"});
  if (!p.waitForFinished(20000) || p.exitCode() != 0) return std::nullopt;
  std::set<std::string> out;
  for (const auto& name : p.readAllStandardOutput().split('\0'))
    if (!name.isEmpty()) out.insert(name.toStdString());
  fs::remove_all(root / ".git");
  return out;
}

QString describe(const std::set<std::string>& a, const std::set<std::string>& b) {
  QString out;
  for (const auto& x : a)
    if (!b.contains(x)) out += " walker-only:" + QString::fromStdString(x);
  for (const auto& x : b)
    if (!a.contains(x)) out += " git-only:" + QString::fromStdString(x);
  return out;
}

}  // namespace

class TestGitignore : public QObject {
  Q_OBJECT
 private slots:
  void blankCommentsAndEscapes() {
    GitignorePattern p;
    QVERIFY(!GitignorePattern::parse("", &p));
    QVERIFY(!GitignorePattern::parse("   ", &p));
    QVERIFY(!GitignorePattern::parse("# comment", &p));
    QVERIFY(match("\\#file", "#file"));
    QVERIFY(match("\\!important", "!important"));
    QVERIFY(match("trailing   ", "trailing"));
    QVERIFY(match("space\\ ", "space "));
    QVERIFY(!match("space\\ ", "space"));
    QVERIFY(match("a\\*b", "a*b"));
    QVERIFY(!match("a\\*b", "axb"));
  }

  void basenamesMatchAtAnyDepth() {
    QVERIFY(match("*.log", "debug.log"));
    QVERIFY(match("*.log", "a/b/debug.log"));
    QVERIFY(!match("*.log", "debug.log.txt"));
    QVERIFY(match("foo", "x/y/foo"));
    QVERIFY(match("foo", "foo", true));
    QVERIFY(match("?.txt", "a.txt"));
    QVERIFY(!match("?.txt", "ab.txt"));
  }

  void slashesAnchor() {
    QVERIFY(match("/todo", "todo"));
    QVERIFY(!match("/todo", "sub/todo"));
    QVERIFY(match("doc/*.txt", "doc/notes.txt"));
    QVERIFY(!match("doc/*.txt", "doc/sub/notes.txt"));  // '*' stops at '/'
    QVERIFY(!match("doc/*.txt", "x/doc/notes.txt"));    // a middle slash anchors too
  }

  void directoryOnly() {
    QVERIFY(match("build/", "build", true));
    QVERIFY(!match("build/", "build", false));
    QVERIFY(match("build/", "src/build", true));
    QVERIFY(match("/out/", "out", true));
    QVERIFY(!match("/out/", "a/out", true));
  }

  void doubleStars() {
    QVERIFY(match("**/foo", "foo"));
    QVERIFY(match("**/foo", "a/b/foo"));
    QVERIFY(match("**/foo/bar", "x/foo/bar"));
    QVERIFY(match("abc/**", "abc/x"));
    QVERIFY(match("abc/**", "abc/x/y/z"));
    QVERIFY(!match("abc/**", "abd/x"));
    QVERIFY(match("a/**/b", "a/b"));
    QVERIFY(match("a/**/b", "a/x/b"));
    QVERIFY(match("a/**/b", "a/x/y/b"));
    QVERIFY(!match("a/**/b", "a/xb"));
    QVERIFY(match("data/**/raw-*.csv", "data/2024/06/raw-june.csv"));
    QVERIFY(!match("data/**/raw-*.csv", "data/2024/06/summary.csv"));
    QVERIFY(match("a**b", "axxb"));  // not next to slashes: an ordinary star
    QVERIFY(!match("a**b", "ax/b"));
  }

  void characterClasses() {
    QVERIFY(match("file[0-9].txt", "file7.txt"));
    QVERIFY(!match("file[0-9].txt", "filex.txt"));
    QVERIFY(match("file[!0-9].txt", "filex.txt"));
    QVERIFY(match("file[^0-9].txt", "filex.txt"));
    QVERIFY(!match("file[!0-9].txt", "file7.txt"));
    QVERIFY(match("[[:upper:]]*", "README"));
    QVERIFY(!match("[[:upper:]]*", "readme"));
    QVERIFY(match("x[]]y", "x]y"));
    QVERIFY(match("[ab", "[ab"));     // no closing bracket: literal
    QVERIFY(!match("a[/]b", "a/b"));  // a class never matches '/'
  }

  void negationAndPrecedence() {
    GitignoreRules rules;
    rules.add("", "*.log\n!keep.log\n");
    QVERIFY(rules.ignored("a.log", false));
    QVERIFY(!rules.ignored("keep.log", false));
    QVERIFY(!rules.ignored("sub/keep.log", false));
    rules.add("sub", "keep.log\n");  // deeper files win
    QVERIFY(rules.ignored("sub/keep.log", false));
    QVERIFY(!rules.ignored("keep.log", false));
    QVERIFY(!rules.ignored("subway/keep.log", false));  // "sub" is not an ancestor of "subway"
    rules.add("sub", "!*.log\n");
    QVERIFY(!rules.ignored("sub/a.log", false));
    QVERIFY(rules.ignored("other/a.log", false));
  }

  void hostilePatternsStayFast() {
    QElapsedTimer timer;
    timer.start();
    const std::string path(4000, 'a');
    for (int i = 0; i < 50; ++i) QVERIFY(!match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", path.c_str()));
    QVERIFY(!match("**/**/**/**/**/**/**/**/x", (std::string(2000, 'a') + "/" + std::string(2000, 'b')).c_str()));
    QVERIFY(timer.elapsed() < 5000);
  }

  void walkerHonoursTheFixtureGitignores() {
    const fs::path repo = day0::test::knowledge_data() / "repo";
    const auto files = walked(repo);
    // What `git ls-files --others --exclude-standard` printed for this fixture (37 files).
    const std::set<std::string> expected = {".gitignore",
                                            "CMakeLists.txt",
                                            "LICENSE",
                                            "README.md",
                                            "cli/Cargo.toml",
                                            "cli/src/alerts.rs",
                                            "cli/src/main.rs",
                                            "config/station.toml",
                                            "data/2024/06/summary-june.csv",
                                            "db/schema.sql",
                                            "docs/architecture.md",
                                            "docs/calibration.md",
                                            "docs/protocol.md",
                                            "logs/keep-this.log",
                                            "scripts/backup_db.sh",
                                            "scripts/check-sensor",
                                            "scripts/deploy.sh",
                                            "src/station/CMakeLists.txt",
                                            "src/station/calibration.cpp",
                                            "src/station/calibration.h",
                                            "src/station/main.cpp",
                                            "src/station/ring_buffer.h",
                                            "src/station/sensor_reader.cpp",
                                            "src/station/sensor_reader.h",
                                            "src/station/storage.cpp",
                                            "tests/test_dewpoint.py",
                                            "tests/test_ring_buffer.cpp",
                                            "tools/analyze_rainfall.py",
                                            "tools/dewpoint.py",
                                            "tools/export_csv.py",
                                            "web/.gitignore",
                                            "web/dashboard.js",
                                            "web/index.html",
                                            "web/secrets.env",
                                            "web/style.css",
                                            "web/units.js",
                                            "web/vendor-chart.min.js"};
    QVERIFY2(files == expected, qPrintable(describe(files, expected)));
    QTemporaryDir dir;
    const fs::path copy = fs::path(dir.path().toStdString()) / "repo";
    day0::test::copy_tree(repo, copy);
    if (const auto git = git_listing(copy)) QVERIFY2(files == *git, qPrintable(describe(files, *git)));
  }

  void walkerAgreesWithGitOnTrickyTrees() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    using day0::test::write_file;
    write_file(root / ".gitignore",
               "# root rules\n/only-root.txt\n*.o\n!keep.o\nlogs/\ndoc/**/draft-*\n**/cache/**\nfile[0-9].md\n"
               "tmp*\n!tmp-keep/\n\\#hash\nspace\\ \n");
    for (const char* f : {"only-root.txt",
                          "a/only-root.txt",
                          "x.o",
                          "keep.o",
                          "a/b/keep.o",
                          "a/b/y.o",
                          "logs/l.txt",
                          "a/logs/l.txt",
                          "a/logsfile",
                          "doc/draft-1.md",
                          "doc/x/y/draft-2.md",
                          "doc/final.md",
                          "cache/c.txt",
                          "a/cache/d/e.txt",
                          "cachefile",
                          "file1.md",
                          "filex.md",
                          "tmpdir/t.txt",
                          "tmp-keep/k.txt",
                          "#hash",
                          "space ",
                          "space",
                          "sub/.gitignore",
                          "sub/a.txt",
                          "sub/b.txt",
                          "sub/deep/c.txt",
                          "sub/deep/a.txt",
                          "node_modules/m.js",
                          "src/build/out.txt"})
      write_file(root / f, "x\n");
    write_file(root / "sub/.gitignore", "a.txt\n!/deep/a.txt\n/b.txt\nc.txt\n");
    const auto files = walked(root);
    QVERIFY(!files.contains("node_modules/m.js"));  // default exclusions, beyond .gitignore
    QVERIFY(!files.contains("src/build/out.txt"));
    QVERIFY(files.contains("a/only-root.txt"));
    QVERIFY(files.contains("a/b/keep.o"));
    QVERIFY(!files.contains("doc/x/y/draft-2.md"));
    QVERIFY(files.contains("sub/deep/a.txt"));
    const auto git = git_listing(root);
    if (!git) QSKIP("git is not installed: the comparison with git is skipped");
    std::set<std::string> reference = *git;
    reference.erase("node_modules/m.js");
    reference.erase("src/build/out.txt");
    QVERIFY2(files == reference, qPrintable(describe(files, reference)));
  }
};

QTEST_GUILESS_MAIN(TestGitignore)
#include "test_gitignore.moc"
