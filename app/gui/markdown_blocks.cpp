#include "gui/markdown_blocks.h"

#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>

#include <QStringList>
#include <QVariantMap>

namespace day0::app {
namespace {

// A fence line: up to three spaces, then at least three backticks or tildes. Returns the
// fence's character and length, or 0.
int fence_length(const QString& line, QChar* fence_char, QString* info) {
  int i = 0;
  while (i < line.size() && i < 3 && line[i] == u' ') ++i;
  if (i >= line.size() || (line[i] != u'`' && line[i] != u'~')) return 0;
  const QChar c = line[i];
  int n = 0;
  while (i + n < line.size() && line[i + n] == c) ++n;
  if (n < 3) return 0;
  const QString rest = line.mid(i + n).trimmed();
  if (c == u'`' && rest.contains(u'`')) return 0;  // CommonMark: a backtick fence's info has no backtick
  *fence_char = c;
  if (info) *info = rest.section(u' ', 0, 0);
  return n;
}

}  // namespace

std::vector<MarkdownBlock> split_markdown(const QString& markdown) {
  std::vector<MarkdownBlock> blocks;
  const QStringList lines = markdown.split(u'\n');
  QStringList prose, code;
  QChar open_char;
  int open_len = 0;
  QString language;
  const auto flush_prose = [&]() {
    QString text = prose.join(u'\n');
    prose.clear();
    if (text.trimmed().isEmpty()) return;
    blocks.push_back({MarkdownBlock::Kind::text, text.trimmed(), {}, true});
  };
  for (const QString& line : lines) {
    if (open_len == 0) {
      QChar c;
      QString info;
      const int n = fence_length(line, &c, &info);
      if (n > 0) {
        flush_prose();
        open_char = c;
        open_len = n;
        language = info;
        code.clear();
      } else {
        prose << line;
      }
      continue;
    }
    QChar c;
    QString info;
    const int n = fence_length(line, &c, &info);
    if (n >= open_len && c == open_char && info.isEmpty()) {
      blocks.push_back({MarkdownBlock::Kind::code, code.join(u'\n'), language, true});
      open_len = 0;
      code.clear();
    } else {
      code << line;
    }
  }
  if (open_len > 0)
    blocks.push_back({MarkdownBlock::Kind::code, code.join(u'\n'), language, false});
  else
    flush_prose();
  return blocks;
}

QVariantList markdown_blocks_for_qml(const QString& markdown) {
  QVariantList list;
  for (const auto& b : split_markdown(markdown)) {
    list.append(QVariantMap{
        {QStringLiteral("kind"), b.kind == MarkdownBlock::Kind::code ? QStringLiteral("code") : QStringLiteral("text")},
        {QStringLiteral("text"), b.text},
        {QStringLiteral("language"), b.language},
        {QStringLiteral("closed"), b.closed}});
  }
  return list;
}

int set_link_color(QTextDocument* document, const QColor& color) {
  if (document == nullptr) return 0;
  struct Range {
    int start, length;
  };
  std::vector<Range> ranges;
  for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextFragment fragment = it.fragment();
      if (!fragment.isValid()) continue;
      const QTextCharFormat format = fragment.charFormat();
      if (!format.isAnchor() || format.anchorHref().isEmpty()) continue;
      if (format.foreground().color() == color && format.fontUnderline()) continue;
      ranges.push_back({fragment.position(), fragment.length()});
    }
  }
  if (ranges.empty()) return 0;
  QTextCharFormat link;
  link.setForeground(color);
  link.setFontUnderline(true);
  QTextCursor cursor(document);
  cursor.beginEditBlock();
  for (const Range& r : ranges) {
    cursor.setPosition(r.start);
    cursor.setPosition(r.start + r.length, QTextCursor::KeepAnchor);
    cursor.mergeCharFormat(link);
  }
  cursor.endEditBlock();
  return static_cast<int>(ranges.size());
}

}  // namespace day0::app
