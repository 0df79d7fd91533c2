#include "gui/markdown_blocks.h"

#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>

#include <QStringList>
#include <algorithm>

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

namespace {

bool is_blank(const QString& line) { return line.trimmed().isEmpty(); }

// A list item: "- ", "* ", "+ " or "1. " / "1) " after up to three spaces.
bool is_list_item(const QString& line) {
  int i = 0;
  while (i < line.size() && i < 3 && line[i] == u' ') ++i;
  if (i >= line.size()) return false;
  if ((line[i] == u'-' || line[i] == u'*' || line[i] == u'+') && i + 1 < line.size() && line[i + 1] == u' ')
    return true;
  int d = i;
  while (d < line.size() && d - i < 9 && line[d].isDigit()) ++d;
  return d > i && d + 1 < line.size() && (line[d] == u'.' || line[d] == u')') && line[d + 1] == u' ';
}

bool is_quote(const QString& line) {
  int i = 0;
  while (i < line.size() && i < 3 && line[i] == u' ') ++i;
  return i < line.size() && line[i] == u'>';
}

QString strip_quote(const QString& line) {
  int i = 0;
  while (i < line.size() && i < 3 && line[i] == u' ') ++i;
  if (i < line.size() && line[i] == u'>') ++i;
  if (i < line.size() && line[i] == u' ') ++i;
  return line.mid(i);
}

// The opening of display math on its own line: "$$" or "\[" first (after spaces).
QString math_opener(const QString& line, QString* close) {
  const QString t = line.trimmed();
  if (t.startsWith(QLatin1String("$$"))) {
    *close = QStringLiteral("$$");
    return QStringLiteral("$$");
  }
  if (t.startsWith(QLatin1String("\\["))) {
    *close = QStringLiteral("\\]");
    return QStringLiteral("\\[");
  }
  return {};
}

}  // namespace

