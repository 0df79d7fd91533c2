#include "gui/math_render.h"

#include <QRegularExpression>
#include <algorithm>

#include "gui/math_parse.h"

namespace day0::app {
namespace {

using math::Node;
using math::kMaxTex;

// ---- rendering ----

QString esc(const QString& s) { return s.toHtmlEscaped(); }

bool is_simple(const Node& n) {
  if (n.kind == Node::row) return n.kids.size() == 1 && is_simple(n.kids[0]);
  return n.kind == Node::ident || n.kind == Node::number || (n.kind == Node::op && n.text.size() == 1);
}

QString inline_html(const Node& n);

QString inline_kids(const Node& n) {
  QString out;
  for (const Node& k : n.kids) out += inline_html(k);
  return out;
}

QString parenthesized(const Node& n) {
  const QString inner = inline_html(n);
  return is_simple(n) ? inner : QStringLiteral("(") + inner + QStringLiteral(")");
}

QString inline_html(const Node& n) {
  switch (n.kind) {
    case Node::row: {
      const QString inner = inline_kids(n);
      return n.bold ? QStringLiteral("<b>") + inner + QStringLiteral("</b>") : inner;
    }
    case Node::ident:
      return QStringLiteral("<i>") + esc(n.text) + QStringLiteral("</i>");
    case Node::number:
    case Node::op:
      return esc(n.text);
    case Node::rel:
      return QStringLiteral("\u202F") + esc(n.text) + QStringLiteral("\u202F");  // no-break spaces
    case Node::space:
      return n.text.size() > 1 ? QString(n.text.size() * 2, QChar(0x00A0)) : QStringLiteral("\u202F");
    case Node::textual: {
      const QString t = esc(n.text);
      return n.bold ? QStringLiteral("<b>") + t + QStringLiteral("</b>") : t;
    }
    case Node::frac:
      if (!n.bar)
        return QStringLiteral("<sup>") + inline_html(n.kids[0]) + QStringLiteral("</sup><sub>") +
               inline_html(n.kids[1]) + QStringLiteral("</sub>");
      if (is_simple(n.kids[0]) && is_simple(n.kids[1]))
        return QStringLiteral("<sup>") + inline_html(n.kids[0]) + QStringLiteral("</sup>\u2044<sub>") +
               inline_html(n.kids[1]) + QStringLiteral("</sub>");
      return parenthesized(n.kids[0]) + QStringLiteral("/") + parenthesized(n.kids[1]);
    case Node::scripts: {
      QString out = inline_html(n.kids[0]);
      if (n.hasSub) out += QStringLiteral("<sub>") + inline_html(n.kids[1]) + QStringLiteral("</sub>");
      if (n.hasSup) out += QStringLiteral("<sup>") + inline_html(n.kids[2]) + QStringLiteral("</sup>");
      return out;
    }
    case Node::root: {
      QString out;
      if (!n.kids[1].kids.empty()) out += QStringLiteral("<sup>") + inline_html(n.kids[1]) + QStringLiteral("</sup>");
      return out + QStringLiteral("√<span style=\"text-decoration: overline\">") + inline_html(n.kids[0]) +
             QStringLiteral("</span>");
    }
    case Node::bigop: {
      QString out = n.text.size() == 1
                        ? QStringLiteral("<span style=\"font-size:large\">") + esc(n.text) + QStringLiteral("</span>")
                        : esc(n.text);
      if (n.hasSub) out += QStringLiteral("<sub>") + inline_html(n.kids[0]) + QStringLiteral("</sub>");
      if (n.hasSup) out += QStringLiteral("<sup>") + inline_html(n.kids[1]) + QStringLiteral("</sup>");
      return out + QStringLiteral("\u2009");
    }
    case Node::fenced:
      return esc(n.text) + inline_kids(n) + esc(n.right);
    case Node::accent: {
      const QString inner = inline_html(n.kids[0]);
      if (n.text == u"_") return QStringLiteral("<u>") + inner + QStringLiteral("</u>");
      if (!n.text.isEmpty() && is_simple(n.kids[0])) return inner + n.text;
      return QStringLiteral("<span style=\"text-decoration: overline\">") + inner + QStringLiteral("</span>");
    }
    case Node::matrix: {
      QStringList rows;
      for (const Node& r : n.kids) {
        QStringList cells;
        for (const Node& c : r.kids) cells << inline_html(c);
        rows << cells.join(n.aligned ? QString() : QStringLiteral(", "));
      }
      return esc(n.text) + rows.join(QStringLiteral("; ")) + esc(n.right);
    }
  }
  return {};
}

// Display: 2-D layouts as tables.
bool is_flat(const Node& n) {
  switch (n.kind) {
    case Node::frac:
    case Node::matrix:
      return false;
    case Node::bigop:
      return n.text.size() != 1 && !(n.limits && (n.hasSub || n.hasSup));
    default:
      for (const Node& k : n.kids)
        if (!is_flat(k)) return false;
      return true;
  }
}

int height_of(const Node& n) {  // in rows of text, for sizing delimiters
  switch (n.kind) {
    case Node::frac:
      return height_of(n.kids[0]) + height_of(n.kids[1]);
    case Node::matrix: {
      int h = 0;
      for (const Node& r : n.kids) {
        int rh = 1;
        for (const Node& c : r.kids) rh = std::max(rh, height_of(c));
        h += rh;
      }
      return std::max(1, h);
    }
    case Node::bigop:
      return n.limits ? 2 + (n.hasSub || n.hasSup ? 1 : 0) : 2;
    default: {
      int h = 1;
      for (const Node& k : n.kids) h = std::max(h, height_of(k));
      return h;
    }
  }
}

class Display {
 public:
  Display(const QColor& color, int px) : color_(color.name()), px_(px) {}

