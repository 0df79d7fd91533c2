// Rendering of replies: syntax highlighting per language family, LaTeX math (inline and
// display, and currency left alone), prose as safe rich text (tables, links, raw HTML as text),
// the block splitter, and the work a streamed reply costs per chunk.
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QtTest>
#include <set>

#include "gui/code_highlighter.h"
#include "gui/markdown_blocks.h"
#include "gui/math_render.h"
#include "gui/message_blocks.h"
#include "gui/reply_render.h"

using namespace day0::app;

namespace {

// The kind of the token covering `needle` (its first occurrence) in `code`, or -1.
int kindAt(const QString& code, const QString& language, const QString& needle) {
  const int at = static_cast<int>(code.indexOf(needle));
  if (at < 0) return -2;
  for (const CodeToken& t : highlight_tokens(code, language))
    if (t.start <= at && at + needle.size() <= t.start + t.length) return static_cast<int>(t.kind);
  return -1;
}
int K(TokenKind k) { return static_cast<int>(k); }

QString plainOf(const QString& html) {
  QTextDocument d;
  d.setHtml(html);
  return d.toPlainText();
}

}  // namespace

class TestGuiRender : public QObject {
  Q_OBJECT
 private slots:
  void highlightsEachLanguageFamily() {
    const QString cpp = "#include <vector>\nint main() { return 42; } // done\nauto s = \"hi\";";
    QCOMPARE(kindAt(cpp, "cpp", "#include"), K(TokenKind::preprocessor));
    QCOMPARE(kindAt(cpp, "c++", "int"), K(TokenKind::type));
    QCOMPARE(kindAt(cpp, "cpp", "return"), K(TokenKind::keyword));
    QCOMPARE(kindAt(cpp, "cpp", "42"), K(TokenKind::number));
    QCOMPARE(kindAt(cpp, "cpp", "// done"), K(TokenKind::comment));
    QCOMPARE(kindAt(cpp, "cpp", "\"hi\""), K(TokenKind::string));
    QCOMPARE(kindAt(cpp, "cpp", "main"), K(TokenKind::function));
    QCOMPARE(kindAt("__global__ void k(float* x) {}", "cuda", "__global__"), K(TokenKind::keyword));
    QCOMPARE(kindAt("__global__ void k(float* x) {}", "cu", "float"), K(TokenKind::type));

    const QString py = "def f(x):\n    \"\"\"Doc \" string.\"\"\"\n    return None  # no\n@cache\nclass A: pass";
    QCOMPARE(kindAt(py, "python", "def"), K(TokenKind::keyword));
    QCOMPARE(kindAt(py, "py", "Doc \" string."), K(TokenKind::string));
    QCOMPARE(kindAt(py, "py", "# no"), K(TokenKind::comment));
    QCOMPARE(kindAt(py, "py", "None"), K(TokenKind::keyword));
    QCOMPARE(kindAt(py, "py", "@cache"), K(TokenKind::preprocessor));

    const QString ts = "const x: number = `t ${a}`; // c\ninterface P { n: string }";
    QCOMPARE(kindAt(ts, "typescript", "const"), K(TokenKind::keyword));
    QCOMPARE(kindAt(ts, "ts", "number"), K(TokenKind::type));
    QCOMPARE(kindAt(ts, "ts", "`t ${a}`"), K(TokenKind::string));
    QCOMPARE(kindAt(ts, "js", "interface"), K(TokenKind::keyword));

    const QString rs = "fn f<'a>(s: &'a str) -> String { println!(\"x\"); let c = 'z'; }";
    QCOMPARE(kindAt(rs, "rust", "fn"), K(TokenKind::keyword));
    QCOMPARE(kindAt(rs, "rs", "'a>"), -1);  // a lifetime, not a string
    QCOMPARE(kindAt(rs, "rs", "println"), K(TokenKind::function));
    QCOMPARE(kindAt(rs, "rs", "'z'"), K(TokenKind::string));
    QCOMPARE(kindAt(rs, "rs", "String"), K(TokenKind::type));

    QCOMPARE(kindAt("func main() { var s string = `raw` }", "go", "func"), K(TokenKind::keyword));
    QCOMPARE(kindAt("func main() { var s string = `raw` }", "go", "`raw`"), K(TokenKind::string));
    QCOMPARE(kindAt("public class A { @Override void f() {} }", "java", "@Override"), K(TokenKind::preprocessor));
    QCOMPARE(kindAt("public class A { @Override void f() {} }", "java", "public"), K(TokenKind::keyword));

    const QString sh = "if [ -n \"$HOME\" ]; then echo ${PATH} # say\nfi";
    QCOMPARE(kindAt(sh, "bash", "if"), K(TokenKind::keyword));
    QCOMPARE(kindAt(sh, "sh", "${PATH}"), K(TokenKind::attribute));
    QCOMPARE(kindAt(sh, "shell", "# say"), K(TokenKind::comment));

    const QString json = "{\"name\": \"day0\", \"n\": -1.5e3, \"ok\": true, \"x\": null}";
    QCOMPARE(kindAt(json, "json", "\"name\""), K(TokenKind::attribute));
    QCOMPARE(kindAt(json, "json", "\"day0\""), K(TokenKind::string));
    QCOMPARE(kindAt(json, "json", "-1.5e3"), K(TokenKind::number));
    QCOMPARE(kindAt(json, "json", "true"), K(TokenKind::keyword));

    const QString yaml = "# config\nname: day0\nport: 8080\nlist:\n  - debug: true\n  - \"quoted\"";
    QCOMPARE(kindAt(yaml, "yaml", "# config"), K(TokenKind::comment));
    QCOMPARE(kindAt(yaml, "yml", "name"), K(TokenKind::attribute));
    QCOMPARE(kindAt(yaml, "yaml", "8080"), K(TokenKind::number));
    QCOMPARE(kindAt(yaml, "yaml", "debug"), K(TokenKind::attribute));
    QCOMPARE(kindAt(yaml, "yaml", "true"), K(TokenKind::keyword));
    QCOMPARE(kindAt(yaml, "yaml", "\"quoted\""), K(TokenKind::string));

    const QString sql = "SELECT name FROM t WHERE id = 3; -- one\nselect 'x'";
    QCOMPARE(kindAt(sql, "sql", "SELECT"), K(TokenKind::keyword));
    QCOMPARE(kindAt(sql, "sql", "select"), K(TokenKind::keyword));
    QCOMPARE(kindAt(sql, "sql", "-- one"), K(TokenKind::comment));
    QCOMPARE(kindAt(sql, "sql", "'x'"), K(TokenKind::string));

    const QString html = "<!-- c --><a href=\"/x\" class='y'>t &amp; u</a>";
    QCOMPARE(kindAt(html, "html", "<!-- c -->"), K(TokenKind::comment));
    QCOMPARE(kindAt(html, "xml", "<a"), K(TokenKind::tag));
    QCOMPARE(kindAt(html, "html", "href"), K(TokenKind::attribute));
    QCOMPARE(kindAt(html, "html", "\"/x\""), K(TokenKind::string));
    QCOMPARE(kindAt(html, "html", "&amp;"), K(TokenKind::number));
    QCOMPARE(kindAt(html, "html", "t &"), -1);

    const QString css = ".box > p { color: #fff; margin: 4px; } /* c */";
    QCOMPARE(kindAt(css, "css", ".box"), K(TokenKind::function));
    QCOMPARE(kindAt(css, "css", "color"), K(TokenKind::attribute));
    QCOMPARE(kindAt(css, "css", "#fff"), K(TokenKind::number));
    QCOMPARE(kindAt(css, "css", "4px"), K(TokenKind::number));
    QCOMPARE(kindAt(css, "css", "/* c */"), K(TokenKind::comment));

    const QString diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n same";
    QCOMPARE(kindAt(diff, "diff", "--- a/f"), K(TokenKind::heading));
    QCOMPARE(kindAt(diff, "diff", "@@ -1"), K(TokenKind::preprocessor));
    QCOMPARE(kindAt(diff, "diff", "-old"), K(TokenKind::deleted));
    QCOMPARE(kindAt(diff, "patch", "+new"), K(TokenKind::inserted));
    QCOMPARE(kindAt(diff, "diff", " same"), -1);

    // Unknown languages are plain; tokens never overlap.
    QVERIFY(highlight_tokens(cpp, "brainfuck").empty());
    QVERIFY(highlight_tokens(cpp, "").empty());
    for (const char* lang :
         {"cpp", "python", "ts", "rust", "go", "java", "sh", "json", "yaml", "sql", "html", "css", "diff"}) {
      int end = 0;
      for (const CodeToken& t :
           highlight_tokens(cpp + py + ts + rs + sh + json + yaml + sql + html + css + diff, lang)) {
        QVERIFY2(t.start >= end && t.length > 0, lang);
        end = t.start + t.length;
      }
    }
  }

