#include "gui/model_manager.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QtConcurrent/QtConcurrentRun>
#include <filesystem>
#include <utility>

#include "bridge/engine_bridge.h"
#include "day0/devices.h"
#include "day0/model_info.h"
#include "gui/app_settings.h"
#include "gui/user_path.h"
#include "remote/remote_client.h"

namespace day0::app {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Memory the model would live in: the chosen GPU's, or the machine's RAM.
// The device a load on `device` would use: a GPU (when found) or the host memory.
struct Target {
  const GpuInfo* gpu = nullptr;
  std::uint64_t memory = 0;
  QString where;
};
Target target_of(const DeviceReport& report, const QString& device) {
  if (device.startsWith(QLatin1String("cuda"))) {
    const int index = device.section(u':', 1).toInt();
    for (const auto& g : report.gpus)
      if (g.index == index) return {&g, g.free_memory, QObject::tr("free on %1").arg(qs(g.name))};
  }
  return {nullptr, report.cpu.memory, QObject::tr("of memory")};
}

// The fit line: on a GPU the memory plan the load will make (weights as the GPU keeps them,
// workspaces, caches for the context); on the CPU the weights against the host's memory.
std::pair<bool, QString> fit_text(const ModelInfo& info, const QString& device) {
  const DeviceReport report = discover_devices();
  const Target target = target_of(report, device);
  if (target.gpu != nullptr) {
    const auto plan = plan_gpu_fit(info.dir, target.gpu->free_memory, target.gpu->fp8);
    if (plan) {
      QString text = QObject::tr("fits: %1 of %2 %3")
                         .arg(ModelManager::formatBytes(static_cast<double>(plan->needed)),
                              ModelManager::formatBytes(static_cast<double>(target.memory)), target.where);
      if (info.max_context > 0 && plan->context < info.max_context)
        text += QObject::tr(", context limited to %1 of %2 tokens").arg(plan->context).arg(info.max_context);
      return {true, text};
    }
    if (plan.status().code() == ErrorCode::out_of_memory)
      return {false, QObject::tr("does not fit on %1: %2; it would run on the CPU")
                         .arg(qs(target.gpu->name), qs(plan.status().message()))};
    return {false, qs(plan.status().message())};
  }
  if (info.tensor_bytes == 0) return {false, QObject::tr("size unknown")};
  if (info.tensor_bytes <= target.memory)
    return {true, QObject::tr("fits: %1 of %2 %3")
                      .arg(ModelManager::formatBytes(static_cast<double>(info.tensor_bytes)),
                           ModelManager::formatBytes(static_cast<double>(target.memory)), target.where)};
  // A mixture of experts whose other weights fit: its experts are read from disk as tokens are
  // routed to them, through a cache of the memory left (the engine's memory plan).
  std::uint64_t expert_bytes = 0;
  for (const auto& g : info.groups)
    if (g.role == "routed experts") expert_bytes += g.bytes;
  if (expert_bytes > 0 && info.tensor_bytes - expert_bytes < target.memory)
    return {true, QObject::tr("%1, more than the %2 %3: its %4 of experts will be read from disk as they are "
                              "needed, through a cache of the memory left")
                      .arg(ModelManager::formatBytes(static_cast<double>(info.tensor_bytes)),
                           ModelManager::formatBytes(static_cast<double>(target.memory)), target.where,
                           ModelManager::formatBytes(static_cast<double>(expert_bytes)))};
  return {false, QObject::tr("%1, more than the %2 %3: the weights would page from disk, slowly")
                     .arg(ModelManager::formatBytes(static_cast<double>(info.tensor_bytes)),
                          ModelManager::formatBytes(static_cast<double>(target.memory)), target.where)};
}

}  // namespace

