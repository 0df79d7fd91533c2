#include "gui/chat_controller.h"

#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QQuickTextDocument>
#include <QSaveFile>
#include <QStandardPaths>

#include "bridge/engine_bridge.h"
#include "gui/app_settings.h"
#include "gui/chat_internal.h"
#include "gui/conversation_list_model.h"
#include "gui/knowledge_controller.h"
#include "gui/markdown_blocks.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"
#include "gui/source_opener.h"
#include "gui/user_path.h"
#include "storage/statement.h"

namespace day0::app {
namespace {

using namespace chat_internal;

constexpr int kUndoMs = 8000;

}  // namespace

ChatController::ChatController(EngineBridge* bridge, ModelManager* models, AppSettings* settings,
                               const QString& databasePath, std::shared_ptr<AttachmentSource> attachments,
                               QObject* parent)
    : QObject(parent),
      bridge_(bridge),
      models_(models),
      settings_(settings),
      databasePath_(databasePath),
      attachments_(std::move(attachments)),
      conversations_(new ConversationListModel(this)),
      messages_(new MessageListModel(this)) {
  store_ = std::make_unique<storage::HistoryStore>(databasePath.toStdString());
  attachments_->set_store(store_.get());
  store_->open_report(onGui<storage::OpenReport>([this](const auto& r) {
    if (!r.is_ok()) {
      emit errorOccurred(tr("The history cannot be opened: %1").arg(qs(r.error().message)));
      return;
    }
    for (const auto& notice : r.value().notices) emit noticeOccurred(qs(notice));
  }));
  refreshConversations();
  refreshPresets();
  // Conversations without their own settings follow the defaults.
  connect(settings_, &AppSettings::changed, this, [this]() {
    if (!currentSettings_.contains(kGenerationKey)) emit chatSettingsChanged();
  });
  connect(bridge_, &EngineBridge::textArrived, this, &ChatController::onText);
  connect(bridge_, &EngineBridge::generationFinished, this, &ChatController::onFinished);
  connect(bridge_, &EngineBridge::prefillProgress, this, [this](quint64 request, qint64 done, qint64 total) {
    if (request == requestId_ && replyId_ != 0 && streamContent_.isEmpty() && streamReasoning_.isEmpty())
      setPrefill(done, total);
  });
  connect(bridge_, &EngineBridge::contextTrimmed, this, [this](quint64 request, int dropped) {
    if (request != requestId_ || replyId_ == 0) return;
    emit noticeOccurred(dropped == 1 ? tr("1 earlier message left out to fit the context")
                                     : tr("%1 earlier messages left out to fit the context").arg(dropped));
    emit contextTrimmed(replyId_, dropped);
  });
  undoTimer_.setSingleShot(true);
  undoTimer_.setInterval(kUndoMs);
  connect(&undoTimer_, &QTimer::timeout, this, &ChatController::commitPendingDelete);
  connect(&externalTimer_, &QTimer::timeout, this, &ChatController::checkExternalChanges);
  setExternalCheckInterval(2000);
  checkExternalChanges();
}

void ChatController::setExternalCheckInterval(int ms) {
  if (ms <= 0) return externalTimer_.stop();
  externalTimer_.start(ms);
}

void ChatController::checkExternalChanges() {
  if (checkingExternal_) return;
  checkingExternal_ = true;
  // data_version changes only when another connection commits, so the app's own writes do
  // not count; it is cheap (no I/O beyond the lock check).
  store_->run<std::int64_t>(
      [](storage::HistoryDb& db) -> storage::StoreResult<std::int64_t> {
        DAY0_STORE_ASSIGN(s, storage::Statement::prepare(db.database(), "PRAGMA data_version"));
        DAY0_STORE_ASSIGN(row, s.step());
        if (!row) return storage::store_error("PRAGMA data_version gave no row");
        return s.column_int(0);
      },
      onGui<std::int64_t>([this](const auto& r) {
        checkingExternal_ = false;
        if (!r.is_ok()) return;  // an unopened history says so once, at start
        const bool changed = dataVersion_ && *dataVersion_ != r.value();
        dataVersion_ = r.value();
        if (!changed) return;
        emit externalChange();
        refreshConversations();
        refreshPresets();
      }));
}

ChatController::~ChatController() {
  if (pendingDelete_ != 0) store_->delete_conversation(pendingDelete_);
  // A reply still streaming stays in the history marked incomplete, with the text so far.
  attachments_->set_store(nullptr);
  store_.reset();
}

QObject* ChatController::conversationsObject() const { return conversations_; }
QObject* ChatController::messagesObject() const { return messages_; }

void ChatController::failed(const QString& what, const storage::StoreError& error) {
  emit errorOccurred(tr("%1: %2").arg(what, qs(error.message)));
}

void ChatController::setSending(bool sending) {
  if (sending_ == sending) return;
  sending_ = sending;
  emit generatingChanged();
}

void ChatController::refreshConversations() {
  if (!searchQuery_.trimmed().isEmpty()) {
    const QString query = searchQuery_;
    store_->search(query.toStdString(), {}, onGui<std::vector<storage::SearchHit>>([this, query](const auto& r) {
                     if (query != searchQuery_) return;
                     if (!r.is_ok()) return failed(tr("Search failed"), r.error());
                     conversations_->setSearchHits(r.value());
                     emit searchFinished();
                   }));
    return;
  }
  store_->list_conversations({}, onGui<std::vector<storage::Conversation>>([this](const auto& r) {
                               if (!r.is_ok()) return failed(tr("The conversations cannot be listed"), r.error());
                               if (!searchQuery_.trimmed().isEmpty()) return;
                               conversations_->setConversations(r.value());
                               for (const auto& c : r.value()) {
                                 if (c.id == currentId_ && qs(c.title) != currentTitle_) {
                                   currentTitle_ = qs(c.title);
                                   emit currentChanged();
                                 }
                               }
                               emit conversationsLoaded();
                             }));
}

void ChatController::setSearchQuery(const QString& query) {
  if (query == searchQuery_) return;
  searchQuery_ = query;
  emit searchChanged();
  refreshConversations();
}

void ChatController::newConversation() {
  currentId_ = 0;
  openingId_ = 0;
  currentTitle_.clear();
  messages_->clear();
  applyConversationSettings(nlohmann::json::object());
  emit currentChanged();
}

void ChatController::openConversation(qint64 id, qint64 focusMessageId) {
  if (id <= 0) return newConversation();
  currentId_ = id;
  currentTitle_ = conversations_->titleOf(id);
  applyConversationSettings(nlohmann::json::object());
  emit currentChanged();
  store_->conversation(id, onGui<storage::Conversation>([this, id](const auto& r) {
                         if (currentId_ == id && r.is_ok()) applyConversationSettings(r.value().settings);
                       }));
  openingId_ = id;
  reloadMessages(id, focusMessageId, [this, id]() {
    if (openingId_ == id) openingId_ = 0;
    emit conversationLoaded(id);
  });
}

void ChatController::reloadMessages(qint64 id, qint64 focusMessageId, std::function<void()> then) {
  store_->messages(id, onGui<std::vector<storage::Message>>([this, id, focusMessageId, then](const auto& r) {
                     if (currentId_ != id) return;
                     if (!r.is_ok()) {
                       if (openingId_ == id) openingId_ = 0;
                       return failed(tr("The conversation cannot be opened"), r.error());
                     }
                     messages_->reset(r.value(),
                                      focusMessageId > 0 ? std::optional<std::int64_t>(focusMessageId) : std::nullopt);
                     if (replyId_ != 0 && replyConversation_ == id) {
                       // The history may not hold the last moments of the streaming reply yet.
                       messages_->setText(replyId_, streamContent_, streamReasoning_);
                       messages_->setStreaming(replyId_, true);
                     }
                     then();
                   }));
}

void ChatController::duplicateConversation(qint64 id) {
  if (id <= 0) return;
  const QString title = conversations_->titleOf(id);
  const QString copyTitle = tr("%1 (copy)").arg(title.isEmpty() ? tr("New chat") : title);
  store_->duplicate_conversation(id, copyTitle.toStdString(), onGui<storage::Conversation>([this](const auto& r) {
                                   if (!r.is_ok()) return failed(tr("The conversation cannot be copied"), r.error());
                                   const qint64 copy = r.value().id;
                                   refreshConversations();
                                   openConversation(copy);
                                   currentTitle_ = QString::fromStdString(r.value().title);  // before the list has it
                                   emit currentChanged();
                                   emit conversationDuplicated(copy);
                                 }));
}

QString ChatController::suggestedExportPath(const QString& format) const {
  QString name = currentTitle_.isEmpty() ? tr("conversation") : currentTitle_;
  for (QChar& c : name)
    if (c.unicode() < 0x20 || QStringLiteral("/\\:*?\"<>|").contains(c)) c = u' ';
  name = name.simplified().left(80);
  if (name.isEmpty()) name = tr("conversation");
  QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = QDir::homePath();
  return folder + u'/' + name + (format == QLatin1String("markdown") ? QStringLiteral(".md") : QStringLiteral(".json"));
}

bool ChatController::exportConversation(const QVariant& pathValue, const QString& format) {
  if (currentId_ == 0) {
    emit errorOccurred(tr("Open a conversation to export it."));
    return false;
  }
  const QString path = localPathFromUser(pathValue);
  if (path.isEmpty()) {
    emit errorOccurred(tr("Type the path of the file to write."));
    return false;
  }
  const QFileInfo info(path);
  if (info.isDir()) {
    emit errorOccurred(tr("%1 is a folder: add a file name, e.g. %1/chat.json.").arg(path));
    return false;
  }
  if (!info.absoluteDir().exists()) {
    emit errorOccurred(tr("The folder %1 does not exist.").arg(info.absolutePath()));
    return false;
  }
  QString kind = format.toLower();
  if (kind.isEmpty())
    kind = info.suffix().compare(QLatin1String("md"), Qt::CaseInsensitive) == 0 ||
                   info.suffix().compare(QLatin1String("markdown"), Qt::CaseInsensitive) == 0
               ? QStringLiteral("markdown")
               : QStringLiteral("json");
  if (kind != QLatin1String("json") && kind != QLatin1String("markdown")) {
    emit errorOccurred(tr("Conversations export as json or markdown, not %1.").arg(format));
    return false;
  }
  const QString target = info.absoluteFilePath();
  auto write = [this, target](const storage::StoreResult<std::string>& r) {
    if (!r.is_ok()) return failed(tr("The conversation cannot be exported"), r.error());
    QSaveFile file(target);
    const QByteArray bytes = QByteArray::fromStdString(r.value());
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
      emit errorOccurred(tr("%1 cannot be written: %2").arg(target, file.errorString()));
      return;
    }
    emit noticeOccurred(tr("Exported the conversation to %1").arg(target));
    emit exported(target);
  };
  const std::vector<std::int64_t> ids{currentId_};
  if (kind == QLatin1String("markdown"))
    store_->export_markdown(ids, onGui<std::string>(write));
  else
    store_->export_json(ids, onGui<std::string>(write));
  return true;
}

