// ChatController: sending a message and streaming its reply, regenerating, editing and deleting
// messages.
#include <QLocale>
#include <algorithm>

#include "bridge/engine_bridge.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/chat_internal.h"
#include "gui/knowledge_controller.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"
#include "knowledge/context.h"

namespace day0::app {
namespace {

using namespace chat_internal;

// A model that names no context window gets this much for its knowledge budget.
constexpr qint64 kFallbackContextWindow = 8192;

QString titleFrom(const QString& text) {
  QString line = text.trimmed().section(u'\n', 0, 0).simplified();
  if (line.isEmpty()) return QObject::tr("Images");
  if (line.size() > 60) line = line.left(57).trimmed() + QStringLiteral("…");
  return line;
}

bool hasImages(const storage::Message& m) {
  return std::any_of(m.attachments.begin(), m.attachments.end(),
                     [](const storage::Attachment& a) { return !is_document_mime(qs(a.mime_type)); });
}

// The text the model reads for a message: its knowledge context, then what was written.
std::string promptContent(const storage::Message& m) {
  return m.context.empty() ? m.content : knowledge::prompt_text(m.context, m.content);
}

}  // namespace

void ChatController::ensureConversation(const QString& titleHint, std::function<void(qint64)> then) {
  if (currentId_ != 0) return then(currentId_);
  storage::NewConversation c;
  c.title = titleFrom(titleHint).toStdString();
  c.model = models_->loadedDir().toStdString();
  nlohmann::json generation = effectiveGeneration();
  const QString system = qs(generation.value("system_prompt", std::string())).trimmed();
  c.settings = withKnowledgeSettings(currentSettings_);  // with a context-overflow choice made before
  c.settings[kGenerationKey] = std::move(generation);
  store_->create_conversation(c, onGui<storage::Conversation>([this, then, system](const auto& r) {
                                if (!r.is_ok()) {
                                  setSending(false);
                                  return failed(tr("The conversation cannot be saved"), r.error());
                                }
                                currentId_ = r.value().id;
                                currentTitle_ = qs(r.value().title);
                                currentSettings_ = r.value().settings;
                                emit chatSettingsChanged();
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
  if (text.isEmpty() && pending_.empty() && pendingDocuments_.empty()) return false;
  if (generating()) {
    emit errorOccurred(tr("A reply is still being written: wait for it or press Stop."));
    return false;
  }
  if (openingId_ != 0 && openingId_ == currentId_) {
    emit errorOccurred(tr("The conversation is still opening: send again in a moment."));
    return false;
  }
  if (readingDocuments_ > 0) {
    emit errorOccurred(tr("An attached document is still being read: send again in a moment."));
    return false;
  }
  if (pending_.empty() && pendingDocuments_.empty() && !models_->loaded()) {
    emit errorOccurred(models_->loading() ? tr("The model is still loading: send again when it is ready.")
                                          : tr("No model is loaded: open one in the model manager (Ctrl+M)."));
    return false;
  }
  std::vector<storage::NewAttachment> attachments;
  std::vector<std::pair<std::string, std::string>> documents;
  QStringList shas;
  for (const auto& p : pending_) {
    attachments.push_back({p.mime_type.toStdString(), p.file_name.toStdString(), p.data.toStdString()});
    shas << p.sha256;
  }
  for (const auto& d : pendingDocuments_) {
    attachments.push_back({d.mime_type.toStdString(), d.file_name.toStdString(), d.data.toStdString()});
    documents.emplace_back(d.file_name.toStdString(), d.data.toStdString());
  }
  const QString titleHint = text.isEmpty() && !pendingDocuments_.empty() ? pendingDocuments_.front().file_name : text;
  pending_.clear();
  pendingDocuments_.clear();
  emit pendingAttachmentsChanged();
  setSending(true);
  const QString model = models_->loadedDir();
  ensureConversation(titleHint, [this, text, attachments = std::move(attachments), documents = std::move(documents),
                                 shas, model](qint64 conversation) {
    storage::NewMessage m;
    m.conversation_id = conversation;
    if (const auto last = messages_->lastId()) m.parent_id = *last;
    m.role = storage::Role::user;
    m.content = text.toStdString();
    m.model = model.toStdString();
    m.attachments = attachments;
    withKnowledge(std::move(m), documents, [this, shas](storage::NewMessage ready) { storeUserMessage(ready, shas); });
  });
  return true;
}

void ChatController::withKnowledge(storage::NewMessage message,
                                   std::vector<std::pair<std::string, std::string>> documents,
                                   std::function<void(storage::NewMessage)> then) {
  if (knowledge_ == nullptr || (documents.empty() && enabledFolders_.isEmpty())) return then(std::move(message));
  AssemblyRequest request;
  request.question = message.content;
  request.documents = std::move(documents);
  for (const qint64 id : enabledFolders_) request.folders.push_back(id);
  request.whole_folders = wholeFolders_;
  if (message.parent_id)
    for (const auto& m : messages_->chainTo(*message.parent_id)) request.conversation.push_back(promptContent(m));
  request.context_window = bridge_->contextWindow() > 0 ? bridge_->contextWindow() : kFallbackContextWindow;
  request.reply_reserve = effectiveGeneration().value("max_new_tokens", std::int64_t{1024});
  request.count = bridge_->tokenCounter();
  const bool hadDocuments = !request.documents.empty();
  knowledge_->assemble(std::move(request), [this, message = std::move(message), then = std::move(then),
                                            hadDocuments](const AssemblyResult& result) mutable {
    const knowledge::AssembledContext& c = result.context;
    if (!result.error.isEmpty())
      emit noticeOccurred(tr("The knowledge folders cannot be searched: %1").arg(result.error));
    if (!c.shortened.empty()) {
      QStringList names;
      for (const auto& n : c.shortened) names << qs(n);
      emit noticeOccurred(tr("%1 did not fit the model's context whole: the parts that best match the question "
                             "were sent.")
                              .arg(names.join(QStringLiteral(", "))));
    } else if (hadDocuments && c.citations.empty()) {
      emit noticeOccurred(tr("The attached documents do not fit what is left of the model's context (%1 tokens); "
                             "they are saved with the message but were not sent.")
                              .arg(result.budget));
    }
    message.context = c.text;
    message.sources = nlohmann::json::parse(knowledge::citations_to_json(c.citations), nullptr, false);
    if (!message.sources.is_array()) message.sources = nlohmann::json::array();
    then(std::move(message));
  });
}

void ChatController::storeUserMessage(const storage::NewMessage& message, const QStringList& pendingShas) {
  store_->add_message(message, onGui<storage::Message>([this, pendingShas](const auto& r) {
                        for (const auto& sha : pendingShas) attachments_->remove_pending(sha);
                        if (!r.is_ok()) {
                          setSending(false);
                          return failed(tr("The message cannot be saved"), r.error());
                        }
                        afterUserMessage(r.value());
                      }));
}

void ChatController::afterUserMessage(const storage::Message& message) {
  if (message.conversation_id == currentId_) messages_->add(message);
  emit messageStored(message.id);
  refreshConversations();
  if (hasImages(message) && !models_->acceptsImages()) {
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
                          ContextMessage c{{storage::to_string(m.role), promptContent(m), m.reasoning}, {}};
                          if (models_->acceptsImages())
                            for (const auto& a : m.attachments)
                              if (!is_document_mime(qs(a.mime_type)))
                                c.images.push_back({qs(a.mime_type), [source = attachments_, sha = qs(a.sha256)]() {
                                                      return source->bytes(sha);
                                                    }});
                          context.push_back(std::move(c));
                        }
                        // A conversation with its own system prompt sends that one, in place of
                        // the system message it started with (none when it is empty).
                        if (begun.conversation_id == currentId_ && currentSettings_.contains(kGenerationKey)) {
                          const std::string system = effectiveGeneration().value("system_prompt", std::string());
                          const auto first = std::find_if(context.begin(), context.end(), [](const auto& c) {
                            return c.message.role == "system";
                          });
                          if (first != context.end() && system.empty())
                            context.erase(first);
                          else if (first != context.end())
                            first->message.content = system;
                          else if (!system.empty())
                            context.insert(context.begin(), ContextMessage{{"system", system, {}}, {}});
                        }
                        GenerationParams params = generationParams();
                        params.seed = static_cast<std::uint64_t>(begun.id) * 0x9E3779B97F4A7C15ull;
                        params.overflow = parse_context_overflow(contextOverflow().toStdString())
                                              .value_or(parse_context_overflow(settings_->contextOverflow().toStdString())
                                                            .value_or(ContextOverflow::truncate_middle));
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
  setPrefill(0, 0);
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
  end.stats.stop_reason = outcome.reason.toStdString();
  if (outcome.stats.context_tokens > 0 || outcome.stats.generated_tokens > 0) {
    end.stats.prompt_tokens = outcome.stats.context_tokens;
    end.stats.completion_tokens = outcome.stats.generated_tokens;
    if (outcome.stats.generated_tokens > 0) {
      end.stats.ttft_ms = outcome.stats.time_to_first_token_ms;
      end.stats.tokens_per_second = outcome.stats.decode_tokens_per_second;
    }
  }
  const qint64 id = replyId_;
  setPrefill(0, 0);
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
  if (user && hasImages(*user) && !models_->acceptsImages()) {
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
  // The edit keeps the original's images and documents: read them in one store job, then
  // assemble the edited question's context as for a new message.
  store_->run<storage::NewMessage>(
      [messageId, content, model](storage::HistoryDb& db) -> storage::StoreResult<storage::NewMessage> {
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
        return edited;
      },
      onGui<storage::NewMessage>([this](const auto& r) {
        if (!r.is_ok()) {
          setSending(false);
          return failed(tr("The edited message cannot be saved"), r.error());
        }
        std::vector<std::pair<std::string, std::string>> documents;
        for (const auto& a : r.value().attachments)
          if (is_document_mime(qs(a.mime_type))) documents.emplace_back(a.file_name, a.data);
        withKnowledge(r.value(), std::move(documents),
                      [this](storage::NewMessage ready) { storeUserMessage(ready, {}); });
      }));
}

void ChatController::switchBranch(qint64 messageId, int delta) { messages_->switchBranch(messageId, delta); }

void ChatController::editMessage(qint64 messageId, const QString& text) {
  if (generating()) {
    emit errorOccurred(tr("Stop the reply before editing a message."));
    return;
  }
  if (text.trimmed().isEmpty()) {
    emit errorOccurred(tr("A message cannot be empty: delete it instead."));
    return;
  }
  const qint64 conversation = currentId_;
  store_->edit_message(messageId, text.toStdString(),
                       onGui<storage::Ok>([this, messageId, conversation](const auto& r) {
                         if (!r.is_ok()) return failed(tr("The message cannot be saved"), r.error());
                         if (currentId_ == conversation) openConversation(conversation, messageId);
                         emit messageEdited(messageId);
                       }));
}

void ChatController::deleteMessage(qint64 messageId) {
  if (generating()) {
    emit errorOccurred(tr("Stop the reply before deleting a message."));
    return;
  }
  const qint64 conversation = currentId_;
  store_->delete_message(messageId, onGui<storage::Ok>([this, messageId, conversation](const auto& r) {
                           if (!r.is_ok()) return failed(tr("The message cannot be deleted"), r.error());
                           if (currentId_ == conversation) openConversation(conversation);
                           refreshConversations();
                           emit messageDeleted(messageId);
                         }));
}

QString ChatController::prefillText() const {
  if (prefillTotal_ <= 0) return {};
  const QLocale locale;
  return tr("Reading the prompt: %1 / %2 tokens (%3%)")
      .arg(locale.toString(prefillDone_), locale.toString(prefillTotal_))
      .arg(prefillDone_ * 100 / prefillTotal_);
}

void ChatController::setPrefill(qint64 done, qint64 total) {
  if (done == prefillDone_ && total == prefillTotal_) return;
  prefillDone_ = done;
  prefillTotal_ = total;
  emit prefillChanged();
}

}  // namespace day0::app
