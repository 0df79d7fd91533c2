// Full-text search: English, Chinese, Japanese and Korean text, short and long terms, titles,
// reasoning, hostile query syntax, and a randomized comparison with a brute-force substring
// search over the same texts.
#include <QTemporaryDir>
#include <QtTest>
#include <random>
#include <set>

#include "storage/history_db.h"
#include "storage/open_history.h"

using namespace day0::storage;

namespace {

struct Fixture {
  QTemporaryDir tmp;
  std::unique_ptr<HistoryDb> history;
  Fixture() {
    OpenOptions options;
    options.daily_backup = false;
    auto opened = open_history_database(tmp.filePath("history.db").toStdString(), options);
    if (opened) history = std::make_unique<HistoryDb>(std::move(opened->db));
  }
  std::int64_t add(std::int64_t conversation, const std::string& text, const std::string& reasoning = "") {
    NewMessage m;
    m.conversation_id = conversation;
    m.content = text;
    m.reasoning = reasoning;
    return history->add_message(m).value().id;
  }
  std::set<std::int64_t> message_hits(const std::string& query, SearchOptions options = {}) {
    std::set<std::int64_t> out;
    auto hits = history->search(query, options);
    if (!hits) return {-1};
    for (const auto& h : *hits)
      if (h.message_id != 0) out.insert(h.message_id);
    return out;
  }
  std::set<std::int64_t> title_hits(const std::string& query) {
    std::set<std::int64_t> out;
    for (const auto& h : history->search(query).value())
      if (h.message_id == 0) out.insert(h.conversation_id);
    return out;
  }
};

using Ids = std::set<std::int64_t>;

}  // namespace

class TestHistorySearch : public QObject {
  Q_OBJECT
 private slots:
  void languages() {
    Fixture f;
    QVERIFY(f.history);
    const auto c = f.history->create_conversation({"東京旅行の計画", "", nlohmann::json::object()}).value().id;
    const auto d = f.history->create_conversation({"Rust lifetimes", "", nlohmann::json::object()}).value().id;
    const auto en = f.add(d, "Explain the Borrow Checker to me, please.");
    const auto zh = f.add(c, "我们明天去北京天安门广场看升旗仪式");
    const auto ja = f.add(c, "東京都の天気は晴れです");
    const auto ko = f.add(c, "안녕하세요 세계, 반갑습니다");
    const auto mixed = f.add(c, "Meet at 渋谷駅 at 10:00", "ユーザーは渋谷で会いたい");

    QCOMPARE(f.message_hits("borrow"), Ids{en});
    QCOMPARE(f.message_hits("BORROW checker"), Ids{en});  // every word, any case
    QCOMPARE(f.message_hits("borrow lifetimes"), Ids{});  // "lifetimes" is only in a title
    QCOMPARE(f.message_hits("\"borrow checker\""), Ids{en});
    QCOMPARE(f.message_hits("\"checker borrow\""), Ids{});
    // Chinese: 3+ characters use the trigram index, 1-2 characters scan; substrings across
    // what would be word boundaries are found too.
    QCOMPARE(f.message_hits("天安门"), Ids{zh});
    QCOMPARE(f.message_hits("升旗仪式"), Ids{zh});
    QCOMPARE(f.message_hits("北京"), Ids{zh});
    QCOMPARE(f.message_hits("京天"), Ids{zh});
    QCOMPARE(f.message_hits("门"), Ids{zh});
    QCOMPARE(f.message_hits("上海"), Ids{});
    // Japanese, Korean, and a mix with Latin text.
    QCOMPARE(f.message_hits("天気"), Ids{ja});
    QCOMPARE(f.message_hits("東京都"), Ids{ja});
    QCOMPARE(f.message_hits("晴れです"), Ids{ja});
    QCOMPARE(f.message_hits("東京"), Ids{ja});  // the title also has it, but this counts messages
    QCOMPARE(f.message_hits("하세요"), Ids{ko});
    QCOMPARE(f.message_hits("안녕"), Ids{ko});
    QCOMPARE(f.message_hits("세계 반갑"), Ids{ko});
    QCOMPARE(f.message_hits("渋谷駅 meet"), Ids{mixed});
    QCOMPARE(f.message_hits("渋谷で"), Ids{mixed});  // found in the reasoning
    QCOMPARE(f.message_hits("京 晴"), Ids{ja});
    QCOMPARE(f.message_hits("世界"), Ids{});
    // The ideographic space separates words like a space.
    QCOMPARE(f.message_hits("天安门\xe3\x80\x80升旗"), Ids{zh});

    // Titles come first, with message_id 0.
    QCOMPARE(f.title_hits("旅行"), Ids{c});
    QCOMPARE(f.title_hits("東京旅行"), Ids{c});
    QCOMPARE(f.title_hits("lifetimes"), Ids{d});
    auto hits = f.history->search("東京").value();
    QCOMPARE(hits.size(), std::size_t{2});
    QCOMPARE(hits[0].message_id, std::int64_t{0});
    QCOMPARE(hits[0].conversation_title, std::string("東京旅行の計画"));
    QCOMPARE(hits[1].message_id, ja);
    QCOMPARE(hits[1].role, std::optional<Role>(Role::user));
  }