void ChatController::renameConversation(qint64 id, const QString& title) {
  const QString t = title.simplified();
  if (t.isEmpty()) return;
  storage::ConversationPatch patch;
  patch.title = t.toStdString();
  store_->update_conversation(id, patch, onGui<storage::Ok>([this, id, t](const auto& r) {
                                if (!r.is_ok()) return failed(tr("The conversation cannot be renamed"), r.error());
                                if (id == currentId_) {
                                  currentTitle_ = t;
                                  emit currentChanged();
                                }
                                refreshConversations();
                              }));
}

void ChatController::setPinned(qint64 id, bool pinned) {
  storage::ConversationPatch patch;
  patch.pinned = pinned;
  store_->update_conversation(id, patch, onGui<storage::Ok>([this](const auto& r) {
                                if (!r.is_ok()) return failed(tr("The conversation cannot be pinned"), r.error());
                                refreshConversations();
                              }));
}

void ChatController::deleteConversation(qint64 id) {
  if (id <= 0) return;
  if (pendingDelete_ != 0) commitPendingDelete();
  if (replyConversation_ == id) stop();
  pendingDelete_ = id;
  const QString title = conversations_->titleOf(id);
  undoText_ = tr("Deleted “%1”").arg(title.isEmpty() ? tr("New chat") : title);
  conversations_->setHidden({id});
  if (currentId_ == id) newConversation();
  undoTimer_.start();
  emit undoChanged();
}

