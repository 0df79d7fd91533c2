#pragma once
// The conversation sidebar: the history's conversations (pinned first, then the most recent),
// or, while a search is active, the conversations whose title or messages match, with a
// snippet of the first matching message. Touched only on the GUI thread.
#include <QAbstractListModel>
#include <QSet>
#include <vector>

#include "storage/history_types.h"

namespace day0::app {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum RoleName {
    ConversationIdRole = Qt::UserRole + 1,
    TitleRole,
    PinnedRole,
    UpdatedAtRole,
    SectionRole,
    SnippetRole,
    MatchMessageIdRole,
  };

  explicit ConversationListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void setConversations(const std::vector<storage::Conversation>& conversations);
  // Search hits grouped by conversation, in the order the history ranked them.
  void setSearchHits(const std::vector<storage::SearchHit>& hits);
  // Conversations waiting to be deleted (undo still possible) are hidden.
  void setHidden(const QSet<qint64>& ids);
  Q_INVOKABLE int rowOfId(qint64 id) const;
  Q_INVOKABLE qint64 idAt(int row) const;
  QString titleOf(qint64 id) const;

 signals:
  void countChanged();

 private:
  struct Row {
    qint64 id = 0;
    QString title;
    bool pinned = false;
    qint64 updated_at = 0;
    QString snippet;  // HTML-escaped, the match in bold
    qint64 match_message_id = 0;
  };
  void publish();

  bool searching_ = false;
  std::vector<Row> all_;
  std::vector<Row> rows_;
  QSet<qint64> hidden_;
};

}  // namespace day0::app
