#include "gui/chat_controller.h"

#include <QBuffer>
#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QLocale>
#include <QMetaObject>
#include <QMimeData>

#include "bridge/engine_bridge.h"
#include "gui/app_settings.h"
#include "gui/conversation_list_model.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"

namespace day0::app {
namespace {

constexpr int kMaxImagesPerMessage = 8;
constexpr int kUndoMs = 8000;

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString titleFrom(const QString& text) {
  QString line = text.trimmed().section(u'\n', 0, 0).simplified();
  if (line.isEmpty()) return QObject::tr("Images");
  if (line.size() > 60) line = line.left(57).trimmed() + QStringLiteral("…");
  return line;
}

}  // namespace

template <typename T>
storage::HistoryStore::Done<T> ChatController::onGui(std::function<void(const storage::StoreResult<T>&)> f) {
  // Runs on the store thread: hand the result to the GUI thread. The store is destroyed (and
  // its thread joined) at the start of ~ChatController, so `this` outlives every callback.
  return [this, f = std::move(f)](const storage::StoreResult<T>& result) {
    QMetaObject::invokeMethod(
        this, [f, result]() { f(result); }, Qt::QueuedConnection);
  };
}

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
  connect(bridge_, &EngineBridge::textArrived, this, &ChatController::onText);
  connect(bridge_, &EngineBridge::generationFinished, this, &ChatController::onFinished);
  undoTimer_.setSingleShot(true);
  undoTimer_.setInterval(kUndoMs);
  connect(&undoTimer_, &QTimer::timeout, this, &ChatController::commitPendingDelete);
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
  currentTitle_.clear();
  messages_->clear();
  emit currentChanged();
}

void ChatController::openConversation(qint64 id, qint64 focusMessageId) {
  if (id <= 0) return newConversation();
  currentId_ = id;
  currentTitle_ = conversations_->titleOf(id);
  emit currentChanged();
  store_->messages(id, onGui<std::vector<storage::Message>>([this, id, focusMessageId](const auto& r) {
                     if (currentId_ != id) return;
                     if (!r.is_ok()) return failed(tr("The conversation cannot be opened"), r.error());
                     messages_->reset(r.value(),
                                      focusMessageId > 0 ? std::optional<std::int64_t>(focusMessageId) : std::nullopt);
                     if (replyId_ != 0 && replyConversation_ == id) {
                       // The history may not hold the last moments of the streaming reply yet.
                       messages_->setText(replyId_, streamContent_, streamReasoning_);
                       messages_->setStreaming(replyId_, true);
                     }
                     emit conversationLoaded(id);
                   }));
}

void ChatController::ensureConversation(const QString& titleHint, std::function<void(qint64)> then) {
  if (currentId_ != 0) return then(currentId_);
  storage::NewConversation c;
  c.title = titleFrom(titleHint).toStdString();
  c.model = models_->loadedDir().toStdString();
  const QString system = settings_->systemPrompt().trimmed();
  store_->create_conversation(c, onGui<storage::Conversation>([this, then, system](const auto& r) {
                                if (!r.is_ok()) {
                                  setSending(false);
                                  return failed(tr("The conversation cannot be saved"), r.error());
                                }
                                currentId_ = r.value().id;
                                currentTitle_ = qs(r.value().title);
                                messages_->clear();
                                emit currentChanged();
                                refreshConversations();
                                if (system.isEmpty()) return then(currentId_);
                                storage::NewMessage m;
                                m.conversation_id = currentId_;
                                m.role = storage::Role::system;
                                m.content = system.toStdString();
                                const qint64 id = currentId_;
                                store_->add_message(m, onGui<storage::Message>([this, then, id](const auto& added) {
                                                      if (!added.is_ok()) {
                                                        setSending(false);
                                                        return failed(tr("The system prompt cannot be saved"),
                                                                      added.error());
                                                      }
                                                      if (currentId_ == id) messages_->add(added.value());
                                                      then(id);
                                                    }));
                              }));
}

