// The folder index end to end on the fixtures: retrieval accuracy on labelled questions,
// incremental re-indexing (edits, deletions, renames, untouched files not read again),
// cancellation, several folders, and databases that are not knowledge indexes.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <set>
#include <thread>

#include "knowledge/index.h"
#include "knowledge_test_util.h"

namespace fs = std::filesystem;
using namespace day0::knowledge;
using day0::test::knowledge_data;

namespace {

std::unique_ptr<KnowledgeIndex> open_index(const fs::path& db) {
  auto r = KnowledgeIndex::open(db);
  if (!r.ok()) qFatal("%s", r.error.message.c_str());
  return std::move(*r.value);
}

IndexReport index_folder(KnowledgeIndex& kb, const fs::path& folder, std::int64_t* id = nullptr) {
  auto f = kb.add_folder(folder);
  if (!f.ok()) qFatal("%s", f.error.message.c_str());
  if (id) *id = f.value->id;
  auto r = kb.index_folder(f.value->id);
  if (!r.ok()) qFatal("%s", r.error.message.c_str());
  return *r.value;
}

std::vector<Hit> search(KnowledgeIndex& kb, const std::string& q, int top = 10) {
  SearchOptions o;
  o.top = top;
  auto r = kb.search(q, o);
  if (!r.ok()) qFatal("%s", r.error.message.c_str());
  return *r.value;
}

bool any_hit_in(const std::vector<Hit>& hits, const std::string& relative) {
  for (const auto& h : hits)
    if (h.relative_path == relative) return true;
  return false;
}

}  // namespace

class TestIndex : public QObject {
  Q_OBJECT
 private slots:
  void topThreeAccuracyOnLabelledQuestions() {
    QTemporaryDir dir;
    auto kb = open_index(fs::path(dir.path().toStdString()) / "k.db");
    const auto repo = index_folder(*kb, knowledge_data() / "repo");
    const auto notes = index_folder(*kb, knowledge_data() / "notes");
    QCOMPARE(repo.files_indexed, std::int64_t(37));  // git ls-files --others --exclude-standard lists 37
    QCOMPARE(notes.files_indexed, std::int64_t(9));
    QVERIFY(repo.skipped.empty());

    QFile file(QString::fromStdString((knowledge_data() / "questions.json").string()));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto questions = QJsonDocument::fromJson(file.readAll()).object()["questions"].toArray();
    QVERIFY(questions.size() >= 25);
    int found = 0, first = 0;
    for (const auto& value : questions) {
      const auto q = value.toObject();
      std::set<std::string> good = {q["expected"].toString().toStdString()};
      for (const auto& also : q["also"].toArray()) good.insert(also.toString().toStdString());
      const auto hits = search(*kb, q["q"].toString().toStdString(), 3);
      std::string got;
      bool ok = false;
      for (std::size_t i = 0; i < hits.size(); ++i) {
        // The fixture folder's name plus the path inside it: "repo/src/...".
        const std::string name = fs::path(hits[i].path).lexically_relative(knowledge_data()).string();
        got += (i ? ", " : "") + name;
        if (good.contains(name)) {
          ok = true;
          if (i == 0) ++first;
        }
      }
      found += ok;
      if (!ok) qInfo("miss: \"%s\" -> %s", qPrintable(q["q"].toString()), got.c_str());
    }
    const double accuracy = double(found) / questions.size();
    qInfo("top-3 accuracy %d/%d = %.1f%% (top-1 %d/%d)", found, int(questions.size()), 100 * accuracy, first,
          int(questions.size()));
    QVERIFY2(accuracy >= 0.8, "top-3 accuracy below 80%");
  }

