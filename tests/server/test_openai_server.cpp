// day0-cli serve with the demo model, driven over loopback HTTP by the remote client and by raw
// requests: streaming and not, usage, stop strings, seeds, images, cancels on disconnect, bad
// requests in the OpenAI error shape, metrics, and a clean stop on SIGTERM.
#include <httplib.h>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/process_runner.h"
#include "day0/chat.h"
#include "remote/remote_client.h"

using day0::remote::RemoteClient;
using day0::remote::RemoteMessage;
using day0::remote::RemoteSampling;
using json = nlohmann::json;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const std::string kModel = DAY0_SOURCE_DIR "/tests/data/models/demo-random";
const std::string kKey = "sk-local-test";

// A Prometheus sample's value ("name{labels} value"), or -1.
double sample(const std::string& text, const std::string& series) {
  const std::size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace

class TestOpenAiServer : public QObject {
  Q_OBJECT

  QProcess server_;
  std::string url_;  // http://127.0.0.1:PORT
  int port_ = 0;

  std::unique_ptr<httplib::Client> http(bool with_key = true) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(60);
    if (with_key) c->set_bearer_token_auth(kKey);
    return c;
  }
  RemoteClient client() const { return *RemoteClient::create({url_, kKey, "demo"}); }

  json post_json(const json& body, int* status) const {
    auto res = http()->Post("/v1/chat/completions", body.dump(), "application/json");
    if (!res) return {};
    *status = res->status;
    return json::parse(res->body, nullptr, false);
  }

  // Checks an error reply: the status and {"error":{"message","type","param","code"}}.
  void expect_error(const httplib::Result& res, int status, const std::string& code) const {
    QVERIFY(res);
    QCOMPARE(res->status, status);
    const json j = json::parse(res->body, nullptr, false);
    QVERIFY2(!j.is_discarded() && j.contains("error"), res->body.c_str());
    const json& e = j["error"];
    QVERIFY(e["message"].is_string() && !e["message"].get<std::string>().empty());
    QVERIFY(e["type"].is_string());
    QVERIFY(e.contains("param"));
    QVERIFY2(e["code"] == code, res->body.c_str());
  }

  std::string metrics() const {
    auto res = http()->Get("/metrics");
    return res && res->status == 200 ? "\n" + res->body : "";
  }

 private slots:
  void initTestCase() {
    server_.setProcessEnvironment(day0::test::quiet_env());
    server_.start(kCli, {"serve", "--model", QString::fromStdString(kModel), "--port", "0", "--model-name", "demo",
                         "--api-key", QString::fromStdString(kKey), "--max-body-mb", "1", "--threads", "2"});
    QVERIFY(server_.waitForStarted(10000));
    QString line;
    for (int i = 0; i < 300 && !line.contains("/v1"); ++i) {
      server_.waitForReadyRead(100);
      line += QString::fromUtf8(server_.readAllStandardOutput());
    }
    const auto m = QRegularExpression("http://127\\.0\\.0\\.1:(\\d+)/v1").match(line);
    QVERIFY2(m.hasMatch(), qPrintable(line + QString::fromUtf8(server_.readAllStandardError())));
    port_ = m.captured(1).toInt();
    url_ = "http://127.0.0.1:" + std::to_string(port_);
  }

  void cleanupTestCase() {
    // SIGTERM: the server stops and exits 0.
    server_.terminate();
    QVERIFY(server_.waitForFinished(15000));
    QCOMPARE(server_.exitStatus(), QProcess::NormalExit);
    QCOMPARE(server_.exitCode(), 0);
    QVERIFY(QString::fromUtf8(server_.readAllStandardError()).contains("SIGTERM received"));
  }

  void refusesPublicHostWithoutKey() {
    const auto r =
        day0::test::run_program(kCli, {"serve", "--model", QString::fromStdString(kModel), "--host", "0.0.0.0"},
                                day0::test::quiet_env(), 20000);
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("without --api-key"));
  }

  void healthAndModels() {
    auto health = http(false)->Get("/health");
    QVERIFY(health && health->status == 200);
    QCOMPARE(json::parse(health->body)["status"].get<std::string>(), std::string("ok"));
    auto names = client().list_models();
    QVERIFY(names.is_ok());
    QCOMPARE(*names, std::vector<std::string>{"demo"});
    auto one = http()->Get("/v1/models/demo");
    QVERIFY(one && one->status == 200);
    QCOMPARE(json::parse(one->body)["id"].get<std::string>(), std::string("demo"));
  }

  // The same seed gives the same reply streamed and not; usage counts the prompt as the model's
  // own chat template and tokenizer do, and the reply within max_tokens.
  void streamedEqualsWhole() {
    const std::vector<day0::ChatMessage> chat = {{"system", "You are brief.", ""}, {"user", "Name three colours.", ""}};
    auto formatter = day0::ChatFormatter::load(kModel);
    QVERIFY(formatter.is_ok());
    const auto prompt = formatter->encode(chat, true);
    QVERIFY(prompt.is_ok());

    RemoteSampling sampling;
    sampling.temperature = 0.8f;
    sampling.seed = 1234;
    sampling.max_tokens = 24;
    std::string streamed;
    int pieces = 0;
    auto reply = client().stream_chat({{"system", "You are brief.", "", {}}, {"user", "Name three colours.", "", {}}},
                                      sampling, [&](const day0::OutputPiece& p) {
                                        streamed += p.text;
                                        ++pieces;
                                        return true;
                                      });
    QVERIFY2(reply.is_ok(), reply.is_ok() ? "" : reply.status().message().c_str());
    QCOMPARE(reply->prompt_tokens, static_cast<std::int64_t>(prompt->size()));
    QVERIFY(reply->completion_tokens >= 1 && reply->completion_tokens <= 24);
    QVERIFY(reply->finish_reason == (reply->completion_tokens == 24 ? "length" : "stop"));
    QVERIFY(pieces >= 1);

    int status = 0;
    const json whole = post_json({{"model", "demo"},
                                  {"messages",
                                   {{{"role", "system"}, {"content", "You are brief."}},
                                    {{"role", "user"}, {"content", "Name three colours."}}}},
                                  {"temperature", 0.8},
                                  {"seed", 1234},
                                  {"max_tokens", 24}},
                                 &status);
    QCOMPARE(status, 200);
    QCOMPARE(whole["object"].get<std::string>(), std::string("chat.completion"));
    QCOMPARE(whole["model"].get<std::string>(), std::string("demo"));
    const json& message = whole["choices"][0]["message"];
    QCOMPARE(message["role"].get<std::string>(), std::string("assistant"));
    const std::string text = message.value("reasoning_content", "") + message["content"].get<std::string>();
    QCOMPARE(reply->reasoning + reply->content, text);
    QCOMPARE(reply->reasoning, message.value("reasoning_content", std::string()));
    QCOMPARE(whole["usage"]["prompt_tokens"].get<std::int64_t>(), reply->prompt_tokens);
    QCOMPARE(whole["usage"]["completion_tokens"].get<std::int64_t>(), reply->completion_tokens);
    QCOMPARE(whole["usage"]["total_tokens"].get<std::int64_t>(), reply->prompt_tokens + reply->completion_tokens);
    QCOMPARE(whole["choices"][0]["finish_reason"].get<std::string>(), reply->finish_reason);
  }

  // The raw event stream: chunks, the usage chunk with no choices, then [DONE].
  // Day0's extensions: stream_options.include_progress streams the prompt's reading before the
  // reply; context_overflow leaves earlier turns out (a second server holds 1024 positions).
  void prefillProgressAndContextOverflow() {
    QProcess small;
    small.setProcessEnvironment(day0::test::quiet_env());
    small.start(kCli, {"serve", "--model", QString::fromStdString(kModel), "--port", "0", "--model-name", "demo",
                       "--threads", "2", "--context", "1024"});
    QVERIFY(small.waitForStarted(10000));
    QString line;
    for (int i = 0; i < 300 && !line.contains("/v1"); ++i) {
      small.waitForReadyRead(100);
      line += QString::fromUtf8(small.readAllStandardOutput());
    }
    const auto m = QRegularExpression("http://127\\.0\\.0\\.1:(\\d+)/v1").match(line);
    QVERIFY2(m.hasMatch(), qPrintable(line + QString::fromUtf8(small.readAllStandardError())));
    httplib::Client c("127.0.0.1", m.captured(1).toInt());
    c.set_read_timeout(60);
    std::string text;
    quint32 x = 9;
    const auto words = [&](int n) {
      std::string s;
      for (int i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        s += "abcdefghijklmnopqrstuvwxyz "[(x >> 16) % 27];
      }
      return s;
    };
    const auto events_of = [](const std::string& body) {
      std::vector<json> out;
      for (std::size_t at = 0; at < body.size();) {
        const std::size_t end = body.find("\n\n", at);
        if (end == std::string::npos) break;
        const std::string event = body.substr(at, end - at);
        at = end + 2;
        if (event.rfind("data: {", 0) == 0) out.push_back(json::parse(event.substr(6)));
      }
      return out;
    };

    json request = {{"messages", {{{"role", "user"}, {"content", words(600)}}}},
                    {"stream", true},
                    {"stream_options", {{"include_progress", true}}},
                    {"max_tokens", 3}};
    auto res = c.Post("/v1/chat/completions", request.dump(), "application/json");
    QVERIFY(res && res->status == 200);
    std::int64_t total = -1, last_done = -1;
    bool content_seen = false;
    int progress_chunks = 0;
    for (const json& e : events_of(res->body)) {
      if (e.contains("prefill")) {
        QVERIFY2(!content_seen, res->body.c_str());
        QVERIFY(e["choices"].empty());
        const std::int64_t done = e["prefill"]["done"], t = e["prefill"]["total"];
        if (total < 0) total = t;
        QCOMPARE(t, total);
        QVERIFY(done >= last_done && done <= total);
        last_done = done;
        ++progress_chunks;
      } else if (!e["choices"].empty() && e["choices"][0]["delta"].contains("content") &&
                 !e["choices"][0]["delta"]["content"].get<std::string>().empty()) {
        content_seen = true;
      }
    }
    QVERIFY2(progress_chunks >= 1 && total > 256 && last_done == total, res->body.c_str());
    // Not asked: no progress chunks.
    request["stream_options"] = {{"include_usage", true}};
    res = c.Post("/v1/chat/completions", request.dump(), "application/json");
    QVERIFY(res && res->status == 200);
    QVERIFY(res->body.find("\"prefill\"") == std::string::npos);

    // A conversation past the context.
    json messages = json::array({{{"role", "system"}, {"content", "Be brief."}}});
    for (int i = 0; i < 6; ++i) {
      messages.push_back({{"role", "user"}, {"content", words(300)}});
      messages.push_back({{"role", "assistant"}, {"content", words(100)}});
    }
    messages.push_back({{"role", "user"}, {"content", "and now?"}});
    json overflow = {{"messages", messages}, {"max_tokens", 4}};
    res = c.Post("/v1/chat/completions", overflow.dump(), "application/json");
    expect_error(res, 400, "context_length_exceeded");
    for (const char* policy : {"rolling-window", "truncate-middle"}) {
      overflow["context_overflow"] = policy;
      res = c.Post("/v1/chat/completions", overflow.dump(), "application/json");
      QVERIFY(res);
      QVERIFY2(res->status == 200, res->body.c_str());
      const json body = json::parse(res->body);
      const int dropped = body["context_overflow"]["dropped_messages"].get<int>();
      QVERIFY2(dropped > 0 && dropped % 2 == 0 && dropped < 12, res->body.c_str());  // whole turns
      QCOMPARE(res->get_header_value("X-Day0-Dropped-Messages"), std::to_string(dropped));
      QVERIFY(body["usage"]["prompt_tokens"].get<int>() <= 1024 - 4);
    }
    overflow["context_overflow"] = "sideways";
    expect_error(c.Post("/v1/chat/completions", overflow.dump(), "application/json"), 400, "invalid_value");
    small.terminate();
    QVERIFY(small.waitForFinished(15000));
  }

  void rawEventStream() {
    std::string body;
    auto res = http()->Post("/v1/chat/completions",
                            json{{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                 {"stream", true},
                                 {"stream_options", {{"include_usage", true}}},
                                 {"max_tokens", 5},
                                 {"seed", 3}}
                                .dump(),
                            "application/json");
    QVERIFY(res && res->status == 200);
    QVERIFY(res->get_header_value("Content-Type").rfind("text/event-stream", 0) == 0);
    std::vector<std::string> events;
    for (std::size_t at = 0; at < res->body.size();) {
      const std::size_t end = res->body.find("\n\n", at);
      QVERIFY(end != std::string::npos);
      std::string event = res->body.substr(at, end - at);
      at = end + 2;
      // A second without output (a slow or busy machine) sends a comment; clients skip it.
      if (event.rfind(":", 0) == 0) {
        QCOMPARE(event, std::string(": keep-alive"));
        continue;
      }
      events.push_back(std::move(event));
    }
    QVERIFY(events.size() >= 4);
    QCOMPARE(events.back(), std::string("data: [DONE]"));
    const json first = json::parse(events[0].substr(6));
    QCOMPARE(first["object"].get<std::string>(), std::string("chat.completion.chunk"));
    QCOMPARE(first["choices"][0]["delta"]["role"].get<std::string>(), std::string("assistant"));
    const json usage = json::parse(events[events.size() - 2].substr(6));
    QVERIFY(usage["choices"].empty());
    QVERIFY(usage["usage"]["completion_tokens"].get<int>() <= 5);
    const json last = json::parse(events[events.size() - 3].substr(6));
    QVERIFY(last["choices"][0]["finish_reason"].is_string());
    for (std::size_t i = 0; i + 1 < events.size(); ++i) QVERIFY(events[i].rfind("data: {", 0) == 0);
  }

  void seedsDecide() {
    RemoteSampling sampling;
    sampling.temperature = 1.0f;
    sampling.max_tokens = 16;
    const std::vector<RemoteMessage> chat = {{"user", "Tell me a story.", "", {}}};
    const auto text = [&](std::uint64_t seed) {
      sampling.seed = seed;
      auto r = client().stream_chat(chat, sampling, nullptr);
      return r.is_ok() ? r->reasoning + "|" + r->content : "error: " + r.status().message();
    };
    const std::string a = text(7), b = text(7);
    QCOMPARE(a, b);
    QVERIFY(a.rfind("error", 0) != 0);
    bool differs = false;
    for (std::uint64_t seed : {8, 9, 10}) differs = differs || text(seed) != a;
    QVERIFY2(differs, "three other seeds all gave the same 16 tokens");
  }

  // A stop string taken from an unconstrained reply cuts the same reply right before it.
  void stopString() {
    int status = 0;
    const json request = {{"messages", {{{"role", "user"}, {"content", "Count."}}}},
                          {"temperature", 1.0},
                          {"seed", 77},
                          {"max_tokens", 40}};
    const json free = post_json(request, &status);
    QCOMPARE(status, 200);
    const std::string content = free["choices"][0]["message"]["content"].get<std::string>();
    const std::string all = free["choices"][0]["message"].value("reasoning_content", "") + content;
    QVERIFY2(all.size() >= 8, all.c_str());
    // One whole UTF-8 character from the middle.
    std::size_t from = all.size() / 2, to = from + 1;
    while (from > 0 && (static_cast<unsigned char>(all[from]) & 0xC0) == 0x80) --from;
    to = from + 1;
    while (to < all.size() && (static_cast<unsigned char>(all[to]) & 0xC0) == 0x80) ++to;
    const std::string stop = all.substr(from, to - from);
    json stopped_request = request;
    stopped_request["stop"] = {stop};
    const json stopped = post_json(stopped_request, &status);
    QCOMPARE(status, 200);
    const json& m = stopped["choices"][0]["message"];
    QCOMPARE(m.value("reasoning_content", "") + m["content"].get<std::string>(), all.substr(0, all.find(stop)));
    QCOMPARE(stopped["choices"][0]["finish_reason"].get<std::string>(), std::string("stop"));
    QVERIFY(stopped["usage"]["completion_tokens"].get<int>() <= free["usage"]["completion_tokens"].get<int>());
  }

  void imagesAreRejected() {
    auto reply =
        client().stream_chat({{"user", "what is this?", "", {"data:image/png;base64,iVBORw0KGgphYmNk"}}}, {}, nullptr);
    QVERIFY(!reply.is_ok());
    QVERIFY2(
        QString::fromStdString(reply.status().message()).contains("HTTP 400: the model 'demo' does not accept images"),
        reply.status().message().c_str());
    const auto image = [&](const std::string& url) {
      return json{{"messages",
                   {{{"role", "user"},
                     {"content",
                      {{{"type", "text"}, {"text", "see"}}, {{"type", "image_url"}, {"image_url", {{"url", url}}}}}}}}}}
          .dump();
    };
    expect_error(
        http()->Post("/v1/chat/completions", image("data:image/png;base64,iVBORw0KGgphYmNk"), "application/json"), 400,
        "model_does_not_accept_images");
    expect_error(http()->Post("/v1/chat/completions", image("data:image/png;base64,!!notbase64"), "application/json"),
                 400, "invalid_image_url");
    expect_error(http()->Post("/v1/chat/completions", image("data:text/html;base64,aGk="), "application/json"), 400,
                 "invalid_image_url");
    expect_error(http()->Post("/v1/chat/completions", image("/no/such/picture.png"), "application/json"), 400,
                 "invalid_image_url");
  }

  void badRequests() {
    const std::string ok_messages = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    expect_error(http()->Post("/v1/chat/completions", "{\"messages\": [", "application/json"), 400, "invalid_json");
    expect_error(http()->Post("/v1/chat/completions", "{\"messages\":\"hi\"}", "application/json"), 400,
                 "invalid_type");
    expect_error(
        http()->Post("/v1/chat/completions", "{" + ok_messages + ",\"temperature\":\"hot\"}", "application/json"), 400,
        "invalid_type");
    expect_error(http()->Post("/v1/chat/completions", "{" + ok_messages + ",\"temperature\":7}", "application/json"),
                 400, "invalid_value");
    expect_error(
        http()->Post("/v1/chat/completions", "{" + ok_messages + ",\"max_tokens\":100000000}", "application/json"), 400,
        "context_length_exceeded");
    expect_error(http()->Post("/v1/chat/completions", "{" + ok_messages + ",\"model\":\"gpt-9\"}", "application/json"),
                 404, "model_not_found");
    expect_error(http()->Get("/v1/models/gpt-9"), 404, "model_not_found");
    expect_error(http()->Get("/v1/embeddings"), 404, "not_found");
    // Over the 1 MiB limit the server was started with.
    const std::string huge = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + std::string(1100000, 'a') + "\"}]}";
    expect_error(http()->Post("/v1/chat/completions", huge, "application/json"), 413, "request_too_large");
    // Authentication: none, and a wrong key.
    expect_error(http(false)->Post("/v1/chat/completions", "{" + ok_messages + "}", "application/json"), 401,
                 "invalid_api_key");
    auto wrong = http(false);
    wrong->set_bearer_token_auth("sk-wrong");
    expect_error(wrong->Get("/v1/models"), 401, "invalid_api_key");
    expect_error(http(false)->Get("/metrics"), 401, "invalid_api_key");
    // The server still answers after all that.
    int status = 0;
    post_json(json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}}, &status);
    QCOMPARE(status, 200);
  }

  // Parameters the server does not implement are refused by name, unless they ask for nothing.
  void unsupportedParameters() {
    const json messages = {{{"role", "user"}, {"content", "hi"}}};
    const auto refused = [&](const json& extra, const std::string& code, const std::vector<std::string>& names) {
      json body = {{"messages", messages}, {"max_tokens", 2}};
      body.update(extra);
      auto res = http()->Post("/v1/chat/completions", body.dump(), "application/json");
      expect_error(res, 400, code);
      const std::string message = json::parse(res->body)["error"]["message"].get<std::string>();
      for (const auto& n : names) QVERIFY2(message.find("'" + n + "'") != std::string::npos, message.c_str());
      QCOMPARE(json::parse(res->body)["error"]["param"].get<std::string>(), names.front());
    };
    const json tool = {{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", json::object()}}}};
    refused({{"tools", json::array({tool})}}, "unsupported_parameter", {"tools"});
    refused({{"tool_choice", "auto"}}, "unsupported_parameter", {"tool_choice"});
    refused({{"response_format", {{"type", "json_object"}}}}, "unsupported_parameter", {"response_format"});
    refused({{"logprobs", true}, {"top_logprobs", 3}}, "unsupported_parameter", {"logprobs", "top_logprobs"});
    refused({{"presence_penalty", 0.5}}, "unsupported_parameter", {"presence_penalty"});
    refused({{"logit_bias", {{"50256", -100}}}}, "unsupported_parameter", {"logit_bias"});
    refused({{"frobnicate", 1}}, "unknown_parameter", {"frobnicate"});
    expect_error(
        http()->Post("/v1/chat/completions", json{{"messages", messages}, {"n", 2}}.dump(), "application/json"), 400,
        "invalid_value");
    // Their defaults and bookkeeping fields are fine.
    int status = 0;
    const json ok = post_json({{"messages", messages},
                               {"max_tokens", 2},
                               {"tools", json::array()},
                               {"tool_choice", "none"},
                               {"logprobs", false},
                               {"response_format", {{"type", "text"}}},
                               {"frequency_penalty", 0},
                               {"user", "someone"},
                               {"n", 1}},
                              &status);
    QCOMPARE(status, 200);
    QVERIFY(ok.contains("choices"));
  }

  // finish_reason is one of OpenAI's values: "length" when max_tokens ran out, streamed or not.
  void finishReasons() {
    int status = 0;
    const json whole = post_json(
        {{"messages", {{{"role", "user"}, {"content", "Count to a hundred."}}}}, {"max_tokens", 1}, {"seed", 7}},
        &status);
    QCOMPARE(status, 200);
    QCOMPARE(whole["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
    auto res = http()->Post(
        "/v1/chat/completions",
        json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"stream", true}, {"max_tokens", 1}, {"seed", 7}}
            .dump(),
        "application/json");
    QVERIFY(res && res->status == 200);
    QVERIFY2(res->body.find("\"finish_reason\":\"length\"") != std::string::npos, res->body.c_str());
    for (const char* wrong : {"cancelled", "\"error\"", "eos", "max_tokens"})
      QVERIFY2(res->body.find(std::string("\"finish_reason\":\"") + wrong) == std::string::npos, res->body.c_str());
  }

  // CORS is off by default: no Access-Control headers, preflights refused.
  void corsOffByDefault() {
    httplib::Headers origin = {{"Origin", "http://localhost:3000"}};
    auto res = http()->Get("/v1/models", origin);
    QVERIFY(res && res->status == 200);
    QVERIFY(!res->has_header("Access-Control-Allow-Origin"));
    res = http(false)->Options("/v1/chat/completions",
                               {{"Origin", "http://localhost:3000"}, {"Access-Control-Request-Method", "POST"}});
    expect_error(res, 403, "cors_not_allowed");
    QVERIFY(!res->has_header("Access-Control-Allow-Origin"));
  }

  // With --cors-origin the listed origins get the headers (errors too) and their preflights an
  // answer without a key; other origins do not.
  void corsForListedOrigins() {
    QProcess server;
    server.setProcessEnvironment(day0::test::quiet_env());
    server.start(kCli, {"serve", "--model", QString::fromStdString(kModel), "--port", "0", "--api-key",
                        QString::fromStdString(kKey), "--threads", "1", "--cors-origin",
                        "http://localhost:3000, https://chat.example/"});
    QVERIFY(server.waitForStarted(10000));
    QString line;
    for (int i = 0; i < 300 && !line.contains("/v1"); ++i) {
      server.waitForReadyRead(100);
      line += QString::fromUtf8(server.readAllStandardOutput());
    }
    const auto m = QRegularExpression("http://127\\.0\\.0\\.1:(\\d+)/v1").match(line);
    QVERIFY2(m.hasMatch(), qPrintable(line));
    httplib::Client c("127.0.0.1", m.captured(1).toInt());
    auto pre = c.Options("/v1/chat/completions", {{"Origin", "https://chat.example"},
                                                  {"Access-Control-Request-Method", "POST"},
                                                  {"Access-Control-Request-Headers", "authorization, content-type"}});
    QVERIFY(pre);
    QCOMPARE(pre->status, 204);
    QCOMPARE(pre->get_header_value("Access-Control-Allow-Origin"), std::string("https://chat.example"));
    QVERIFY(pre->get_header_value("Access-Control-Allow-Methods").find("POST") != std::string::npos);
    QCOMPARE(pre->get_header_value("Access-Control-Allow-Headers"), std::string("authorization, content-type"));
    auto other = c.Options("/v1/chat/completions", {{"Origin", "http://evil.example"}});
    QVERIFY(other);
    QCOMPARE(other->status, 403);
    QVERIFY(!other->has_header("Access-Control-Allow-Origin"));
    // A real request from the page: the header comes back, also on an error the page must read.
    c.set_bearer_token_auth(kKey);
    auto models = c.Get("/v1/models", {{"Origin", "http://localhost:3000"}});
    QVERIFY(models && models->status == 200);
    QCOMPARE(models->get_header_value("Access-Control-Allow-Origin"), std::string("http://localhost:3000"));
    httplib::Client no_key("127.0.0.1", m.captured(1).toInt());
    auto denied = no_key.Get("/v1/models", {{"Origin", "http://localhost:3000"}});
    QVERIFY(denied && denied->status == 401);
    QCOMPARE(denied->get_header_value("Access-Control-Allow-Origin"), std::string("http://localhost:3000"));
    auto stranger = c.Get("/v1/models", {{"Origin", "http://evil.example"}});
    QVERIFY(stranger && stranger->status == 200);
    QVERIFY(!stranger->has_header("Access-Control-Allow-Origin"));
    server.terminate();
    QVERIFY(server.waitForFinished(15000));
    // A malformed origin is a usage error.
    const auto bad = day0::test::run_program(
        kCli, {"serve", "--model", QString::fromStdString(kModel), "--cors-origin", "localhost:3000"},
        day0::test::quiet_env(), 20000);
    QCOMPARE(bad.exit_code, 2);
    QVERIFY(bad.err.contains("--cors-origin"));
  }

  // A streaming client that goes away cancels its generation: the server counts it cancelled,
  // well short of max_tokens, and its queue empties.
  void disconnectCancels() {
    const std::string before = metrics();
    const double cancelled_before = sample(before, "day0_chat_completions_total{finish_reason=\"cancelled\"}");
    double tokens_before = sample(before, "day0_completion_tokens_total");
    QVERIFY(cancelled_before >= 0 && tokens_before >= 0);

    // A request the demo model answers with a few hundred tokens (it ends the turn by itself
    // later); the same request streamed and dropped after two pieces of text must end well
    // before. How long the model talks depends on the seed and on the prompt, which holds
    // today's date (the chat template's strftime_now), so the first seed that talks for 200
    // tokens or more is taken.
    json request;
    int full = 0;
    for (int seed = 1; seed <= 40 && full < 200; ++seed) {
      request = {{"messages", {{{"role", "user"}, {"content", "Write a poem."}}}},
                 {"temperature", 1.5},
                 {"seed", seed},
                 {"max_tokens", 2000}};
      tokens_before = sample(metrics(), "day0_completion_tokens_total");
      int status = 0;
      const json probe = post_json(request, &status);
      QCOMPARE(status, 200);
      full = probe["usage"]["completion_tokens"].get<int>();
    }
    QVERIFY2(full >= 200, qPrintable(QString::number(full)));
    const double tokens_mid = sample(metrics(), "day0_completion_tokens_total");

    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.set_header("Authorization", "Bearer " + kKey);
    req.set_header("Content-Type", "application/json");
    json streamed = request;
    streamed["stream"] = true;
    req.body = streamed.dump();
    // Hang up after the second event that carries generated text. Counting raw chunks is not
    // enough: the first event (the role) can come alone, and a machine that has produced
    // nothing for a second (prefill under a sanitizer) sends keep-alive comments, so three
    // chunks can all arrive before the first token.
    std::string received;
    int token_events = 0;
    req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
      received.append(data, size);
      for (std::size_t end; (end = received.find("\n\n")) != std::string::npos; received.erase(0, end + 2)) {
        const std::string event = received.substr(0, end);
        if (event.rfind("data: {", 0) == 0 && event.find("\"role\"") == std::string::npos &&
            event.find("content\"") != std::string::npos)
          ++token_events;
      }
      return token_events < 2;
    };
    auto res = http()->send(req);
    QVERIFY(!res);  // the receiver stopped it
    QCOMPARE(token_events, 2);

    // The server notices the hang-up at its next write; instrumented builds run slower.
    const int polls = 100 * std::max(1, qEnvironmentVariableIntValue("DAY0_TEST_TIME_SCALE"));
    std::string after;
    for (int i = 0; i < polls; ++i) {
      after = metrics();
      if (sample(after, "day0_chat_completions_total{finish_reason=\"cancelled\"}") > cancelled_before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    QCOMPARE(sample(after, "day0_chat_completions_total{finish_reason=\"cancelled\"}"), cancelled_before + 1);
    QCOMPARE(sample(after, "day0_queue_length"), 0.0);
    QCOMPARE(sample(after, "day0_generations_running"), 0.0);
    const double generated = sample(after, "day0_completion_tokens_total") - tokens_mid;
    QCOMPARE(tokens_mid - tokens_before, static_cast<double>(full));
    QVERIFY2(generated >= 1 && generated < full, qPrintable(QString::number(generated)));
  }

  // day0-cli chat --remote keeps the conversation in the local history like a local model.
  void cliChatRemote() {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.db");
    QProcess chat;
    chat.setProcessEnvironment(day0::test::quiet_env());
    chat.start(kCli, {"chat", "--remote", QString::fromStdString(url_), "--api-key", QString::fromStdString(kKey),
                      "--db", db, "--max-new-tokens", "6", "--seed", "3"});
    QVERIFY(chat.waitForStarted(10000));
    chat.write("Hello over HTTP\n");
    chat.closeWriteChannel();
    QVERIFY(chat.waitForFinished(30000));
    const QString err = QString::fromUtf8(chat.readAllStandardError());
    QVERIFY2(chat.exitCode() == 0, qPrintable(err));
    QVERIFY2(err.contains(QRegularExpression("\\[\\d+ tokens, ")), qPrintable(err));
    const auto shown =
        day0::test::run_program(kCli, {"history", "show", "1", "--db", db, "--json"}, day0::test::quiet_env());
    QCOMPARE(shown.exit_code, 0);
    const json h = json::parse(shown.out.toStdString(), nullptr, false);
    QVERIFY2(!h.is_discarded(), qPrintable(shown.out));
    const json& c = h["conversations"][0];
    QCOMPARE(c["model"].get<std::string>(), std::string("demo"));
    QCOMPARE(c["messages"].size(), std::size_t{2});
    QCOMPARE(c["messages"][0]["content"].get<std::string>(), std::string("Hello over HTTP"));
    const json& reply = c["messages"][1];
    QCOMPARE(reply["role"].get<std::string>(), std::string("assistant"));
    QCOMPARE(reply["state"].get<std::string>(), std::string("complete"));
    QVERIFY(reply["completion_tokens"].get<int>() >= 1 && reply["completion_tokens"].get<int>() <= 6);
    QVERIFY(reply["prompt_tokens"].get<int>() > 0);
  }

  // An image attached in `chat --remote` goes to the server as a data URL (this text-only model
  // refuses it, naming images) and stays with its message in the history.
  void cliChatRemoteSendsImages() {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.db");
    const QString image = QStringLiteral(DAY0_TEST_DATA_DIR "/vision/small_56x84.png");
    QProcess chat;
    chat.setProcessEnvironment(day0::test::quiet_env());
    chat.start(kCli, {"chat", "--remote", QString::fromStdString(url_), "--api-key", QString::fromStdString(kKey),
                      "--db", db, "--max-new-tokens", "6"});
    QVERIFY(chat.waitForStarted(10000));
    chat.write(("/image " + image + "\nWhat is in it?\nAnd without one?\n").toUtf8());
    chat.closeWriteChannel();
    QVERIFY(chat.waitForFinished(30000));
    const QString out = QString::fromUtf8(chat.readAllStandardOutput());
    const QString err = QString::fromUtf8(chat.readAllStandardError());
    // A turn failed, so the piped run says so in its exit status.
    QVERIFY2(chat.exitCode() == 1, qPrintable(err));
    QVERIFY2(out.contains("image attached"), qPrintable(out));
    QVERIFY2(err.contains("HTTP 400") && err.contains("image"), qPrintable(err));
    // The refused turn is dropped from the conversation; the next one goes through.
    QVERIFY2(err.contains(QRegularExpression("\\[\\d+ tokens, ")), qPrintable(err));
    const auto shown =
        day0::test::run_program(kCli, {"history", "show", "1", "--db", db, "--json"}, day0::test::quiet_env());
    QCOMPARE(shown.exit_code, 0);
    const json h = json::parse(shown.out.toStdString(), nullptr, false);
    QVERIFY2(!h.is_discarded(), qPrintable(shown.out));
    const json& messages = h["conversations"][0]["messages"];
    QCOMPARE(messages[0]["content"].get<std::string>(), std::string("What is in it?"));
    QCOMPARE(messages[0]["attachments"].size(), std::size_t{1});
    QCOMPARE(messages[0]["attachments"][0]["file_name"].get<std::string>(), std::string("small_56x84.png"));
    QCOMPARE(messages[1]["state"].get<std::string>(), std::string("error"));
    QCOMPARE(messages.back()["state"].get<std::string>(), std::string("complete"));
  }

  void metricsText() {
    const std::string m = metrics();
    QVERIFY(sample(m, "day0_http_responses_total{code=\"200\"}") >= 1);
    QVERIFY(sample(m, "day0_http_responses_total{code=\"401\"}") >= 1);
    QVERIFY(sample(m, "day0_time_to_first_token_seconds_count") >= 1);
    QVERIFY(sample(m, "day0_time_to_first_token_seconds_bucket{le=\"+Inf\"}") ==
            sample(m, "day0_time_to_first_token_seconds_count"));
    QVERIFY(sample(m, "day0_decode_tokens_per_second_count") >= 1);
    QVERIFY(sample(m, "day0_resident_memory_bytes") > 1e6);
    QVERIFY(m.find("# TYPE day0_queue_length gauge") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestOpenAiServer)
#include "test_openai_server.moc"
