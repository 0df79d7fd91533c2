// Context assembly (knowledge/context.h): excerpts packed within a budget measured by a real
// tokenizer (o200k's, from tests/data), numbered citations, whole folders when they fit,
// attached documents whole or in their best parts, and empty, huge and hostile inputs.
#include <QtTest>
#include <random>
#include <regex>

#include "day0/tokenizer.h"
#include "knowledge/context.h"

using namespace day0::knowledge;

namespace {

const day0::Tokenizer& tokenizer() {
  static const day0::Tokenizer t = *day0::Tokenizer::load(DAY0_TEST_DATA_DIR "/tokenizers/o200k/tokenizer.json");
  return t;
}

TokenCounter counter() {
  return [](std::string_view text) -> std::int64_t {
    return static_cast<std::int64_t>(tokenizer().encode(text, false)->size());
  };
}

std::int64_t tokens(std::string_view text) { return counter()(text); }

Hit hit(std::int64_t folder, const std::string& rel, int first, int last, const std::string& text, int page = 0) {
  Hit h;
  h.chunk_id = first * 1000 + last;
  h.folder_id = folder;
  h.path = "/repo/" + rel;
  h.relative_path = rel;
  h.first_line = first;
  h.last_line = last;
  h.page = page;
  h.text = text;
  return h;
}

std::string lines(const std::string& word, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += word + " line " + std::to_string(i) + " of the file\n";
  return out;
}

Document doc(const std::string& name, std::string text, DocumentKind kind = DocumentKind::text,
             const std::string& language = {}) {
  Document d;
  d.name = name;
  d.kind = kind;
  d.language = language;
  d.text = std::move(text);
  return d;
}

// Every "[n] label" header of the text, in order.
std::vector<std::string> headers(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex header(R"(^\[(\d+)\] ([^\n]*)$)", std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), header); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[0].str());
  return out;
}

}  // namespace

class TestKnowledgeContext : public QObject {
  Q_OBJECT
 private slots:
  // A one-line document of 200 KB split into many passages: each citation knows the characters
  // it covers (the text there is the excerpt), and the chat shows one source for it, with the
  // passages' real character ranges merged.
  void longLineCitedOncePerPlace() {
    std::string line;
    for (int i = 0; line.size() < 200000; ++i) line += "word" + std::to_string(i) + " ";
    ContextInput in;
    in.question = "word77 word5000";
    in.documents.push_back(doc("big200k.txt", line));
    in.budget_tokens = 6000;
    const AssembledContext c = assemble_context(in, counter());
    QVERIFY(c.citations.size() > 1);
    for (const Citation& cit : c.citations) {
      QVERIFY(cit.first_char > 0);
      QVERIFY(cit.last_char >= cit.first_char);
      const std::string part = line.substr(static_cast<std::size_t>(cit.first_char - 1),
                                           static_cast<std::size_t>(cit.last_char - cit.first_char + 1));
      QVERIFY2(c.text.find(part) != std::string::npos, cit.label.c_str());
    }
    const auto groups = group_citations(citations_from_json(citations_to_json(c.citations)));
    QCOMPARE(groups.size(), std::size_t{1});
    QCOMPARE(groups[0].numbers.size(), c.citations.size());
    QVERIFY2(groups[0].label.rfind("big200k.txt:1 chars ", 0) == 0, groups[0].label.c_str());
    QVERIFY(groups[0].attachment);
  }

  void groupsMergeRanges() {
    const auto cite = [](int n, std::string path, std::string label, int first, int last, int page = 0,
                         int last_page = 0) {
      Citation c;
      c.number = n;
      c.path = std::move(path);
      c.label = std::move(label);
      c.first_line = first;
      c.last_line = last;
      c.page = page;
      c.last_page = last_page;
      return c;
    };
    const auto groups = group_citations({cite(1, "/r/a.cpp", "a.cpp:80-95", 80, 95),
                                         cite(2, "/r/b.pdf", "b.pdf p. 7", 1, 5, 7, 7),
                                         cite(3, "/r/a.cpp", "a.cpp:10-42", 10, 42),
                                         cite(4, "/r/a.cpp", "a.cpp:40-50", 40, 50),
                                         cite(5, "/r/b.pdf", "b.pdf pp. 1-3", 1, 9, 1, 3),
                                         cite(6, "/r/c.md", "c.md", 1, 30)});
    QCOMPARE(groups.size(), std::size_t{3});
    QCOMPARE(groups[0].label, std::string("a.cpp:10-50, 80-95"));
    QCOMPARE(groups[0].numbers, (std::vector<int>{1, 3, 4}));
    QCOMPARE(groups[0].first_line, 80);  // opens at the first (best) passage
    QCOMPARE(groups[1].label, std::string("b.pdf pp. 1-3, 7"));
    QCOMPARE(groups[1].page, 7);
    QCOMPARE(groups[2].label, std::string("c.md"));
  }

