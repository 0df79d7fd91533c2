#pragma once
// The QML-facing controller of the first window: build and device facts, and model-folder
// inspection run off the GUI thread. View state lives here; QML only displays it.
#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <QUrl>
#include <QVariantMap>

namespace day0::app {

class AppController : public QObject {
  Q_OBJECT
  Q_PROPERTY(QString version READ version CONSTANT)
  Q_PROPERTY(QString buildSummary READ buildSummary CONSTANT)
  Q_PROPERTY(QStringList devices READ devices CONSTANT)
  Q_PROPERTY(bool gpuAvailable READ gpuAvailable CONSTANT)
  Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
  Q_PROPERTY(QVariantMap modelInfo READ modelInfo NOTIFY modelInfoChanged)
  Q_PROPERTY(QString modelReport READ modelReport NOTIFY modelInfoChanged)
  Q_PROPERTY(QString errorMessage READ errorMessage NOTIFY errorMessageChanged)

 public:
  explicit AppController(QObject* parent = nullptr);
  ~AppController() override;

  QString version() const { return version_; }
  QString buildSummary() const { return buildSummary_; }
  QStringList devices() const { return devices_; }
  bool gpuAvailable() const { return gpuAvailable_; }
  bool busy() const { return busy_; }
  QVariantMap modelInfo() const { return modelInfo_; }
  QString modelReport() const { return modelReport_; }
  QString errorMessage() const { return errorMessage_; }

  // Inspects a model folder on a worker thread; modelInfoChanged or errorMessageChanged follow.
  Q_INVOKABLE void inspectFolder(const QUrl& folder);
  Q_INVOKABLE void dismissError();

 signals:
  void busyChanged();
  void modelInfoChanged();
  void errorMessageChanged();

 private:
  struct InspectOutcome {
    QVariantMap info;
    QString report;
    QString error;
  };
  void onInspectFinished();
  void setError(const QString& message);

  QString version_;
  QString buildSummary_;
  QStringList devices_;
  bool gpuAvailable_ = false;
  bool busy_ = false;
  QVariantMap modelInfo_;
  QString modelReport_;
  QString errorMessage_;
  QFutureWatcher<InspectOutcome> watcher_;
};

}  // namespace day0::app