  void reindexingAfterEditsDeletionsAndRenames() {
    QTemporaryDir dir;
    const fs::path root = fs::path(dir.path().toStdString()) / "repo";
    day0::test::copy_tree(knowledge_data() / "repo", root);
    auto kb = open_index(fs::path(dir.path().toStdString()) / "k.db");
    std::int64_t id = 0;
    auto first = index_folder(*kb, root, &id);
    QCOMPARE(first.files_indexed, std::int64_t(37));
    const std::int64_t chunks_before = first.chunks_total;
    QVERIFY(chunks_before >= 37);

    // Nothing changed: nothing read.
    auto again = index_folder(*kb, root);
    QCOMPARE(again.files_indexed, std::int64_t(0));
    QCOMPARE(again.files_unchanged, std::int64_t(37));
    QCOMPARE(again.chunks_added, std::int64_t(0));
    QCOMPARE(again.chunks_total, chunks_before);

    // Edit one file, delete one, rename one into a new folder, touch one without changing it,
    // and change one file's bytes while keeping its size and time (so it must not be read).
    day0::test::write_file(root / "docs/calibration.md",
                           day0::test::read_file(root / "docs/calibration.md") +
                               "\nA barometer needs no calibration beyond the altitude in the config.\n");
    fs::remove(root / "tools/export_csv.py");
    fs::create_directories(root / "lib");
    fs::rename(root / "tools/dewpoint.py", root / "lib/humidity_math.py");
    const auto touched = root / "db/schema.sql";
    fs::last_write_time(touched, fs::last_write_time(touched) + std::chrono::hours(1));
    const auto stealth = root / "docs/architecture.md";
    const auto stealth_time = fs::last_write_time(stealth);
    std::string text = day0::test::read_file(stealth);
    const auto at = text.find("ring buffer");
    QVERIFY(at != std::string::npos);
    text.replace(at, 11, "zebra queue");  // same length
    day0::test::write_file(stealth, text);
    fs::last_write_time(stealth, stealth_time);

    auto third = index_folder(*kb, root);
    QCOMPARE(third.files_seen, std::int64_t(36));
    QCOMPARE(third.files_indexed, std::int64_t(1));
    QCOMPARE(third.files_renamed, std::int64_t(1));
    QCOMPARE(third.files_removed, std::int64_t(1));
    QCOMPARE(third.files_unchanged, std::int64_t(34));

    QVERIFY(any_hit_in(search(*kb, "barometer calibration altitude"), "docs/calibration.md"));
    auto hits = search(*kb, "Magnus formula dew point");
    QVERIFY(any_hit_in(hits, "lib/humidity_math.py"));
    QVERIFY(!any_hit_in(hits, "tools/dewpoint.py"));
    QCOMPARE(hits.front().path, (fs::canonical(root) / "lib/humidity_math.py").string());
    QVERIFY(search(*kb, "argparse export csv unixepoch").empty() ||
            !any_hit_in(search(*kb, "argparse export csv unixepoch"), "tools/export_csv.py"));
    // The same-size, same-time edit was not read: the index still has the old words.
    QVERIFY(!any_hit_in(search(*kb, "zebra"), "docs/architecture.md"));
    QVERIFY(any_hit_in(search(*kb, "ring buffer locked backup"), "docs/architecture.md"));

    auto folders = kb->folders();
    QVERIFY(folders.ok());
    QCOMPARE(folders.value->size(), std::size_t(1));
    QCOMPARE(folders.value->front().files, std::int64_t(36));
    QCOMPARE(folders.value->front().chunks, third.chunks_total);
    QVERIFY(folders.value->front().indexed_at > 0);
    // folder_chunks: every chunk, in path then line order.
    auto all = kb->folder_chunks(id);
    QVERIFY(all.ok());
    QCOMPARE(static_cast<std::int64_t>(all.value->size()), third.chunks_total);
    for (std::size_t i = 1; i < all.value->size(); ++i) {
      const Hit& a = (*all.value)[i - 1];
      const Hit& b = (*all.value)[i];
      QVERIFY(a.relative_path < b.relative_path || (a.relative_path == b.relative_path && a.last_line < b.first_line));
    }
  }

  void cancelledIndexingStaysConsistent() {
    QTemporaryDir dir;
    auto kb = open_index(fs::path(dir.path().toStdString()) / "k.db");
    auto folder = kb->add_folder(knowledge_data() / "repo");
    QVERIFY(folder.ok());
    std::atomic<bool> cancel{false};
    int calls = 0;
    std::int64_t total = 0;
    auto report = kb->index_folder(
        folder.value->id, {},
        [&](const IndexProgress& p) {
          total = p.files_total;
          if (++calls == 10) cancel = true;
        },
        &cancel);
    QVERIFY(report.ok());
    QVERIFY(report.value->cancelled);
    QCOMPARE(total, std::int64_t(37));
    const std::int64_t done = report.value->files_indexed;
    QVERIFY(done > 0 && done < 37);
    auto folders = kb->folders();
    QCOMPARE(folders.value->front().files, done);
    QCOMPARE(folders.value->front().indexed_at, std::int64_t(0));  // not completed
    // Every stored file has its chunks and every chunk its text.
    auto chunks = kb->folder_chunks(folder.value->id);
    std::set<std::string> files;
    for (const auto& c : *chunks.value) files.insert(c.relative_path);
    QCOMPARE(static_cast<std::int64_t>(files.size()), done);
    auto rest = kb->index_folder(folder.value->id);
    QVERIFY(rest.ok());
    QCOMPARE(rest.value->files_indexed, 37 - done);
    QCOMPARE(rest.value->files_unchanged, done);
  }

