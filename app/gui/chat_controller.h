#pragma once
// The chat: the conversation sidebar, the visible branch of the open conversation, the
// composer's pending images and documents, the knowledge folders switched on for the
// conversation, and the life of a reply (stored as it streams). A message sent with documents
// or folders is stored with the context assembled for it (the excerpts and their sources), and
// every later prompt puts that same context before its text. It joins the
// history (storage::HistoryStore, on its own thread) and the engine (EngineBridge): every
// store call returns at once and its result comes back here as a queued call on the GUI
// thread, so the view-models change only on the GUI thread.
#include <QColor>
#include <QList>
#include <QObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTimer>
#include <QUrl>
#include <QStringList>
#include <QVariantList>
#include <QVariantMap>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "gui/document_attachments.h"
#include "gui/image_attachments.h"
#include "storage/history_store.h"

namespace day0::app {

class AppSettings;
class ConversationListModel;
class EngineBridge;
class KnowledgeController;
class MessageListModel;
class ModelManager;
struct GenerationOutcome;
struct GenerationParams;

class ChatController : public QObject {
  Q_OBJECT
  Q_PROPERTY(QObject* conversations READ conversationsObject CONSTANT)
  Q_PROPERTY(QObject* messages READ messagesObject CONSTANT)
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(QVariantList pendingAttachments READ pendingAttachments NOTIFY pendingAttachmentsChanged)
  Q_PROPERTY(QVariantList pendingDocuments READ pendingDocuments NOTIFY pendingAttachmentsChanged)
  // Large documents still being read and checked in the background (send waits for them).
  Q_PROPERTY(int readingDocuments READ readingDocuments NOTIFY readingDocumentsChanged)
  // Ids of the knowledge folders switched on for the open (or the next new) conversation.
  Q_PROPERTY(QVariantList knowledgeFolders READ knowledgeFolders NOTIFY knowledgeChanged)
  // Whether a folder goes into the prompt whole when it fits (otherwise its best chunks).
  Q_PROPERTY(bool wholeFolders READ wholeFolders WRITE setWholeFolders NOTIFY knowledgeChanged)
  Q_PROPERTY(QString searchQuery READ searchQuery WRITE setSearchQuery NOTIFY searchChanged)
  Q_PROPERTY(QString undoText READ undoText NOTIFY undoChanged)
  Q_PROPERTY(QString databasePath READ databasePath CONSTANT)
  // The open conversation's choice when it outgrows the model's context ("truncate-middle",
  // "rolling-window", "stop"), kept in its settings in the history; "" follows Settings.
  Q_PROPERTY(QString contextOverflow READ contextOverflow WRITE setContextOverflow NOTIFY contextOverflowChanged)
  // While the reply's prompt is read: "Reading the prompt: 12,288 / 32,768 tokens (37%)" and its
  // numbers; empty (0) otherwise.
  Q_PROPERTY(QString prefillText READ prefillText NOTIFY prefillChanged)
  Q_PROPERTY(qint64 prefillDone READ prefillDone NOTIFY prefillChanged)
  Q_PROPERTY(qint64 prefillTotal READ prefillTotal NOTIFY prefillChanged)
  // The open (or the next new) conversation's system prompt and sampling, as requests use them:
  // systemPrompt, temperature, topP, topK, minP, repetitionPenalty, maxNewTokens, stopStrings,
  // and custom (whether the conversation has its own values; otherwise the Settings' defaults).
  Q_PROPERTY(QVariantMap chatSettings READ chatSettings NOTIFY chatSettingsChanged)
  // Names of the saved chat settings presets (stored in the history database).
  Q_PROPERTY(QStringList presets READ presets NOTIFY presetsChanged)

 public:
  ChatController(EngineBridge* bridge, ModelManager* models, AppSettings* settings, const QString& databasePath,
                 std::shared_ptr<AttachmentSource> attachments, QObject* parent = nullptr);
  ~ChatController() override;

  ConversationListModel* conversations() const { return conversations_; }
  MessageListModel* messages() const { return messages_; }
  QObject* conversationsObject() const;
  QObject* messagesObject() const;
  qint64 currentConversationId() const { return currentId_; }
  QString currentTitle() const { return currentTitle_; }
  bool generating() const { return sending_ || replyId_ != 0; }
  QVariantList pendingAttachments() const;
  QVariantList pendingDocuments() const;
  int readingDocuments() const { return readingDocuments_; }
  QVariantList knowledgeFolders() const;
  bool wholeFolders() const { return wholeFolders_; }
  void setWholeFolders(bool whole);
  // The knowledge folders and their index; without it messages carry attached documents only.
  void setKnowledge(KnowledgeController* knowledge);
  QString searchQuery() const { return searchQuery_; }
  QString undoText() const { return undoText_; }
  QString databasePath() const { return databasePath_; }
  QString contextOverflow() const;
  void setContextOverflow(const QString& policy);
  QString prefillText() const;
  qint64 prefillDone() const { return prefillDone_; }
  qint64 prefillTotal() const { return prefillTotal_; }
  storage::HistoryStore& store() { return *store_; }
  QVariantMap chatSettings() const;
  QStringList presets() const { return presets_; }
  // What a request of the open conversation sends now (its settings, else the defaults).
  GenerationParams generationParams() const;