  void highlightedCodeIsEscapedText() {
    const QString code = "<script>alert('x')</script> & \"q\"";
    const QString html = highlight_html(code, "html", RenderPalette::dark());
    QVERIFY(!html.contains("<script"));
    QCOMPARE(plainOf("<pre>" + html + "</pre>"), code);
    // Colours come from the palette of the theme.
    QVERIFY(html.contains(RenderPalette::dark().tag.name()));
    QVERIFY(highlight_html(code, "html", RenderPalette::light()).contains(RenderPalette::light().tag.name()));
    // Unterminated strings and comments end where the code ends, without hanging.
    for (const char* lang : {"cpp", "python", "html", "css", "json", "yaml", "sql", "sh"})
      QVERIFY(!highlight_html("\"open /* <!-- '''", lang, RenderPalette::light()).isEmpty());
  }

  void findsMathButNotCurrency() {
    QVERIFY(find_math_spans("It costs $5 and $10 today.").empty());
    QVERIFY(find_math_spans("From $5 to $10, or $ 3 $.").empty());
    QVERIFY(find_math_spans("An unbalanced $x + y").empty());
    QVERIFY(find_math_spans("Escaped \\$x\\$ and code `$x$`").empty());
    auto spans = find_math_spans("Let $x^2$ and \\(\\alpha\\), then $$\\sum_i x_i$$ and \\[y\\].");
    QCOMPARE(spans.size(), std::size_t(4));
    QCOMPARE(spans[0].tex, QString("x^2"));
    QVERIFY(!spans[0].display);
    QCOMPARE(spans[1].tex, QString("\\alpha"));
    QVERIFY(spans[2].display);
    QCOMPARE(spans[2].tex, QString("\\sum_i x_i"));
    QVERIFY(spans[3].display);
    // A formula does not run across paragraphs.
    QVERIFY(find_math_spans("$a\n\nb$").empty());
  }