bool ChatController::send(const QString& rawText) {
  const QString text = rawText.trimmed();
  if (text.isEmpty() && pending_.empty()) return false;
  if (generating()) {
    emit errorOccurred(tr("A reply is still being written: wait for it or press Stop."));
    return false;
  }
  if (pending_.empty() && !models_->loaded()) {
    emit errorOccurred(models_->loading() ? tr("The model is still loading: send again when it is ready.")
                                          : tr("No model is loaded: open one in the model manager (Ctrl+M)."));
    return false;
  }
  std::vector<storage::NewAttachment> images;
  QStringList shas;
  for (const auto& p : pending_) {
    images.push_back({p.mime_type.toStdString(), p.file_name.toStdString(), p.data.toStdString()});
    shas << p.sha256;
  }
  pending_.clear();
  emit pendingAttachmentsChanged();
  setSending(true);
  const QString model = models_->loadedDir();
  ensureConversation(text, [this, text, images = std::move(images), shas, model](qint64 conversation) {
    storage::NewMessage m;
    m.conversation_id = conversation;
    if (const auto last = messages_->lastId()) m.parent_id = *last;
    m.role = storage::Role::user;
    m.content = text.toStdString();
    m.model = model.toStdString();
    m.attachments = images;
    store_->add_message(m, onGui<storage::Message>([this, shas](const auto& r) {
                          for (const auto& sha : shas) attachments_->remove_pending(sha);
                          if (!r.is_ok()) {
                            setSending(false);
                            return failed(tr("The message cannot be saved"), r.error());
                          }
                          afterUserMessage(r.value());
                        }));
  });
  return true;
}

void ChatController::afterUserMessage(const storage::Message& message) {
  if (message.conversation_id == currentId_) messages_->add(message);
  emit messageStored(message.id);
  refreshConversations();
  if (!message.attachments.empty() && !models_->acceptsImages()) {
    setSending(false);
    emit errorOccurred(models_->imagesRefusal());
    return;
  }
  if (!models_->loaded()) {
    setSending(false);
    emit errorOccurred(tr("No model is loaded: the message is saved; load a model and press Regenerate."));
    return;
  }
  startReply(message.conversation_id, message.id);
}

void ChatController::startReply(qint64 conversationId, qint64 parentId) {
  setSending(true);
  storage::NewReply reply;
  reply.conversation_id = conversationId;
  reply.parent_id = parentId;
  reply.model = models_->loadedDir().toStdString();
  store_->begin_reply(reply, onGui<storage::Message>([this, parentId](const auto& r) {
                        if (!r.is_ok()) {
                          setSending(false);
                          return failed(tr("The reply cannot be saved"), r.error());
                        }
                        const storage::Message& begun = r.value();
                        if (begun.conversation_id == currentId_) {
                          messages_->add(begun);
                          messages_->setStreaming(begun.id, true);
                        }
                        std::vector<ContextMessage> context;
                        for (const auto& m : messages_->chainTo(parentId)) {
                          ContextMessage c{{storage::to_string(m.role), m.content, m.reasoning}, {}};
                          if (models_->acceptsImages())
                            for (const auto& a : m.attachments)
                              c.images.push_back({qs(a.mime_type), [source = attachments_, sha = qs(a.sha256)]() {
                                                    return source->bytes(sha);
                                                  }});
                          context.push_back(std::move(c));
                        }
                        GenerationParams params;
                        params.temperature = static_cast<float>(settings_->temperature());
                        params.top_p = static_cast<float>(settings_->topP());
                        params.top_k = settings_->topK();
                        params.max_new_tokens = settings_->maxNewTokens();
                        params.seed = static_cast<std::uint64_t>(begun.id) * 0x9E3779B97F4A7C15ull;
                        replyId_ = begun.id;
                        replyConversation_ = begun.conversation_id;
                        streamContent_.clear();
                        streamReasoning_.clear();
                        requestId_ = bridge_->generate(std::move(context), params);
                        setSending(false);
                        emit generatingChanged();
                        emit replyStarted(replyId_);
                        if (requestId_ == 0) {
                          GenerationOutcome outcome;
                          outcome.ok = false;
                          outcome.message = tr("No model is loaded.");
                          onFinished(outcome);
                        }
                      }));
}

