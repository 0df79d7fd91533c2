#include "gui/hub_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QMetaObject>

#include "gui/model_manager.h"
#include "gui/user_path.h"
#include "hub/curated.h"
#include "hub/downloader.h"
#include "hub/hub_client.h"
#include "hub/hub_token.h"
#include "hub/pull_plan.h"

namespace day0::app {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString size_text(double bytes) { return qs(hub::format_size(bytes)); }

QVariantMap plan_map(const hub::PullPlan& p) {
  QVariantMap m{
      {"repo", qs(p.ref.text())},
      {"commit", qs(p.commit.substr(0, 12))},
      {"dir", qs(p.dir.string())},
      {"fileCount", static_cast<int>(p.selection.files.size())},
      {"skippedCount", static_cast<int>(p.selection.skipped.size())},
      {"downloadBytes", static_cast<double>(p.download_bytes)},
      {"downloadText", size_text(double(p.download_bytes))},
      {"totalText", size_text(double(p.selection.bytes()))},
      {"diskOk", p.disk_problem.empty()},
      {"diskText", p.disk_problem.empty() ? QObject::tr("%1 free: enough").arg(size_text(double(p.disk_free)))
                                          : qs(p.disk_problem)},
      {"fits", p.fit == hub::Fit::resident_cpu || p.fit == hub::Fit::resident_gpu},
      {"fitText", qs(p.fit_text)},
      {"speedText", qs(p.speed_text)},
      {"supported", p.info && p.info->supported},
  };
  if (p.info) {
    const ModelInfo& i = *p.info;
    m["architecture"] =
        qs(i.model_type) + (i.architecture.empty() ? QString() : QStringLiteral(" (%1)").arg(qs(i.architecture)));
    m["family"] = qs(i.family);
    m["supportNote"] = qs(i.support_note);
    m["paramsText"] = QObject::tr("%1 total, %2 active per token")
                          .arg(qs(hub::format_count(i.total_params)), qs(hub::format_count(i.active_params_per_token)));
    m["expertsText"] = i.routed_experts > 0 ? QObject::tr("%1 routed, top-%2, %3")
                                                  .arg(i.routed_experts)
                                                  .arg(i.experts_per_token)
                                                  .arg(qs(i.expert_format))
                                            : QObject::tr("dense");
    m["hasVision"] = i.has_vision;
  } else {
    m["architecture"] = QObject::tr("unknown");
    m["supportNote"] = qs(p.inspect_problem);
  }
  return m;
}

}  // namespace

HubController::HubController(ModelManager* models, QObject* parent) : QObject(parent), models_(models) {
  for (const auto& c : hub::curated_models())
    curated_.append(QVariantMap{
        {"repo", QString::fromUtf8(c.repo)},
        {"name", QString::fromUtf8(c.name)},
        {"family", QString::fromUtf8(c.family)},
        {"sizeText", size_text(double(c.weight_bytes))},
        {"paramsText", tr("%1 parameters, %2 active")
                           .arg(qs(hub::format_count(c.total_params)), qs(hub::format_count(c.active_params)))},
        {"note", QString::fromUtf8(c.note)}});
}

HubController::~HubController() { join(); }

void HubController::join() {
  if (control_) control_->cancel();
  if (planStopper_) planStopper_->stop();
  if (worker_.joinable()) worker_.join();
}

bool HubController::hasToken() const { return !hub::read_token().empty(); }
bool HubController::offline() const { return hub::config_from_environment().offline; }

QString HubController::defaultFolder(const QString& repo) const {
  const auto ref = hub::parse_repo_ref(repo.toStdString());
  return ref ? qs(hub::default_model_dir(*ref).string()) : QString();
}

void HubController::setState(const QString& state, const QString& error) {
  state_ = state;
  error_ = error;
  emit stateChanged();
}

void HubController::planPull(const QString& repoText, const QString& folder) {
  const auto ref = hub::parse_repo_ref(repoText.toStdString());
  if (!ref) {
    setState(QStringLiteral("failed"), qs(ref.status().message()));
    return;
  }
  join();
  const QString dir = folder.trimmed().isEmpty() ? defaultFolder(repoText) : localPathFromUser(folder.trimmed());
  repo_ = qs(ref->text());
  targetDir_ = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
  plan_.clear();
  planText_.clear();
  pullPlan_.reset();
  files_.clear();
  progress_ = 0;
  progressText_.clear();
  emit planChanged();
  emit progressChanged();
  setState(QStringLiteral("planning"));
  const quint64 generation = ++generation_;
  planStopper_ = std::make_shared<hub::RequestStopper>();
  worker_ = std::thread([this, generation, ref = *ref, dir = targetDir_.toStdString(), stopper = planStopper_]() {
    auto client = hub::HubClient::create(hub::config_from_environment());
    std::shared_ptr<hub::PullPlan> plan;
    QString problem;
    if (!client) {
      problem = tr("HF_ENDPOINT: %1").arg(qs(client.status().message()));
    } else if (client->config().offline) {
      problem = tr("Offline mode (HF_HUB_OFFLINE) is on, so Day0 does not reach the Hub. Unset it to download.");
    } else if (auto p = hub::plan_pull(*client, ref, dir, {}, stopper.get())) {
      plan = std::make_shared<hub::PullPlan>(std::move(*p));
    } else {
      problem = qs(p.status().message());
    }
    QMetaObject::invokeMethod(
        this, [this, generation, plan, problem]() { onPlanned(generation, plan, problem); }, Qt::QueuedConnection);
  });
}