  // Prose with dollars that are not math: prices, shell variables, escaped dollars. Real math
  // next to them still renders.
  void shellVariablesAndPricesStayText() {
    for (const char* prose : {"set $PATH:$HOME before you start", "export PATH=$HOME/bin:$PATH now",
                              "copy $dir/$file there", "use ${HOME}/x:$y", "it is $XDG_DATA_HOME/day0$ here",
                              "costs $5 and $10", "between $ 5 and 6 $", "\\$x$ is not math",
                              "the $LD_LIBRARY_PATH:$CUDA_HOME/lib64 pair"})
      QVERIFY2(find_math_spans(QString::fromUtf8(prose)).empty(), prose);
    // Math beside them, and math that looks a little like them.
    auto spans = find_math_spans("set $PATH:$HOME, then $x^2 + y^2$ and $f: X \\to Y$ and $a/b$ on the $n$th try");
    QCOMPARE(spans.size(), std::size_t(4));
    QCOMPARE(spans[0].tex, QString("x^2 + y^2"));
    QCOMPARE(spans[1].tex, QString("f: X \\to Y"));
    QCOMPARE(spans[2].tex, QString("a/b"));
    QCOMPARE(spans[3].tex, QString("n"));
    spans = find_math_spans("$$\\int_0^1 x\\,dx$$ and \\(\\beta\\) and \\[\\frac{1}{2}\\] and $AB$");
    QCOMPARE(spans.size(), std::size_t(4));
    QVERIFY(spans[0].display && spans[0].tex.startsWith("\\int_0^1"));
    QVERIFY(!spans[1].display);
    QVERIFY(spans[2].display);
    QCOMPARE(spans[3].tex, QString("AB"));

    // As shown: the dollars and the names as written, an escaped dollar without its backslash.
    const RenderPalette p = RenderPalette::light();
    const QString shell = QTextDocumentFragment::fromHtml(render_prose_html("set $PATH:$HOME first", p, 15)).toPlainText();
    QVERIFY2(shell.contains("$PATH:$HOME"), qPrintable(shell));
    const QString price = QTextDocumentFragment::fromHtml(render_prose_html("It is \\$5, or $x$.", p, 15)).toPlainText();
    QVERIFY2(price.contains("It is $5, or x."), qPrintable(price));
  }