ModelManager::ModelManager(EngineBridge* bridge, AppSettings* settings, QObject* parent)
    : QObject(parent), bridge_(bridge), settings_(settings), demoModelPath_(findDemoModel()) {
  for (const auto& [folder, name] : {std::pair{QStringLiteral("demo-model"), tr("Demo model (gpt-oss)")},
                                     std::pair{QStringLiteral("demo-glm"), tr("Demo model (GLM-5.3-Flash)")}}) {
    const QString path = findDemoModel(folder);
    if (!path.isEmpty()) demoModels_.append(QVariantMap{{QStringLiteral("path"), path}, {QStringLiteral("name"), name}});
  }
  connect(&watcher_, &QFutureWatcher<InspectOutcome>::finished, this, &ModelManager::onInspectFinished);
  connect(bridge_, &EngineBridge::loadProgress, this, [this](qint64 done, qint64 total, const QString& phase) {
    progress_ = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0;
    progressText_ =
        total > 0 ? tr("%1 — %2 of %3 (%4%)")
                        .arg(phase, formatBytes(static_cast<double>(done)), formatBytes(static_cast<double>(total)))
                        .arg(static_cast<int>(progress_ * 100))
                  : phase;
    emit progressChanged();
  });
  connect(bridge_, &EngineBridge::modelLoaded, this, &ModelManager::onLoaded);
  connect(bridge_, &EngineBridge::loadFailed, this, [this](const QString& dir, const QString& message) {
    progress_ = 0;
    progressText_.clear();
    emit progressChanged();
    emit loadStateChanged();
    if (dir.startsWith(u'/'))
      emit errorOccurred(tr("Could not load %1: %2").arg(QFileInfo(dir).fileName(), message));
    else
      emit errorOccurred(tr("Could not connect: %1").arg(message));
  });
  connect(bridge_, &EngineBridge::modelUnloaded, this, [this]() {
    loadedIsDemo_ = false;
    progress_ = 0;
    progressText_.clear();
    emit progressChanged();
    emit loadStateChanged();
  });
  connect(settings_, &AppSettings::changed, this, &ModelManager::recentModelsChanged);
}

ModelManager::~ModelManager() { watcher_.waitForFinished(); }

QObject* ModelManager::settingsObject() const { return settings_; }

bool ModelManager::loading() const { return bridge_->loading(); }
bool ModelManager::loaded() const { return bridge_->hasModel(); }
QString ModelManager::loadedDir() const { return bridge_->modelDir(); }
QString ModelManager::loadedName() const {
  if (!bridge_->hasModel()) return {};
  if (bridge_->isRemote()) return bridge_->remoteEndpoint().model;
  return QFileInfo(bridge_->modelDir()).fileName();
}
bool ModelManager::loadedIsRemote() const { return bridge_->isRemote(); }
QString ModelManager::remoteUrl() const { return bridge_->remoteEndpoint().url; }
bool ModelManager::acceptsImages() const { return bridge_->acceptsImages(); }
QString ModelManager::loadedType() const { return qs(bridge_->summary().model_type); }
QString ModelManager::device() const { return bridge_->device(); }

QString ModelManager::imagesRefusal() const {
  const QString saved =
      tr("Your message and its images are saved in this conversation; no reply was generated. "
         "Send text without images to continue.");
  if (!loaded()) return tr("No model is loaded. %1").arg(saved);
  if (bridge_->summary().vision_needs_cpu)
    return tr("%1 reads images only on the CPU: its vision encoder does not run on the GPU yet. Load it with "
              "Device: CPU to send images. %2")
        .arg(loadedName(), saved);
  return tr("%1 cannot read images: it has no vision encoder. %2").arg(loadedName(), saved);
}

QVariantMap ModelManager::remoteEndpoint(const QString& id) const {
  for (const QVariant& v : settings_->remoteEndpoints()) {
    const QVariantMap m = v.toMap();
    if (EngineBridge::remoteId(m.value(QStringLiteral("url")).toString(),
                               m.value(QStringLiteral("model")).toString()) == id)
      return m;
  }
  return {};
}

QVariantList ModelManager::recentModels() const {
  QVariantList list;
  for (const QString& dir : settings_->recentModels()) {
    if (!dir.startsWith(u'/')) {
      const QVariantMap remote = remoteEndpoint(dir);
      if (remote.isEmpty()) continue;  // forgotten endpoint
      list.append(QVariantMap{{QStringLiteral("path"), dir},
                              {QStringLiteral("name"), remote.value(QStringLiteral("model"))},
                              {QStringLiteral("url"), remote.value(QStringLiteral("url"))},
                              {QStringLiteral("remote"), true},
                              {QStringLiteral("exists"), true}});
      continue;
    }
    const QFileInfo f(dir);
    list.append(QVariantMap{{QStringLiteral("path"), dir},
                            {QStringLiteral("name"), f.fileName()},
                            {QStringLiteral("exists"), QFileInfo::exists(dir + QStringLiteral("/config.json"))}});
  }
  return list;
}