  QString block(const Node& n) {
    if (is_flat(n)) return inline_html(n);
    switch (n.kind) {
      case Node::frac:
        return frac(n);
      case Node::matrix:
        return matrix(n);
      case Node::fenced: {
        const int h = height_of(n);
        return table(cell(big(n.text, h)) + cell(block_kids(n)) + cell(big(n.right, h)));
      }
      case Node::scripts: {
        QString out = cell(block(n.kids[0]));
        QString scripts;
        if (n.hasSup) scripts += QStringLiteral("<tr><td valign=\"bottom\">%1</td></tr>").arg(small(block(n.kids[2])));
        if (n.hasSub) scripts += QStringLiteral("<tr><td valign=\"top\">%1</td></tr>").arg(small(block(n.kids[1])));
        return table(out + cell(QStringLiteral("<table cellspacing=\"0\" cellpadding=\"0\">") + scripts +
                                QStringLiteral("</table>")));
      }
      case Node::root: {
        const int h = height_of(n.kids[0]);
        return table(
            cell(big(QStringLiteral("√"), h)) +
            QStringLiteral("<td valign=\"middle\" style=\"border-top: 1px solid %1; padding-top: 2px\">%2</td>")
                .arg(color_, block(n.kids[0])));
      }
      case Node::bigop: {
        const QString symbol = n.text.size() == 1 ? big(n.text, 2) : esc(n.text);
        if (!n.limits) {  // integrals: the limits beside the sign
          QString scripts;
          if (n.hasSup) scripts += QStringLiteral("<tr><td valign=\"top\">%1</td></tr>").arg(small(block(n.kids[1])));
          scripts += QStringLiteral("<tr><td>&nbsp;</td></tr>");
          if (n.hasSub)
            scripts += QStringLiteral("<tr><td valign=\"bottom\">%1</td></tr>").arg(small(block(n.kids[0])));
          return table(cell(symbol) + cell(QStringLiteral("<table cellspacing=\"0\" cellpadding=\"0\">") + scripts +
                                           QStringLiteral("</table>")));
        }
        QString rows;
        if (n.hasSup) rows += QStringLiteral("<tr><td align=\"center\">%1</td></tr>").arg(small(block(n.kids[1])));
        rows += QStringLiteral("<tr><td align=\"center\">%1</td></tr>").arg(symbol);
        if (n.hasSub) rows += QStringLiteral("<tr><td align=\"center\">%1</td></tr>").arg(small(block(n.kids[0])));
        return QStringLiteral("<table cellspacing=\"0\" cellpadding=\"0\">") + rows + QStringLiteral("</table>");
      }
      default:
        return block_kids(n);
    }
  }