  void rendersMath() {
    const QColor ink("#123456");
    const QString inlineHtml = math_inline_html("\\alpha + \\beta_i^2 \\leq \\frac{1}{2} \\sqrt{x}", ink, 15);
    const QString text = plainOf(inlineHtml);
    for (const char* part : {"α", "β", "≤", "√"}) QVERIFY2(text.contains(QString::fromUtf8(part)), part);
    QVERIFY(inlineHtml.contains("<sub>") && inlineHtml.contains("<sup>"));
    QVERIFY(inlineHtml.contains("overline"));

    const QString display = math_display_html("\\sum_{i=1}^{n} \\frac{a+b}{2c} \\int_0^\\infty", ink, 15);
    QVERIFY(display.contains("border-bottom: 1px solid #123456"));  // the fraction bar
    QVERIFY(plainOf(display).contains(QString::fromUtf8("∑")));
    QVERIFY(plainOf(display).contains(QString::fromUtf8("∫")));
    // Laid out: the fraction is taller than a line of text.
    QTextDocument one, two;
    one.setHtml(math_display_html("a+b", ink, 15));
    two.setHtml(display);
    QVERIFY(two.size().height() > one.size().height() * 1.6);

    const QString matrix = plainOf(math_display_html("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", ink, 15));
    for (const char* part : {"1", "2", "3", "4", "(", ")"}) QVERIFY2(matrix.contains(part), part);

    // The source never becomes markup; hostile or broken input still renders.
    QVERIFY(!math_inline_html("<script>x</script>", ink, 15).contains("<script"));
    QVERIFY(!math_display_html("\\text{<b>bold</b>}", ink, 15).contains("<b>bold"));
    QVERIFY(plainOf(math_inline_html("\\unknowncommand", ink, 15)).contains("\\unknowncommand"));
    for (const char* broken : {"\\frac", "\\frac{", "}}}", "x^", "\\left(", "\\begin{pmatrix} 1 &", "\\sqrt[", "{"})
      QVERIFY2(!math_display_html(broken, ink, 15).isEmpty(), broken);
    const QString deep = QString("{").repeated(20000) + "x" + QString("}").repeated(20000);
    QVERIFY(!math_display_html(deep, ink, 15).isEmpty());
    QVERIFY(!math_inline_html(QString("\\frac{").repeated(3000), ink, 15).isEmpty());
  }

