#pragma once
// The visible branch of one conversation, as rows for the chat view. The history keeps a tree
// (each message names its parent; an edit or a regenerated reply is a new sibling); this model
// holds the whole tree and shows one path from the root: at every fork the chosen sibling, by
// default the newest. Switching a fork (`< 1/2 >`) replaces the rows below it. Touched only on
// the GUI thread.
#include <QAbstractListModel>
#include <QVariantList>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "storage/history_types.h"

namespace day0::app {

class MessageBlocks;

class MessageListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum RoleName {
    MessageIdRole = Qt::UserRole + 1,
    RoleRole,
    ContentRole,
    ReasoningRole,
    BlocksRole,
    StateRole,
    ErrorRole,
    StreamingRole,
    BranchIndexRole,
    BranchCountRole,
    AttachmentsRole,
    StatsRole,
    CreatedAtRole,
    DocumentsRole,  // attached documents (AttachmentsRole holds the images)
    SourcesRole,    // a reply's knowledge sources (those its question was sent with), as cited: [n] label
  };

  explicit MessageListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Replaces the tree. With `focus`, the path runs through that message.
  void reset(const std::vector<storage::Message>& messages, std::optional<std::int64_t> focus = std::nullopt);
  void clear();
  // Adds a message (a new reply, an edit) and shows the path through it.
  void add(const storage::Message& message);
  void appendText(std::int64_t id, const QString& content, const QString& reasoning);
  void setText(std::int64_t id, const QString& content, const QString& reasoning);
  void setStreaming(std::int64_t id, bool streaming);
  void finish(std::int64_t id, storage::MessageState state, const QString& error, const storage::ReplyStats& stats);
  // Shows the sibling `delta` places away from message `id`; false when there is none.
  bool switchBranch(std::int64_t id, int delta);

  const storage::Message* find(std::int64_t id) const;
  // The blocks model of message `id` (what the view's BlocksRole holds), or null.
  MessageBlocks* blocksOf(std::int64_t id) const;
  // The messages from the root to `id`, system prompt included: a reply's context.
  std::vector<storage::Message> chainTo(std::int64_t id) const;
  // The last message of the visible path, system prompt included.
  std::optional<std::int64_t> lastId() const;
  int rowOf(std::int64_t id) const;
  // Siblings of `id` (same parent), oldest first.
  const std::vector<std::int64_t>& siblings(std::int64_t id) const;

 signals:
  void countChanged();

 private:
  struct Entry {
    storage::Message message;
    std::shared_ptr<MessageBlocks> blocks;  // split and rendered lazily, see message_blocks.h
    bool streaming = false;
  };
  static std::int64_t parentKey(const storage::Message& m) { return m.parent_id.value_or(0); }
  void insertEntry(const storage::Message& message);
  std::vector<std::int64_t> computeChain() const;
  void applyPath();
  void selectThrough(std::int64_t id);
  void changed(std::int64_t id, const QList<int>& roles);
  QVariantList sourcesOf(const storage::Message& m) const;

  std::map<std::int64_t, Entry> entries_;
  std::map<std::int64_t, std::vector<std::int64_t>> children_;  // parent id (0: roots) -> children
  std::map<std::int64_t, std::int64_t> chosen_;                 // parent id -> the child shown
  std::vector<std::int64_t> chain_;                             // root to leaf, system included
  std::vector<std::int64_t> rows_;                              // chain_ without system messages
};

// "24 tokens · 12.3 tokens/s · 180 ms to first token" (empty without statistics).
QString format_reply_stats(const storage::ReplyStats& stats);

}  // namespace day0::app