void ChatController::onText(quint64 request, const QString& content, const QString& reasoning) {
  if (request != requestId_ || replyId_ == 0) return;
  streamContent_ += content;
  streamReasoning_ += reasoning;
  messages_->appendText(replyId_, content, reasoning);
  store_->append_reply(replyId_, content.toStdString(), reasoning.toStdString());
}

void ChatController::onFinished(const GenerationOutcome& outcome) {
  if (outcome.request != requestId_ || replyId_ == 0) return;
  storage::ReplyEnd end;
  end.state = !outcome.ok         ? storage::MessageState::error
              : outcome.cancelled ? storage::MessageState::incomplete
                                  : storage::MessageState::complete;
  end.error = outcome.message.toStdString();
  if (outcome.stats.context_tokens > 0 || outcome.stats.generated_tokens > 0) {
    end.stats.prompt_tokens = outcome.stats.context_tokens;
    end.stats.completion_tokens = outcome.stats.generated_tokens;
    if (outcome.stats.generated_tokens > 0) {
      end.stats.ttft_ms = outcome.stats.time_to_first_token_ms;
      end.stats.tokens_per_second = outcome.stats.decode_tokens_per_second;
    }
  }
  const qint64 id = replyId_;
  store_->finish_reply(id, end, onGui<storage::Ok>([this](const auto& r) {
                         if (!r.is_ok()) failed(tr("The reply cannot be saved"), r.error());
                         refreshConversations();
                       }));
  messages_->finish(id, end.state, outcome.message, end.stats);
  replyId_ = 0;
  requestId_ = 0;
  replyConversation_ = 0;
  emit generatingChanged();
  if (!outcome.ok) emit errorOccurred(tr("The engine stopped: %1").arg(outcome.message));
  emit replyFinished(id, outcome.ok);
}

void ChatController::stop() {
  if (replyId_ != 0) bridge_->stop();
}

void ChatController::regenerate(qint64 messageId) {
  const storage::Message* m = messages_->find(messageId);
  if (m == nullptr || generating()) return;
  if (!models_->loaded()) {
    emit errorOccurred(tr("No model is loaded: open one in the model manager (Ctrl+M)."));
    return;
  }
  const qint64 parent = m->role == storage::Role::assistant ? m->parent_id.value_or(0) : m->id;
  if (parent == 0) return;
  const storage::Message* user = messages_->find(parent);
  if (user && !user->attachments.empty() && !models_->acceptsImages()) {
    emit errorOccurred(models_->imagesRefusal());
    return;
  }
  startReply(m->conversation_id, parent);
}

void ChatController::editAndResend(qint64 messageId, const QString& rawText) {
  const storage::Message* m = messages_->find(messageId);
  const QString text = rawText.trimmed();
  if (m == nullptr || m->role != storage::Role::user || text.isEmpty() || generating()) return;
  if (!models_->loaded()) {
    emit errorOccurred(tr("No model is loaded: open one in the model manager (Ctrl+M)."));
    return;
  }
  setSending(true);
  const std::string model = models_->loadedDir().toStdString();
  const std::string content = text.toStdString();
  // The edit keeps the original's images: copy them inside one store job.
  store_->run<storage::Message>(
      [messageId, content, model](storage::HistoryDb& db) -> storage::StoreResult<storage::Message> {
        DAY0_STORE_ASSIGN(original, db.message(messageId));
        storage::NewMessage edited;
        edited.conversation_id = original.conversation_id;
        edited.parent_id = original.parent_id;
        edited.role = storage::Role::user;
        edited.content = content;
        edited.model = model;
        for (const auto& a : original.attachments) {
          DAY0_STORE_ASSIGN(bytes, db.attachment_data(a.sha256));
          edited.attachments.push_back({a.mime_type, a.file_name, std::move(bytes)});
        }
        return db.add_message(edited);
      },
      onGui<storage::Message>([this](const auto& r) {
        if (!r.is_ok()) {
          setSending(false);
          return failed(tr("The edited message cannot be saved"), r.error());
        }
        afterUserMessage(r.value());
      }));
}