  void proseIsSafeStyledRichText() {
    const RenderPalette& p = RenderPalette::light();
    const QString html = render_prose_html(
        "Text <b>raw</b> <script>alert(1)</script> <img src=\"http://x/y.png\" onerror=\"z\">\n"
        "[ok](https://example.org) [bad](javascript:alert(1)) [file](file:///etc/passwd) ![pic](http://x/p.png)\n"
        "`code` and $x^2$ but $5 and $10.",
        p, 15);
    QVERIFY(!html.contains("<script"));
    QVERIFY(!html.contains("<img"));
    QVERIFY(!html.contains("<b>raw"));
    QVERIFY(html.contains("href=\"https://example.org\""));
    QVERIFY(!html.contains("javascript:"));
    QVERIFY(!html.contains("href=\"file:"));
    const QString text = plainOf(html);
    QVERIFY(text.contains("<b>raw</b>"));  // shown as written
    QVERIFY(text.contains("$5 and $10"));
    QVERIFY(!text.contains("$x^2$"));
    QVERIFY(html.contains("<sup>2</sup>"));
    QVERIFY(html.contains(p.inlineCodeBackground.name()));  // inline code on a background

    const QString table = render_prose_html("| A | B |\n|---|---|\n| 1 | 2 |", p, 15);
    QVERIFY(table.contains("<table"));
    QVERIFY(table.contains("border=\"1\""));
    QTextDocument tableDoc;
    tableDoc.setHtml(table);
    QVERIFY(tableDoc.find("A").charFormat().fontWeight() >= QFont::DemiBold);  // the header row
    QVERIFY(tableDoc.find("1").charFormat().fontWeight() < QFont::DemiBold);
    QVERIFY(table.contains("cellpadding=\"6\""));
    // A malformed table is text, not a crash.
    QVERIFY(!render_prose_html("| A | B\n|--\n| 1 | 2 | 3 | 4", p, 15).isEmpty());
    // Private-use characters in the reply cannot pose as formulas.
    QVERIFY(!plainOf(render_prose_html(QString(QChar(0xE000)) + " and $y$", p, 15)).contains(QChar(0xE000)));
  }

  void splitsQuotesMathAndLongBlocks() {
    auto blocks = split_markdown("Intro\n\n> quoted\n> more\n\n$$\n\\frac{a}{b}\n$$\n\n\\[ x \\]\n- a\n\n- b\n\nEnd");
    QCOMPARE(blocks.size(), std::size_t(6));
    QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::quote);
    QCOMPARE(blocks[1].text, QString("quoted\nmore"));
    QCOMPARE(blocks[2].kind, MarkdownBlock::Kind::math);
    QCOMPARE(blocks[2].text, QString("\\frac{a}{b}"));
    QCOMPARE(blocks[3].kind, MarkdownBlock::Kind::math);
    QCOMPARE(blocks[3].text, QString("x"));
    QCOMPARE(blocks[4].text, QString("- a\n\n- b"));  // a loose list stays one block
    QCOMPARE(blocks[5].text, QString("End"));
    // Currency on its own line is not display math.
    QCOMPARE(split_markdown("$5 today").front().kind, MarkdownBlock::Kind::text);

