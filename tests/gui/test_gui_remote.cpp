// The app's two network roles, over real loopback HTTP:
//  - the server switch: the loaded model is served by the app's own engine (the same
//    OpenAiServer as `day0-cli serve`), following the settings and the model;
//  - remote engines: another OpenAI-compatible endpoint is the model, streamed into the same
//    chat and history as a local model, with images, keys and Stop.
// One app serves the demo model, a second app chats with it as a remote engine; a recording
// server written here checks what goes over the wire (images as data URLs, the key, hang-ups).
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QBuffer>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "bridge/engine_bridge.h"
#include "gui/app_controller.h"
#include "gui/app_fixture.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"
#include "gui/server_controller.h"
#include "remote/remote_client.h"

using namespace day0::app;
using json = nlohmann::json;

namespace {

using day0::gui_test::kDemo;
using day0::gui_test::kWaitMs;
using day0::gui_test::loadModel;
using day0::gui_test::makeApp;




bool waitFor(const std::function<bool()>& condition, int ms = kWaitMs) {
  QElapsedTimer clock;
  clock.start();
  while (!condition()) {
    if (clock.elapsed() > ms) return false;
    QTest::qWait(20);
  }
  return true;
}

// Starts app's server on a free loopback port; returns its base URL ("" on failure).
QString serve(AppController& app) {
  app.settings()->setServerPort(0);
  app.settings()->setServerEnabled(true);
  if (!waitFor([&] { return app.server()->running(); })) return {};
  return app.server()->url();
}

std::vector<day0::storage::Message> stored(ChatController* chat, qint64 conversation) {
  auto r = chat->store().messages(conversation).get();
  return r.is_ok() ? r.value() : std::vector<day0::storage::Message>{};
}

QByteArray pngBytes(int w, int h) {
  QImage image(w, h, QImage::Format_RGB32);
  image.fill(qRgb(200, 40, 90));
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return bytes;
}

// A loopback port nothing listens on (bound, then released).
int closedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// An OpenAI-compatible server that records each chat request and streams `pieces` words,
// `gap` apart, after `firstByteDelay`; it notes when the client hangs up.
struct RecordingServer {
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::mutex mutex;
  std::vector<json> bodies;
  std::vector<std::string> authorizations;
  std::atomic<int> hangups{0};
  std::atomic<int> pieces{40};
  std::chrono::milliseconds gap{30};
  std::chrono::milliseconds firstByteDelay{0};

  RecordingServer() {
    http.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"fake-model","object":"model"}]})", "application/json");
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mutex);
        bodies.push_back(json::parse(req.body, nullptr, false));
        authorizations.push_back(req.get_header_value("Authorization"));
      }
      const int n = pieces.load();
      res.set_chunked_content_provider(
          "text/event-stream", [this, n, sent = 0](std::size_t, httplib::DataSink& sink) mutable {
            if (sent == 0) std::this_thread::sleep_for(firstByteDelay);
            if (sent < n) {
              std::this_thread::sleep_for(gap);
              const json chunk = {
                  {"choices", {{{"index", 0}, {"delta", {{"content", "word" + std::to_string(sent) + " "}}}}}}};
              const std::string event = "data: " + chunk.dump() + "\n\n";
              if (!sink.write(event.data(), event.size())) {
                ++hangups;
                return false;
              }
              ++sent;
              return true;
            }
            const std::string tail =
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
                "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":" +
                std::to_string(n) + "}}\n\ndata: [DONE]\n\n";
            sink.write(tail.data(), tail.size());
            sink.done();
            return true;
          });
    });
    port = http.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { http.listen_after_bind(); });
  }
  ~RecordingServer() {
    http.stop();
    thread.join();
  }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(port); }
  json lastBody() {
    std::lock_guard lock(mutex);
    return bodies.empty() ? json() : bodies.back();
  }
};

}  // namespace

class TestGuiRemote : public QObject {
  Q_OBJECT
 private slots:
  void serverSwitchServesTheLoadedModel() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ServerController* server = app->server();
    QCOMPARE(server->running(), false);
    QCOMPARE(server->statusText(), QString("Off"));
    // Switched on before any model: it waits for one.
    app->settings()->setServerPort(0);
    app->settings()->setServerEnabled(true);
    QVERIFY(!server->running());
    QVERIFY2(server->statusText().contains("when a model is loaded"), qPrintable(server->statusText()));

