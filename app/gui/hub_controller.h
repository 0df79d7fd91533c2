#pragma once
// Get a model: the app's side of app/hub. From a repository name (owner/name[@revision]) to the
// plan (what inspect and the memory plan say from config.json and the index alone), then the
// download with per-file progress, rate and time left, pause, resume and cancel, then Open, which
// loads the folder through the model manager. The listing, the plan and the download run on a
// worker thread; results and progress come back as queued calls, so properties change on the
// GUI thread only. The Hugging Face token is kept in Day0's token file (mode 0600), never shown.
#include <QObject>
#include <QString>
#include <QVariantList>
#include <QVariantMap>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>

namespace day0::hub {
class DownloadControl;
class RequestStopper;
struct PullPlan;
struct Progress;
}  // namespace day0::hub

namespace day0::app {

class ModelManager;

class HubController : public QObject {
  Q_OBJECT
  Q_PROPERTY(QVariantList curated READ curated CONSTANT)
  // idle, planning, planned, downloading, paused, done, failed, cancelled
  Q_PROPERTY(QString state READ state NOTIFY stateChanged)
  Q_PROPERTY(bool busy READ busy NOTIFY stateChanged)
  Q_PROPERTY(QString repo READ repo NOTIFY planChanged)
  Q_PROPERTY(QString targetDir READ targetDir NOTIFY planChanged)
  Q_PROPERTY(QVariantMap plan READ plan NOTIFY planChanged)
  Q_PROPERTY(QString planText READ planText NOTIFY planChanged)
  Q_PROPERTY(QVariantList files READ files NOTIFY progressChanged)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString progressText READ progressText NOTIFY progressChanged)
  Q_PROPERTY(QString error READ error NOTIFY stateChanged)
  Q_PROPERTY(bool hasToken READ hasToken NOTIFY tokenChanged)
  Q_PROPERTY(bool offline READ offline CONSTANT)

 public:
  explicit HubController(ModelManager* models, QObject* parent = nullptr);
  ~HubController() override;

  QVariantList curated() const { return curated_; }
  QString state() const { return state_; }
  bool busy() const {
    return state_ == QLatin1String("planning") || state_ == QLatin1String("downloading") ||
           state_ == QLatin1String("paused");
  }
  QString repo() const { return repo_; }
  QString targetDir() const { return targetDir_; }
  QVariantMap plan() const { return plan_; }
  QString planText() const { return planText_; }
  QVariantList files() const { return files_; }
  double progress() const { return progress_; }
  QString progressText() const { return progressText_; }
  QString error() const { return error_; }
  bool hasToken() const;
  bool offline() const;

  // Where `repo` goes unless another folder is chosen: ~/.local/share/day0/models/OWNER/NAME.
  Q_INVOKABLE QString defaultFolder(const QString& repo) const;
  // Lists the repository and fetches config.json and the index into a temporary folder: the plan.
  // `folder` empty: the default folder.
  Q_INVOKABLE void planPull(const QString& repo, const QString& folder);
  // Downloads the planned files into targetDir.
  Q_INVOKABLE void startDownload();
  Q_INVOKABLE void pause();
  Q_INVOKABLE void resume();
  // Stops; the .part files stay, so Download resumes them.
  Q_INVOKABLE void cancel();
  // Loads the downloaded folder through the model manager.
  Q_INVOKABLE void openModel();
  // Saves the Hugging Face token (empty: forgets it). False with `error` set when it cannot.
  Q_INVOKABLE bool saveToken(const QString& token);

 signals:
  void stateChanged();
  void planChanged();
  void progressChanged();
  void tokenChanged();
  void downloadFinished(bool ok);

 private:
  void setState(const QString& state, const QString& error = {});
  void join();
  void onPlanned(quint64 generation, std::shared_ptr<hub::PullPlan> plan, const QString& error);
  void onProgress(const hub::Progress& progress);

  ModelManager* models_;
  QVariantList curated_;
  QString state_ = QStringLiteral("idle");
  QString repo_;
  QString targetDir_;
  QVariantMap plan_;
  QString planText_;
  QVariantList files_;
  double progress_ = 0;
  QString progressText_;
  QString error_;
  std::shared_ptr<hub::PullPlan> pullPlan_;
  std::shared_ptr<hub::DownloadControl> control_;
  std::shared_ptr<hub::RequestStopper> planStopper_;  // ends a listing or plan in flight
  std::thread worker_;
  quint64 generation_ = 0;
};

}  // namespace day0::app