  // Sets one of chatSettings' values for the open conversation (stored with it at once, or
  // when a new one is created). False with errorOccurred for an unknown key or an impossible
  // value (nothing changes then).
  Q_INVOKABLE bool setChatSetting(const QString& key, const QVariant& value);
  // The conversation takes the Settings' current defaults.
  Q_INVOKABLE void resetChatSettings();
  // Saves the open conversation's settings as a preset (replacing one of the same name).
  Q_INVOKABLE void savePreset(const QString& name);
  // Gives the open conversation the preset's settings.
  Q_INVOKABLE void applyPreset(const QString& name);
  Q_INVOKABLE void deletePreset(const QString& name);
  Q_INVOKABLE void refreshPresets();

  Q_INVOKABLE void newConversation();
  // Opens a conversation; with `focusMessageId` the branch through that message is shown.
  Q_INVOKABLE void openConversation(qint64 id, qint64 focusMessageId = 0);
  // Sends the text and the pending images as a user message in the open conversation (a new
  // one when none is open) and streams the reply. False when nothing was sent (the composer
  // keeps its text; errorOccurred says why).
  Q_INVOKABLE bool send(const QString& text);
  Q_INVOKABLE void stop();
  // A new reply to the same message, as a new branch (for a user message: a reply to it).
  Q_INVOKABLE void regenerate(qint64 messageId);
  // A new user message beside `messageId` (same parent, same images) and its reply.
  Q_INVOKABLE void editAndResend(qint64 messageId, const QString& text);
  Q_INVOKABLE void switchBranch(qint64 messageId, int delta);
  // Replaces a message's text in the history (an edited reply stays as edited; nothing is
  // generated again). Not while a reply streams.
  Q_INVOKABLE void editMessage(qint64 messageId, const QString& text);
  // Deletes a message and the replies that follow it. Not while a reply streams.
  Q_INVOKABLE void deleteMessage(qint64 messageId);
  // A copy of the conversation (every branch, its attachments), opened when made.
  Q_INVOKABLE void duplicateConversation(qint64 id);
  // Writes the open conversation (every branch) to the file `path` names, as "json" (the
  // history's lossless export, which `day0-cli history import` reads back) or "markdown".
  // False with errorOccurred when nothing is open or the path cannot be a file; else the file
  // is written when the history answers: exported(path) or errorOccurred.
  Q_INVOKABLE bool exportConversation(const QVariant& path, const QString& format);
  // Where an export goes unless the user says otherwise: the documents folder, the title.
  Q_INVOKABLE QString suggestedExportPath(const QString& format) const;
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void setPinned(qint64 id, bool pinned);
  // Hides the conversation at once and deletes it from the history after a few seconds unless
  // undoDelete() comes first.
  Q_INVOKABLE void deleteConversation(qint64 id);
  Q_INVOKABLE void undoDelete();
  void commitPendingDelete();
  void setSearchQuery(const QString& query);
  Q_INVOKABLE void refreshConversations();
  // Conversations written by another program (day0-cli, an import) appear in the list: every
  // `ms` the history's data_version is read, and the list is refreshed when another connection
  // has committed since (the open conversation stays open). 0 stops it; 2000 by default.
  void setExternalCheckInterval(int ms);

  // Validates and adds images and documents (text, Markdown, code, PDF) to the composer;
  // returns how many were added (errorOccurred names each refused file). Documents over 2 MiB
  // are read in the background: they are not counted, and appear (or are refused) later.
  Q_INVOKABLE int attachUrls(const QVariantList& urls);
  int attachData(const QByteArray& data, const QString& fileName);
  // Attaches what the clipboard holds when it is not plain short text: an image, files (also
  // as a list of file URLs in text), or a long text as a document. False when it did nothing
  // (the text field pastes as usual).
  Q_INVOKABLE bool pasteImage();
  Q_INVOKABLE void removeAttachment(int index);
  Q_INVOKABLE void removeDocument(int index);
  Q_INVOKABLE void setFolderEnabled(qint64 folderId, bool enabled);
  // Opens a cited file at its line (or a PDF at its page) with the desktop's program for it.
  Q_INVOKABLE bool openSource(const QString& path, int line, int page);
  // Opens a document stored in the history (written to a private temporary folder first).
  Q_INVOKABLE void openDocument(const QString& sha256, const QString& name, int line = 0, int page = 0);
  Q_INVOKABLE void copyText(const QString& text);
  // Colours the links of a Markdown TextEdit's document (its `textDocument`) with `color`.
  Q_INVOKABLE void styleLinks(QObject* textDocument, const QColor& color);

