#include "gui/server_controller.h"

#include <csignal>

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include "bridge/engine_bridge.h"
#include "day0/chat.h"
#include "gui/app_settings.h"
#include "server/openai_server.h"

namespace day0::app {
namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

ServerController::ServerController(EngineBridge* bridge, AppSettings* settings, QObject* parent)
    : QObject(parent), bridge_(bridge), settings_(settings) {
  // A client that hangs up must not end the app with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  connect(&watcher_, &QFutureWatcher<Started>::finished, this, &ServerController::onStarted);
  connect(bridge_, &EngineBridge::loadStarted, this, &ServerController::apply);
  connect(bridge_, &EngineBridge::modelLoaded, this, &ServerController::apply);
  connect(bridge_, &EngineBridge::modelUnloaded, this, &ServerController::apply);
  connect(bridge_, &EngineBridge::loadFailed, this, &ServerController::apply);
  connect(settings_, &AppSettings::changed, this, &ServerController::apply);
  apply();
}

ServerController::~ServerController() {
  watcher_.waitForFinished();
  stopServer();
}

QString ServerController::wantedConfig() const {
  return QStringLiteral("%1\n%2\n%3\n%4\n%5")
      .arg(bridge_->modelDir(),
           settings_->serverAllowNetwork() ? QStringLiteral("0.0.0.0") : QStringLiteral("127.0.0.1"))
      .arg(settings_->serverPort())
      .arg(settings_->serverApiKey(), settings_->serverCorsOrigins());
}

void ServerController::setStatus(const QString& text) {
  statusText_ = text;
  emit stateChanged();
}

void ServerController::stopServer() {
  if (!server_) return;
  server_->stop();  // cancels the generations in flight; serve() returns
  if (thread_.joinable()) thread_.join();
  server_.reset();
  url_.clear();
  servedConfig_.clear();
  port_ = 0;
}

void ServerController::apply() {
  if (starting_) {
    reapply_ = true;
    return;
  }
  const bool wanted = settings_->serverEnabled();
  const QString config = wantedConfig();
  std::string originsProblem;
  const auto origins = server::parse_cors_origins(settings_->serverCorsOrigins().toStdString(), &originsProblem);
  const bool usable = wanted && !bridge_->loading() && bridge_->hasModel() && !bridge_->isRemote() &&
                      !(settings_->serverAllowNetwork() && settings_->serverApiKey().isEmpty()) && origins;
  if (server_ && usable && config == servedConfig_) return;
  stopServer();
  if (!wanted) return setStatus(tr("Off"));
  if (bridge_->loading()) return setStatus(tr("Starts when the model has loaded."));
  if (!bridge_->hasModel()) return setStatus(tr("Starts when a model is loaded."));
  if (bridge_->isRemote())
    return setStatus(tr("Serves models that run in Day0: %1 is a remote model.").arg(bridge_->remoteEndpoint().model));
  if (settings_->serverAllowNetwork() && settings_->serverApiKey().isEmpty())
    return setStatus(tr("Set an API key before other machines may connect."));
  if (!origins) return setStatus(tr("The server does not start: %1.").arg(qs(originsProblem)));

  server::ServerOptions options;
  options.host = settings_->serverAllowNetwork() ? "0.0.0.0" : "127.0.0.1";
  options.port = settings_->serverPort();
  options.api_key = settings_->serverApiKey().toStdString();
  options.cors_origins = *origins;
  options.model_id = QFileInfo(bridge_->modelDir()).fileName().toStdString();
  if (options.model_id.empty()) options.model_id = "day0";
  starting_ = true;
  startingConfig_ = config;
  setStatus(tr("Starting…"));
  Engine* engine = bridge_->engine();
  watcher_.setFuture(
      QtConcurrent::run([engine, model = bridge_->localModel(), dir = bridge_->modelDir().toStdString(), options]() {
        Started out;
        auto formatter = ChatFormatter::load(dir);
        if (!formatter) {
          out.error = qs(formatter.status().message());
          return out;
        }
        auto server = std::make_shared<server::OpenAiServer>(*engine, model, std::move(*formatter), options);
        const auto port = server->bind();
        if (!port) {
          out.error = qs(port.status().message());
          return out;
        }
        out.server = std::move(server);
        out.port = *port;
        return out;
      }));
}

void ServerController::onStarted() {
  Started started = watcher_.result();
  starting_ = false;
  const bool stale = std::exchange(reapply_, false) && wantedConfig() != startingConfig_;
  if (stale || !settings_->serverEnabled() || bridge_->loading()) {
    apply();  // the model or the settings changed while it started
    return;
  }
  if (started.server) {
    server_ = std::move(started.server);
    port_ = started.port;
    servedConfig_ = startingConfig_;
    const bool network = settings_->serverAllowNetwork();
    url_ = QStringLiteral("http://%1:%2/v1")
               .arg(network ? QStringLiteral("0.0.0.0") : QStringLiteral("127.0.0.1"))
               .arg(port_);
    thread_ = std::thread([server = server_]() { server->serve(); });
    setStatus(network ? tr("Serving %1 at %2 on every network interface (API key required).")
                            .arg(QFileInfo(bridge_->modelDir()).fileName(), url_)
                      : tr("Serving %1 at %2.").arg(QFileInfo(bridge_->modelDir()).fileName(), url_));
    return;
  }
  const QString message = tr("The server cannot start: %1").arg(started.error);
  setStatus(message);
  emit errorOccurred(message);
}

}  // namespace day0::app
