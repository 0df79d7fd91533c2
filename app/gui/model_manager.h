#pragma once
// The model manager: inspect a model folder (off the GUI thread), remember recent folders,
// load one through the engine bridge with progress, unload it; or connect to a remote
// OpenAI-compatible endpoint instead. Also finds the shipped demo model for the first run.
#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <QUrl>
#include <QVariantList>
#include <QVariantMap>

namespace day0::app {

class AppSettings;
class EngineBridge;

class ModelManager : public QObject {
  Q_OBJECT
  // Where and how large the next load is (written through to the settings before Load).
  Q_PROPERTY(QObject* settings READ settingsObject CONSTANT)
  Q_PROPERTY(QVariantList deviceChoices READ deviceChoices CONSTANT)
  Q_PROPERTY(bool inspecting READ inspecting NOTIFY inspectingChanged)
  Q_PROPERTY(QVariantMap info READ info NOTIFY infoChanged)
  Q_PROPERTY(QString report READ report NOTIFY infoChanged)
  Q_PROPERTY(bool loading READ loading NOTIFY loadStateChanged)
  Q_PROPERTY(bool loaded READ loaded NOTIFY loadStateChanged)
  Q_PROPERTY(QString loadedDir READ loadedDir NOTIFY loadStateChanged)
  Q_PROPERTY(QString loadedName READ loadedName NOTIFY loadStateChanged)
  Q_PROPERTY(QString loadedType READ loadedType NOTIFY loadStateChanged)
  Q_PROPERTY(bool loadedIsDemo READ loadedIsDemo NOTIFY loadStateChanged)
  Q_PROPERTY(QString device READ device NOTIFY loadStateChanged)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString progressText READ progressText NOTIFY progressChanged)
  Q_PROPERTY(QVariantList recentModels READ recentModels NOTIFY recentModelsChanged)
  Q_PROPERTY(QString demoModelPath READ demoModelPath CONSTANT)
  Q_PROPERTY(QVariantList demoModels READ demoModels CONSTANT)
  Q_PROPERTY(QString loadedDemoText READ loadedDemoText NOTIFY loadStateChanged)
  Q_PROPERTY(bool acceptsImages READ acceptsImages NOTIFY loadStateChanged)
  Q_PROPERTY(bool loadedIsRemote READ loadedIsRemote NOTIFY loadStateChanged)
  Q_PROPERTY(QString remoteUrl READ remoteUrl NOTIFY loadStateChanged)
  Q_PROPERTY(bool listingRemote READ listingRemote NOTIFY remoteListChanged)
  Q_PROPERTY(QStringList remoteModelNames READ remoteModelNames NOTIFY remoteListChanged)
  Q_PROPERTY(QString remoteListError READ remoteListError NOTIFY remoteListChanged)

 public:
  ModelManager(EngineBridge* bridge, AppSettings* settings, QObject* parent = nullptr);
  ~ModelManager() override;

  QObject* settingsObject() const;
  QVariantList deviceChoices() const { return deviceChoices_; }
  void setDeviceChoices(const QVariantList& choices) { deviceChoices_ = choices; }
  bool inspecting() const { return inspecting_; }
  QVariantMap info() const { return info_; }
  QString report() const { return report_; }
  bool loading() const;
  bool loaded() const;
  QString loadedDir() const;
  QString loadedName() const;
  QString loadedType() const;
  bool loadedIsDemo() const { return loadedIsDemo_; }
  QString device() const;
  double progress() const { return progress_; }
  QString progressText() const { return progressText_; }
  QVariantList recentModels() const;
  QString demoModelPath() const { return demoModelPath_; }
  QVariantList demoModels() const { return demoModels_; }
  QString loadedDemoText() const { return loadedDemoText_; }
  // Remote endpoints take images (the server says when its model cannot read them), and so do
  // local models with a vision encoder; for others images are kept in the history only.
  bool acceptsImages() const;
  bool loadedIsRemote() const;
  QString remoteUrl() const;
  bool listingRemote() const { return listingRemote_; }
  QStringList remoteModelNames() const { return remoteModelNames_; }
  QString remoteListError() const { return remoteListError_; }
  QString imagesRefusal() const;

  Q_INVOKABLE void inspectFolder(const QUrl& folder);
  Q_INVOKABLE void inspectPath(const QString& dir);
  // Inspects and loads `dir` with the device from the settings; a remote model's id (as the
  // recent list names it) connects to that endpoint again.
  Q_INVOKABLE void load(const QString& dir);
  // Uses a remote OpenAI-compatible endpoint as the model (an empty `model`: the first listed).
  Q_INVOKABLE void connectRemote(const QString& url, const QString& apiKey, const QString& model);
  // Reads the endpoint's model list off the GUI thread (remoteModelNames, remoteListError).
  Q_INVOKABLE void listRemoteModels(const QString& url, const QString& apiKey);
  // The remembered endpoint behind a remote id: url, apiKey, model (empty map when unknown).
  Q_INVOKABLE QVariantMap remoteEndpoint(const QString& id) const;
  Q_INVOKABLE void loadInspected();
  Q_INVOKABLE void cancelLoad();
  Q_INVOKABLE void unload();
  Q_INVOKABLE void forgetRecent(const QString& dir);
  Q_INVOKABLE static QString formatBytes(double bytes);

  // A shipped demo model (`folder` is demo-model, the gpt-oss one, or demo-glm), or empty:
  // share/day0/<folder> beside an install, build/<folder> written by `make run`, or
  // resources/<folder> in a build tree.
  static QString findDemoModel(const QString& folder = QStringLiteral("demo-model"));

 signals:
  void inspectingChanged();
  void infoChanged();
  void loadStateChanged();
  void progressChanged();
  void recentModelsChanged();
  void remoteListChanged();
  void errorOccurred(const QString& message);
  void noticeOccurred(const QString& message);
  void modelReady();

 private:
  struct InspectOutcome {
    QVariantMap info;
    QString report;
    QString error;
  };
  void onInspectFinished();
  void onLoaded(const QString& dir, const QString& device, const QString& notice);

  EngineBridge* bridge_;
  AppSettings* settings_;
  QVariantList deviceChoices_;
  bool inspecting_ = false;
  QVariantMap info_;
  QString report_;
  double progress_ = 0;
  QString progressText_;
  bool loadedIsDemo_ = false;
  QString loadedDemoText_;  // the loaded demo's description (its day0-demo.json)
  QString demoModelPath_;
  QVariantList demoModels_;  // {path, name} of each shipped demo found
  QString queuedInspect_;
  QFutureWatcher<InspectOutcome> watcher_;
  bool listingRemote_ = false;
  QStringList remoteModelNames_;
  QString remoteListError_;
  quint64 remoteListGeneration_ = 0;
};

}  // namespace day0::app
