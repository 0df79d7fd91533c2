// Hostile folders and inputs: every bad file is skipped with a reason, never a crash or a hang;
// random bytes as documents and random questions (FTS5 syntax included) never fail a search.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <random>

#include "knowledge/chunker.h"
#include "knowledge/index.h"
#include "knowledge/text_util.h"
#include "knowledge_test_util.h"

namespace fs = std::filesystem;
using namespace day0::knowledge;
using day0::test::write_file;

namespace {

std::map<std::string, std::string> skipped_by_path(const IndexReport& r) {
  std::map<std::string, std::string> out;
  for (const auto& s : r.skipped) out[s.path] = s.reason;
  return out;
}

}  // namespace

class TestHostile : public QObject {
  Q_OBJECT
 private slots:
  void hostileFolderIsIndexedWithNotes() {
    QTemporaryDir dir;
    const fs::path root = fs::path(dir.path().toStdString()) / "hostile";
    const fs::path data = day0::test::knowledge_data() / "hostile";
    write_file(root / "good.md", "# Fine\nThe only real note about lighthouses.\n");
    std::string binary(4096, '\0');
    std::mt19937 rng(1);
    for (auto& c : binary) c = static_cast<char>(rng());
    binary[10] = '\0';
    write_file(root / "blob.dat", binary);
    write_file(root / "image.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write_file(root / "icon.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><path d=\"M0 0h24v24H0z\"/></svg>\n");
    write_file(root / "bundle.zip", "not really an archive, but named like one\n");
    {
      // 1 GB without writing it: a sparse file the reader must refuse by its size alone.
      const int fd = ::open((root / "huge.txt").c_str(), O_CREAT | O_WRONLY, 0644);
      QVERIFY(fd >= 0);
      QCOMPARE(::ftruncate(fd, 1ll << 30), 0);
      ::close(fd);
    }
    write_file(root / "latin1.txt", "na\xefve caf\xe9\n");
    fs::create_directories(root / "loop");
    fs::create_directory_symlink("..", root / "loop" / "parent");  // loop/parent -> hostile/
    fs::create_symlink("does-not-exist.txt", root / "dangling.txt");
    QCOMPARE(::mkfifo((root / "pipe.txt").c_str(), 0644), 0);
    const bool root_user = ::geteuid() == 0;
    if (!root_user) {
      write_file(root / "secret.txt", "no access\n");
      fs::permissions(root / "secret.txt", fs::perms::none);
    }
    fs::copy_file(data / "encrypted.pdf", root / "encrypted.pdf");
    fs::copy_file(data / "damaged.pdf", root / "damaged.pdf");
    fs::copy_file(data / "truncated.pdf", root / "truncated.pdf");
    write_file(root / "fake.pdf", "this is not a PDF at all\n");
    write_file(root / std::string("bad-\xff\xfe-name.txt"), "content under a name that is not UTF-8\n");
    std::string line;
    while (line.size() < (3u << 20)) line += "lighthouse keeper logbook entry without any newline ";
    write_file(root / "one-line.txt", line);
    fs::path deep = root;
    for (int i = 0; i < 70; ++i) deep /= "d";
    write_file(deep / "bottom.txt", "at the bottom\n");

    auto kb = KnowledgeIndex::open(fs::path(dir.path().toStdString()) / "k.db");
    QVERIFY(kb.ok());
    auto folder = (*kb.value)->add_folder(root);
    QVERIFY(folder.ok());
    auto report = (*kb.value)->index_folder(folder.value->id);
    QVERIFY2(report.ok(), report.error.message.c_str());
    const auto skipped = skipped_by_path(*report.value);
    for (const auto& [path, reason] : skipped) qInfo("skipped %s: %s", path.c_str(), reason.c_str());
    const auto reason = [&](const std::string& path) {
      const auto it = skipped.find(path);
      return it == skipped.end() ? std::string("(not skipped)") : it->second;
    };
    QCOMPARE(reason("blob.dat"), std::string("binary (NUL bytes)"));
    QCOMPARE(reason("image.png"), std::string("binary (PNG image)"));
    QCOMPARE(reason("icon.svg"), std::string("image (.svg file)"));
    QCOMPARE(reason("bundle.zip"), std::string("binary (.zip file)"));
    QVERIFY2(reason("huge.txt").starts_with("too large (1.0 GB"), reason("huge.txt").c_str());
    QCOMPARE(reason("latin1.txt"), std::string("not valid UTF-8 (byte 2)"));
    QCOMPARE(reason("loop/parent/"), std::string("symlink loop"));
    QCOMPARE(reason("dangling.txt"), std::string("unreadable: broken symbolic link"));
    QCOMPARE(reason("pipe.txt"), std::string("unreadable: not a regular file"));
    // As root, chmod 000 does not stop reading; the FIFO and the dangling link stand in for
    // unreadable files there.
    if (!root_user) QVERIFY2(reason("secret.txt").starts_with("unreadable: "), reason("secret.txt").c_str());
    QCOMPARE(reason("encrypted.pdf"), std::string("encrypted PDF (it needs a password)"));
    QVERIFY(reason("damaged.pdf").starts_with("damaged PDF"));
    QVERIFY(reason("fake.pdf").starts_with("damaged PDF"));
    QCOMPARE(reason("bad-\xef\xbf\xbd\xef\xbf\xbd-name.txt"), std::string("file name is not valid UTF-8"));
    bool deep_noted = false;
    for (const auto& [path, why] : skipped) deep_noted |= why.starts_with("too deeply nested");
    QVERIFY(deep_noted);

    // What could be read was indexed: the note, the one-line file (in pieces), and the
    // truncated PDF only if poppler could rebuild it.
    auto hits = (*kb.value)->search("lighthouses note");
    QVERIFY(hits.ok() && !hits.value->empty());
    QCOMPARE(hits.value->front().relative_path, std::string("good.md"));
    hits = (*kb.value)->search("keeper logbook");
    QVERIFY(hits.ok() && !hits.value->empty());
    for (const auto& h : *hits.value) QVERIFY(h.text.size() <= ChunkOptions{}.max_bytes);
    const std::int64_t expected_files = 2 + (skipped.contains("truncated.pdf") ? 0 : 1);
    QCOMPARE((*kb.value)->folders().value->front().files, expected_files);
    // Indexing again changes nothing and skips the same files.
    auto again = (*kb.value)->index_folder(folder.value->id);
    QVERIFY(again.ok());
    QCOMPARE(again.value->files_indexed, std::int64_t(0));
    QCOMPARE(again.value->skipped.size(), report.value->skipped.size());
  }

