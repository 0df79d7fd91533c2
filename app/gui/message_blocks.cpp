#include "gui/message_blocks.h"

#include <algorithm>

#include "gui/code_highlighter.h"
#include "gui/reply_render.h"

namespace day0::app {

MessageBlocks::MessageBlocks(QObject* parent) : QAbstractListModel(parent) {}

int MessageBlocks::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> MessageBlocks::roleNames() const {
  return {{KindRole, "kind"}, {RevisionRole, "revision"}, {LanguageRole, "language"}, {ClosedRole, "closed"},
          {PartRole, "part"}, {LastPartRole, "lastPart"}, {CharsRole, "chars"},       {LinesRole, "lines"}};
}

QVariant MessageBlocks::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= rowCount()) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case KindRole:
      switch (r.block.kind) {
        case MarkdownBlock::Kind::code:
          return QStringLiteral("code");
        case MarkdownBlock::Kind::math:
          return QStringLiteral("math");
        case MarkdownBlock::Kind::quote:
          return QStringLiteral("quote");
        case MarkdownBlock::Kind::text:
          return QStringLiteral("text");
      }
      return {};
    case RevisionRole:
      return r.revision;
    case LanguageRole:
      return r.block.language;
    case ClosedRole:
      return r.block.closed;
    case PartRole:
      return r.block.part;
    case LastPartRole:
      return r.block.lastPart;
    case CharsRole:
      return static_cast<int>(r.block.text.size());
    case LinesRole:
      return static_cast<int>(r.block.text.count(u'\n')) + 1;
    default:
      return {};
  }
}

void MessageBlocks::setText(const QString& text) {
  if (text == text_) return;
  if (text.startsWith(text_) && !text_.isEmpty()) return append(text.mid(text_.size()));
  text_ = text;
  resplit(0);
}

void MessageBlocks::append(const QString& chunk) {
  if (chunk.isEmpty()) return;
  text_ += chunk;
  resplit(std::max(0, static_cast<int>(rows_.size()) - 2));
}

void MessageBlocks::resplit(int first) {
  first = std::clamp(first, 0, static_cast<int>(rows_.size()));
  const int from = first < static_cast<int>(rows_.size()) ? rows_[static_cast<std::size_t>(first)].block.start
                   : rows_.empty()                        ? 0
                                                          : static_cast<int>(text_.size());
  const SplitState state =
      first < static_cast<int>(rows_.size()) ? rows_[static_cast<std::size_t>(first)].block.state : SplitState{};
  // Past the last row: resume where that row's splitting would (only when rows_ is empty here).
  std::vector<MarkdownBlock> fresh = split_markdown(text_, first == 0 && from == 0 ? 0 : from, state);
  ++splits_;
  lastScanned_ = static_cast<int>(text_.size()) - from;
  lastChanged_ = 0;

  const int old_count = static_cast<int>(rows_.size());
  const int new_count = first + static_cast<int>(fresh.size());
  // Update the rows both have.
  for (int i = first; i < std::min(old_count, new_count); ++i) {
    Row& r = rows_[static_cast<std::size_t>(i)];
    MarkdownBlock& b = fresh[static_cast<std::size_t>(i - first)];
    if (r.block.sameContent(b)) {
      r.block.start = b.start;
      r.block.state = b.state;
      continue;
    }
    r.block = std::move(b);
    r.revision = ++revisions_;
    r.rendered = {false, false};
    r.html = {};
    ++lastChanged_;
    emit dataChanged(index(i), index(i));
  }
  if (new_count < old_count) {
    beginRemoveRows({}, new_count, old_count - 1);
    rows_.resize(static_cast<std::size_t>(new_count));
    endRemoveRows();
  } else if (new_count > old_count) {
    beginInsertRows({}, old_count, new_count - 1);
    for (int i = old_count; i < new_count; ++i) {
      Row r;
      r.block = std::move(fresh[static_cast<std::size_t>(i - first)]);
      r.revision = ++revisions_;
      rows_.push_back(std::move(r));
      ++lastChanged_;
    }
    endInsertRows();
  }
  if (new_count != old_count) emit countChanged();
}

QString MessageBlocks::html(int row, bool dark, int pixelSize) {
  if (row < 0 || row >= rowCount()) return {};
  Row& r = rows_[static_cast<std::size_t>(row)];
  const int t = dark ? 1 : 0;
  if (!r.rendered[t] || r.htmlSize[t] != pixelSize) {
    r.html[t] = render_block_html(r.block, RenderPalette::of(dark), pixelSize);
    r.htmlSize[t] = pixelSize;
    r.rendered[t] = true;
    ++renders_;
  }
  return r.html[t];
}

QString MessageBlocks::source(int row) const {
  return row < 0 || row >= rowCount() ? QString() : rows_[static_cast<std::size_t>(row)].block.text;
}

QString MessageBlocks::code(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  int first = row;
  while (first > 0 && rows_[static_cast<std::size_t>(first)].block.kind == MarkdownBlock::Kind::code &&
         rows_[static_cast<std::size_t>(first)].block.part > 0)
    --first;
  QStringList parts;
  for (int i = first; i < rowCount(); ++i) {
    const MarkdownBlock& b = rows_[static_cast<std::size_t>(i)].block;
    parts << b.text;
    if (b.kind != MarkdownBlock::Kind::code || b.lastPart) break;
  }
  return parts.join(u'\n');
}

}  // namespace day0::app
