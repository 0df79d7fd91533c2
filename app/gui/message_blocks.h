#pragma once
// The blocks of one message (see markdown_blocks.h) as a list model for the chat view, one row
// per block, rendered lazily: a row's rich text is made when the view asks for it (html()), and
// kept until the block changes or the theme does.
//
// A streamed reply grows by appends. An append splits again only from the start of the
// second-to-last block (a partial last line can move only the last boundary); rows whose block
// is unchanged keep their rendering, a changed one gets a new revision, new ones are inserted.
// So the work per chunk is bounded by the size of the last blocks, not of the reply.
#include <QAbstractListModel>
#include <QString>
#include <array>
#include <vector>

#include "gui/markdown_blocks.h"

namespace day0::app {

class MessageBlocks : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum RoleName {
    KindRole = Qt::UserRole + 1,
    RevisionRole,
    LanguageRole,
    ClosedRole,
    PartRole,
    LastPartRole,
    CharsRole,
    LinesRole
  };

  explicit MessageBlocks(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  const QString& text() const { return text_; }
  void setText(const QString& text);
  void append(const QString& chunk);

  // The row's rich text for the dark or the light theme, at `pixelSize` (rendered on demand).
  Q_INVOKABLE QString html(int row, bool dark, int pixelSize = 15);
  // The row's source: prose Markdown, code, or TeX.
  Q_INVOKABLE QString source(int row) const;
  // The whole code of the fence the row belongs to (all its parts), for Copy.
  Q_INVOKABLE QString code(int row) const;

  const MarkdownBlock& block(int row) const { return rows_[static_cast<std::size_t>(row)].block; }
  // What the last update did, and renderings so far: for tests of the work per chunk.
  int lastScannedChars() const { return lastScanned_; }
  int lastChangedRows() const { return lastChanged_; }
  int renderCount() const { return renders_; }
  int splitCount() const { return splits_; }

 signals:
  void countChanged();

 private:
  struct Row {
    MarkdownBlock block;
    int revision = 0;
    std::array<QString, 2> html;  // light, dark
    std::array<int, 2> htmlSize{{0, 0}};
    std::array<bool, 2> rendered{{false, false}};
  };
  void resplit(int firstRow);

  QString text_;
  std::vector<Row> rows_;
  int revisions_ = 0;
  int lastScanned_ = 0;
  int lastChanged_ = 0;
  int renders_ = 0;
  int splits_ = 0;
};

}  // namespace day0::app