  void snippets() {
    Fixture f;
    const auto c = f.history->create_conversation({"", "", nlohmann::json::object()}).value().id;
    std::string long_text;
    for (int i = 0; i < 40; ++i) long_text += "lorem ipsum ";
    long_text += "the NEEDLE is here\nand then more";
    for (int i = 0; i < 40; ++i) long_text += " dolor sit amet";
    f.add(c, long_text);
    auto hits = f.history->search("needle").value();
    QCOMPARE(hits.size(), std::size_t{1});
    const auto& h = hits[0];
    QCOMPARE(h.snippet.substr(h.match_offset, h.match_length), std::string("NEEDLE"));
    QVERIFY(h.snippet.find('\n') == std::string::npos);
    QVERIFY(h.snippet.rfind("\xe2\x80\xa6", 0) == 0);  // cut at the start
    QVERIFY(h.snippet.size() < 150);
    // CJK snippets cut on character boundaries.
    std::string cjk;
    for (int i = 0; i < 50; ++i) cjk += "漢字";
    cjk += "目標";
    for (int i = 0; i < 50; ++i) cjk += "かな";
    f.add(c, cjk);
    hits = f.history->search("目標").value();
    QCOMPARE(hits.size(), std::size_t{1});
    QCOMPARE(hits[0].snippet.substr(hits[0].match_offset, hits[0].match_length), std::string("目標"));
    QVERIFY(QString::fromUtf8(hits[0].snippet.c_str()).toUtf8().toStdString() == hits[0].snippet);
    QVERIFY(!QString::fromUtf8(hits[0].snippet.c_str()).contains(QChar::ReplacementCharacter));
  }

  void hostileQueriesAreText() {
    Fixture f;
    const auto c = f.history->create_conversation({"syntax", "", nlohmann::json::object()}).value().id;
    const auto plain = f.add(c, "AND OR NOT NEAR(a b) content:x \"quoted\" * ^start 50% done; DROP TABLE messages;--");
    for (const char* q : {"\"", "\"\"", "AND", "OR NOT", "NEAR(", "*", "^", "content:", "'; DROP TABLE messages;--",
                          "a\"b", "(((", "%", "_", "\\", "NOT", "x OR y", "\"unbalanced"}) {
      auto hits = f.history->search(q);
      QVERIFY2(hits.is_ok(), q);
    }
    QCOMPARE(f.message_hits("NEAR(a"), Ids{plain});
    QCOMPARE(f.message_hits("content:x"), Ids{plain});
    QCOMPARE(f.message_hits("50%"), Ids{plain});
    QCOMPARE(f.message_hits("%"), Ids{plain});
    QCOMPARE(f.message_hits("DROP TABLE"), Ids{plain});
    QCOMPARE(f.message_hits("\"quoted"), Ids{plain});  // the quote opens a phrase
    QCOMPARE(f.message_hits("   "), Ids{});
    QCOMPARE(f.history->database().query_int("SELECT count(*) FROM messages").value(), std::int64_t{1});
  }