 private:
  QString block_kids(const Node& n) {
    if (n.kind != Node::row && n.kind != Node::fenced) return block(n);
    QString cells, flat;
    for (const Node& k : n.kids) {
      if (is_flat(k)) {
        flat += inline_html(k);
        continue;
      }
      if (!flat.isEmpty()) cells += cell(flat);
      flat.clear();
      cells += cell(block(k));
    }
    if (!flat.isEmpty()) cells += cell(flat);
    return table(cells);
  }
  static QString cell(const QString& content) {
    return QStringLiteral("<td valign=\"middle\">") + content + QStringLiteral("</td>");
  }
  static QString table(const QString& cells) {
    return QStringLiteral("<table cellspacing=\"0\" cellpadding=\"0\"><tr>") + cells + QStringLiteral("</tr></table>");
  }
  QString small(const QString& html) const {
    return QStringLiteral("<span style=\"font-size:%1px\">%2</span>").arg(std::max(9, px_ * 7 / 10)).arg(html);
  }
  QString big(const QString& symbol, int rows) const {
    if (symbol.isEmpty()) return {};
    const int size = std::min(px_ * 6, static_cast<int>(px_ * (1.0 + 0.75 * (std::max(1, rows) - 1))));
    return QStringLiteral("<span style=\"font-size:%1px\">%2</span>").arg(size).arg(esc(symbol));
  }
  QString frac(const Node& n) {
    const QString bar = n.bar ? QStringLiteral("border-bottom: 1px solid %1; ").arg(color_) : QString();
    return QStringLiteral(
               "<table cellspacing=\"0\" cellpadding=\"0\"><tr><td align=\"center\" style=\"%1padding: 0 3px 1px "
               "3px\">%2</td></tr>"
               "<tr><td align=\"center\" style=\"padding: 1px 3px 0 3px\">%3</td></tr></table>")
        .arg(bar, block(n.kids[0]), block(n.kids[1]));
  }
  QString matrix(const Node& n) {
    QString rows;
    for (const Node& r : n.kids) {
      rows += QStringLiteral("<tr>");
      for (std::size_t c = 0; c < r.kids.size(); ++c) {
        const char* align = !n.aligned ? "center" : (c % 2 == 0 && n.text != u"{") ? "right" : "left";
        const int right = n.aligned ? (n.text == u"{" && c % 2 == 0 ? 14 : 1) : 8;
        rows += QStringLiteral("<td align=\"%1\" valign=\"middle\" style=\"padding: 2px %2px 2px %3px\">%4</td>")
                    .arg(QLatin1String(align))
                    .arg(right)
                    .arg(n.aligned ? 1 : 8)
                    .arg(block(r.kids[c]));
      }
      rows += QStringLiteral("</tr>");
    }
    const QString grid =
        QStringLiteral("<table cellspacing=\"0\" cellpadding=\"0\">") + rows + QStringLiteral("</table>");
    if (n.text.isEmpty() && n.right.isEmpty()) return grid;
    const int h = height_of(n);
    return table(cell(big(n.text, h)) + cell(grid) + cell(big(n.right, h)));
  }

  QString color_;
  int px_;
};

}  // namespace

QString math_inline_html(const QString& tex, const QColor&, int) {
  if (tex.size() > kMaxTex) return QStringLiteral("<code>") + tex.toHtmlEscaped() + QStringLiteral("</code>");
  const Node root = math::parse_tex(tex);
  return QStringLiteral("<span style=\"font-family:'DejaVu Serif'\">") + inline_html(root) + QStringLiteral("</span>");
}

QString math_display_html(const QString& tex, const QColor& text, int pixelSize) {
  const int px = pixelSize + pixelSize / 6;
  if (tex.size() > kMaxTex) return QStringLiteral("<pre>") + tex.toHtmlEscaped() + QStringLiteral("</pre>");
  const Node root = math::parse_tex(tex);
  Display display(text, px);
  QString html = QStringLiteral(
                     "<table align=\"center\" cellspacing=\"0\" cellpadding=\"0\" style=\"font-family:'DejaVu Serif'; "
                     "font-size:%1px\"><tr><td>")
                     .arg(px) +
                 display.block(root) + QStringLiteral("</td></tr></table>");
  // Cells never wrap: Qt sizes nested tables too narrow otherwise ("x < 0" on three lines).
  static const QRegularExpression td(QStringLiteral("<td([^>]*)>"));
  QString out;
  out.reserve(html.size() + html.size() / 4);
  qsizetype at = 0;
  for (auto it = td.globalMatch(html); it.hasNext();) {
    const auto m = it.next();
    out += QStringView(html).mid(at, m.capturedStart() - at);
    QString attrs = m.captured(1);
    if (attrs.contains(QLatin1String("style=\"")))
      attrs.replace(QLatin1String("style=\""), QLatin1String("style=\"white-space:nowrap; "));
    else
      attrs += QLatin1String(" style=\"white-space:nowrap\"");
    out += QLatin1String("<td") + attrs + QLatin1Char('>');
    at = m.capturedEnd();
  }
  out += QStringView(html).mid(at);
  return out;
}

}  // namespace day0::app
