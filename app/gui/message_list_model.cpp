#include "gui/message_list_model.h"

#include <QQmlEngine>
#include <QVariantMap>
#include <algorithm>

#include "gui/document_attachments.h"
#include "gui/message_blocks.h"
#include "knowledge/context.h"

namespace day0::app {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QVariantList attachments_for_qml(const std::vector<storage::Attachment>& attachments) {
  QVariantList list;
  for (const auto& a : attachments) {
    if (is_document_mime(qs(a.mime_type))) continue;
    list.append(QVariantMap{{QStringLiteral("source"), QStringLiteral("image://day0/") + qs(a.sha256)},
                            {QStringLiteral("sha256"), qs(a.sha256)},
                            {QStringLiteral("name"), qs(a.file_name)},
                            {QStringLiteral("mimeType"), qs(a.mime_type)},
                            {QStringLiteral("size"), static_cast<qlonglong>(a.size)}});
  }
  return list;
}

QVariantList documents_for_qml(const std::vector<storage::Attachment>& attachments) {
  QVariantList list;
  for (const auto& a : attachments)
    if (is_document_mime(qs(a.mime_type)))
      list.append(document_for_qml(qs(a.file_name), qs(a.mime_type), a.size, qs(a.sha256)));
  return list;
}

// The chips of the sources `sources` cite; an attached document's chip names it by its SHA-256
// among `documents` (the attachments of the message that carried it) so it opens from the history.
QVariantList sources_for_qml(const nlohmann::json& sources, const std::vector<storage::Attachment>& documents) {
  QVariantList list;
  if (!sources.is_array() || sources.empty()) return list;
  // One chip per document or file, with the ranges of all its passages.
  for (const auto& g : knowledge::group_citations(knowledge::citations_from_json(sources.dump()))) {
    QVariantList numbers;
    for (const int n : g.numbers) numbers << n;
    QString sha256;
    if (g.attachment)
      for (const auto& a : documents)
        if (a.file_name == g.path && is_document_mime(qs(a.mime_type))) sha256 = qs(a.sha256);
    list.append(QVariantMap{{QStringLiteral("number"), g.numbers.front()},
                            {QStringLiteral("numbers"), numbers},
                            {QStringLiteral("label"), qs(g.label)},
                            {QStringLiteral("path"), qs(g.path)},
                            {QStringLiteral("line"), g.first_line},
                            {QStringLiteral("page"), g.page},
                            {QStringLiteral("attachment"), g.attachment},
                            {QStringLiteral("sha256"), sha256}});
  }
  return list;
}

}  // namespace

QString format_reply_stats(const storage::ReplyStats& stats) {
  QStringList parts;
  if (stats.completion_tokens)
    parts << (*stats.completion_tokens == 1 ? QObject::tr("1 token")
                                            : QObject::tr("%1 tokens").arg(*stats.completion_tokens));
  if (stats.tokens_per_second && *stats.tokens_per_second > 0)
    parts << QObject::tr("%1 tokens/s").arg(*stats.tokens_per_second, 0, 'f', 1);
  if (stats.ttft_ms && *stats.ttft_ms > 0) parts << QObject::tr("%1 ms to first token").arg(*stats.ttft_ms, 0, 'f', 0);
  const std::string& why = stats.stop_reason;
  if (why == "eos")
    parts << QObject::tr("ended by the model");
  else if (why == "stop_string")
    parts << QObject::tr("stopped at a stop string");
  else if (why == "max_tokens")
    parts << QObject::tr("cut at the longest reply");
  else if (why == "cancelled")
    parts << QObject::tr("stopped");
  return parts.join(QStringLiteral(" · "));
}

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {}

int MessageListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
  return {{MessageIdRole, "messageId"},
          {RoleRole, "role"},
          {ContentRole, "content"},
          {ReasoningRole, "reasoning"},
          {BlocksRole, "blocks"},
          {StateRole, "messageState"},
          {ErrorRole, "error"},
          {StreamingRole, "streaming"},
          {BranchIndexRole, "branchIndex"},
          {BranchCountRole, "branchCount"},
          {AttachmentsRole, "attachments"},
          {StatsRole, "stats"},
          {CreatedAtRole, "createdAt"},
          {DocumentsRole, "documents"},
          {SourcesRole, "sources"}};
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= rowCount()) return {};
  const std::int64_t id = rows_[static_cast<std::size_t>(index.row())];
  const Entry& e = entries_.at(id);
  const storage::Message& m = e.message;
  switch (role) {
    case MessageIdRole:
      return static_cast<qlonglong>(m.id);
    case RoleRole:
      return QString::fromLatin1(storage::to_string(m.role));
    case Qt::DisplayRole:
    case ContentRole:
      return qs(m.content);
    case ReasoningRole:
      return qs(m.reasoning);
    case BlocksRole:
      return QVariant::fromValue(static_cast<QObject*>(e.blocks.get()));
    case StateRole:
      return QString::fromLatin1(storage::to_string(m.state));
    case ErrorRole:
      return qs(m.error);
    case StreamingRole:
      return e.streaming;
    case BranchIndexRole: {
      const auto& s = siblings(id);
      return static_cast<int>(std::find(s.begin(), s.end(), id) - s.begin()) + 1;
    }
    case BranchCountRole:
      return static_cast<int>(siblings(id).size());
    case AttachmentsRole:
      return attachments_for_qml(m.attachments);
    case StatsRole:
      return format_reply_stats(m.stats);
    case CreatedAtRole:
      return static_cast<qlonglong>(m.created_at);
    case DocumentsRole:
      return documents_for_qml(m.attachments);
    case SourcesRole:
      return sourcesOf(m);
    default:
      return {};
  }
}

QVariantList MessageListModel::sourcesOf(const storage::Message& m) const {
  // Under the answer the sources informed; the question that brought them shows none.
  if (m.role != storage::Role::assistant) return {};
  const storage::Message* asked = m.parent_id ? find(*m.parent_id) : nullptr;
  static const std::vector<storage::Attachment> kNone;
  const auto& documents = asked ? asked->attachments : kNone;
  // A reply stored before replies kept their sources shows those of the message it answers.
  if (m.sources.empty() && asked && asked->role == storage::Role::user) return sources_for_qml(asked->sources, documents);
  return sources_for_qml(m.sources, documents);
}

void MessageListModel::insertEntry(const storage::Message& message) {
  Entry e;
  e.message = message;
  // Deleted later: a view may still hold the model while its rows go.
  e.blocks = std::shared_ptr<MessageBlocks>(new MessageBlocks, [](MessageBlocks* b) { b->deleteLater(); });
  QQmlEngine::setObjectOwnership(e.blocks.get(), QQmlEngine::CppOwnership);
  e.blocks->setText(qs(message.content));
  entries_[message.id] = std::move(e);
  auto& kids = children_[parentKey(message)];
  if (std::find(kids.begin(), kids.end(), message.id) == kids.end()) kids.push_back(message.id);
}

void MessageListModel::reset(const std::vector<storage::Message>& messages, std::optional<std::int64_t> focus) {
  beginResetModel();
  entries_.clear();
  children_.clear();
  chosen_.clear();
  for (const auto& m : messages) insertEntry(m);
  if (focus && entries_.count(*focus)) selectThrough(*focus);
  chain_ = computeChain();
  rows_.clear();
  for (auto id : chain_)
    if (entries_.at(id).message.role != storage::Role::system) rows_.push_back(id);
  endResetModel();
  emit countChanged();
}

void MessageListModel::clear() { reset({}); }

void MessageListModel::add(const storage::Message& message) {
  insertEntry(message);
  selectThrough(message.id);
  applyPath();
}

void MessageListModel::selectThrough(std::int64_t id) {
  // Choose every ancestor on the way up, so the path from the root reaches `id`.
  std::int64_t current = id;
  for (std::size_t guard = 0; guard <= entries_.size(); ++guard) {
    const auto it = entries_.find(current);
    if (it == entries_.end()) break;
    const std::int64_t parent = parentKey(it->second.message);
    chosen_[parent] = current;
    if (parent == 0) break;
    current = parent;
  }
}

std::vector<std::int64_t> MessageListModel::computeChain() const {
  std::vector<std::int64_t> chain;
  std::int64_t key = 0;
  while (chain.size() < entries_.size()) {
    const auto kids = children_.find(key);
    if (kids == children_.end() || kids->second.empty()) break;
    std::int64_t next = kids->second.back();
    if (const auto c = chosen_.find(key);
        c != chosen_.end() && std::find(kids->second.begin(), kids->second.end(), c->second) != kids->second.end())
      next = c->second;
    chain.push_back(next);
    key = next;
  }
  return chain;
}