 signals:
  void currentChanged();
  void generatingChanged();
  void pendingAttachmentsChanged();
  void searchChanged();
  void knowledgeChanged();
  void readingDocumentsChanged();
  void undoChanged();
  void chatSettingsChanged();
  void presetsChanged();
  void presetApplied(const QString& name);
  void errorOccurred(const QString& message);
  void noticeOccurred(const QString& message);
  void conversationsLoaded();
  // The history was changed by another program; the list is being refreshed.
  void externalChange();
  void conversationLoaded(qint64 id);
  void searchFinished();
  void messageStored(qint64 id);
  void replyStarted(qint64 id);
  void replyFinished(qint64 id, bool ok);
  void exported(const QString& path);
  void conversationDuplicated(qint64 id);
  void messageEdited(qint64 id);
  void messageDeleted(qint64 id);
  void contextOverflowChanged();
  // The open conversation's system message was rewritten to follow its system prompt.
  void systemMessageChanged(qint64 conversationId);
  void prefillChanged();
  // Messages of the open conversation left out of the reply's prompt to fit the context (the
  // history keeps them); noticeOccurred says so too.
  void contextTrimmed(qint64 replyId, int droppedMessages);

 private:
  template <typename T>
  storage::HistoryStore::Done<T> onGui(std::function<void(const storage::StoreResult<T>&)> f);
  void ensureConversation(const QString& titleHint, std::function<void(qint64)> then);
  void startReply(qint64 conversationId, qint64 parentId);
  void afterUserMessage(const storage::Message& message);
  // Assembles the knowledge context of `message` (documents, enabled folders) and passes the
  // message with it to `then`; without documents or folders, passes it on at once.
  void withKnowledge(storage::NewMessage message, std::vector<std::pair<std::string, std::string>> documents,
                     std::function<void(storage::NewMessage)> then);
  void storeUserMessage(const storage::NewMessage& message, const QStringList& pendingShas);
  int attachImage(const QByteArray& data, const QString& fileName);
  int attachDocument(const QByteArray& data, const QString& fileName);
  int addDocument(ValidatedDocument document);
  nlohmann::json withKnowledgeSettings(nlohmann::json settings) const;
  void applyConversationSettings(const nlohmann::json& settings);
  void saveKnowledgeSettings();
  // The chat's generation settings over the Settings' defaults, always complete and valid.
  nlohmann::json effectiveGeneration() const;
  nlohmann::json defaultGeneration() const;
  void setGeneration(nlohmann::json generation);
  // Makes the open conversation's stored system message match its system prompt.
  void syncSystemMessage();
  // Reads the conversation's messages into the view again (the branch through `focusMessageId`).
  void reloadMessages(qint64 id, qint64 focusMessageId, std::function<void()> then);
  void saveConversationSettings(const QString& what);
  void onText(quint64 request, const QString& content, const QString& reasoning);
  void onFinished(const GenerationOutcome& outcome);
  void setPrefill(qint64 done, qint64 total);
  void setSending(bool sending);
  void failed(const QString& what, const storage::StoreError& error);
  void checkExternalChanges();

  EngineBridge* bridge_;
  ModelManager* models_;
  AppSettings* settings_;
  QString databasePath_;
  std::shared_ptr<AttachmentSource> attachments_;
  std::unique_ptr<storage::HistoryStore> store_;
  ConversationListModel* conversations_;
  MessageListModel* messages_;

  qint64 currentId_ = 0;
  // The conversation whose messages are still being read after openConversation(): a message sent
  // meanwhile would hang off the wrong parent, so send() waits for them.
  qint64 openingId_ = 0;
  QString currentTitle_;
  bool sending_ = false;
  std::vector<ValidatedImage> pending_;
  std::vector<ValidatedDocument> pendingDocuments_;
  int readingDocuments_ = 0;
  KnowledgeController* knowledge_ = nullptr;
  QList<qint64> enabledFolders_;
  bool wholeFolders_ = false;
  nlohmann::json currentSettings_ = nlohmann::json::object();
  QStringList presets_;
  std::unique_ptr<QTemporaryDir> openedDocuments_;
  QString searchQuery_;

  // The streaming reply.
  quint64 requestId_ = 0;
  qint64 replyId_ = 0;
  qint64 replyConversation_ = 0;
  QString streamContent_, streamReasoning_;
  qint64 prefillDone_ = 0, prefillTotal_ = 0;

  qint64 pendingDelete_ = 0;
  QString undoText_;
  QTimer undoTimer_;
  QTimer externalTimer_;
  std::optional<std::int64_t> dataVersion_;
  bool checkingExternal_ = false;
};

}  // namespace day0::app