void ChatController::switchBranch(qint64 messageId, int delta) { messages_->switchBranch(messageId, delta); }

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

QVariantList ChatController::pendingAttachments() const {
  QVariantList list;
  const QLocale locale = QLocale::c();
  for (const auto& p : pending_) {
    list.append(QVariantMap{{QStringLiteral("source"), QStringLiteral("image://day0/") + p.sha256},
                            {QStringLiteral("name"), p.file_name},
                            {QStringLiteral("sizeText"), QStringLiteral("%1 x %2, %3")
                                                             .arg(p.size.width())
                                                             .arg(p.size.height())
                                                             .arg(locale.formattedDataSize(p.data.size()))}});
  }
  return list;
}

int ChatController::attachData(const QByteArray& data, const QString& fileName) {
  if (static_cast<int>(pending_.size()) >= kMaxImagesPerMessage) {
    emit errorOccurred(tr("A message can carry up to %1 images.").arg(kMaxImagesPerMessage));
    return 0;
  }
  ValidatedImage image = validate_image(data, fileName);
  if (!image.error.isEmpty()) {
    emit errorOccurred(image.error);
    return 0;
  }
  for (const auto& p : pending_)
    if (p.sha256 == image.sha256) return 0;
  attachments_->add_pending(image.sha256, image.data);
  pending_.push_back(std::move(image));
  emit pendingAttachmentsChanged();
  return 1;
}

int ChatController::attachUrls(const QVariantList& urls) {
  int added = 0;
  const ImageLimits limits;
  for (const QVariant& v : urls) {
    const QUrl url = v.toUrl();
    const QString path = url.isLocalFile() ? url.toLocalFile() : v.toString();
    const QFileInfo info(path);
    if (!info.isFile()) {
      emit errorOccurred(
          tr("%1 is not a file that can be attached.").arg(info.fileName().isEmpty() ? path : info.fileName()));
      continue;
    }
    if (info.size() > limits.max_bytes) {
      emit errorOccurred(tr("%1 is %2; images up to %3 can be attached.")
                             .arg(info.fileName(), QLocale::c().formattedDataSize(info.size()),
                                  QLocale::c().formattedDataSize(limits.max_bytes)));
      continue;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
      emit errorOccurred(tr("%1 cannot be read: %2").arg(info.fileName(), file.errorString()));
      continue;
    }
    added += attachData(file.read(limits.max_bytes + 1), info.fileName());
  }
  return added;
}

bool ChatController::pasteImage() {
  const QMimeData* mime = QGuiApplication::clipboard()->mimeData();
  if (mime == nullptr) return false;
  if (mime->hasImage()) {
    const QImage image = qvariant_cast<QImage>(mime->imageData());
    if (image.isNull()) return false;
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    attachData(png, tr("pasted image.png"));
    return true;
  }
  if (mime->hasUrls()) {
    QVariantList urls;
    for (const QUrl& u : mime->urls())
      if (u.isLocalFile()) urls << u;
    if (urls.isEmpty()) return false;
    attachUrls(urls);
    return true;
  }
  return false;
}

void ChatController::removeAttachment(int index) {
  if (index < 0 || index >= static_cast<int>(pending_.size())) return;
  attachments_->remove_pending(pending_[static_cast<std::size_t>(index)].sha256);
  pending_.erase(pending_.begin() + index);
  emit pendingAttachmentsChanged();
}

void ChatController::copyText(const QString& text) { QGuiApplication::clipboard()->setText(text); }

}  // namespace day0::app
