// The remote-engine client against a scripted OpenAI-style server on loopback: event streams cut
// mid-line, keep-alive comments, CRLF, multi-line data, servers that fail in the ways real ones do.
#include <httplib.h>

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "remote/remote_client.h"

using day0::OutputChannel;
using day0::OutputPiece;
using day0::remote::Endpoint;
using day0::remote::RemoteClient;
using day0::remote::RemoteMessage;
using day0::remote::RemoteSampling;

namespace {

// Writes `stream` in the given pieces, pausing between them so they reach the client as
// separate reads.
void send_pieces(httplib::Response& res, std::vector<std::string> pieces, const char* type = "text/event-stream") {
  auto shared = std::make_shared<std::vector<std::string>>(std::move(pieces));
  auto next = std::make_shared<std::size_t>(0);
  res.set_chunked_content_provider(type, [shared, next](std::size_t, httplib::DataSink& sink) {
    if (*next == shared->size()) {
      sink.done();
      return true;
    }
    const std::string& piece = (*shared)[(*next)++];
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return sink.write(piece.data(), piece.size());
  });
}

std::string chunk(const std::string& delta_json, const char* finish = nullptr) {
  return std::string("{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":") +
         delta_json + ",\"finish_reason\":" + (finish ? std::string("\"") + finish + "\"" : "null") + "}]}";
}

}  // namespace

class TestRemoteClient : public QObject {
  Q_OBJECT

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  nlohmann::json last_body_;
  std::string last_auth_;

  Endpoint endpoint(const std::string& scenario) const {
    return {"http://127.0.0.1:" + std::to_string(port_) + "/" + scenario + "/v1", "sk-test", "remote-model"};
  }