  void randomBytesAsDocuments() {
    std::mt19937 rng(12345);
    const char* names[] = {"a.txt", "b.md", "c.py", "d.cpp", "e.pdf", "noext", "f.rs", "g.png"};
    const std::string pdf = day0::test::read_file(day0::test::knowledge_data() / "notes" / "lease-agreement.pdf");
    int read_ok = 0;
    for (int round = 0; round < 1500; ++round) {
      std::string bytes;
      if (round % 5 == 0) {
        bytes = pdf;  // a real PDF with a few bytes changed: poppler's repair paths
        for (int k = 0; k < 1 + int(rng() % 8); ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      } else {
        bytes.resize(rng() % 600);
        const bool texty = round % 2 == 0;
        for (auto& c : bytes) c = texty ? "ab c\n\r\t{}#é"[rng() % 13] : static_cast<char>(rng());
      }
      const auto r = read_document_bytes(bytes, names[rng() % 8]);
      if (!r.ok) {
        QVERIFY(!r.reason.empty());
        continue;
      }
      ++read_ok;
      QVERIFY(is_valid_utf8(r.document.text));
      QVERIFY(r.document.text.find('\r') == std::string::npos);
      for (const auto& c : chunk_document(r.document, {64, 256})) QVERIFY(c.text.size() <= 256);
    }
    QVERIFY(read_ok > 100);
  }

  void randomQuestionsNeverBreakSearch() {
    QTemporaryDir dir;
    auto kb = KnowledgeIndex::open(fs::path(dir.path().toStdString()) / "k.db");
    QVERIFY(kb.ok());
    auto folder = (*kb.value)->add_folder(day0::test::knowledge_data() / "notes");
    QVERIFY((*kb.value)->index_folder(folder.value->id).ok());
    const std::vector<std::string> fixed = {"\"",
                                            "\"\"",
                                            "rent\"",
                                            "(",
                                            ")",
                                            "((rent",
                                            "rent)",
                                            "*",
                                            "rent*",
                                            "NEAR(rent deposit, 2)",
                                            "NEAR",
                                            "AND",
                                            "OR",
                                            "NOT",
                                            "rent AND",
                                            "- rent",
                                            "-rent",
                                            "rent NOT deposit",
                                            "^rent",
                                            "title:rent",
                                            "{title path}: rent",
                                            "rent; DROP TABLE files; --",
                                            "' OR 1=1 --",
                                            "😀😀",
                                            "🐈 cat",
                                            "猫を飼えますか",
                                            "Grüße",
                                            "\xff\xfe",
                                            "a",
                                            "the of and",
                                            "",
                                            "   ",
                                            "\t\n",
                                            "%",
                                            "_",
                                            "\\",
                                            "[rent]",
                                            "rent:deposit",
                                            "+rent",
                                            "\"rent\" \"*\""};
    for (const auto& q : fixed) {
      const auto r = (*kb.value)->search(q);
      QVERIFY2(r.ok(), (q + ": " + r.error.message).c_str());
    }
    QVERIFY(!(*kb.value)->search("\"deposit\" AND (rent").value->empty());
    QVERIFY(!(*kb.value)->search("🐈 cat").value->empty());
    std::mt19937 rng(99);
    const char* pieces[] = {"rent", "\"",      "(", ")", "*",    "NEAR", "AND", "OR", "NOT", "-", "^",      ":",  "{",
                            "}",    "deposit", " ", "😀", "\xc3", "\x00", "'",   ";",  ",",   "+", "NEAR/3", "cat"};
    for (int round = 0; round < 1000; ++round) {
      std::string q;
      for (int k = 0; k < int(rng() % 12); ++k) q += pieces[rng() % 25];
      const auto r = (*kb.value)->search(q);
      QVERIFY2(r.ok(), (q + ": " + r.error.message).c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "test_hostile.moc"