QString ModelManager::formatBytes(double bytes) {
  return QLocale::c().formattedDataSize(static_cast<qint64>(bytes), 1, QLocale::DataSizeTraditionalFormat);
}

QString ModelManager::findDemoModel(const QString& folder) {
  const QString exe = QCoreApplication::applicationDirPath();
  QStringList candidates{exe + QStringLiteral("/../share/day0/") + folder, exe + QStringLiteral("/../") + folder};
#ifdef DAY0_RESOURCES_DIR
  candidates << QStringLiteral(DAY0_RESOURCES_DIR "/") + folder;
#endif
  for (const QString& c : candidates)
    if (QFileInfo::exists(c + QStringLiteral("/day0-demo.json"))) return QDir(c).canonicalPath();
  return {};
}

void ModelManager::inspectFolder(const QUrl& folder) { inspectPath(localPathFromUser(folder)); }

void ModelManager::inspectPath(const QString& path) {
  const QString dir = localPathFromUser(path);
  if (inspecting_) {
    queuedInspect_ = dir;  // started when the running inspection ends; the GUI never waits
    return;
  }
  inspecting_ = true;
  emit inspectingChanged();
  const QString device = settings_->device();
  watcher_.setFuture(QtConcurrent::run([dir, device]() {
    InspectOutcome outcome;
    const auto info = inspect_model(dir.toStdString());
    if (!info) {
      outcome.error = qs(info.status().message());
      return outcome;
    }
    outcome.report = qs(format_model_info(*info));
    auto [fits, fit] = fit_text(*info, device);
    std::error_code ec;
    if (!info->demo && !std::filesystem::exists(info->dir / "tokenizer.json", ec))
      fit += QObject::tr("; no tokenizer.json in the folder: chat needs it");
    if (!info->weights_present)
      fit += QObject::tr(" (weights not all present: %1 of %2 shards)").arg(info->shards_present).arg(info->n_shards);
    outcome.info = {
        {"dir", qs(info->dir.string())},
        {"name", QFileInfo(qs(info->dir.string())).fileName()},
        {"modelType", qs(info->model_type)},
        {"family", qs(info->family)},
        {"supported", info->supported},
        {"demo", info->demo},
        {"supportNote", qs(info->support_note)},
        {"weightsPresent", info->weights_present},
        {"totalParams", static_cast<double>(info->total_params)},
        {"activeParams", static_cast<double>(info->active_params_per_token)},
        {"expertFormat", qs(info->expert_format)},
        {"routedExperts", static_cast<qlonglong>(info->routed_experts)},
        {"expertsPerToken", static_cast<qlonglong>(info->experts_per_token)},
        {"layers", static_cast<qlonglong>(info->layers)},
        {"tensorBytes", static_cast<double>(info->tensor_bytes)},
        {"sizeText", formatBytes(static_cast<double>(info->tensor_bytes))},
        {"hasVision", info->has_vision},
        {"fits", fits},
        {"fitText", fit},
    };
    return outcome;
  }));
}

void ModelManager::onInspectFinished() {
  const InspectOutcome outcome = watcher_.result();
  inspecting_ = false;
  if (!queuedInspect_.isEmpty()) {
    inspectPath(std::exchange(queuedInspect_, {}));
    return;
  }
  emit inspectingChanged();
  if (!outcome.error.isEmpty()) {
    emit errorOccurred(outcome.error);
    return;
  }
  info_ = outcome.info;
  report_ = outcome.report;
  emit infoChanged();
}