    QVERIFY(loadModel(*app));
    QVERIFY(waitFor([&] { return server->running(); }));
    QVERIFY(server->url().startsWith("http://127.0.0.1:"));
    QVERIFY(server->port() > 0);
    QVERIFY2(server->statusText().contains("demo-random"), qPrintable(server->statusText()));

    // A real client over loopback: the model list, a streamed reply, /health.
    auto client = day0::remote::RemoteClient::create({server->url().toStdString(), "", ""});
    QVERIFY(client);
    std::vector<std::string> names;
    std::thread([&] {
      auto listed = client->list_models();
      if (listed) names = *listed;
    }).join();
    QCOMPARE(names, std::vector<std::string>{"demo-random"});
    auto named = day0::remote::RemoteClient::create({server->url().toStdString(), "", "demo-random"});
    QVERIFY(named);
    std::string streamed;
    day0::Result<day0::remote::RemoteReply> reply = day0::error(day0::ErrorCode::internal, "not run");
    // The server queues on the app's engine thread; the GUI thread stays free meanwhile.
    std::atomic<bool> answered{false};
    std::thread asker([&] {
      day0::remote::RemoteSampling sampling;
      sampling.max_tokens = 6;
      sampling.seed = 3;
      reply = named->stream_chat({{"user", "Hello", "", {}}}, sampling, [&](const day0::OutputPiece& p) {
        streamed += p.text;
        return true;
      });
      answered = true;
    });
    QVERIFY(waitFor([&] { return answered.load(); }));
    asker.join();
    QVERIFY2(reply, reply ? "" : reply.status().message().c_str());
    QVERIFY(reply->completion_tokens >= 1 && reply->completion_tokens <= 6);
    QVERIFY(!(reply->content + reply->reasoning).empty());
    QCOMPARE(reply->content + reply->reasoning, streamed);
    httplib::Client raw("127.0.0.1", server->port());
    auto health = raw.Get("/health");
    QVERIFY(health);
    QCOMPARE(health->status, 200);

    // A key: the server restarts with it; requests without it are refused.
    app->settings()->setServerApiKey("s3cret");
    QVERIFY(waitFor([&] { return server->running() && !server->starting(); }));
    QTest::qWait(50);
    QVERIFY(server->running());
    const QString keyedUrl = server->url();
    auto without = day0::remote::RemoteClient::create({keyedUrl.toStdString(), "", ""});
    day0::Result<std::vector<std::string>> refused = day0::error(day0::ErrorCode::internal, "not run");
    std::thread([&] { refused = without->list_models(); }).join();
    QVERIFY(!refused);
    QVERIFY2(refused.status().message().find("401") != std::string::npos, refused.status().message().c_str());
    auto with = day0::remote::RemoteClient::create({keyedUrl.toStdString(), "s3cret", ""});
    names.clear();
    std::thread([&] {
      auto listed = with->list_models();
      if (listed) names = *listed;
    }).join();
    QCOMPARE(names.size(), std::size_t(1));

    // Other machines only with a key; without one the switch explains and serves nothing.
    app->settings()->setServerApiKey("");
    app->settings()->setServerAllowNetwork(true);
    QVERIFY(waitFor([&] { return !server->running() && !server->starting(); }));
    QVERIFY2(server->statusText().contains("API key"), qPrintable(server->statusText()));
    app->settings()->setServerAllowNetwork(false);
    QVERIFY(waitFor([&] { return server->running(); }));

