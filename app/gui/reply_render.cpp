#include "gui/reply_render.h"

#include <QRegularExpression>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <QUrl>

#include "gui/math_render.h"

namespace day0::app {
namespace {

constexpr char16_t kPlaceholderBase = 0xE000;  // Unicode private use: one character per formula
constexpr int kMaxFormulas = 4000;

struct Edit {
  int start, length;
  QString replacement;  // text to put instead
};

void style_document(QTextDocument& doc, const RenderPalette& p) {
  std::vector<Edit> images;
  QTextCursor cursor(&doc);
  cursor.beginEditBlock();
  for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
    // Paragraph spacing (list items tighter); fenced code inside a quote on a background.
    QTextBlockFormat bf = block.blockFormat();
    bool changed = false;
    if (QTextCursor(block).currentTable() != nullptr) {  // cells: the padding spaces them
      if (bf.bottomMargin() != 0) {
        bf.setBottomMargin(0);
        changed = true;
      }
    } else if (block.textList() != nullptr) {
      if (bf.bottomMargin() != 3) {
        bf.setBottomMargin(3);
        changed = true;
      }
    } else if (bf.headingLevel() == 0) {
      if (bf.bottomMargin() < 8) {
        bf.setBottomMargin(8);
        changed = true;
      }
    }
    if (bf.hasProperty(QTextFormat::BlockCodeFence) || bf.nonBreakableLines()) {
      bf.setBackground(p.inlineCodeBackground);
      changed = true;
    }
    if (changed) {
      QTextCursor c(block);
      c.setBlockFormat(bf);
    }
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextFragment f = it.fragment();
      if (!f.isValid()) continue;
      QTextCharFormat cf = f.charFormat();
      if (cf.isImageFormat()) {
        const QString name = cf.toImageFormat().name();
        images.push_back({f.position(), f.length(), QStringLiteral("[image: %1]").arg(name)});
        continue;
      }
      QTextCharFormat change;
      bool any = false;
      if (cf.isAnchor() || !cf.anchorHref().isEmpty()) {
        if (is_safe_link(cf.anchorHref())) {
          change.setForeground(p.link);
          change.setFontUnderline(true);
        } else {  // javascript:, file:, data: and the like are text, not links
          change.setAnchor(false);
          change.setAnchorHref(QString());
          change.setForeground(p.text);
        }
        any = true;
      }
      if (cf.fontFixedPitch() && !bf.hasProperty(QTextFormat::BlockCodeFence) && !bf.nonBreakableLines()) {
        change.setBackground(p.inlineCodeBackground);
        change.setFontFamilies({QStringLiteral("DejaVu Sans Mono")});
        any = true;
      }
      if (any) {
        QTextCursor c(&doc);
        c.setPosition(f.position());
        c.setPosition(f.position() + f.length(), QTextCursor::KeepAnchor);
        if (change.hasProperty(QTextFormat::IsAnchor) && !change.isAnchor()) {
          QTextCharFormat plain = cf;
          plain.setAnchor(false);
          plain.setAnchorHref(QString());
          plain.clearProperty(QTextFormat::AnchorName);
          plain.setForeground(p.text);
          plain.setFontUnderline(false);
          c.setCharFormat(plain);
        } else {
          c.mergeCharFormat(change);
        }
      }
    }
  }
  // Tables: borders, padding, a header row.
  const auto frames = doc.rootFrame()->childFrames();
  for (QTextFrame* frame : frames) {
    auto* table = qobject_cast<QTextTable*>(frame);
    if (table == nullptr) continue;
    QTextTableFormat tf = table->format();
    tf.setBorder(1);
    tf.setBorderBrush(p.border);
    tf.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
    tf.setBorderCollapse(true);
    tf.setCellSpacing(0);
    tf.setCellPadding(6);
    tf.setBottomMargin(10);
    table->setFormat(tf);
    for (int col = 0; col < table->columns(); ++col) {
      QTextTableCell cell = table->cellAt(0, col);
      // The header row is bold. (No background: the view paints a cell's background inside its
      // padding only, a box around the text.)
      QTextCursor c = cell.firstCursorPosition();
      c.setPosition(cell.lastCursorPosition().position(), QTextCursor::KeepAnchor);
      QTextCharFormat bold;
      bold.setFontWeight(QFont::DemiBold);
      c.mergeCharFormat(bold);
    }
  }
  for (auto it = images.rbegin(); it != images.rend(); ++it) {
    QTextCursor c(&doc);
    c.setPosition(it->start);
    c.setPosition(it->start + it->length, QTextCursor::KeepAnchor);
    QTextCharFormat plain;
    plain.setForeground(p.muted);
    c.insertText(it->replacement, plain);
  }
  cursor.endEditBlock();
}

