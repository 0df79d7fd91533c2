#include "gui/conversation_list_model.h"

#include <QDateTime>
#include <algorithm>

namespace day0::app {

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{ConversationIdRole, "conversationId"}, {TitleRole, "title"},     {PinnedRole, "pinned"},
          {UpdatedAtRole, "updatedAt"},           {SectionRole, "section"}, {SnippetRole, "snippet"},
          {MatchMessageIdRole, "matchMessageId"}};
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= rowCount()) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case ConversationIdRole:
      return r.id;
    case Qt::DisplayRole:
    case TitleRole:
      return r.title.isEmpty() ? tr("New chat") : r.title;
    case PinnedRole:
      return r.pinned;
    case UpdatedAtRole:
      return r.updated_at;
    case SectionRole: {
      if (searching_) return tr("Results");
      if (r.pinned) return tr("Pinned");
      const QDate day = QDateTime::fromMSecsSinceEpoch(r.updated_at).date();
      const QDate today = QDate::currentDate();
      if (day == today) return tr("Today");
      if (day.daysTo(today) <= 7) return tr("Previous 7 days");
      return tr("Older");
    }
    case SnippetRole:
      return r.snippet;
    case MatchMessageIdRole:
      return r.match_message_id;
    default:
      return {};
  }
}

void ConversationListModel::setConversations(const std::vector<storage::Conversation>& conversations) {
  searching_ = false;
  all_.clear();
  for (const auto& c : conversations)
    all_.push_back({c.id, QString::fromStdString(c.title), c.pinned, c.updated_at, {}, 0});
  publish();
}

void ConversationListModel::setSearchHits(const std::vector<storage::SearchHit>& hits) {
  searching_ = true;
  all_.clear();
  for (const auto& h : hits) {
    auto it = std::find_if(all_.begin(), all_.end(), [&](const Row& r) { return r.id == h.conversation_id; });
    if (it == all_.end()) {
      all_.push_back({h.conversation_id, QString::fromStdString(h.conversation_title), false, h.created_at, {}, 0});
      it = all_.end() - 1;
    }
    if (h.message_id == 0 || !it->snippet.isEmpty()) continue;
    const std::string& s = h.snippet;
    const std::size_t at = std::min(h.match_offset, s.size());
    const std::size_t len = std::min(h.match_length, s.size() - at);
    it->snippet = QString::fromStdString(s.substr(0, at)).toHtmlEscaped() + QStringLiteral("<b>") +
                  QString::fromStdString(s.substr(at, len)).toHtmlEscaped() + QStringLiteral("</b>") +
                  QString::fromStdString(s.substr(at + len)).toHtmlEscaped();
    it->match_message_id = h.message_id;
  }
  publish();
}

void ConversationListModel::setHidden(const QSet<qint64>& ids) {
  hidden_ = ids;
  publish();
}

void ConversationListModel::publish() {
  const int before = rowCount();
  beginResetModel();
  rows_.clear();
  for (const Row& r : all_)
    if (!hidden_.contains(r.id)) rows_.push_back(r);
  endResetModel();
  if (before != rowCount()) emit countChanged();
}

int ConversationListModel::rowOfId(qint64 id) const {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id) return static_cast<int>(i);
  return -1;
}

qint64 ConversationListModel::idAt(int row) const {
  return row >= 0 && row < rowCount() ? rows_[static_cast<std::size_t>(row)].id : 0;
}

QString ConversationListModel::titleOf(qint64 id) const {
  for (const Row& r : all_)
    if (r.id == id) return r.title;
  return {};
}

}  // namespace day0::app