    // Unloading the model stops it; switching off stops it and frees the port.
    const int port = server->port();
    app->models()->unload();
    QVERIFY(waitFor([&] { return !server->running(); }));
    QVERIFY2(server->statusText().contains("when a model is loaded"), qPrintable(server->statusText()));
    QVERIFY(!httplib::Client("127.0.0.1", port).Get("/health"));
    QVERIFY(loadModel(*app));
    QVERIFY(waitFor([&] { return server->running(); }));
    app->settings()->setServerEnabled(false);
    QVERIFY(waitFor([&] { return !server->running(); }));
    QCOMPARE(server->statusText(), QString("Off"));
  }

  // Browser front ends: off by default (a preflight is refused, no CORS headers); the allowed
  // origins of the settings get them, the server restarting with the change; a list that is not
  // origins keeps the server stopped with the reason.
  void serverCorsFollowsTheSettings() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ServerController* server = app->server();
    QCOMPARE(app->settings()->serverCorsOrigins(), QString());
    QVERIFY(loadModel(*app));
    QVERIFY(!serve(*app).isEmpty());
    const auto preflight = [&](const std::string& origin) {
      httplib::Client c("127.0.0.1", server->port());
      return c.Options("/v1/chat/completions",
                       {{"Origin", origin}, {"Access-Control-Request-Method", "POST"}});
    };
    auto refused = preflight("http://localhost:3000");
    QVERIFY(refused);
    QCOMPARE(refused->status, 403);
    QVERIFY(!refused->has_header("Access-Control-Allow-Origin"));

    app->settings()->setServerCorsOrigins(" http://localhost:3000/ , https://chat.example");
    QVERIFY(waitFor([&] { return server->running() && !server->starting(); }));
    QVERIFY(waitFor([&] {
      auto r = preflight("http://localhost:3000");
      return r && r->status == 204;
    }));
    auto allowed = preflight("https://chat.example");
    QVERIFY(allowed && allowed->status == 204);
    QCOMPARE(allowed->get_header_value("Access-Control-Allow-Origin"), std::string("https://chat.example"));
    auto other = preflight("http://evil.example");
    QVERIFY(other && other->status == 403);
    httplib::Client page("127.0.0.1", server->port());
    auto models = page.Get("/v1/models", {{"Origin", "http://localhost:3000"}});
    QVERIFY(models && models->status == 200);
    QCOMPARE(models->get_header_value("Access-Control-Allow-Origin"), std::string("http://localhost:3000"));

    app->settings()->setServerCorsOrigins("localhost:3000");
    QVERIFY(waitFor([&] { return !server->running() && !server->starting(); }));
    QVERIFY2(server->statusText().contains("localhost:3000"), qPrintable(server->statusText()));
    app->settings()->setServerCorsOrigins("");
    QVERIFY(waitFor([&] { return server->running(); }));
    auto again = preflight("http://localhost:3000");
    QVERIFY(again && again->status == 403);
  }

  void remoteEngineChatsIntoTheLocalHistory() {
    QTemporaryDir serverDir, clientDir;
    auto host = makeApp(serverDir.path());
    QVERIFY(loadModel(*host));
    const QString url = serve(*host);
    QVERIFY(!url.isEmpty());

    auto app = makeApp(clientDir.path());
    ModelManager* models = app->models();
    QSignalSpy ready(models, &ModelManager::modelReady);
    models->connectRemote(url, "", "");  // no model named: the first one listed
    QVERIFY(ready.wait(kWaitMs));
    QVERIFY(models->loaded());
    QVERIFY(models->loadedIsRemote());
    QCOMPARE(models->loadedName(), QString("demo-random"));
    QCOMPARE(models->loadedType(), QString("remote"));
    QCOMPARE(models->device(), QString("remote"));
    QCOMPARE(models->remoteUrl(), url);
    QVERIFY(models->acceptsImages());
    const QString id = EngineBridge::remoteId(url, "demo-random");
    QCOMPARE(models->loadedDir(), id);

    ChatController* chat = app->chat();
    QString streamed;
    connect(app->bridge(), &EngineBridge::textArrived, this,
            [&](quint64, const QString& c, const QString& r) { streamed += c + r; });
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("Hello from afar"));
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(finished.at(0).at(1).toBool());
    const auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(messages[0].content), QString("Hello from afar"));
    QCOMPARE(QString::fromStdString(messages[1].content + messages[1].reasoning), streamed);
    QVERIFY(!streamed.isEmpty());
    QCOMPARE(QString::fromStdString(messages[1].model), id);
    QCOMPARE(messages[1].state, day0::storage::MessageState::complete);
    // The Day0 server reports usage; the history keeps it.
    QVERIFY(messages[1].stats.completion_tokens.value_or(0) >= 1);
    QVERIFY(messages[1].stats.completion_tokens.value_or(0) <= 12);
    QVERIFY(messages[1].stats.prompt_tokens.value_or(0) > 3);

    // An image goes to the server, which says its text-only model cannot read it: a clear
    // error, the message and its image kept.
    QCOMPARE(chat->attachData(pngBytes(32, 24), "dot.png"), 1);
    QSignalSpy errors(chat, &ChatController::errorOccurred);
    finished.clear();
    QVERIFY(chat->send("What is this?"));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(finished.at(0).at(1).toBool(), false);
    QVERIFY(!errors.isEmpty());
    const QString said = errors.last().at(0).toString();
    QVERIFY2(said.contains("400") && said.contains("image"), qPrintable(said));
    const auto after = stored(chat, chat->currentConversationId());
    QCOMPARE(after.size(), std::size_t(4));
    QCOMPARE(after[2].attachments.size(), std::size_t(1));
    QCOMPARE(after[3].state, day0::storage::MessageState::error);

    // Restarted, the app connects to the same endpoint again and lists it among the recent.
    app->settings()->setFirstRunDone();
    app.reset();
    QFile ini(clientDir.path() + "/day0.ini");
    QCOMPARE(ini.permissions() & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
             QFile::Permissions());
    auto again = makeApp(clientDir.path());
    QSignalSpy readyAgain(again->models(), &ModelManager::modelReady);
    again->start(QString());
    QVERIFY(readyAgain.wait(kWaitMs));
    QCOMPARE(again->models()->loadedDir(), id);
    const QVariantList recent = again->models()->recentModels();
    QVERIFY(!recent.isEmpty());
    QCOMPARE(recent.first().toMap().value("remote").toBool(), true);
    QCOMPARE(recent.first().toMap().value("url").toString(), url);
    // Forgetting it removes the endpoint (and its key) from the settings.
    again->models()->forgetRecent(id);
    QVERIFY(again->models()->remoteEndpoint(id).isEmpty());
    QVERIFY(again->models()->recentModels().isEmpty() ||
            !again->models()->recentModels().first().toMap().value("remote").toBool());
  }

  void imagesAndKeysGoOverTheWire() {
    RecordingServer fake;
    fake.pieces = 3;
    fake.gap = std::chrono::milliseconds(1);
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    QSignalSpy ready(app->models(), &ModelManager::modelReady);
    app->models()->connectRemote(fake.url(), "key-123", "fake-model");
    QVERIFY(ready.wait(kWaitMs));
    ChatController* chat = app->chat();
    const QByteArray png = pngBytes(20, 10);
    QCOMPARE(chat->attachData(png, "pic.png"), 1);
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("Describe it"));
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(finished.at(0).at(1).toBool());
    const json body = fake.lastBody();
    QCOMPARE(QString::fromStdString(body.value("model", "")), QString("fake-model"));
    QCOMPARE(body.value("stream", false), true);
    QCOMPARE(body["max_tokens"].get<int>(), 12);
    const json& user = body["messages"].back();
    QCOMPARE(QString::fromStdString(user["role"].get<std::string>()), QString("user"));
    QVERIFY(user["content"].is_array());
    QCOMPARE(QString::fromStdString(user["content"][0]["text"].get<std::string>()), QString("Describe it"));
    const std::string sent = user["content"][1]["image_url"]["url"].get<std::string>();
    QCOMPARE(QString::fromStdString(sent), "data:image/png;base64," + QString::fromLatin1(png.toBase64()));
    {
      std::lock_guard lock(fake.mutex);
      QCOMPARE(QString::fromStdString(fake.authorizations.back()), QString("Bearer key-123"));
    }
    const auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(QString::fromStdString(messages.back().content), QString("word0 word1 word2 "));
    QCOMPARE(messages.back().stats.completion_tokens.value_or(0), 3);
    QCOMPARE(messages.back().stats.prompt_tokens.value_or(0), 7);

    // The image stays with its message: a follow-up sends the whole conversation again.
    finished.clear();
    QVERIFY(chat->send("And now?"));
    QVERIFY(finished.wait(kWaitMs));
    const json again = fake.lastBody();
    QCOMPARE(again["messages"].size(), std::size_t(messages.size() + 1));
    QCOMPARE(QString::fromStdString(again["messages"][messages.size() - 2]["content"][1]["image_url"]["url"]),
             QString::fromStdString(sent));
  }

  void stopHangsUpOnTheServer() {
    RecordingServer fake;
    fake.pieces = 400;
    fake.gap = std::chrono::milliseconds(20);
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    QSignalSpy ready(app->models(), &ModelManager::modelReady);
    app->models()->connectRemote(fake.url(), "", "fake-model");
    QVERIFY(ready.wait(kWaitMs));
    ChatController* chat = app->chat();

    // Mid-stream.
    QSignalSpy finished(chat, &ChatController::replyFinished);
    QVERIFY(chat->send("Talk"));
    QVERIFY(waitFor([&] {
      return chat->messages()->rowCount() == 2 &&
             !chat->messages()->data(chat->messages()->index(1), MessageListModel::ContentRole).toString().isEmpty();
    }));
    QElapsedTimer clock;
    clock.start();
    chat->stop();
    QVERIFY(waitFor([&] { return finished.count() == 1; }, 5000));
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    auto messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.back().state, day0::storage::MessageState::incomplete);
    QVERIFY(QString::fromStdString(messages.back().content).startsWith("word0 "));
    QVERIFY(waitFor([&] { return fake.hangups.load() == 1; }, 5000));

    // Before the first byte (a long prefill on the other side): Stop does not wait for it.
    fake.firstByteDelay = std::chrono::milliseconds(4000);
    finished.clear();
    QVERIFY(chat->send("Think first"));
    QTest::qWait(300);
    clock.restart();
    chat->stop();
    QVERIFY(waitFor([&] { return finished.count() == 1; }, 5000));
    QVERIFY2(clock.elapsed() < 1500, qPrintable(QString::number(clock.elapsed())));
    messages = stored(chat, chat->currentConversationId());
    QCOMPARE(messages.back().state, day0::storage::MessageState::incomplete);
    QVERIFY(!chat->generating());
  }

  void connectionProblemsAreClear() {
    QTemporaryDir tmp;
    auto app = makeApp(tmp.path());
    ModelManager* models = app->models();
    QSignalSpy errors(models, &ModelManager::errorOccurred);
    QSignalSpy ready(models, &ModelManager::modelReady);

    models->connectRemote(QStringLiteral("http://127.0.0.1:%1/v1").arg(closedPort()), "", "");
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY2(errors.last().at(0).toString().contains("cannot reach"), qPrintable(errors.last().at(0).toString()));
    QVERIFY(!models->loaded());
    QVERIFY(!models->loading());

    models->connectRemote("ftp://example.org", "", "");
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY2(errors.last().at(0).toString().contains("http://"), qPrintable(errors.last().at(0).toString()));

    models->connectRemote("", "", "");
    QVERIFY(errors.last().at(0).toString().contains("address"));

    RecordingServer fake;
    models->connectRemote(fake.url(), "", "no-such-model");
    QVERIFY(errors.wait(kWaitMs));
    const QString said = errors.last().at(0).toString();
    QVERIFY2(said.contains("no-such-model") && said.contains("fake-model"), qPrintable(said));
    QCOMPARE(ready.count(), 0);

    // The model list as the connect form shows it, and its error.
    models->listRemoteModels(fake.url(), "");
    QVERIFY(waitFor([&] { return !models->listingRemote(); }));
    QCOMPARE(models->remoteModelNames(), QStringList{"fake-model"});
    QVERIFY(models->remoteListError().isEmpty());
    models->listRemoteModels(QStringLiteral("http://127.0.0.1:%1").arg(closedPort()), "");
    QVERIFY(waitFor([&] { return !models->listingRemote(); }));
    QVERIFY(models->remoteModelNames().isEmpty());
    QVERIFY(models->remoteListError().contains("cannot reach"));

    // A failed connect leaves a loaded local model in place, and its server switch explains
    // that a remote model is not served.
    QVERIFY(loadModel(*app));
    models->connectRemote(QStringLiteral("http://127.0.0.1:%1").arg(closedPort()), "", "x");
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY(models->loaded());
    QVERIFY(!models->loadedIsRemote());
    QCOMPARE(models->loadedName(), QString("demo-random"));

    models->connectRemote(fake.url(), "", "fake-model");
    QVERIFY(ready.wait(kWaitMs));
    app->settings()->setServerPort(0);
    app->settings()->setServerEnabled(true);
    QVERIFY(waitFor([&] { return app->server()->statusText().contains("remote model"); }));
    QVERIFY(!app->server()->running());
  }
};

QTEST_GUILESS_MAIN(TestGuiRemote)
#include "test_gui_remote.moc"