  void severalFoldersAndRemoval() {
    QTemporaryDir dir;
    auto kb = open_index(fs::path(dir.path().toStdString()) / "k.db");
    std::int64_t repo = 0, notes = 0;
    index_folder(*kb, knowledge_data() / "repo", &repo);
    index_folder(*kb, knowledge_data() / "notes", &notes);
    QVERIFY(repo != notes);
    auto same = kb->add_folder(knowledge_data() / "repo" / "." / "docs" / "..");
    QVERIFY(same.ok());
    QCOMPARE(same.value->id, repo);  // the canonical path names the same folder

    SearchOptions only_notes;
    only_notes.folders = {notes};
    auto hits = kb->search("frost temperature", only_notes);
    QVERIFY(hits.ok() && !hits.value->empty());
    for (const auto& h : *hits.value) QCOMPARE(h.folder_id, notes);
    hits = kb->search("frost temperature");
    std::set<std::int64_t> folders;
    for (const auto& h : *hits.value) folders.insert(h.folder_id);
    QCOMPARE(folders.size(), std::size_t(2));
    for (std::size_t i = 1; i < hits.value->size(); ++i)
      QVERIFY((*hits.value)[i - 1].score >= (*hits.value)[i].score);  // best first
    QVERIFY(hits.value->front().score > 0);

    auto removed = kb->remove_folder(repo);
    QVERIFY(removed.ok() && *removed.value);
    QVERIFY(!*kb->remove_folder(repo).value);
    hits = kb->search("frost temperature");
    for (const auto& h : *hits.value) QCOMPARE(h.folder_id, notes);
    QVERIFY(search(*kb, "CRC-8 MAXIM checksum").empty());  // its FTS rows went with it
    QCOMPARE(kb->folders().value->size(), std::size_t(1));
  }

  void pdfHitsNameTheirPage() {
    QTemporaryDir dir;
    auto kb = open_index(fs::path(dir.path().toStdString()) / "k.db");
    index_folder(*kb, knowledge_data() / "notes");
    const auto hits = search(*kb, "security deposit escrow");
    QVERIFY(!hits.empty());
    QCOMPARE(hits.front().relative_path, std::string("lease-agreement.pdf"));
    QCOMPARE(hits.front().page, 2);
    QVERIFY(hits.front().text.find("escrow") != std::string::npos);
  }

  void indexingAndSearchingFromTwoThreads() {
    // One connection per thread, as the header asks: both open the new file at once (one
    // creates the schema), one indexes while the other keeps searching.
    QTemporaryDir dir;
    const fs::path db = fs::path(dir.path().toStdString()) / "k.db";
    std::atomic<bool> done{false};
    std::atomic<int> searches{0}, failures{0};
    std::atomic<bool> searched_during{false};
    std::string indexer_error;
    std::thread indexer([&] {
      auto kb = KnowledgeIndex::open(db);
      if (!kb.ok()) {
        indexer_error = kb.error.message;
      } else if (auto f = (*kb.value)->add_folder(knowledge_data() / "repo"); !f.ok()) {
        indexer_error = f.error.message;
      } else {
        // Halfway through, wait until the other thread has searched while this one indexes.
        const auto halfway = [&](const IndexProgress& p) {
          if (p.files_done != 15) return;
          const int before = searches;
          for (int i = 0; i < 5000 && searches <= before + 1; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          searched_during = searches > before + 1;
        };
        if (auto r = (*kb.value)->index_folder(f.value->id, {}, halfway); !r.ok()) indexer_error = r.error.message;
      }
      done = true;
    });
    auto kb = KnowledgeIndex::open(db);
    QVERIFY2(kb.ok(), kb.error.message.c_str());
    while (!done) {
      failures += !(*kb.value)->search("frost alert temperature").ok();
      ++searches;
    }
    indexer.join();
    QVERIFY2(indexer_error.empty(), indexer_error.c_str());
    QCOMPARE(failures.load(), 0);
    QVERIFY(searched_during);
    QVERIFY(!(*kb.value)->search("frost alert temperature").value->empty());
  }

  void refusesWhatIsNotAnIndex() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    std::string noise(8192, '\0');
    for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 131 + 7) % 251);
    day0::test::write_file(root / "noise.db", noise);
    auto r = KnowledgeIndex::open(root / "noise.db");
    QVERIFY(!r.ok());
    QVERIFY2(r.error.message.find("noise.db") != std::string::npos, r.error.message.c_str());

    {
      auto other = KnowledgeIndex::open(root / "real.db");
      QVERIFY(other.ok());
    }
    QVERIFY(KnowledgeIndex::open(root / "real.db").ok());  // reopening its own file works
    r = KnowledgeIndex::open(root / "missing-folder" / "k.db");
    QVERIFY(!r.ok());
    QVERIFY(r.error.message.find("cannot open") != std::string::npos);

    auto kb = open_index(root / "k.db");
    auto f = kb->add_folder(root / "nope");
    QVERIFY(!f.ok());
    day0::test::write_file(root / "plain.txt", "x");
    QVERIFY(!kb->add_folder(root / "plain.txt").ok());
    QVERIFY(!kb->index_folder(12345).ok());
  }
};

QTEST_GUILESS_MAIN(TestIndex)
#include "test_index.moc"
