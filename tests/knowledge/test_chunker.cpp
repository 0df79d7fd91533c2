// Chunking: exact line ranges, Markdown sections, functions and classes in several languages,
// size limits (long lines included), CRLF input and PDF pages.
#include <QtTest>
#include <random>

#include "knowledge/chunker.h"
#include "knowledge/document.h"
#include "knowledge_test_util.h"

using namespace day0::knowledge;

namespace {

Document doc(DocumentKind kind, std::string language, std::string text) {
  Document d;
  d.name = "t";
  d.kind = kind;
  d.language = std::move(language);
  d.text = std::move(text);
  return d;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// "first-last" of every chunk.
QString ranges(const std::vector<Chunk>& chunks) {
  QString out;
  for (const auto& c : chunks)
    out += (out.isEmpty() ? "" : " ") + QString::number(c.first_line) + "-" + QString::number(c.last_line);
  return out;
}

// Every chunk's text is exactly its lines of the document (or a piece of one over-long line).
void check_text_matches_lines(const Document& d, const std::vector<Chunk>& chunks) {
  const auto lines = lines_of(d.text);
  for (const auto& c : chunks) {
    QVERIFY(c.first_line >= 1 && c.last_line >= c.first_line && c.last_line <= int(lines.size()));
    std::string joined;
    for (int i = c.first_line; i <= c.last_line; ++i) joined += (i > c.first_line ? "\n" : "") + lines[i - 1];
    if (c.first_line == c.last_line && joined.size() > c.text.size())
      QVERIFY(joined.find(c.text) != std::string::npos);
    else
      QCOMPARE(c.text, joined);
  }
}

}  // namespace

class TestChunker : public QObject {
  Q_OBJECT
 private slots:
  void markdownSectionsAndHeadingPaths() {
    const std::string text =
        "# Guide\n"             // 1
        "\n"                    // 2
        "## Install\n"          // 3
        "Run the installer.\n"  // 4
        "It takes a minute.\n"  // 5
        "\n"                    // 6
        "```sh\n"               // 7
        "# not a heading\n"     // 8
        "\n"                    // 9
        "make install\n"        // 10
        "```\n"                 // 11
        "## Use\n"              // 12
        "Open the app.\n"       // 13
        "### Keys\n"            // 14
        "Ctrl+K searches.\n";   // 15
    const Document d = doc(DocumentKind::markdown, "markdown", text);
    const auto chunks = chunk_document(d, {200, 400});
    QCOMPARE(ranges(chunks), QString("1-11 12-13 14-15"));
    QCOMPARE(QString::fromStdString(chunks[0].title), QString("Guide > Install"));
    QCOMPARE(QString::fromStdString(chunks[1].title), QString("Guide > Use"));
    QCOMPARE(QString::fromStdString(chunks[2].title), QString("Guide > Use > Keys"));
    check_text_matches_lines(d, chunks);
    // With a tiny target the fenced block still stays whole (it is one unit).
    const auto small = chunk_document(d, {20, 400});
    QCOMPARE(ranges(small), QString("1-5 7-11 12-13 14-15"));
  }

  void proseParagraphsMergeUpToTarget() {
    std::string text;
    for (int p = 0; p < 6; ++p)
      text += "Paragraph " + std::to_string(p) + " has some words in it.\nAnd a second line.\n\n";
    const Document d = doc(DocumentKind::text, "", text);
    // Each paragraph is 52 bytes; about two fit in 120.
    const auto chunks = chunk_document(d, {120, 400});
    QCOMPARE(ranges(chunks), QString("1-5 7-11 13-17"));
    check_text_matches_lines(d, chunks);
  }