void MessageListModel::applyPath() {
  chain_ = computeChain();
  std::vector<std::int64_t> rows;
  for (auto id : chain_)
    if (entries_.at(id).message.role != storage::Role::system) rows.push_back(id);
  std::size_t common = 0;
  while (common < rows.size() && common < rows_.size() && rows[common] == rows_[common]) ++common;
  const int oldCount = static_cast<int>(rows_.size());
  if (common < rows_.size()) {
    beginRemoveRows({}, static_cast<int>(common), static_cast<int>(rows_.size()) - 1);
    rows_.resize(common);
    endRemoveRows();
  }
  if (common < rows.size()) {
    beginInsertRows({}, static_cast<int>(common), static_cast<int>(rows.size()) - 1);
    rows_ = rows;
    endInsertRows();
  }
  // The row above a fork shows no count, but the fork row's own siblings may have grown.
  if (common > 0) {
    const QModelIndex last = index(static_cast<int>(common) - 1);
    emit dataChanged(last, last, {BranchIndexRole, BranchCountRole});
  }
  if (oldCount != static_cast<int>(rows_.size())) emit countChanged();
}

bool MessageListModel::switchBranch(std::int64_t id, int delta) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  const auto& s = siblings(id);
  const auto pos = std::find(s.begin(), s.end(), id) - s.begin();
  const auto target = pos + delta;
  if (target < 0 || target >= static_cast<std::ptrdiff_t>(s.size())) return false;
  chosen_[parentKey(it->second.message)] = s[static_cast<std::size_t>(target)];
  applyPath();
  return true;
}

const std::vector<std::int64_t>& MessageListModel::siblings(std::int64_t id) const {
  static const std::vector<std::int64_t> none;
  const auto it = entries_.find(id);
  if (it == entries_.end()) return none;
  const auto kids = children_.find(parentKey(it->second.message));
  return kids == children_.end() ? none : kids->second;
}

MessageBlocks* MessageListModel::blocksOf(std::int64_t id) const {
  const auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.blocks.get();
}

const storage::Message* MessageListModel::find(std::int64_t id) const {
  const auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.message;
}

std::vector<storage::Message> MessageListModel::chainTo(std::int64_t id) const {
  std::vector<storage::Message> chain;
  std::int64_t current = id;
  while (current != 0 && chain.size() < entries_.size()) {
    const auto it = entries_.find(current);
    if (it == entries_.end()) break;
    chain.push_back(it->second.message);
    current = parentKey(it->second.message);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::optional<std::int64_t> MessageListModel::lastId() const {
  if (chain_.empty()) return std::nullopt;
  return chain_.back();
}

int MessageListModel::rowOf(std::int64_t id) const {
  const auto it = std::find(rows_.begin(), rows_.end(), id);
  return it == rows_.end() ? -1 : static_cast<int>(it - rows_.begin());
}

void MessageListModel::changed(std::int64_t id, const QList<int>& roles) {
  const int row = rowOf(id);
  if (row < 0) return;
  emit dataChanged(index(row), index(row), roles);
}

void MessageListModel::appendText(std::int64_t id, const QString& content, const QString& reasoning) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  QList<int> roles;
  if (!content.isEmpty()) {
    it->second.message.content += content.toStdString();
    it->second.blocks->append(content);
    roles << ContentRole;  // the blocks model is the same object: it reports its own changes
  }
  if (!reasoning.isEmpty()) {
    it->second.message.reasoning += reasoning.toStdString();
    roles << ReasoningRole;
  }
  if (!roles.isEmpty()) changed(id, roles);
}

void MessageListModel::setText(std::int64_t id, const QString& content, const QString& reasoning) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.message.content = content.toStdString();
  it->second.message.reasoning = reasoning.toStdString();
  it->second.blocks->setText(content);
  changed(id, {ContentRole, ReasoningRole});
}

void MessageListModel::setStreaming(std::int64_t id, bool streaming) {
  const auto it = entries_.find(id);
  if (it == entries_.end() || it->second.streaming == streaming) return;
  it->second.streaming = streaming;
  changed(id, {StreamingRole});
}

void MessageListModel::finish(std::int64_t id, storage::MessageState state, const QString& error,
                              const storage::ReplyStats& stats) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.message.state = state;
  it->second.message.error = error.toStdString();
  it->second.message.stats = stats;
  it->second.streaming = false;
  changed(id, {StateRole, ErrorRole, StatsRole, StreamingRole});
}

}  // namespace day0::app