void HubController::onPlanned(quint64 generation, std::shared_ptr<hub::PullPlan> plan, const QString& error) {
  if (generation != generation_) return;
  if (!plan) {
    setState(QStringLiteral("failed"), error);
    return;
  }
  pullPlan_ = std::move(plan);
  plan_ = plan_map(*pullPlan_);
  planText_ = qs(hub::format_pull_plan(*pullPlan_));
  files_.clear();
  for (const auto& f : pullPlan_->selection.files)
    files_.append(QVariantMap{{"path", qs(f.path)},
                              {"sizeText", size_text(double(f.size))},
                              {"fraction", 0.0},
                              {"state", QStringLiteral("queued")},
                              {"error", QString()}});
  emit planChanged();
  emit progressChanged();
  setState(QStringLiteral("planned"), pullPlan_->disk_problem.empty() ? QString() : qs(pullPlan_->disk_problem));
}

void HubController::startDownload() {
  if (!pullPlan_ || busy()) return;
  if (!pullPlan_->disk_problem.empty()) {
    setState(QStringLiteral("planned"), qs(pullPlan_->disk_problem));
    return;
  }
  if (worker_.joinable()) worker_.join();
  const quint64 generation = ++generation_;
  control_ = std::make_shared<hub::DownloadControl>();
  setState(QStringLiteral("downloading"));
  worker_ = std::thread([this, generation, plan = pullPlan_, control = control_]() {
    auto client = hub::HubClient::create(hub::config_from_environment());
    hub::DownloadReport report;
    QString problem;
    std::error_code ec;
    std::filesystem::create_directories(plan->dir, ec);
    if (!client) {
      problem = qs(client.status().message());
    } else if (ec) {
      problem = tr("Cannot create %1: %2").arg(qs(plan->dir.string()), qs(ec.message()));
    } else {
      hub::Downloader downloader(*client, plan->pinned, plan->dir);
      report = downloader.run(
          plan->selection.files,
          [this](const hub::Progress& p) {
            QMetaObject::invokeMethod(
                this, [this, p]() { onProgress(p); }, Qt::QueuedConnection);
          },
          control.get());
      if (!report.failures.empty())
        problem = tr("%1 of %2 files failed; the good ones are kept, Download fetches the rest. %3")
                      .arg(report.failures.size())
                      .arg(plan->selection.files.size())
                      .arg(qs(report.failures.front()));
      else if (!report.cancelled) {
        if (auto info = inspect_model(plan->dir); !info) problem = qs(info.status().message());
      }
    }
    const bool cancelled = report.cancelled;
    QMetaObject::invokeMethod(
        this,
        [this, generation, problem, cancelled]() {
          if (generation != generation_) return;
          if (cancelled)
            setState(QStringLiteral("cancelled"), tr("Stopped. The partial files are kept: Download resumes them."));
          else if (!problem.isEmpty())
            setState(QStringLiteral("failed"), problem);
          else
            setState(QStringLiteral("done"));
          emit downloadFinished(!cancelled && problem.isEmpty());
        },
        Qt::QueuedConnection);
  });
}

void HubController::onProgress(const hub::Progress& p) {
  if (state_ != QLatin1String("downloading") && state_ != QLatin1String("paused")) return;
  progress_ = p.total_bytes > 0 ? double(p.done_bytes) / double(p.total_bytes) : 1.0;
  QString text = tr("%1% — %2 of %3")
                     .arg(static_cast<int>(progress_ * 100))
                     .arg(size_text(double(p.done_bytes)), size_text(double(p.total_bytes)));
  if (p.paused)
    text += tr(" · paused");
  else if (p.bytes_per_second > 0)
    text += tr(" · %1/s · %2 left").arg(size_text(p.bytes_per_second), qs(hub::format_duration(p.seconds_left)));
  text += tr(" · %1 of %2 files").arg(p.files_done).arg(p.files_total);
  progressText_ = text;
  files_.clear();
  for (const auto& f : p.files)
    files_.append(QVariantMap{
        {"path", qs(f.path)},
        {"sizeText", size_text(double(f.size))},
        {"fraction", f.size > 0 ? double(f.done) / double(f.size) : (f.state == hub::FileState::done ? 1.0 : 0.0)},
        {"state", QString::fromLatin1(hub::file_state_name(f.state))},
        {"error", qs(f.error)}});
  emit progressChanged();
}

void HubController::pause() {
  if (state_ != QLatin1String("downloading") || !control_) return;
  control_->pause();
  setState(QStringLiteral("paused"));
}

void HubController::resume() {
  if (state_ != QLatin1String("paused") || !control_) return;
  control_->resume();
  setState(QStringLiteral("downloading"));
}

void HubController::cancel() {
  if (control_) control_->cancel();
  if (state_ == QLatin1String("planning")) {
    if (planStopper_) planStopper_->stop();
    ++generation_;  // its result is dropped
    setState(QStringLiteral("idle"));
  }
}

void HubController::openModel() {
  if (state_ == QLatin1String("done") && models_) models_->load(targetDir_);
}

bool HubController::saveToken(const QString& token) {
  const Status s = hub::save_token(token.toStdString());
  if (!s) {
    error_ = qs(s.message());
    emit stateChanged();
    return false;
  }
  emit tokenChanged();
  return true;
}

}  // namespace day0::app
