#pragma once
// The root object QML sees: build and device facts, the banner (errors and notices from
// every part; a part's message goes when that part reports the condition gone: a model
// loaded, a reply finished, the server running, a folder indexed), the status-bar figures, and the parts of the app as
// properties: settings, models (the model manager), chat, server (the OpenAI-compatible server switch), knowledge
// (folders indexed for questions), hub (getting a model from the Hugging Face Hub). It owns
// the engine bridge and decides what the first run opens.
#include <QObject>
#include <QVariantMap>
#include <QStringList>
#include <QTimer>
#include <QVariantList>
#include <memory>

namespace day0::app {

class AppSettings;
class AttachmentSource;
class ChatController;
class EngineBridge;
class HubController;
class KnowledgeController;
class ModelManager;
class ServerController;

struct AppPaths {
  QString dataFolder;    // history.db and knowledge.db live here
  QString settingsFile;  // the INI file of AppSettings
};

class AppController : public QObject {
  Q_OBJECT
  Q_PROPERTY(QString version READ version CONSTANT)
  Q_PROPERTY(QString buildSummary READ buildSummary CONSTANT)
  Q_PROPERTY(QStringList devices READ devices CONSTANT)
  Q_PROPERTY(QVariantList deviceChoices READ deviceChoices CONSTANT)
  Q_PROPERTY(bool gpuAvailable READ gpuAvailable CONSTANT)
  Q_PROPERTY(QString gpuProblem READ gpuProblem CONSTANT)
  Q_PROPERTY(QObject* settings READ settingsObject CONSTANT)
  Q_PROPERTY(QObject* models READ modelsObject CONSTANT)
  Q_PROPERTY(QObject* chat READ chatObject CONSTANT)
  Q_PROPERTY(QObject* server READ serverObject CONSTANT)
  Q_PROPERTY(QObject* knowledge READ knowledgeObject CONSTANT)
  Q_PROPERTY(QObject* hub READ hubObject CONSTANT)
  Q_PROPERTY(QString errorMessage READ errorMessage NOTIFY bannerChanged)
  Q_PROPERTY(QString noticeMessage READ noticeMessage NOTIFY bannerChanged)
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statsChanged)
  Q_PROPERTY(double timeToFirstTokenMs READ timeToFirstTokenMs NOTIFY statsChanged)
  Q_PROPERTY(QString expertText READ expertText NOTIFY statsChanged)
  Q_PROPERTY(qint64 contextUsed READ contextUsed NOTIFY statsChanged)
  Q_PROPERTY(qint64 contextTotal READ contextTotal NOTIFY statsChanged)
  Q_PROPERTY(QString memoryText READ memoryText NOTIFY memoryChanged)

 public:
  explicit AppController(const AppPaths& paths, QObject* parent = nullptr);
  ~AppController() override;

  // What `day0` uses without options: the XDG data folder (or the one the settings name) and
  // the settings file under $XDG_CONFIG_HOME/Day0.
  static AppPaths defaultPaths();

  QString version() const { return version_; }
  QString buildSummary() const { return buildSummary_; }
  QStringList devices() const { return devices_; }
  QVariantList deviceChoices() const { return deviceChoices_; }
  bool gpuAvailable() const { return gpuAvailable_; }
  QString gpuProblem() const { return gpuProblem_; }
  AppSettings* settings() const { return settings_; }
  ModelManager* models() const { return models_; }
  ChatController* chat() const { return chat_; }
  ServerController* server() const { return server_; }
  KnowledgeController* knowledge() const { return knowledge_; }
  QObject* knowledgeObject() const;
  HubController* hub() const { return hub_; }
  QObject* hubObject() const;
  EngineBridge* bridge() const { return bridge_.get(); }
  std::shared_ptr<AttachmentSource> attachmentSource() const { return attachments_; }
  QObject* settingsObject() const;
  QObject* modelsObject() const;
  QObject* chatObject() const;
  QObject* serverObject() const;
  QString errorMessage() const { return errorMessage_; }
  QString noticeMessage() const { return noticeMessage_; }
  double tokensPerSecond() const;
  double timeToFirstTokenMs() const;
  QString expertText() const;
  qint64 contextUsed() const;
  qint64 contextTotal() const;
  QString memoryText() const { return memoryText_; }

  // Opens `model` when given; otherwise on the first run the demo model (the welcome view
  // explains it), later the model used last.
  void start(const QString& model);

  // What choosing `path` as the data folder would do (see data_folder.h): a map with state
  // ("same", "empty", "history", "invalid"), message and path.
  Q_INVOKABLE QVariantMap checkDataFolder(const QString& path) const;
  // Makes `path` the data folder from the next start. With `moveHistory` the history (and the
  // knowledge index) move there at that start, before anything opens them; without it, a
  // history already there is used (the current one stays where it is). False with an error
  // banner when the folder cannot be used.
  Q_INVOKABLE bool changeDataFolder(const QString& path, bool moveHistory);
  Q_INVOKABLE void dismissError();
  Q_INVOKABLE void dismissNotice();
  Q_INVOKABLE void showError(const QString& message);

 signals:
  void bannerChanged();
  void statsChanged();
  void memoryChanged();

 private:
  enum class Source { other, models, chat, server, knowledge };
  void showNotice(const QString& message);
  void showFrom(Source source, const QString& message, bool error);
  void clearFrom(Source source);
  void updateMemory();

  QString version_;
  QString buildSummary_;
  QStringList devices_;
  QVariantList deviceChoices_;
  bool gpuAvailable_ = false;
  QString gpuProblem_;
  std::unique_ptr<EngineBridge> bridge_;
  AppSettings* settings_ = nullptr;
  ModelManager* models_ = nullptr;
  ChatController* chat_ = nullptr;
  ServerController* server_ = nullptr;
  KnowledgeController* knowledge_ = nullptr;
  HubController* hub_ = nullptr;
  std::shared_ptr<AttachmentSource> attachments_;
  QString errorMessage_;
  QString noticeMessage_;
  Source errorSource_ = Source::other;
  Source noticeSource_ = Source::other;
  QString memoryText_;
  QTimer memoryTimer_;
};

}  // namespace day0::app
