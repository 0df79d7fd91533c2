#include "gui/app_controller.h"

#include <unistd.h>

#include <QDir>
#include <QSettings>
#include <QFileInfo>
#include <QStandardPaths>
#include <fstream>

#include "bridge/engine_bridge.h"
#include "day0/devices.h"
#include "day0/version.h"
#include "gui/app_settings.h"
#include "gui/hub_controller.h"
#include "gui/chat_controller.h"
#include "gui/data_folder.h"
#include "gui/image_attachments.h"
#include "gui/user_path.h"
#include "gui/knowledge_controller.h"
#include "gui/model_manager.h"
#include "gui/server_controller.h"

namespace day0::app {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Resident memory of this process, in bytes.
qint64 resident_bytes() {
  std::ifstream in("/proc/self/statm");
  long long pages_total = 0, pages_resident = 0;
  in >> pages_total >> pages_resident;
  return pages_resident * static_cast<qint64>(sysconf(_SC_PAGESIZE));
}

}  // namespace

AppPaths AppController::defaultPaths() {
  AppPaths paths;
  QString config = qEnvironmentVariable("XDG_CONFIG_HOME");
  if (config.isEmpty()) config = QDir::homePath() + QStringLiteral("/.config");
  paths.settingsFile = config + QStringLiteral("/day0/day0.ini");
  paths.dataFolder = AppSettings::storedDataFolder(paths.settingsFile);
  return paths;
}

AppController::AppController(const AppPaths& paths, QObject* parent) : QObject(parent) {
  const BuildInfo build = build_info();
  version_ = qs(build.version);
  buildSummary_ = QStringLiteral("%1 build, CUDA %2")
                      .arg(qs(build.build_type), build.cuda ? QStringLiteral("on") : QStringLiteral("off"));
  const DeviceReport report = discover_devices();
  gpuAvailable_ = !report.gpus.empty();
  gpuProblem_ = qs(report.gpu_problem);
  for (const auto& line : describe_devices(report)) devices_ << qs(line);
  deviceChoices_.append(QVariantMap{
      {QStringLiteral("id"), QStringLiteral("cpu")},
      {QStringLiteral("label"), tr("CPU — %1, %2 threads").arg(qs(report.cpu.name)).arg(report.cpu.threads)}});
  for (const auto& g : report.gpus) {
    deviceChoices_.append(
        QVariantMap{{QStringLiteral("id"), QStringLiteral("cuda:%1").arg(g.index)},
                    {QStringLiteral("label"),
                     tr("GPU %1 — %2, %3")
                         .arg(g.index)
                         .arg(qs(g.name), ModelManager::formatBytes(static_cast<double>(g.total_memory)))}});
  }

  // A move of the data folder asked for in the Settings happens now, before the databases open.
  QString dataFolder = paths.dataFolder;
  QString moveNotice, moveError;
  {
    QSettings stored(paths.settingsFile, QSettings::IniFormat);
    const QString from = stored.value(QStringLiteral("data/moveFrom")).toString();
    if (!from.isEmpty() && QDir::cleanPath(from) != QDir::cleanPath(dataFolder) &&
        QDir::cleanPath(stored.value(QStringLiteral("data/folder")).toString()) == QDir::cleanPath(dataFolder)) {
      if (folderHasHistory(dataFolder)) {
        moveNotice = tr("%1 already holds a history: Day0 uses it; the one in %2 stays there.").arg(dataFolder, from);
      } else if (const QString why = moveDataFolder(from, dataFolder); !why.isEmpty()) {
        moveError = tr("The history could not be moved to %1 (%2): Day0 keeps using %3.").arg(dataFolder, why, from);
        dataFolder = from;
        stored.setValue(QStringLiteral("data/folder"), from);
      } else {
        moveNotice = tr("Moved the history from %1 to %2.").arg(from, dataFolder);
      }
    }
    if (stored.contains(QStringLiteral("data/moveFrom"))) stored.remove(QStringLiteral("data/moveFrom"));
  }
  AppPaths effective = paths;
  effective.dataFolder = dataFolder;
  QDir().mkpath(effective.dataFolder);
  QDir().mkpath(QFileInfo(effective.settingsFile).absolutePath());
  settings_ = new AppSettings(effective.settingsFile, effective.dataFolder, this);
  bridge_ = std::make_unique<EngineBridge>();
  models_ = new ModelManager(bridge_.get(), settings_, this);
  models_->setDeviceChoices(deviceChoices_);
  attachments_ = std::make_shared<AttachmentSource>();
  chat_ = new ChatController(bridge_.get(), models_, settings_, effective.dataFolder + QStringLiteral("/history.db"),
                             attachments_, this);
  knowledge_ = new KnowledgeController(effective.dataFolder + QStringLiteral("/knowledge.db"), this);
  chat_->setKnowledge(knowledge_);
  server_ = new ServerController(bridge_.get(), settings_, this);
  hub_ = new HubController(models_, this);

  // Each part's messages, and what makes them stale.
  const auto from = [this](Source source, bool error) {
    return [this, source, error](const QString& message) { showFrom(source, message, error); };
  };
  connect(knowledge_, &KnowledgeController::errorOccurred, this, from(Source::knowledge, true));
  connect(knowledge_, &KnowledgeController::noticeOccurred, this, from(Source::knowledge, false));
  connect(models_, &ModelManager::errorOccurred, this, from(Source::models, true));
  connect(models_, &ModelManager::noticeOccurred, this, from(Source::models, false));
  connect(server_, &ServerController::errorOccurred, this, from(Source::server, true));
  connect(chat_, &ChatController::errorOccurred, this, from(Source::chat, true));
  connect(chat_, &ChatController::noticeOccurred, this, from(Source::chat, false));
  // A model that loads ends the model's errors, and the chat's (no model, a failed reply).
  connect(models_, &ModelManager::modelReady, this, [this]() {
    clearFrom(Source::models);
    clearFrom(Source::chat);
  });
  // A notice about the model (where it runs, why) goes with it.
  connect(models_, &ModelManager::loadStateChanged, this, [this]() {
    if (!models_->loaded() && !models_->loading() && noticeSource_ == Source::models) dismissNotice();
  });
  connect(chat_, &ChatController::replyFinished, this, [this](qint64, bool ok) {
    if (ok) clearFrom(Source::chat);
  });
  connect(server_, &ServerController::stateChanged, this, [this]() {
    if (server_->running()) clearFrom(Source::server);
  });
  connect(knowledge_, &KnowledgeController::folderIndexed, this, [this](qint64, bool ok) {
    if (ok) clearFrom(Source::knowledge);
  });
  connect(bridge_.get(), &EngineBridge::statsChanged, this, &AppController::statsChanged);
  connect(models_, &ModelManager::loadStateChanged, this, &AppController::statsChanged);
  if (!moveError.isEmpty()) showFrom(Source::other, moveError, true);
  if (!moveNotice.isEmpty()) showFrom(Source::other, moveNotice, false);
  memoryTimer_.setInterval(2000);
  connect(&memoryTimer_, &QTimer::timeout, this, &AppController::updateMemory);
  memoryTimer_.start();
  updateMemory();
}