std::vector<MarkdownBlock> split_markdown(const QString& markdown, int from, const SplitState& initial) {
  std::vector<MarkdownBlock> blocks;
  const int n = static_cast<int>(markdown.size());
  SplitState state = initial;
  from = std::clamp(from, 0, n);

  // The block being built.
  MarkdownBlock current;
  QStringList lines;
  bool open = false;
  bool pending_blank = false;  // prose: a blank line was seen after the last line
  bool has_list = false;
  int chars = 0;
  const auto begin = [&](MarkdownBlock::Kind kind, int at) {
    current = MarkdownBlock{};
    current.kind = kind;
    current.start = at;
    current.state = state;
    lines.clear();
    open = true;
    pending_blank = false;
    has_list = false;
    chars = 0;
  };
  const auto flush = [&]() {
    if (!open) return;
    open = false;
    if (current.kind == MarkdownBlock::Kind::code) {
      current.text = lines.join(u'\n');
    } else if (current.kind == MarkdownBlock::Kind::math) {
      current.text = lines.join(u'\n').trimmed();
    } else {
      current.text = lines.join(u'\n').trimmed();
      if (current.text.isEmpty()) return;
    }
    blocks.push_back(current);
  };
  const auto add = [&](const QString& line) {
    lines << line;
    chars += static_cast<int>(line.size()) + 1;
  };

  if (state.mode == SplitState::Mode::fence) {  // resuming inside a fence: a later part of its box
    begin(MarkdownBlock::Kind::code, from);
    current.language = state.language;
    current.part = state.part;
    current.closed = false;
  } else if (state.mode == SplitState::Mode::math) {
    begin(MarkdownBlock::Kind::math, from);
    current.closed = false;
  }

  int pos = from;
  while (pos < n) {
    int end = static_cast<int>(markdown.indexOf(u'\n', pos));
    if (end < 0) end = n;
    int next = end < n ? end + 1 : n;
    if (end - pos > kMaxLineChars) {  // a huge line: cut it at a space (or anywhere)
      int cut = static_cast<int>(markdown.lastIndexOf(u' ', pos + kMaxLineChars));
      if (cut <= pos + kMaxLineChars / 2) cut = pos + kMaxLineChars;
      end = cut;
      next = cut;
    }
    const QString line = markdown.mid(pos, end - pos);
    const int line_start = pos;
    pos = next;

    if (state.mode == SplitState::Mode::fence) {
      QChar c;
      QString info;
      const int len = fence_length(line, &c, &info);
      if (len >= state.fenceLength && c == state.fenceChar && info.isEmpty()) {
        current.closed = true;
        flush();
        state = SplitState{};
        continue;
      }
      if (lines.size() >= kCodePartLines) {  // the next part of the same code box
        current.lastPart = false;
        current.closed = false;
        flush();
        state.part += 1;
        begin(MarkdownBlock::Kind::code, line_start);
        current.language = state.language;
        current.part = state.part;
        current.closed = false;
      }
      add(line);
      continue;
    }
    if (state.mode == SplitState::Mode::math) {
      const int close = static_cast<int>(line.indexOf(state.mathClose));
      if (close >= 0) {
        add(line.left(close));
        current.closed = true;
        flush();
        state = SplitState{};
      } else {
        add(line);
      }
      continue;
    }

    // Top level.
    QChar c;
    QString info;
    if (const int len = fence_length(line, &c, &info); len > 0) {
      flush();
      state.mode = SplitState::Mode::fence;
      state.fenceChar = c;
      state.fenceLength = len;
      state.language = info;
      state.part = 0;
      const SplitState saved = state;
      state = SplitState{};  // the block starts at its fence line, read at the top level
      begin(MarkdownBlock::Kind::code, line_start);
      state = saved;
      current.language = info;
      current.closed = false;
      continue;
    }
    QString close;
    const QString opener = math_opener(line, &close);
    if (!opener.isEmpty()) {
      flush();
      begin(MarkdownBlock::Kind::math, line_start);
      const QString t = line.trimmed().mid(opener.size());
      const int at = static_cast<int>(t.indexOf(close));
      if (at >= 0) {  // $$ x $$ on one line
        add(t.left(at));
        current.closed = true;
        flush();
        // Text after the closing delimiter on the same line is rare; it starts a paragraph.
        const QString rest = t.mid(at + close.size()).trimmed();
        if (!rest.isEmpty()) {
          begin(MarkdownBlock::Kind::text, line_start);
          add(rest);
        }
      } else {
        add(t);
        current.closed = false;
        state.mode = SplitState::Mode::math;
        state.mathClose = close;
      }
      continue;
    }
    if (is_quote(line)) {
      if (!open || current.kind != MarkdownBlock::Kind::quote || pending_blank) {
        flush();
        begin(MarkdownBlock::Kind::quote, line_start);
      }
      add(strip_quote(line));
      continue;
    }
    if (is_blank(line)) {
      if (open) {
        pending_blank = true;
        if (current.kind != MarkdownBlock::Kind::quote) add(QString());
      }
      continue;
    }
    bool starts_new = !open || current.kind != MarkdownBlock::Kind::text;
    if (open && current.kind == MarkdownBlock::Kind::quote && !pending_blank) starts_new = false;  // lazy continuation
    if (open && current.kind == MarkdownBlock::Kind::text && pending_blank) {
      const bool indented = line.startsWith(u' ') || line.startsWith(u'\t');
      const bool continues = indented || (has_list && is_list_item(line));
      starts_new = !continues || chars > kProseBlockChars;
    }
    if (open && current.kind == MarkdownBlock::Kind::text && chars > 2 * kProseBlockChars) starts_new = true;
    if (starts_new) {
      flush();
      begin(MarkdownBlock::Kind::text, line_start);
    }
    if (current.kind == MarkdownBlock::Kind::quote) {
      add(line);
    } else {
      if (is_list_item(line)) has_list = true;
      add(line);
    }
    pending_blank = false;
  }
  if (open && current.kind == MarkdownBlock::Kind::code) current.closed = false;
  flush();
  return blocks;
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
