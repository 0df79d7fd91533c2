// Questions to FTS5 queries: terms, identifier parts, stop words, quoting; and, through the
// index, that camelCase identifiers are found by their words and snake_case by theirs.
#include <QTemporaryDir>
#include <QtTest>

#include "knowledge/index.h"
#include "knowledge/query.h"
#include "knowledge_test_util.h"

namespace fs = std::filesystem;
using namespace day0::knowledge;

namespace {

QString joined(const std::vector<std::string>& terms) {
  QString out;
  for (const auto& t : terms) out += (out.isEmpty() ? "" : "|") + QString::fromStdString(t);
  return out;
}

}  // namespace

class TestQuery : public QObject {
  Q_OBJECT
 private slots:
  void termsFromQuestions() {
    QCOMPARE(joined(question_terms("How is the CRC-8 checksum computed?")), QString("crc|8|checksum|computed"));
    QCOMPARE(joined(question_terms("what is parseHTTPFrame2 for")), QString("parsehttpframe2|parse|http|frame|2"));
    QCOMPARE(joined(question_terms("sensor_reader.cpp")), QString("sensor|reader|cpp"));
    // Only stop words: they are kept rather than searching for nothing.
    QCOMPARE(joined(question_terms("what is it")), QString("what|is|it"));
    QCOMPARE(joined(question_terms("Grüße aus Köln")), QString("grüße|aus|köln"));
    QCOMPARE(joined(question_terms("rent rent RENT")), QString("rent"));
    QVERIFY(question_terms("\"*()-^:{}").empty());
    QVERIFY(question_terms("a b c").empty());
    std::string many;
    for (int i = 0; i < 100; ++i) many += "word" + std::to_string(i) + " ";
    QCOMPARE(question_terms(many).size(), std::size_t(32));
  }

  void queriesAreQuotedOrTerms() {
    QCOMPARE(fts_query({"near", "and", "x\"y"}), std::string("\"near\" OR \"and\" OR \"x\"\"y\""));
    QCOMPARE(fts_query({}), std::string());
  }

  void identifierParts() {
    QCOMPARE(QString::fromStdString(identifier_parts("int decodeFrame(HTTPServer2 s, plain, snake_case)")),
             QString("decode frame http server 2"));
    QCOMPARE(QString::fromStdString(identifier_parts("nothing to split here")), QString());
  }

  void codeIsFoundByTheWordsOfItsIdentifiers() {
    QTemporaryDir dir;
    const fs::path root = fs::path(dir.path().toStdString()) / "code";
    day0::test::write_file(root / "a.js", "function computeMagnusDewPoint(t, rh) { return t - rh; }\n");
    day0::test::write_file(root / "b.py", "def tipping_bucket_total(tips):\n    return tips\n");
    day0::test::write_file(root / "c.txt", "Nothing about the questions below.\n");
    auto kb = KnowledgeIndex::open(fs::path(dir.path().toStdString()) / "k.db");
    QVERIFY(kb.ok());
    auto folder = (*kb.value)->add_folder(root);
    QVERIFY((*kb.value)->index_folder(folder.value->id).ok());
    auto hits = (*kb.value)->search("magnus dew point");
    QVERIFY(hits.ok() && !hits.value->empty());
    QCOMPARE(hits.value->front().relative_path, std::string("a.js"));
    hits = (*kb.value)->search("computeMagnusDewPoint");
    QCOMPARE(hits.value->front().relative_path, std::string("a.js"));
    hits = (*kb.value)->search("total of the tipping bucket");
    QCOMPARE(hits.value->front().relative_path, std::string("b.py"));
    QCOMPARE(hits.value->size(), std::size_t(1));
  }
};

QTEST_GUILESS_MAIN(TestQuery)
#include "test_query.moc"