  void tokenizerIsReal() {
    // The `tokenizers` library's count for this sentence (tests/data/tokenizers/o200k/expected.json,
    // "ids_plain"), and a long text is far fewer tokens than bytes.
    QCOMPARE(tokens("The quick brown fox jumps over the lazy dog. The five boxing wizards jump quickly; pack my box "
                    "with five dozen liquor jugs."),
             std::int64_t{38});
    const std::string text = lines("alpha", 50);
    QVERIFY(tokens(text) < static_cast<std::int64_t>(text.size()) / 2);
  }

  void budgetArithmetic() {
    QCOMPARE(context_budget({10000, 2000, 1000, 0.5, 1 << 20}), std::int64_t{3500});
    QCOMPARE(context_budget({10000, 2000, 1000, 0.5, 1000}), std::int64_t{1000});  // capped
    QCOMPARE(context_budget({4096, 4000, 1024, 0.5, 32768}), std::int64_t{0});     // nothing left
    QCOMPARE(context_budget({4096, -5, -5, 2.0, 32768}), std::int64_t{4096});      // nonsense clamped
    QCOMPARE(context_budget({0, 0, 0, 0.5, 32768}), std::int64_t{0});
  }

  void nothingGivesNothing() {
    ContextInput in;
    in.question = "anything";
    in.budget_tokens = 1000;
    const auto c = assemble_context(in, counter());
    QVERIFY(c.text.empty());
    QCOMPARE(c.tokens, std::int64_t{0});
    QVERIFY(c.citations.empty());
    QVERIFY(!c.truncated);
    QCOMPARE(prompt_text(c.text, "anything"), std::string("anything"));
  }

  void hitsArePackedWithinTheBudgetAndNumbered() {
    ContextInput in;
    in.question = "how is the cache flushed";
    for (int i = 0; i < 12; ++i)
      in.hits.push_back(hit(1, "src/file" + std::to_string(i) + ".cpp", 10 * i + 1, 10 * i + 8,
                            lines("cache" + std::to_string(i), 8)));
    for (const std::int64_t budget : {60, 150, 300, 600, 5000}) {
      in.budget_tokens = budget;
      const auto c = assemble_context(in, counter());
      QVERIFY2(tokens(c.text) <= budget, qPrintable(QString("%1 > %2").arg(tokens(c.text)).arg(budget)));
      QCOMPARE(c.tokens, tokens(c.text));
      const auto h = headers(c.text);
      QCOMPARE(h.size(), c.citations.size());
      // Best hits first: the citations follow the hits' order, each cited by path and lines.
      std::size_t next = 0;
      std::vector<Hit> cited;
      for (std::size_t i = 0; i < c.citations.size(); ++i) {
        const Citation& cit = c.citations[i];
        QCOMPARE(cit.number, static_cast<int>(i) + 1);
        while (next < in.hits.size() && in.hits[next].path != cit.path) ++next;
        QVERIFY(next < in.hits.size());
        const Hit& src = in.hits[next++];
        cited.push_back(src);
        QCOMPARE(cit.label,
                 src.relative_path + ":" + std::to_string(src.first_line) + "-" + std::to_string(src.last_line));
        QCOMPARE(h[i], "[" + std::to_string(i + 1) + "] " + cit.label);
        QVERIFY(c.text.find(src.text) != std::string::npos);
      }
      if (c.citations.size() < in.hits.size()) {
        QVERIFY(c.truncated);
        // Tight: the best hit left out would not have fitted beside the others.
        for (const Hit& candidate : in.hits) {
          if (std::any_of(cited.begin(), cited.end(), [&](const Hit& x) { return x.path == candidate.path; })) continue;
          ContextInput more = in;
          more.hits = cited;
          more.hits.push_back(candidate);
          more.budget_tokens = 1 << 20;
          QVERIFY(tokens(assemble_context(more, counter()).text) > budget);
          break;
        }
      } else {
        QVERIFY(!c.truncated);
      }
      if (budget >= 5000) QCOMPARE(c.citations.size(), in.hits.size());
      if (budget <= 60) QVERIFY(c.citations.empty());
    }
    in.budget_tokens = 5000;
    const auto c = assemble_context(in, counter());
    QVERIFY(c.text.rfind("Sources for the question below. Cite them as [n]", 0) == 0);
    const std::string prompt = prompt_text(c.text, in.question);
    QVERIFY(prompt.size() > in.question.size());
    QCOMPARE(prompt.substr(prompt.size() - in.question.size()), in.question);
    // Deterministic: the same inputs give the same text.
    QCOMPARE(assemble_context(in, counter()).text, c.text);
  }

