#pragma once
// The app's switch for the OpenAI-compatible server: when it is on and a local model is loaded,
// that model is served over HTTP (day0::server::OpenAiServer, the same server as `day0-cli
// serve`) from the app's own engine, so chat in the window and API requests share one copy of
// the weights and queue on one engine thread. Loopback only unless the settings allow the
// network, which needs an API key. The server follows the model: it stops when a model starts
// loading or is unloaded, and starts again when a local model is ready.
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <memory>
#include <thread>

namespace day0::server {
class OpenAiServer;
}

namespace day0::app {

class AppSettings;
class EngineBridge;

class ServerController : public QObject {
  Q_OBJECT
  Q_PROPERTY(bool running READ running NOTIFY stateChanged)
  Q_PROPERTY(bool starting READ starting NOTIFY stateChanged)
  Q_PROPERTY(QString url READ url NOTIFY stateChanged)
  Q_PROPERTY(QString statusText READ statusText NOTIFY stateChanged)

 public:
  ServerController(EngineBridge* bridge, AppSettings* settings, QObject* parent = nullptr);
  ~ServerController() override;

  bool running() const { return server_ != nullptr; }
  bool starting() const { return starting_; }
  // http://host:port/v1 while running.
  QString url() const { return url_; }
  QString statusText() const { return statusText_; }
  int port() const { return port_; }

  // Applies the settings: starts, restarts or stops the server as they and the model say.
  Q_INVOKABLE void apply();

 signals:
  void stateChanged();
  void errorOccurred(const QString& message);

 private:
  struct Started {
    std::shared_ptr<server::OpenAiServer> server;
    int port = 0;
    QString error;
  };
  void stopServer();
  void setStatus(const QString& text);
  void onStarted();
  QString wantedConfig() const;

  EngineBridge* bridge_;
  AppSettings* settings_;
  std::shared_ptr<server::OpenAiServer> server_;
  std::thread thread_;
  bool starting_ = false;
  bool reapply_ = false;  // the settings or the model changed while a start was on its way
  QFutureWatcher<Started> watcher_;
  QString url_;
  QString statusText_;
  QString servedConfig_;  // model, host, port and key the running server was started with
  QString startingConfig_;
  int port_ = 0;
};

}  // namespace day0::app