// toHtml()'s body carries the document's default font: drop it so the item's font applies.
QString strip_body_style(QString html) {
  static const QRegularExpression body(QStringLiteral("<body style=\"[^\"]*\">"));
  html.replace(body, QStringLiteral("<body>"));
  return html;
}

}  // namespace

bool is_safe_link(const QString& href) {
  const QUrl url(href.trimmed());
  const QString scheme = url.scheme().toLower();
  return url.isValid() && (scheme == u"http" || scheme == u"https" || scheme == u"mailto");
}

QString render_prose_html(const QString& markdown, const RenderPalette& palette, int pixelSize) {
  // Private-use characters stand for formulas below: any in the reply itself become U+FFFD.
  QString text = markdown;
  for (QChar& c : text)
    if (c.unicode() >= 0xE000 && c.unicode() <= 0xF8FF) c = QChar(QChar::ReplacementCharacter);
  std::vector<MathSpan> spans = find_math_spans(text);
  if (spans.size() > static_cast<std::size_t>(kMaxFormulas)) spans.resize(kMaxFormulas);
  QString masked;
  masked.reserve(text.size());
  int at = 0;
  for (std::size_t k = 0; k < spans.size(); ++k) {
    masked += QStringView(text).mid(at, spans[k].start - at);
    masked += QChar(static_cast<char16_t>(kPlaceholderBase + k));
    at = spans[k].end;
  }
  masked += QStringView(text).mid(at);

  QTextDocument doc;
  doc.setMarkdown(
      masked, QTextDocument::MarkdownFeatures(QTextDocument::MarkdownDialectGitHub | QTextDocument::MarkdownNoHTML));
  style_document(doc, palette);
  QString html = strip_body_style(doc.toHtml());
  if (!spans.empty()) {
    QString out;
    out.reserve(html.size() + static_cast<qsizetype>(spans.size()) * 64);
    for (QChar c : html) {
      const int k = c.unicode() - kPlaceholderBase;
      if (k >= 0 && k < static_cast<int>(spans.size())) {
        const MathSpan& s = spans[static_cast<std::size_t>(k)];
        out += s.display ? QStringLiteral("<span style=\"font-size:%1px\">").arg(pixelSize + 2) +
                               math_inline_html(s.tex, palette.text, pixelSize) + QStringLiteral("</span>")
                         : math_inline_html(s.tex, palette.text, pixelSize);
      } else {
        out += c;
      }
    }
    html = std::move(out);
  }
  return html;
}

QString render_code_html(const QString& code, const QString& language, const RenderPalette& palette) {
  return QStringLiteral("<pre style=\"margin:0; font-family:'DejaVu Sans Mono'; color:%1\">")
             .arg(palette.codeText.name()) +
         highlight_html(code, language, palette) + QStringLiteral("</pre>");
}

QString render_math_html(const QString& tex, const RenderPalette& palette, int pixelSize) {
  return math_display_html(tex, palette.text, pixelSize);
}

QString render_block_html(const MarkdownBlock& block, const RenderPalette& palette, int pixelSize) {
  switch (block.kind) {
    case MarkdownBlock::Kind::code:
      return render_code_html(block.text, block.language, palette);
    case MarkdownBlock::Kind::math:
      return render_math_html(block.text, palette, pixelSize);
    case MarkdownBlock::Kind::text:
    case MarkdownBlock::Kind::quote:
      return render_prose_html(block.text, palette, pixelSize);
  }
  return {};
}

}  // namespace day0::app