  void cppFunctionsWithCommentsInsideNamespace() {
    const std::string text =
        "#include <cstdio>\n"                     // 1
        "\n"                                      // 2
        "namespace demo {\n"                      // 3
        "\n"                                      // 4
        "// Adds two numbers.\n"                  // 5
        "int add(int a,\n"                        // 6
        "        int b) {\n"                      // 7
        "  return a + b;  // '}' in a comment\n"  // 8
        "}\n"                                     // 9
        "\n"                                      // 10
        "template <typename T>\n"                 // 11
        "struct Box {\n"                          // 12
        "  T value;\n"                            // 13
        "  const char* brace = \"{\";\n"          // 14
        "};\n"                                    // 15
        "int twice(int x) { return 2 * x; }\n"    // 16
        "\n"                                      // 17
        "}  // namespace demo\n";                 // 18
    const Document d = doc(DocumentKind::code, "cpp", text);
    const auto chunks = chunk_document(d, {10, 400});
    QCOMPARE(ranges(chunks), QString("1-1 3-3 5-9 11-15 16-16 18-18"));
    QCOMPARE(QString::fromStdString(chunks[2].title), QString("int add(int a,"));
    // The template line goes with its struct; the title is the declaration itself.
    QCOMPARE(QString::fromStdString(chunks[3].title), QString("struct Box {"));
    check_text_matches_lines(d, chunks);
  }

  void pythonClassesMethodsAndDecorators() {
    std::string text =
        "import os\n"                              // 1
        "\n"                                       // 2
        "\n"                                       // 3
        "@dataclass\n"                             // 4
        "class Point:\n"                           // 5
        "    x: int\n"                             // 6
        "\n"                                       // 7
        "    def norm(self):\n"                    // 8
        "        return (self.x *\n"               // 9
        "                self.x)\n"                // 10
        "\n"                                       // 11
        "\n"                                       // 12
        "# Says hello.\n"                          // 13
        "def hello(name):\n"                       // 14
        "    \"\"\"Greets.\n"                      // 15
        "\n"                                       // 16
        "def not_a_function_inside_a_docstring\n"  // 17
        "    \"\"\"\n"                             // 18
        "    if name:\n"                           // 19
        "        print(name)\n"                    // 20
        "    else:\n"                              // 21
        "        print('nobody')\n";               // 22
    const Document d = doc(DocumentKind::code, "python", text);
    auto chunks = chunk_document(d, {10, 400});
    QCOMPARE(ranges(chunks), QString("1-1 4-10 13-22"));
    QCOMPARE(QString::fromStdString(chunks[1].title), QString("class Point:"));
    QCOMPARE(QString::fromStdString(chunks[2].title), QString("def hello(name):"));
    check_text_matches_lines(d, chunks);
    // A class too large for max_bytes is cut between its members, never inside one.
    chunks = chunk_document(d, {10, 80});
    QVERIFY2(ranges(chunks).startsWith("1-1 4-6 8-10 13-"), qPrintable(ranges(chunks)));
  }

  void rustAndJavascript() {
    const std::string rust =
        "use std::fmt;\n"                                                   // 1
        "\n"                                                                // 2
        "/// Doubles.\n"                                                    // 3
        "#[inline]\n"                                                       // 4
        "pub fn double(x: i32) -> i32 {\n"                                  // 5
        "    x * 2\n"                                                       // 6
        "}\n"                                                               // 7
        "impl fmt::Display for P {\n"                                       // 8
        "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n"  // 9
        "        write!(f, \"}}\")\n"                                       // 10
        "    }\n"                                                           // 11
        "}\n";                                                              // 12
    auto chunks = chunk_document(doc(DocumentKind::code, "rust", rust), {10, 400});
    QCOMPARE(ranges(chunks), QString("1-1 3-7 8-12"));
    QCOMPARE(QString::fromStdString(chunks[1].title), QString("pub fn double(x: i32) -> i32 {"));
    const std::string js =
        "import { a } from \"./a.js\";\n"  // 1
        "\n"                               // 2
        "export function f() {\n"          // 3
        "  const s = `{`;\n"               // 4
        "  return s;\n"                    // 5
        "}\n"                              // 6
        "const g = () => {\n"              // 7
        "  return 1;\n"                    // 8
        "};\n";                            // 9
    chunks = chunk_document(doc(DocumentKind::code, "javascript", js), {10, 400});
    QCOMPARE(ranges(chunks), QString("1-1 3-6 7-9"));
  }