AppController::~AppController() {
  // The server's clients are cancelled and the chat stores what is streaming before the engine goes.
  delete server_;
  server_ = nullptr;
  delete hub_;  // a download in flight stops; its .part files stay
  hub_ = nullptr;
  delete chat_;
  chat_ = nullptr;
  delete knowledge_;
  knowledge_ = nullptr;
  bridge_.reset();
}

QObject* AppController::settingsObject() const { return settings_; }
QObject* AppController::modelsObject() const { return models_; }
QObject* AppController::chatObject() const { return chat_; }
QObject* AppController::serverObject() const { return server_; }
QObject* AppController::hubObject() const { return hub_; }
QObject* AppController::knowledgeObject() const { return knowledge_; }
double AppController::tokensPerSecond() const { return bridge_->tokensPerSecond(); }
double AppController::timeToFirstTokenMs() const { return bridge_->timeToFirstTokenMs(); }
QString AppController::expertText() const { return bridge_->expertText(); }
qint64 AppController::contextUsed() const { return bridge_->contextUsed(); }
qint64 AppController::contextTotal() const { return bridge_->contextTotal(); }

void AppController::start(const QString& model) {
  const bool firstRun = settings_->firstRun();
  settings_->setFirstRunDone();
  if (!model.isEmpty()) {
    models_->load(QFileInfo(model).absoluteFilePath());
    return;
  }
  if (firstRun) {
    if (!models_->demoModelPath().isEmpty()) models_->load(models_->demoModelPath());
    return;
  }
  const QStringList recent = settings_->recentModels();
  if (recent.isEmpty()) return;
  // A remote model used last is connected again; a folder only when it is still there.
  if (!recent.first().startsWith(u'/') ? !models_->remoteEndpoint(recent.first()).isEmpty()
                                       : QFileInfo::exists(recent.first() + QStringLiteral("/config.json")))
    models_->load(recent.first());
}

void AppController::showError(const QString& message) { showFrom(Source::other, message, true); }

void AppController::showNotice(const QString& message) { showFrom(Source::other, message, false); }

QVariantMap AppController::checkDataFolder(const QString& path) const {
  const DataFolderCheck c = day0::app::checkDataFolder(localPathFromUser(path), settings_->activeDataFolder());
  return {{QStringLiteral("state"), c.state}, {QStringLiteral("message"), c.message}, {QStringLiteral("path"), c.path}};
}

bool AppController::changeDataFolder(const QString& path, bool moveHistory) {
  const DataFolderCheck c = day0::app::checkDataFolder(localPathFromUser(path), settings_->activeDataFolder());
  if (c.state == QLatin1String("invalid")) {
    showFrom(Source::other, c.message, true);
    return false;
  }
  settings_->setDataFolder(c.path);
  settings_->setPendingMove(moveHistory && c.state == QLatin1String("empty") ? settings_->activeDataFolder() : QString());
  if (c.state != QLatin1String("same"))
    showFrom(Source::other,
             moveHistory && c.state == QLatin1String("empty")
                 ? tr("Day0 moves the history to %1 when it starts next.").arg(c.path)
                 : tr("Day0 uses the history in %1 from its next start.").arg(c.path),
             false);
  return true;
}

void AppController::showFrom(Source source, const QString& message, bool error) {
  QString& shown = error ? errorMessage_ : noticeMessage_;
  (error ? errorSource_ : noticeSource_) = source;
  if (shown == message) return;
  shown = message;
  emit bannerChanged();
}

void AppController::clearFrom(Source source) {
  if (errorSource_ == source) dismissError();
}

void AppController::dismissError() {
  if (errorMessage_.isEmpty()) return;
  errorMessage_.clear();
  emit bannerChanged();
}

void AppController::dismissNotice() {
  if (noticeMessage_.isEmpty()) return;
  noticeMessage_.clear();
  emit bannerChanged();
}

void AppController::updateMemory() {
  const QString text = ModelManager::formatBytes(static_cast<double>(resident_bytes()));
  if (text == memoryText_) return;
  memoryText_ = text;
  emit memoryChanged();
}

}  // namespace day0::app
