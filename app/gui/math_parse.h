#pragma once
// The parsing half of math_render: LaTeX source into a tree of math nodes (a small parser of the
// common subset, bounded in depth and length), which math_render.cpp lays out as rich text.
#include <QString>
#include <vector>

namespace day0::app::math {

inline constexpr int kMaxTex = 8000;  // longer formulas render as text

struct Node {
  enum Kind { row, ident, number, op, rel, textual, frac, scripts, root, bigop, matrix, fenced, space, accent };
  Kind kind = row;
  QString text;            // ident/number/op/text/bigop: the symbol; fenced: left delimiter; accent: the mark
  QString right;           // fenced: right delimiter; matrix: "(" ")" etc. in text/right
  std::vector<Node> kids;  // row: items; frac: num, den; scripts: base, sub, sup; root: arg, index;
                           // bigop: lower, upper; matrix: rows (each a row of cells)
  bool hasSub = false, hasSup = false, bar = true, limits = false, aligned = false, bold = false;
};

// The tree of `tex` (never fails: what it does not know becomes text).
Node parse_tex(const QString& tex);

}  // namespace day0::app::math