    // A long code block is parts of one box; a huge line is cut.
    QString code = "```c\n";
    for (int i = 0; i < 400; ++i) code += QString("x%1;\n").arg(i);
    code += "```";
    blocks = split_markdown(code);
    QCOMPARE(blocks.size(), std::size_t(3));
    QCOMPARE(blocks[0].part, 0);
    QVERIFY(!blocks[0].lastPart);
    QCOMPARE(blocks[2].part, 2);
    QVERIFY(blocks[2].lastPart && blocks[2].closed);
    MessageBlocks model;
    model.setText(code);
    QCOMPARE(model.code(1).count('\n'), 399);  // Copy takes the whole fence from any part
    blocks = split_markdown(QString("word ").repeated(60000));
    QVERIFY(blocks.size() > 10);
    for (const auto& b : blocks) QVERIFY(b.text.size() < 3 * kProseBlockChars);
  }

  // A streamed reply re-splits and re-renders only its last blocks: the view renders each
  // changed row after every chunk, and no row before the last two ever changes.
  void streamingWorkPerChunkIsBounded() {
    QString reply;
    for (int i = 0; reply.size() < 50000; ++i) {
      reply += QString("## Part %1\n\nSome prose with **bold** and $x_%1$ math, ").arg(i) +
               QString("words ").repeated(40) + "\n\n";
      reply += "| a | b |\n|---|---|\n| 1 | 2 |\n\n";
      reply += "```python\n" + QString("print('line')\n").repeated(20) + "```\n\n";
      reply += "$$\n\\frac{a}{b}\n$$\n\n> a quote\n\n";
    }
    MessageBlocks model;
    int minChanged = 1 << 30;
    connect(&model, &QAbstractItemModel::dataChanged, &model, [&](const QModelIndex& a, const QModelIndex&) {
      minChanged = std::min(minChanged, a.row() - (model.rowCount() - 2));
    });
    std::set<int> toRender;
    connect(&model, &QAbstractItemModel::dataChanged, &model, [&](const QModelIndex& a, const QModelIndex& b) {
      for (int r = a.row(); r <= b.row(); ++r) toRender.insert(r);
    });
    connect(&model, &QAbstractItemModel::rowsInserted, &model, [&](const QModelIndex&, int f, int l) {
      for (int r = f; r <= l; ++r) toRender.insert(r);
    });
    int chunks = 0, maxScanned = 0, maxRendered = 0;
    long long scanned = 0;
    for (int at = 0; at < reply.size(); at += 16, ++chunks) {
      const int rowsBefore = model.rowCount();
      model.append(reply.mid(at, 16));
      const int inserted = model.rowCount() - rowsBefore;
      maxScanned = std::max(maxScanned, model.lastScannedChars());
      scanned += model.lastScannedChars();
      const int before = model.renderCount();
      for (int r : toRender) model.html(r, true);
      toRender.clear();
      maxRendered = std::max(maxRendered, model.renderCount() - before - inserted);  // new rows render once
    }
    // What re-splitting and re-rendering the whole reply on every chunk (the former way) costs.
    long long wholeScanned = 0;
    for (int at = 16; at < reply.size() + 16; at += 16) wholeScanned += std::min<qsizetype>(at, reply.size());
    qInfo(
        "50 KB streamed in %d chunks: %lld characters split per chunk (whole reply: %lld), "
        "%.2f rows rendered per chunk (whole reply: %d rows at the end)",
        chunks, scanned / chunks, wholeScanned / chunks, double(model.renderCount()) / chunks, model.rowCount());
    // The same blocks as splitting the whole reply at once.
    const auto whole = split_markdown(reply);
    QCOMPARE(model.rowCount(), static_cast<int>(whole.size()));
    for (int r = 0; r < model.rowCount(); ++r) QVERIFY(model.block(r).sameContent(whole[static_cast<std::size_t>(r)]));
    QVERIFY2(model.rowCount() > 100, qPrintable(QString::number(model.rowCount())));
    // Per chunk: at most the last two blocks are split again, and besides the rows it adds, at
    // most those two are rendered again.
    QVERIFY2(minChanged >= 0, qPrintable(QString::number(minChanged)));
    QVERIFY2(maxRendered <= 2, qPrintable(QString::number(maxRendered)));
    QVERIFY2(maxScanned < 2 * kProseBlockChars, qPrintable(QString::number(maxScanned)));
    // Re-splitting the whole reply on every chunk would scan ~chunks * 25 KB.
    QVERIFY2(scanned < static_cast<long long>(chunks) * 2000, qPrintable(QString::number(scanned / chunks)));
    QVERIFY2(model.renderCount() < chunks + model.rowCount() + 10, qPrintable(QString::number(model.renderCount())));
  }

  void editsAndThemesRenderAgainOnlyWhatChanged() {
    MessageBlocks model;
    model.setText("one\n\ntwo\n\nthree");
    QCOMPARE(model.rowCount(), 3);
    for (int r = 0; r < 3; ++r) model.html(r, false);
    QCOMPARE(model.renderCount(), 3);
    for (int r = 0; r < 3; ++r) model.html(r, false);
    QCOMPARE(model.renderCount(), 3);  // cached
    model.html(0, true);
    QCOMPARE(model.renderCount(), 4);  // the other theme
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.setText("one\n\nTWO");  // an edit, not an append
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(model.source(1), QString("TWO"));
    model.html(0, false);
    QCOMPARE(model.renderCount(), 4);  // "one" unchanged: kept
  }
};

QTEST_MAIN(TestGuiRender)
#include "test_gui_render.moc"