  void overlappingHitsAreCitedOnce() {
    ContextInput in;
    in.question = "q";
    in.hits = {hit(1, "a.py", 1, 20, lines("a", 20)), hit(1, "a.py", 10, 30, lines("b", 20)),
               hit(1, "a.py", 31, 40, lines("c", 10)), hit(1, "r.pdf", 1, 5, "page three\n", 3),
               hit(1, "r.pdf", 1, 5, "page four\n", 4)};
    in.budget_tokens = 10000;
    const auto c = assemble_context(in, counter());
    QCOMPARE(c.citations.size(), std::size_t{4});
    QCOMPARE(c.citations[0].label, std::string("a.py:1-20"));
    QCOMPARE(c.citations[1].label, std::string("a.py:31-40"));
    QCOMPARE(c.citations[2].label, std::string("r.pdf p. 3"));
    QCOMPARE(c.citations[2].page, 3);
    QCOMPARE(c.citations[3].label, std::string("r.pdf p. 4"));
    QVERIFY(c.text.find("```py\n") != std::string::npos);
  }

  void wholeFolderWhenItFits() {
    // Two files in three chunks: the whole folder is one excerpt per file, in order.
    const std::vector<Hit> folder = {hit(7, "README.md", 1, 5, lines("readme", 5)),
                                     hit(7, "src/main.cpp", 1, 10, lines("main", 10)),
                                     hit(7, "src/main.cpp", 11, 20, lines("more", 10))};
    ContextInput in;
    in.question = "what does main do";
    in.whole_folders = {folder};
    in.hits = {hit(7, "src/main.cpp", 11, 20, lines("more", 10))};
    in.budget_tokens = 5000;
    auto c = assemble_context(in, counter());
    QCOMPARE(c.citations.size(), std::size_t{2});
    QCOMPARE(c.citations[0].label, std::string("README.md:1-5"));
    QCOMPARE(c.citations[1].label, std::string("src/main.cpp:1-20"));
    QVERIFY(c.text.find(lines("main", 10) + lines("more", 10)) != std::string::npos);
    QVERIFY(!c.truncated);

    // Too small for all of it: the folder is searched instead (its hit goes in).
    const std::int64_t whole = c.tokens;
    in.budget_tokens = whole - 40;
    c = assemble_context(in, counter());
    QCOMPARE(c.citations.size(), std::size_t{1});
    QCOMPARE(c.citations[0].label, std::string("src/main.cpp:11-20"));
    QVERIFY(tokens(c.text) <= in.budget_tokens);
  }

  void attachedDocumentsComeFirstAndWhole() {
    ContextInput in;
    in.question = "summarise";
    in.documents = {doc("notes.md", "# Notes\nThe launch is on Friday.\n", DocumentKind::markdown, "markdown"),
                    doc("tool.py", "print('hi')\n", DocumentKind::code, "python")};
    in.hits = {hit(1, "x.txt", 1, 2, "x\ny\n")};
    in.budget_tokens = 2000;
    const auto c = assemble_context(in, counter());
    QCOMPARE(c.citations.size(), std::size_t{3});
    QCOMPARE(c.citations[0].label, std::string("notes.md"));
    QVERIFY(c.citations[0].attachment);
    QCOMPARE(c.citations[0].last_line, 2);
    QCOMPARE(c.citations[1].label, std::string("tool.py"));
    QVERIFY(c.text.find("[1] notes.md (attached)\n```markdown\n# Notes\nThe launch is on Friday.\n```\n") !=
            std::string::npos);
    QVERIFY(c.text.find("[2] tool.py (attached)\n```python\nprint('hi')\n```\n") != std::string::npos);
    QVERIFY(c.shortened.empty());
  }