void ModelManager::load(const QString& dir) {
  if (dir.isEmpty()) return;
  if (!dir.startsWith(u'/')) {
    const QVariantMap remote = remoteEndpoint(dir);
    if (remote.isEmpty()) {
      emit errorOccurred(
          tr("%1 is neither a model folder (an absolute path) nor a remote model used before.").arg(dir));
      return;
    }
    connectRemote(remote.value(QStringLiteral("url")).toString(), remote.value(QStringLiteral("apiKey")).toString(),
                  remote.value(QStringLiteral("model")).toString());
    return;
  }
  if (info_.value(QStringLiteral("dir")).toString() != dir) inspectPath(dir);
  progress_ = 0;
  progressText_ = tr("Checking the checkpoint…");
  emit progressChanged();
  bridge_->loadModel(dir, settings_->device(), settings_->contextLength());
  emit loadStateChanged();
}

void ModelManager::connectRemote(const QString& url, const QString& apiKey, const QString& model) {
  if (url.trimmed().isEmpty()) {
    emit errorOccurred(tr("Give the server's address, for example http://127.0.0.1:8000/v1."));
    return;
  }
  progress_ = 0;
  progressText_ = tr("Connecting to %1…").arg(url.trimmed());
  emit progressChanged();
  bridge_->connectRemote({url.trimmed(), apiKey.trimmed(), model.trimmed()});
  emit loadStateChanged();
}

void ModelManager::listRemoteModels(const QString& url, const QString& apiKey) {
  const quint64 generation = ++remoteListGeneration_;
  listingRemote_ = true;
  remoteListError_.clear();
  emit remoteListChanged();
  auto* watcher = new QFutureWatcher<std::pair<QStringList, QString>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation]() {
    watcher->deleteLater();
    if (generation != remoteListGeneration_) return;  // a newer listing is on its way
    const auto [names, problem] = watcher->result();
    listingRemote_ = false;
    remoteModelNames_ = names;
    remoteListError_ = problem;
    emit remoteListChanged();
  });
  watcher->setFuture(QtConcurrent::run([url = url.trimmed(), key = apiKey.trimmed()]() {
    std::pair<QStringList, QString> out;
    auto client = remote::RemoteClient::create({url.toStdString(), key.toStdString(), ""});
    if (!client) {
      out.second = qs(client.status().message());
      return out;
    }
    auto names = client->list_models();
    if (!names) {
      out.second = qs(names.status().message());
      return out;
    }
    for (const auto& n : *names) out.first << qs(n);
    if (out.first.isEmpty()) out.second = QObject::tr("%1 lists no models; type the model's name.").arg(url);
    return out;
  }));
}

void ModelManager::loadInspected() { load(info_.value(QStringLiteral("dir")).toString()); }

void ModelManager::cancelLoad() { bridge_->cancelLoad(); }

void ModelManager::unload() {
  bridge_->unloadModel();
  emit loadStateChanged();
}

void ModelManager::forgetRecent(const QString& dir) {
  const QVariantMap remote = remoteEndpoint(dir);
  if (!remote.isEmpty())
    settings_->forgetRemote(remote.value(QStringLiteral("url")).toString(),
                            remote.value(QStringLiteral("model")).toString());
  settings_->forgetRecentModel(dir);
}

void ModelManager::onLoaded(const QString& dir, const QString& device, const QString& notice) {
  if (bridge_->isRemote()) {
    const RemoteEndpoint endpoint = bridge_->remoteEndpoint();
    loadedIsDemo_ = false;
    settings_->rememberRemote(endpoint.url, endpoint.apiKey, endpoint.model);
    settings_->addRecentModel(dir);
    progress_ = 1;
    progressText_ = tr("Connected to %1").arg(endpoint.url);
  } else {
    loadedIsDemo_ = QFileInfo::exists(dir + QStringLiteral("/day0-demo.json"));
    loadedDemoText_.clear();
    if (loadedIsDemo_) {
      QFile card(dir + QStringLiteral("/day0-demo.json"));
      if (card.size() < (1 << 20) && card.open(QIODevice::ReadOnly))
        loadedDemoText_ = QJsonDocument::fromJson(card.readAll()).object().value(QStringLiteral("description")).toString();
    }
    settings_->addRecentModel(dir);
    progress_ = 1;
    progressText_ = tr("Loaded on %1").arg(device == QLatin1String("cpu") ? tr("the CPU") : device);
  }
  emit progressChanged();
  emit loadStateChanged();
  if (!notice.isEmpty()) emit noticeOccurred(notice);
  emit modelReady();
}

}  // namespace day0::app