void ChatController::undoDelete() {
  if (pendingDelete_ == 0) return;
  undoTimer_.stop();
  pendingDelete_ = 0;
  undoText_.clear();
  conversations_->setHidden({});
  emit undoChanged();
}

void ChatController::commitPendingDelete() {
  if (pendingDelete_ == 0) return;
  undoTimer_.stop();
  const qint64 id = pendingDelete_;
  pendingDelete_ = 0;
  undoText_.clear();
  emit undoChanged();
  store_->delete_conversation(id, onGui<storage::Ok>([this](const auto& r) {
                                if (!r.is_ok()) failed(tr("The conversation cannot be deleted"), r.error());
                                refreshConversations();
                              }));
}

void ChatController::copyText(const QString& text) { QGuiApplication::clipboard()->setText(text); }

void ChatController::styleLinks(QObject* textDocument, const QColor& color) {
  if (auto* document = qobject_cast<QQuickTextDocument*>(textDocument)) set_link_color(document->textDocument(), color);
}

void ChatController::setKnowledge(KnowledgeController* knowledge) {
  knowledge_ = knowledge;
  if (knowledge_ == nullptr) return;
  connect(knowledge_, &KnowledgeController::folderRemoved, this, [this](qint64 id) {
    if (!enabledFolders_.contains(id)) return;
    enabledFolders_.removeAll(id);
    emit knowledgeChanged();
    saveKnowledgeSettings();
  });
}

