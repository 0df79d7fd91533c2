// Questions to FTS5 queries: terms, identifier parts, stop words, quoting; and, through the
// index, that camelCase identifiers are found by their words and snake_case by theirs.
#include <QTemporaryDir>
#include <QtTest>

#include "knowledge/index.h"
#include "knowledge/query.h"
#include "knowledge/sqlite_util.h"
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

  void cjkRunsBecomeCharacterPairs() {
    const auto words = [](const char* text) { return QString::fromStdString(cjk_words(text)); };
    QCOMPARE(words("我们使用机器学习方法"), QString("我们 们使 使用 用机 机器 器学 学习 习方 方法"));
    QCOMPARE(words("東京の天気"), QString("東京 京の の天 天気"));
    QCOMPARE(words("한국어는 어렵다"), QString("한국 국어 어는 어렵 렵다"));
    QCOMPARE(words("GPU加速"), QString("gpu 加速"));
    QCOMPARE(words("猫"), QString("猫"));
    // Punctuation ends a run and is no term.
    QCOMPARE(words("晴れ。曇り、雨！"), QString("晴れ 曇り 雨"));
    QCOMPARE(words("plain words, Grüße"), QString());
    QCOMPARE(words(""), QString());
    // A question's runs give the same pairs, after the whole word.
    QCOMPARE(joined(question_terms("机器学习是什么？")), QString("机器学习是什么？|机器|器学|学习|习是|是什|什么"));
    QCOMPARE(joined(question_terms("GPU加速")), QString("gpu加速|gpu|加速"));
    // Broken UTF-8 around CJK characters neither crashes nor loses the characters.
    const std::string broken = std::string("机器\xe5") + "学习\xff";
    const auto terms = question_terms(broken);
    QVERIFY(std::find(terms.begin(), terms.end(), std::string("机器")) != terms.end());
    QVERIFY(std::find(terms.begin(), terms.end(), std::string("学习")) != terms.end());
    // The words column keeps the identifier parts and adds the pairs.
    QCOMPARE(QString::fromStdString(chunk_words("parseFrame", "解析数据帧", "src/frame.cpp")),
             QString("parse frame 解析 析数 数据 据帧"));
  }

  void cjkDocumentsAreFoundAndOlderIndexesUpdated() {
    QTemporaryDir dir;
    const fs::path root = fs::path(dir.path().toStdString()) / "notes";
    day0::test::write_file(root / "zh.md",
                           "# 机器学习简介\n\n机器学习是人工智能的一个分支。我们使用神经网络训练模型，"
                           "然后在测试集上评估准确率。\n");
    day0::test::write_file(root / "zh2.txt", "学习中文需要很多时间和耐心。\n");
    day0::test::write_file(root / "ja.txt", "東京の天気予報：明日は晴れのち曇り、最高気温は十八度です。\n");
    day0::test::write_file(root / "ko.txt", "한국어 자연어 처리는 형태소 분석기를 사용합니다.\n");
    day0::test::write_file(root / "en.md", "# Weather station\n\nThe rain gauge counts tipping bucket events.\n");
    const fs::path db = fs::path(dir.path().toStdString()) / "k.db";
    const auto top = [](KnowledgeIndex& kb, const char* question) {
      auto hits = kb.search(question);
      return hits.ok() && !hits.value->empty() ? hits.value->front().relative_path : std::string("(none)");
    };
    const auto check = [&](KnowledgeIndex& kb) {
      QCOMPARE(top(kb, "机器学习是什么？"), std::string("zh.md"));
      QCOMPARE(top(kb, "神经网络"), std::string("zh.md"));
      QCOMPARE(top(kb, "学习中文"), std::string("zh2.txt"));
      QCOMPARE(top(kb, "天気"), std::string("ja.txt"));
      QCOMPARE(top(kb, "明日の天気は？"), std::string("ja.txt"));
      QCOMPARE(top(kb, "형태소 분석"), std::string("ko.txt"));
      QCOMPARE(top(kb, "tipping bucket"), std::string("en.md"));
    };
    {
      auto kb = KnowledgeIndex::open(db);
      QVERIFY(kb.ok());
      auto folder = (*kb.value)->add_folder(root);
      QVERIFY(folder.ok());
      QVERIFY((*kb.value)->index_folder(folder.value->id).ok());
      check(**kb.value);
    }
    // An index written before the pairs existed (schema 1: the same tables, `words` without
    // them) gets them when it is opened, once.
    {
      Db raw;
      std::string why;
      QVERIFY2(raw.open(db.string(), &why), why.c_str());
      QVERIFY2(raw.exec("UPDATE chunks_fts SET words = ''; PRAGMA user_version = 1", &why), why.c_str());
    }
    {
      auto kb = KnowledgeIndex::open(db);
      QVERIFY2(kb.ok(), kb.ok() ? "" : kb.error.message.c_str());
      check(**kb.value);
      QCOMPARE(top(**kb.value, "天気"), std::string("ja.txt"));
    }
    Db raw;
    std::string why;
    QVERIFY(raw.open(db.string(), &why));
    Stmt version(raw, "PRAGMA user_version");
    QVERIFY(version.step());
    QCOMPARE(version.integer(0), std::int64_t{2});
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