  void hugeDocumentGoesInByItsBestParts() {
    // 2 MB of filler with one paragraph about the answer, in the middle.
    std::string text;
    for (int i = 0; i < 20000; ++i) {
      if (i == 10000) text += "\nThe flux capacitor needs 1.21 gigawatts to travel in time.\n\n";
      text += "Filler sentence number " + std::to_string(i) + " says nothing at all here.\n";
      if (i % 20 == 19) text += "\n";
    }
    ContextInput in;
    in.question = "How many gigawatts does the flux capacitor need?";
    in.documents = {doc("manual.txt", text)};
    in.budget_tokens = 1500;
    const auto c = assemble_context(in, counter());
    QVERIFY(tokens(c.text) <= in.budget_tokens);
    QVERIFY(c.truncated);
    QCOMPARE(c.shortened, std::vector<std::string>{"manual.txt"});
    QVERIFY(!c.citations.empty());
    QVERIFY(c.text.find("1.21 gigawatts") != std::string::npos);
    // The parts are cited by their lines and come in reading order.
    for (std::size_t i = 0; i < c.citations.size(); ++i) {
      QVERIFY(c.citations[i].label.rfind("manual.txt:", 0) == 0);
      if (i > 0) QVERIFY(c.citations[i].first_line > c.citations[i - 1].first_line);
    }
  }

  void fencesSurviveBackticksAndBudgetZero() {
    ContextInput in;
    in.question = "q";
    in.hits = {hit(1, "README.md", 1, 3, "```sh\nmake\n```\n")};
    in.budget_tokens = 500;
    auto c = assemble_context(in, counter());
    QVERIFY(c.text.find("````markdown\n```sh\nmake\n```\n````\n") != std::string::npos);
    in.budget_tokens = 0;
    c = assemble_context(in, counter());
    QVERIFY(c.text.empty());
    QVERIFY(c.truncated);
    in.budget_tokens = -100;
    QVERIFY(assemble_context(in, counter()).text.empty());
  }

  void hostileTextNeverBreaksTheBudget() {
    std::mt19937 rng(1234);
    for (int round = 0; round < 40; ++round) {
      ContextInput in;
      in.question = "q" + std::to_string(round);
      const int n = static_cast<int>(rng() % 6);
      for (int i = 0; i < n; ++i) {
        std::string junk(rng() % 3000, '\0');
        for (char& ch : junk) ch = static_cast<char>("`\n ab\xc3\xa9\xff{}[]"[rng() % 13]);
        in.hits.push_back(
            hit(1, "f" + std::to_string(i), 1 + i * 100, 1 + i * 100 + static_cast<int>(rng() % 50), junk));
      }
      if (rng() % 2) in.documents.push_back(doc("d.txt", std::string(rng() % 20000, '`')));
      in.budget_tokens = static_cast<std::int64_t>(rng() % 3000);
      const auto c = assemble_context(in, counter());
      QVERIFY(tokens(c.text) <= std::max<std::int64_t>(in.budget_tokens, 0));
      QCOMPARE(headers(c.text).size() >= c.citations.size(), true);
    }
  }

  void citationsJsonRoundTrip() {
    std::vector<Citation> list(2);
    list[0] = {1, "/repo/src/a.cpp", "src/a.cpp:10-42", 10, 42, 0, 0, false};
    list[1] = {2, "report.pdf", "report.pdf pp. 3-4", 1, 9, 3, 4, true};
    const auto back = citations_from_json(citations_to_json(list));
    QCOMPARE(back.size(), std::size_t{2});
    QCOMPARE(back[0].label, list[0].label);
    QCOMPARE(back[0].last_line, 42);
    QCOMPARE(back[1].page, 3);
    QCOMPARE(back[1].last_page, 4);
    QVERIFY(back[1].attachment);
    // Damaged or foreign JSON gives what is readable, never a crash.
    for (const char* bad : {"", "{", "null", "{\"n\":1}", "[1,2,3]", "[{\"n\":\"x\",\"path\":1}]",
                            "[{\"n\":-1,\"path\":\"a\",\"label\":\"b\"}]", "[{\"n\":1,\"path\":\"a\"}]"})
      QVERIFY(citations_from_json(bad).empty());
    const auto partial = citations_from_json(
        "[{\"n\":3,\"path\":\"a\",\"label\":\"b\",\"first_line\":99999999999,\"last_line\":-4},{\"oops\":true}]");
    QCOMPARE(partial.size(), std::size_t{1});
    QCOMPARE(partial[0].first_line, 1);
    QVERIFY(partial[0].last_line >= partial[0].first_line);
  }
};

QTEST_APPLESS_MAIN(TestKnowledgeContext)
#include "test_knowledge_context.moc"
