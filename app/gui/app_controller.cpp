#include "gui/app_controller.h"

#include <QtConcurrent/QtConcurrentRun>

#include "day0/devices.h"
#include "day0/model_info.h"
#include "day0/version.h"

namespace day0::app {

AppController::AppController(QObject* parent) : QObject(parent) {
  const BuildInfo build = build_info();
  version_ = QString::fromStdString(build.version);
  buildSummary_ = QStringLiteral("%1 build, CUDA %2")
                      .arg(QString::fromStdString(build.build_type),
                           build.cuda ? QStringLiteral("on") : QStringLiteral("off"));
  const DeviceReport report = discover_devices();
  gpuAvailable_ = !report.gpus.empty();
  for (const auto& line : describe_devices(report)) devices_ << QString::fromStdString(line);
  connect(&watcher_, &QFutureWatcher<InspectOutcome>::finished, this, &AppController::onInspectFinished);
}

AppController::~AppController() { watcher_.waitForFinished(); }

void AppController::inspectFolder(const QUrl& folder) {
  if (busy_) return;
  const QString path = folder.isLocalFile() ? folder.toLocalFile() : folder.toString();
  busy_ = true;
  emit busyChanged();
  watcher_.setFuture(QtConcurrent::run([path]() {
    InspectOutcome outcome;
    const auto info = inspect_model(path.toStdString());
    if (!info) {
      outcome.error = QString::fromStdString(info.status().message());
      return outcome;
    }
    outcome.report = QString::fromStdString(format_model_info(*info));
    outcome.info = {
        {"dir", QString::fromStdString(info->dir.string())},
        {"modelType", QString::fromStdString(info->model_type)},
        {"family", QString::fromStdString(info->family)},
        {"supported", info->supported},
        {"demo", info->demo},
        {"supportNote", QString::fromStdString(info->support_note)},
        {"weightsPresent", info->weights_present},
        {"totalParams", static_cast<double>(info->total_params)},
        {"activeParams", static_cast<double>(info->active_params_per_token)},
        {"expertFormat", QString::fromStdString(info->expert_format)},
        {"routedExperts", static_cast<qlonglong>(info->routed_experts)},
        {"expertsPerToken", static_cast<qlonglong>(info->experts_per_token)},
        {"tensorBytes", static_cast<double>(info->tensor_bytes)},
        {"hasVision", info->has_vision},
    };
    return outcome;
  }));
}

void AppController::onInspectFinished() {
  const InspectOutcome outcome = watcher_.result();
  busy_ = false;
  emit busyChanged();
  if (!outcome.error.isEmpty()) {
    setError(outcome.error);
    return;
  }
  modelInfo_ = outcome.info;
  modelReport_ = outcome.report;
  emit modelInfoChanged();
  setError({});
}

void AppController::dismissError() { setError({}); }

void AppController::setError(const QString& message) {
  if (message == errorMessage_) return;
  errorMessage_ = message;
  emit errorMessageChanged();
}

}  // namespace day0::app
