#include "gui/chat_controller.h"

#include <QBuffer>
#include <QClipboard>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QLocale>
#include <QMetaObject>
#include <QMimeData>
#include <QPointer>
#include <QQuickTextDocument>
#include <QSaveFile>
#include <QStandardPaths>
#include <QThreadPool>
#include <algorithm>
#include <cmath>
#include <variant>

#include "bridge/engine_bridge.h"
#include "gui/app_settings.h"
#include "gui/conversation_list_model.h"
#include "gui/knowledge_controller.h"
#include "gui/markdown_blocks.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"
#include "gui/source_opener.h"
#include "gui/user_path.h"
#include "knowledge/context.h"
#include "storage/statement.h"

namespace day0::app {
namespace {

constexpr int kMaxImagesPerMessage = 8;
constexpr int kMaxDocumentsPerMessage = 10;
// Documents larger than this are read and checked on a pool thread, not the GUI thread.
constexpr qsizetype kReadInBackgroundBytes = 2 << 20;
constexpr int kUndoMs = 8000;
// Pasted text this long becomes an attached document rather than text in the composer.
constexpr int kLongPasteChars = 10000;
// A model that names no context window gets this much for its knowledge budget.
constexpr qint64 kFallbackContextWindow = 8192;
constexpr const char* kFoldersKey = "knowledge_folders";
constexpr const char* kWholeKey = "knowledge_whole_folders";
constexpr const char* kOverflowKey = "context_overflow";

QString qs(const std::string& s) { return QString::fromStdString(s); }

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


constexpr const char* kGenerationKey = "generation";

// The chat's generation settings: their name in QML, in the stored JSON, and their range.
struct GenerationField {
  const char* qml;
  const char* json;
  enum Kind { text, real, integer, strings } kind;
  double min = 0, max = 0;
};
constexpr GenerationField kGenerationFields[] = {
    {"systemPrompt", "system_prompt", GenerationField::text},
    {"temperature", "temperature", GenerationField::real, 0.0, 2.0},
    {"topP", "top_p", GenerationField::real, 0.0, 1.0},
    {"topK", "top_k", GenerationField::integer, 0, 1000},
    {"minP", "min_p", GenerationField::real, 0.0, 1.0},
    {"repetitionPenalty", "repetition_penalty", GenerationField::real, 0.5, 2.0},
    {"maxNewTokens", "max_new_tokens", GenerationField::integer, 1, 131072},
    {"stopStrings", "stop", GenerationField::strings},
};
constexpr int kMaxSystemPromptChars = 100000;

const GenerationField* fieldByQml(const QString& name) {
  for (const auto& f : kGenerationFields)
    if (name == QLatin1String(f.qml)) return &f;
  return nullptr;
}

// `value` as the field stores it, or why it cannot be.
struct Refusal {
  QString why;
};

std::variant<nlohmann::json, Refusal> checkField(const GenerationField& f, const nlohmann::json& value) {
  switch (f.kind) {
    case GenerationField::text:
      if (!value.is_string()) return Refusal{QObject::tr("%1 must be text.").arg(QLatin1String(f.qml))};
      if (QString::fromStdString(value.get<std::string>()).size() > kMaxSystemPromptChars)
        return Refusal{QObject::tr("The system prompt is longer than %1 characters.").arg(kMaxSystemPromptChars)};
      return value;
    case GenerationField::real:
    case GenerationField::integer: {
      if (!value.is_number()) return Refusal{QObject::tr("%1 must be a number.").arg(QLatin1String(f.qml))};
      const double v = value.get<double>();
      if (!std::isfinite(v) || v < f.min || v > f.max || (f.kind == GenerationField::integer && v != std::floor(v)))
        return Refusal{QObject::tr("%1 must be %2 between %3 and %4, not %5.")
            .arg(QLatin1String(f.qml), f.kind == GenerationField::integer ? QObject::tr("a whole number")
                                                                          : QObject::tr("a number"))
            .arg(f.min)
            .arg(f.max)
            .arg(v)};
      return f.kind == GenerationField::integer ? nlohmann::json(static_cast<std::int64_t>(v)) : nlohmann::json(v);
    }
    case GenerationField::strings: {
      if (!value.is_array()) return Refusal{QObject::tr("The stop strings must be a list of texts.")};
      QStringList list;
      for (const auto& item : value) {
        if (!item.is_string()) return Refusal{QObject::tr("The stop strings must be a list of texts.")};
        const QString text = QString::fromStdString(item.get<std::string>());
        if (text.size() > AppSettings::kMaxStopStringChars)
          return Refusal{QObject::tr("A stop string may have up to %1 characters.").arg(AppSettings::kMaxStopStringChars)};
        list << text;
      }
      list = AppSettings::cleanStopStrings(list);
      if (value.size() > static_cast<std::size_t>(AppSettings::kMaxStopStrings) &&
          list.size() == AppSettings::kMaxStopStrings)
        return Refusal{QObject::tr("At most %1 stop strings.").arg(AppSettings::kMaxStopStrings)};
      nlohmann::json out = nlohmann::json::array();
      for (const QString& t : list) out.push_back(t.toStdString());
      return out;
    }
  }
  return Refusal{QObject::tr("unknown setting")};
}

nlohmann::json toJson(const QVariant& v) {
  switch (v.typeId()) {
    case QMetaType::Bool:
      return v.toBool();
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
      return v.toLongLong();
    case QMetaType::Double:
    case QMetaType::Float:
      return v.toDouble();
    case QMetaType::QString:
      return v.toString().toStdString();
    case QMetaType::QStringList:
    case QMetaType::QVariantList: {
      nlohmann::json a = nlohmann::json::array();
      for (const QVariant& item : v.toList()) a.push_back(toJson(item));
      return a;
    }
    default:
      break;
  }
  if (v.canConvert<QVariantList>() && !v.canConvert<QString>()) return toJson(QVariant(v.toList()));
  if (v.canConvert<QString>()) return v.toString().toStdString();
  return nullptr;
}

QVariant toVariant(const nlohmann::json& j) {
  if (j.is_string()) return QString::fromStdString(j.get<std::string>());
  if (j.is_number_integer()) return QVariant::fromValue<qint64>(j.get<std::int64_t>());
  if (j.is_number()) return j.get<double>();
  if (j.is_array()) {
    QStringList list;
    for (const auto& item : j)
      if (item.is_string()) list << QString::fromStdString(item.get<std::string>());
    return list;
  }
  return {};
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

QVariantList ChatController::pendingDocuments() const {
  QVariantList list;
  for (const auto& d : pendingDocuments_)
    list.append(document_for_qml(d.file_name, d.mime_type, d.data.size(), d.sha256));
  return list;
}

int ChatController::attachData(const QByteArray& data, const QString& fileName) {
  return looks_like_image(data) ? attachImage(data, fileName) : attachDocument(data, fileName);
}

int ChatController::attachImage(const QByteArray& data, const QString& fileName) {
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

int ChatController::attachDocument(const QByteArray& data, const QString& fileName) {
  if (static_cast<int>(pendingDocuments_.size()) + readingDocuments_ >= kMaxDocumentsPerMessage) {
    emit errorOccurred(tr("A message can carry up to %1 documents.").arg(kMaxDocumentsPerMessage));
    return 0;
  }
  if (data.size() <= kReadInBackgroundBytes) return addDocument(validate_document(data, fileName));
  // A large file (a long PDF takes seconds) is read on a pool thread; its chip appears when
  // it has been checked. The QPointer drops the result when the chat is gone by then.
  ++readingDocuments_;
  emit readingDocumentsChanged();
  QThreadPool::globalInstance()->start([chat = QPointer<ChatController>(this), data, fileName]() {
    ValidatedDocument document = validate_document(data, fileName);
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [chat, document = std::move(document)]() mutable {
          if (!chat) return;
          --chat->readingDocuments_;
          emit chat->readingDocumentsChanged();
          chat->addDocument(std::move(document));
        },
        Qt::QueuedConnection);
  });
  return 0;
}

int ChatController::addDocument(ValidatedDocument document) {
  if (!document.error.isEmpty()) {
    emit errorOccurred(document.error);
    return 0;
  }
  for (const auto& d : pendingDocuments_)
    if (d.sha256 == document.sha256) return 0;
  pendingDocuments_.push_back(std::move(document));
  emit pendingAttachmentsChanged();
  return 1;
}

int ChatController::attachUrls(const QVariantList& urls) {
  int added = 0;
  const ImageLimits imageLimits;
  const DocumentAttachmentLimits documentLimits;
  const qint64 maxBytes =
      std::max({imageLimits.max_bytes, documentLimits.max_pdf_bytes, documentLimits.max_text_bytes});
  for (const QVariant& v : urls) {
    const QString path = localPathFromUser(v);
    if (path.isEmpty()) {
      emit errorOccurred(tr("Type the path of a file to attach."));
      continue;
    }
    const QFileInfo info(path);
    if (info.isDir()) {
      emit errorOccurred(tr("%1 is a folder: add it under Knowledge (in the sidebar) to ask about its files.")
                             .arg(info.fileName().isEmpty() ? path : info.fileName()));
      continue;
    }
    if (!info.isFile()) {
      emit errorOccurred(
          tr("%1 is not a file that can be attached.").arg(info.fileName().isEmpty() ? path : info.fileName()));
      continue;
    }
    if (info.size() > maxBytes) {
      emit errorOccurred(tr("%1 is %2; files up to %3 can be attached.")
                             .arg(info.fileName(), QLocale::c().formattedDataSize(info.size()),
                                  QLocale::c().formattedDataSize(maxBytes)));
      continue;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
      emit errorOccurred(tr("%1 cannot be read: %2").arg(info.fileName(), file.errorString()));
      continue;
    }
    added += attachData(file.read(maxBytes + 1), info.fileName());
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
    if (!urls.isEmpty()) {
      attachUrls(urls);
      return true;
    }
  }
  if (mime->hasText()) {
    const QString text = mime->text();
    // Files copied in a file manager can arrive as text: one file:// URL a line.
    const QStringList lines = text.split(u'\n', Qt::SkipEmptyParts);
    QVariantList urls;
    for (const QString& line : lines) {
      const QUrl url(line.trimmed());
      if (!url.isLocalFile()) {
        urls.clear();
        break;
      }
      urls << url;
    }
    if (!urls.isEmpty()) {
      attachUrls(urls);
      return true;
    }
    if (text.size() >= kLongPasteChars) {
      if (attachDocument(text.toUtf8(), tr("pasted text.txt")) > 0)
        emit noticeOccurred(tr("The long text you pasted is attached as a document."));
      return true;
    }
  }
  return false;
}

void ChatController::removeAttachment(int index) {
  if (index < 0 || index >= static_cast<int>(pending_.size())) return;
  attachments_->remove_pending(pending_[static_cast<std::size_t>(index)].sha256);
  pending_.erase(pending_.begin() + index);
  emit pendingAttachmentsChanged();
}

void ChatController::removeDocument(int index) {
  if (index < 0 || index >= static_cast<int>(pendingDocuments_.size())) return;
  pendingDocuments_.erase(pendingDocuments_.begin() + index);
  emit pendingAttachmentsChanged();
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

nlohmann::json ChatController::withKnowledgeSettings(nlohmann::json settings) const {
  if (!settings.is_object()) settings = nlohmann::json::object();
  nlohmann::json ids = nlohmann::json::array();
  for (const qint64 id : enabledFolders_) ids.push_back(id);
  settings[kFoldersKey] = ids;
  settings[kWholeKey] = wholeFolders_;
  return settings;
}

QString ChatController::contextOverflow() const {
  const auto it = currentSettings_.find(kOverflowKey);
  if (it == currentSettings_.end() || !it->is_string()) return {};
  const auto policy = parse_context_overflow(it->get<std::string>());
  return policy ? QString::fromLatin1(context_overflow_name(*policy)) : QString();
}

void ChatController::setContextOverflow(const QString& value) {
  const auto policy = parse_context_overflow(value.toStdString());
  if (!value.isEmpty() && !policy) return;
  if (contextOverflow() == value) return;
  if (policy)
    currentSettings_[kOverflowKey] = context_overflow_name(*policy);
  else
    currentSettings_.erase(std::string(kOverflowKey));
  emit contextOverflowChanged();
  if (currentId_ == 0) return;  // a new conversation takes it when it is created
  storage::ConversationPatch patch;
  patch.settings = currentSettings_;
  store_->update_conversation(currentId_, patch, onGui<storage::Ok>([this](const auto& r) {
                                if (!r.is_ok()) failed(tr("The chat's context choice cannot be saved"), r.error());
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

void ChatController::applyConversationSettings(const nlohmann::json& settings) {
  const QString overflowBefore = contextOverflow();
  currentSettings_ = settings.is_object() ? settings : nlohmann::json::object();
  if (contextOverflow() != overflowBefore) emit contextOverflowChanged();
  emit chatSettingsChanged();
  QList<qint64> folders;
  if (const auto it = currentSettings_.find(kFoldersKey); it != currentSettings_.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_number_integer() && v.get<std::int64_t>() > 0 && !folders.contains(v.get<std::int64_t>()))
        folders.append(v.get<std::int64_t>());
  const auto whole = currentSettings_.find(kWholeKey);
  const bool wholeFolders = whole != currentSettings_.end() && whole->is_boolean() && whole->get<bool>();
  if (folders == enabledFolders_ && wholeFolders == wholeFolders_) return;
  enabledFolders_ = folders;
  wholeFolders_ = wholeFolders;
  emit knowledgeChanged();
}

void ChatController::saveKnowledgeSettings() {
  currentSettings_ = withKnowledgeSettings(currentSettings_);
  saveConversationSettings(tr("The knowledge choice cannot be saved"));
}

void ChatController::saveConversationSettings(const QString& what) {
  if (currentId_ == 0) return;  // a new conversation takes them when it is created
  storage::ConversationPatch patch;
  patch.settings = currentSettings_;
  store_->update_conversation(currentId_, patch, onGui<storage::Ok>([this, what](const auto& r) {
                                if (!r.is_ok()) failed(what, r.error());
                              }));
}

nlohmann::json ChatController::defaultGeneration() const {
  nlohmann::json g = nlohmann::json::object();
  g["system_prompt"] = settings_->systemPrompt().trimmed().toStdString();
  g["temperature"] = settings_->temperature();
  g["top_p"] = settings_->topP();
  g["top_k"] = settings_->topK();
  g["min_p"] = settings_->minP();
  g["repetition_penalty"] = settings_->repetitionPenalty();
  g["max_new_tokens"] = settings_->maxNewTokens();
  nlohmann::json stop = nlohmann::json::array();
  for (const QString& t : settings_->stopStrings()) stop.push_back(t.toStdString());
  g["stop"] = stop;
  return g;
}

nlohmann::json ChatController::effectiveGeneration() const {
  nlohmann::json g = defaultGeneration();
  const auto own = currentSettings_.find(kGenerationKey);
  if (own == currentSettings_.end() || !own->is_object()) return g;
  // Values stored by another version or edited by hand are used only when valid.
  for (const auto& f : kGenerationFields) {
    const auto it = own->find(f.json);
    if (it == own->end()) continue;
    auto checked = checkField(f, *it);
    if (auto* value = std::get_if<nlohmann::json>(&checked)) g[f.json] = *value;
  }
  return g;
}

QVariantMap ChatController::chatSettings() const {
  const nlohmann::json g = effectiveGeneration();
  QVariantMap map;
  for (const auto& f : kGenerationFields) map.insert(QLatin1String(f.qml), toVariant(g[f.json]));
  map.insert(QStringLiteral("custom"), currentSettings_.contains(kGenerationKey));
  return map;
}

GenerationParams ChatController::generationParams() const {
  const nlohmann::json g = effectiveGeneration();
  GenerationParams p;
  p.temperature = g["temperature"].get<float>();
  p.top_p = g["top_p"].get<float>();
  p.top_k = g["top_k"].get<int>();
  p.min_p = g["min_p"].get<float>();
  p.repetition_penalty = g["repetition_penalty"].get<float>();
  p.max_new_tokens = g["max_new_tokens"].get<std::int64_t>();
  for (const auto& t : g["stop"]) p.stop_strings.push_back(t.get<std::string>());
  return p;
}

void ChatController::setGeneration(nlohmann::json generation) {
  currentSettings_[kGenerationKey] = std::move(generation);
  emit chatSettingsChanged();
  saveConversationSettings(tr("The chat settings cannot be saved"));
}

bool ChatController::setChatSetting(const QString& key, const QVariant& value) {
  const GenerationField* field = fieldByQml(key);
  if (field == nullptr) {
    emit errorOccurred(tr("There is no chat setting named %1.").arg(key));
    return false;
  }
  nlohmann::json input = toJson(value);
  if (field->kind == GenerationField::strings && input.is_string()) {
    // One stop string a line, as the text field shows them.
    nlohmann::json lines = nlohmann::json::array();
    for (const QString& line : value.toString().split(u'\n', Qt::SkipEmptyParts)) lines.push_back(line.toStdString());
    input = lines;
  }
  if ((field->kind == GenerationField::real || field->kind == GenerationField::integer) && input.is_string()) {
    bool ok = false;
    const double number = QLocale::c().toDouble(value.toString().trimmed(), &ok);
    if (ok) input = number;
  }
  auto checked = checkField(*field, input);
  if (const auto* refusal = std::get_if<Refusal>(&checked)) {
    emit errorOccurred(refusal->why);
    return false;
  }
  nlohmann::json generation = effectiveGeneration();
  if (currentSettings_.contains(kGenerationKey) && generation[field->json] == std::get<nlohmann::json>(checked))
    return true;
  generation[field->json] = std::get<nlohmann::json>(checked);
  setGeneration(std::move(generation));
  return true;
}

void ChatController::resetChatSettings() { setGeneration(defaultGeneration()); }

void ChatController::refreshPresets() {
  store_->run<std::vector<storage::Preset>>(
      [](storage::HistoryDb& db) { return db.presets(); },
      onGui<std::vector<storage::Preset>>([this](const auto& r) {
        if (!r.is_ok()) return failed(tr("The presets cannot be read"), r.error());
        QStringList names;
        for (const auto& p : r.value()) names << qs(p.name);
        if (names == presets_) return;
        presets_ = names;
        emit presetsChanged();
      }));
}

void ChatController::savePreset(const QString& rawName) {
  const QString name = rawName.simplified();
  if (name.isEmpty()) {
    emit errorOccurred(tr("Give the preset a name."));
    return;
  }
  if (name.size() > 100) {
    emit errorOccurred(tr("A preset's name may have up to 100 characters."));
    return;
  }
  const std::string n = name.toStdString();
  const nlohmann::json generation = effectiveGeneration();
  store_->run<storage::Ok>([n, generation](storage::HistoryDb& db) -> storage::StoreStatus {
    return db.save_preset(n, generation);
  }, onGui<storage::Ok>([this, name](const auto& r) {
    if (!r.is_ok()) return failed(tr("The preset cannot be saved"), r.error());
    emit noticeOccurred(tr("Saved the preset “%1”.").arg(name));
    refreshPresets();
  }));
}

void ChatController::applyPreset(const QString& name) {
  const std::string n = name.toStdString();
  store_->run<std::vector<storage::Preset>>(
      [](storage::HistoryDb& db) { return db.presets(); },
      onGui<std::vector<storage::Preset>>([this, n, name](const auto& r) {
        if (!r.is_ok()) return failed(tr("The presets cannot be read"), r.error());
        const auto it = std::find_if(r.value().begin(), r.value().end(), [&](const auto& p) { return p.name == n; });
        if (it == r.value().end()) {
          emit errorOccurred(tr("There is no preset named “%1”.").arg(name));
          return refreshPresets();
        }
        // Valid values of the preset over the defaults: a preset from another version still applies.
        nlohmann::json generation = defaultGeneration();
        for (const auto& f : kGenerationFields)
          if (const auto v = it->settings.find(f.json); v != it->settings.end())
            if (auto checked = checkField(f, *v); std::holds_alternative<nlohmann::json>(checked))
              generation[f.json] = std::get<nlohmann::json>(checked);
        setGeneration(std::move(generation));
        emit presetApplied(name);
      }));
}

void ChatController::deletePreset(const QString& name) {
  const std::string n = name.toStdString();
  store_->run<storage::Ok>([n](storage::HistoryDb& db) -> storage::StoreStatus { return db.delete_preset(n); },
                           onGui<storage::Ok>([this](const auto& r) {
                             if (!r.is_ok()) failed(tr("The preset cannot be deleted"), r.error());
                             refreshPresets();
                           }));
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