  void shellAndCmakeByBlankLines() {
    const std::string sh = "#!/bin/sh\nset -e\n\nbuild() {\n  make\n}\n\nbuild\n";
    const auto chunks = chunk_document(doc(DocumentKind::code, "shell", sh), {10, 400});
    QCOMPARE(ranges(chunks), QString("1-2 4-6 8-8"));
  }

  void sizeLimitsHoldForAnyInput() {
    std::mt19937 rng(7);
    const char* alphabet = "ab {}()\n\n#/*'\"`:-";
    for (int round = 0; round < 200; ++round) {
      std::string text;
      const int n = int(rng() % 3000);
      for (int i = 0; i < n; ++i) text.push_back(alphabet[rng() % 18]);
      if (round % 10 == 0) text += std::string(5000, 'x') + "\n";  // one very long line
      const DocumentKind kinds[] = {DocumentKind::text, DocumentKind::markdown, DocumentKind::code, DocumentKind::code};
      const char* languages[] = {"", "markdown", "cpp", "python"};
      const Document d = doc(kinds[round % 4], languages[round % 4], text);
      const ChunkOptions options{std::size_t(50 + rng() % 300), std::size_t(400 + rng() % 200)};
      const auto chunks = chunk_document(d, options);
      int last = 0;
      for (const auto& c : chunks) {
        QVERIFY2(c.text.size() <= options.max_bytes, qPrintable(QString::number(c.text.size())));
        QVERIFY(c.first_line >= last);  // in order, no overlap beyond one long line's pieces
        last = c.last_line;
      }
      check_text_matches_lines(d, chunks);
      // Every line with text is in some chunk.
      const auto lines = lines_of(text);
      std::vector<bool> covered(lines.size() + 1, false);
      for (const auto& c : chunks)
        for (int i = c.first_line; i <= c.last_line; ++i) covered[i] = true;
      for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].find_first_not_of(" \t") != std::string::npos) QVERIFY(covered[i + 1]);
    }
  }

  void longLineIsCutIntoPiecesOfThatLine() {
    std::string line;
    for (int i = 0; i < 400; ++i) line += "word" + std::to_string(i) + " ";
    const Document d = doc(DocumentKind::text, "", "before\n\n" + line + "\n\nafter\n");
    const auto chunks = chunk_document(d, {500, 1000});
    QVERIFY(chunks.size() > 3);
    QCOMPARE(chunks.front().first_line, 1);
    QCOMPARE(chunks.back().first_line, 5);
    std::string rebuilt;
    for (const auto& c : chunks)
      if (c.first_line == 3) {
        QCOMPARE(c.last_line, 3);
        QVERIFY(c.text.size() <= 1000);
        rebuilt += c.text;
      }
    QCOMPARE(rebuilt, line);
  }

  void crlfDocumentsNumberLinesLikeLf() {
    const auto r = read_document_bytes("# A\r\ntext\r\n\r\n# B\r\nmore\r\n", "x.md");
    QVERIFY(r.ok);
    const auto chunks = chunk_document(r.document, {5, 100});
    QCOMPARE(ranges(chunks), QString("1-2 4-5"));
    QCOMPARE(chunks[1].text, std::string("# B\nmore"));
  }

  void pdfChunksStayOnTheirPage() {
    const auto r = read_document(day0::test::knowledge_data() / "notes" / "lease-agreement.pdf");
    QVERIFY(r.ok);
    const auto chunks = chunk_document(r.document, {100, 400});
    QVERIFY(chunks.size() >= 3);
    const auto lines = lines_of(r.document.text);
    int page = 1;
    for (const auto& c : chunks) {
      QVERIFY(c.page >= page && c.page <= 3);
      page = c.page;
      // The chunk's lines all start at or after its page's start and before the next page.
      std::size_t offset = 0;
      for (int i = 1; i < c.first_line; ++i) offset += lines[i - 1].size() + 1;
      QVERIFY(offset >= r.document.page_starts[c.page - 1]);
      if (c.page < 3) QVERIFY(offset < r.document.page_starts[c.page]);
    }
    QCOMPARE(chunks.back().page, 3);
    check_text_matches_lines(r.document, chunks);
  }
};

QTEST_APPLESS_MAIN(TestChunker)
#include "test_chunker.moc"
