#pragma once
// LaTeX math for the chat view, as Qt rich text: a small parser of the common subset (fractions,
// sub- and superscripts, Greek letters, operators and symbols, sums, products and integrals with
// limits, roots, \left...\right, matrices, cases and aligned) and two renderings: inline (one line
// of text with <sup>/<sub> and Unicode symbols) and display (nested tables: fraction bars, limits
// above and below, big delimiters). The output is escaped HTML: the source never becomes markup.
// The parser and the span finder are in math_parse.cpp, the two renderings in math_render.cpp.
#include <QColor>
#include <QString>
#include <vector>

namespace day0::app {

// A math span found in Markdown prose: [start, end) covers the delimiters, `tex` is inside them.
struct MathSpan {
  int start = 0;
  int end = 0;
  bool display = false;
  QString tex;
};

// The math spans of a Markdown paragraph: $...$ and \(...\) inline, $$...$$ and \[...\] display.
// Code spans are skipped, \$ is a dollar, and a $ opens only before a non-space and closes only
// after a non-space and not before a digit, so "$5 and $10" stays text; shell variables
// ("$PATH:$HOME", "$dir/$file", "$HOME/bin:$PATH") stay text too.
std::vector<MathSpan> find_math_spans(const QString& markdown);

// `tex` as inline rich text (no enclosing block), at `pixelSize`.
QString math_inline_html(const QString& tex, const QColor& text, int pixelSize);
// `tex` as a centred display block (a table), at `pixelSize`.
QString math_display_html(const QString& tex, const QColor& text, int pixelSize);

}  // namespace day0::app