  void followsChangesAndFilters() {
    Fixture f;
    const auto c = f.history->create_conversation({"live", "", nlohmann::json::object()}).value().id;
    const auto r = f.history->begin_reply({c, std::nullopt, ""}).value().id;
    QVERIFY(f.history->append_reply({{r, "streaming 流式传输", ""}}).is_ok());
    QCOMPARE(f.message_hits("流式传输"), Ids{r});
    QVERIFY(f.history->append_reply({{r, " continues", ""}}).is_ok());
    QCOMPARE(f.message_hits("continues"), Ids{r});
    ConversationPatch archive;
    archive.archived = true;
    QVERIFY(f.history->update_conversation(c, archive).is_ok());
    SearchOptions active_only;
    active_only.include_archived = false;
    QCOMPARE(f.message_hits("continues", active_only), Ids{});
    QCOMPARE(f.message_hits("continues"), Ids{r});
    ConversationPatch rename;
    rename.title = "renamed title";
    QVERIFY(f.history->update_conversation(c, rename).is_ok());
    QCOMPARE(f.title_hits("live"), Ids{});
    QCOMPARE(f.title_hits("renamed"), Ids{c});
    QVERIFY(f.history->delete_conversation(c).is_ok());
    QCOMPARE(f.message_hits("continues"), Ids{});
    QCOMPARE(f.title_hits("renamed"), Ids{});
    // The limit applies to the hits returned.
    const auto d = f.history->create_conversation({"many", "", nlohmann::json::object()}).value().id;
    for (int i = 0; i < 30; ++i) f.add(d, "repeated word " + std::to_string(i));
    SearchOptions few;
    few.limit = 7;
    QCOMPARE(f.history->search("repeated", few)->size(), std::size_t{7});
    QCOMPARE(f.history->search("repeated")->size(), std::size_t{30});
  }

  // Random texts over a small CJK alphabet, so substrings repeat across messages; every query
  // must find exactly the messages that contain all its terms.
  void matchesBruteForce() {
    Fixture f;
    const auto c = f.history->create_conversation({"", "", nlohmann::json::object()}).value().id;
    const std::vector<std::string> alphabet = {"日", "本", "語", "中", "文", "한", "국", "の", "は", "a", "B", "7"};
    std::mt19937 rng(7);
    std::map<std::int64_t, std::vector<std::string>> texts;  // id -> characters
    for (int i = 0; i < 120; ++i) {
      std::vector<std::string> chars;
      for (std::size_t n = 5 + rng() % 40; n > 0; --n) chars.push_back(alphabet[rng() % alphabet.size()]);
      std::string text;
      for (const auto& ch : chars) text += ch;
      texts[f.add(c, text)] = chars;
    }
    auto joined = [](const std::vector<std::string>& chars) {
      std::string s;
      for (const auto& ch : chars) s += ch;
      return s;
    };
    auto lower = [](std::string s) {
      for (char& ch : s)
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
      return s;
    };
    SearchOptions all;
    all.limit = 1000;
    for (int q = 0; q < 200; ++q) {
      std::vector<std::string> terms;
      for (std::size_t t = 1 + rng() % 2; t > 0; --t) {
        // A substring of a random message, 1 to 5 characters long.
        const auto& source = std::next(texts.begin(), static_cast<long>(rng() % texts.size()))->second;
        const std::size_t len = 1 + rng() % 5, start = rng() % source.size();
        terms.push_back(joined({source.begin() + static_cast<long>(start),
                                source.begin() + static_cast<long>(std::min(source.size(), start + len))}));
      }
      std::string query;
      Ids expected;
      for (const auto& t : terms) query += t + " ";
      for (const auto& [id, chars] : texts) {
        bool all_terms = true;
        for (const auto& t : terms) all_terms = all_terms && lower(joined(chars)).find(lower(t)) != std::string::npos;
        if (all_terms) expected.insert(id);
      }
      QCOMPARE(f.message_hits(query, all), expected);
    }
  }
};

QTEST_APPLESS_MAIN(TestHistorySearch)
#include "test_history_search.moc"