 private slots:
  void initTestCase() {
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"object\":\"list\",\"data\":[{\"id\":\"alpha\"},{\"id\":\"beta\"}]}", "application/json");
    });
    server_.Post(R"(/(\w+)/v1/chat/completions)", [this](const httplib::Request& req, httplib::Response& res) {
      last_body_ = nlohmann::json::parse(req.body, nullptr, false);
      last_auth_ = req.get_header_value("Authorization");
      const std::string scenario = req.matches[1];
      if (scenario == "split") {
        // The whole stream, then cut at awkward places: inside "data:", inside JSON strings,
        // between CR and LF.
        const std::string all =
            ": keep-alive\r\n\r\n"
            "data: " +
            chunk("{\"role\":\"assistant\",\"content\":\"\"}") +
            "\r\n\r\n"
            ": ping\n\n"
            "data: " +
            chunk("{\"reasoning_content\":\"thi\"}") + "\n\n" + "data: " + chunk("{\"reasoning_content\":\"nk\"}") +
            "\r\n\r\n" +
            "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\n"
            "data: \"delta\":{\"content\":\"Hello, \"}}]}\n\n" +
            "data: " + chunk("{\"content\":\"w\\u00f6rld!\"}") + "\n\n" + "data: " + chunk("{}", "stop") + "\n\n" +
            "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":5,"
            "\"total_tokens\":12}}\r\n\r\n"
            "data: [DONE]\n\n";
        std::vector<std::string> pieces;
        const std::size_t cuts[] = {1, 5, 18, 20, 23, 60, 61, 140, 141, 142, 230, 231, 300, 301, 302, 420, 500, 560};
        std::size_t at = 0;
        for (const std::size_t c : cuts) {
          if (c >= all.size()) break;
          pieces.push_back(all.substr(at, c - at));
          at = c;
        }
        pieces.push_back(all.substr(at));
        send_pieces(res, pieces);
      } else if (scenario == "ratelimited") {
        res.status = 429;
        res.set_content(
            "{\"error\":{\"message\":\"slow down please\",\"type\":\"rate_limit\",\"param\":null,\"code\":null}}",
            "application/json");
      } else if (scenario == "plainjson") {
        res.set_content(
            "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
            "\"assistant\",\"content\":\"whole\",\"reasoning\":\"why\"},\"finish_reason\":\"length\"}],"
            "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}",
            "application/json");
      } else if (scenario == "truncated") {
        send_pieces(res, {"data: " + chunk("{\"content\":\"par\"}") + "\n\n", "data: " + chunk("{\"content\":\"t\"}")});
      } else if (scenario == "garbage") {
        send_pieces(res, {"data: {not json at all\n\n"});
      } else if (scenario == "streamerror") {
        send_pieces(res, {"data: " + chunk("{\"content\":\"a\"}") + "\n\n",
                          "data: {\"error\":{\"message\":\"the engine fell over\",\"type\":\"server_error\"}}\n\n"});
      } else if (scenario == "long") {
        std::vector<std::string> pieces;
        for (int i = 0; i < 200; ++i) pieces.push_back("data: " + chunk("{\"content\":\"tok \"}") + "\n\n");
        pieces.push_back("data: [DONE]\n\n");
        send_pieces(res, pieces);
      }
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    QVERIFY(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }

  void cleanupTestCase() {
    server_.stop();
    thread_.join();
  }

  void splitStream() {
    auto client = RemoteClient::create(endpoint("split"));
    QVERIFY(client.is_ok());
    std::vector<OutputPiece> pieces;
    RemoteSampling sampling;
    sampling.temperature = 0.25f;
    sampling.max_tokens = 99;
    sampling.seed = 5;
    sampling.stop = {"END"};
    auto reply = client->stream_chat({{"system", "be brief", "", {}}, {"user", "hi", "", {}}}, sampling,
                                     [&](const OutputPiece& p) {
                                       pieces.push_back(p);
                                       return true;
                                     });
    QVERIFY2(reply.is_ok(), reply.is_ok() ? "" : reply.status().message().c_str());
    QCOMPARE(reply->reasoning, std::string("think"));
    QCOMPARE(reply->content, std::string("Hello, w\xc3\xb6rld!"));
    QCOMPARE(reply->finish_reason, std::string("stop"));
    QCOMPARE(reply->prompt_tokens, std::int64_t{7});
    QCOMPARE(reply->completion_tokens, std::int64_t{5});
    QCOMPARE(pieces.size(), std::size_t{4});
    QCOMPARE(pieces[0].channel, OutputChannel::reasoning);
    QCOMPARE(pieces[2].channel, OutputChannel::answer);
    // What went over the wire.
    QCOMPARE(last_auth_, std::string("Bearer sk-test"));
    QCOMPARE(last_body_["model"].get<std::string>(), std::string("remote-model"));
    QVERIFY(last_body_["stream"].get<bool>());
    QVERIFY(last_body_["stream_options"]["include_usage"].get<bool>());
    QCOMPARE(last_body_["temperature"].get<double>(), 0.25);
    QCOMPARE(last_body_["max_tokens"].get<int>(), 99);
    QCOMPARE(last_body_["seed"].get<int>(), 5);
    QCOMPARE(last_body_["stop"][0].get<std::string>(), std::string("END"));
    QCOMPARE(last_body_["messages"][1]["content"].get<std::string>(), std::string("hi"));
    QVERIFY(!last_body_.contains("top_p"));
  }

  void imagesGoAsDataUrls() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("dot.png").toStdString();
    {
      std::ofstream out(path, std::ios::binary);
      out << "\x89PNG\r\n\x1a\nabcd";
    }
    auto url = day0::remote::image_data_url(path);
    QVERIFY(url.is_ok());
    // base64 of the 12 bytes above, computed independently.
    QCOMPARE(*url, std::string("data:image/png;base64,iVBORw0KGgphYmNk"));
    QVERIFY(!day0::remote::image_data_url(DAY0_SOURCE_DIR "/README.md").is_ok());
    QVERIFY(!day0::remote::image_data_url(dir.filePath("missing.png").toStdString()).is_ok());

    auto client = RemoteClient::create(endpoint("split"));
    auto reply = client->stream_chat({{"user", "what is it", "", {*url}}}, {}, nullptr);
    QVERIFY(reply.is_ok());
    const auto& content = last_body_["messages"][0]["content"];
    QVERIFY(content.is_array());
    QCOMPARE(content[0]["type"].get<std::string>(), std::string("text"));
    QCOMPARE(content[1]["type"].get<std::string>(), std::string("image_url"));
    QCOMPARE(content[1]["image_url"]["url"].get<std::string>(), *url);
  }

  void listsModels() {
    auto client = RemoteClient::create({"http://127.0.0.1:" + std::to_string(port_), "", ""});
    auto names = client->list_models();
    QVERIFY(names.is_ok());
    QCOMPARE(*names, (std::vector<std::string>{"alpha", "beta"}));
  }

  void failures() {
    auto limited = RemoteClient::create(endpoint("ratelimited"))->stream_chat({{"user", "x", "", {}}}, {}, nullptr);
    QVERIFY(!limited.is_ok());
    QVERIFY2(QString::fromStdString(limited.status().message()).contains("HTTP 429: slow down please"),
             limited.status().message().c_str());

    auto truncated = RemoteClient::create(endpoint("truncated"))->stream_chat({{"user", "x", "", {}}}, {}, nullptr);
    QVERIFY(!truncated.is_ok());
    QVERIFY(QString::fromStdString(truncated.status().message()).contains("[DONE] missing"));

    auto garbage = RemoteClient::create(endpoint("garbage"))->stream_chat({{"user", "x", "", {}}}, {}, nullptr);
    QVERIFY(!garbage.is_ok());
    QVERIFY(QString::fromStdString(garbage.status().message()).contains("not JSON"));

    auto failed = RemoteClient::create(endpoint("streamerror"))->stream_chat({{"user", "x", "", {}}}, {}, nullptr);
    QVERIFY(!failed.is_ok());
    QVERIFY(QString::fromStdString(failed.status().message()).contains("the engine fell over"));

    // Nothing listens on port 1.
    auto refused =
        RemoteClient::create({"http://127.0.0.1:1", "", "m"})->stream_chat({{"user", "x", "", {}}}, {}, nullptr);
    QVERIFY(!refused.is_ok());
    QVERIFY(QString::fromStdString(refused.status().message()).contains("cannot reach"));

    QVERIFY(!RemoteClient::create({"127.0.0.1:8080", "", "m"}).is_ok());
    QVERIFY(!RemoteClient::create({"ftp://host/v1", "", "m"}).is_ok());
    QVERIFY(!RemoteClient::create({"http://", "", "m"}).is_ok());
  }

  void plainJsonReply() {
    std::string seen;
    auto reply = RemoteClient::create(endpoint("plainjson"))
                     ->stream_chat({{"user", "x", "", {}}}, {}, [&](const OutputPiece& p) {
                       seen += p.text;
                       return true;
                     });
    QVERIFY(reply.is_ok());
    QCOMPARE(reply->content, std::string("whole"));
    QCOMPARE(reply->reasoning, std::string("why"));
    QCOMPARE(seen, std::string("whywhole"));
    QCOMPARE(reply->finish_reason, std::string("length"));
    QCOMPARE(reply->completion_tokens, std::int64_t{2});
  }

  void callbackCancels() {
    int seen = 0;
    const auto start = std::chrono::steady_clock::now();
    auto reply =
        RemoteClient::create(endpoint("long"))->stream_chat({{"user", "x", "", {}}}, {}, [&](const OutputPiece&) {
          return ++seen < 3;
        });
    QVERIFY(reply.is_ok());
    QCOMPARE(reply->finish_reason, std::string("cancelled"));
    QCOMPARE(seen, 3);
    QCOMPARE(reply->content, std::string("tok tok tok "));
    // The 200-piece stream takes over a second to send; stopping early does not wait for it.
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(900));
  }
};

QTEST_GUILESS_MAIN(TestRemoteClient)
#include "test_remote_client.moc"