QVariantList ChatController::knowledgeFolders() const {
  QVariantList list;
  for (const qint64 id : enabledFolders_) list << id;
  return list;
}

void ChatController::setFolderEnabled(qint64 folderId, bool enabled) {
  if (folderId <= 0 || enabledFolders_.contains(folderId) == enabled) return;
  if (enabled)
    enabledFolders_.append(folderId);
  else
    enabledFolders_.removeAll(folderId);
  emit knowledgeChanged();
  saveKnowledgeSettings();
}

void ChatController::setWholeFolders(bool whole) {
  if (wholeFolders_ == whole) return;
  wholeFolders_ = whole;
  emit knowledgeChanged();
  saveKnowledgeSettings();
}


bool ChatController::openSource(const QString& path, int line, int page) {
  if (open_source(path, line, page)) return true;
  emit errorOccurred(tr("%1 is no longer there.").arg(path));
  return false;
}

void ChatController::openDocument(const QString& sha256, const QString& name, int line, int page) {
  store_->attachment_data(
      sha256.toStdString(), onGui<std::string>([this, name, line, page](const auto& r) {
        if (!r.is_ok()) return failed(tr("The document cannot be opened"), r.error());
        if (!openedDocuments_) openedDocuments_ = std::make_unique<QTemporaryDir>();
        // Only the name's last part, so a stored name cannot point elsewhere.
        QString file = QFileInfo(name).fileName();
        if (file.isEmpty() || file.startsWith(u'.')) file = QStringLiteral("document") + file;
        const QString path = openedDocuments_->filePath(file);
        QFile out(path);
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            out.write(QByteArray::fromStdString(r.value())) != static_cast<qint64>(r.value().size())) {
          emit errorOccurred(tr("The document cannot be written to %1.").arg(path));
          return;
        }
        out.close();
        open_source(path, line, page);
      }));
}

}  // namespace day0::app
