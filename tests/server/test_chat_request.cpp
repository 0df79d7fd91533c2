// Reading OpenAI chat requests: what is accepted, and the status, param and code of what is not.
#include <QtTest>

#include <nlohmann/json.hpp>
#include <random>

#include "common/base64.h"
#include "server/chat_request.h"
#include "server/openai_server.h"
#include "server/request_images.h"

using day0::server::ApiError;
using day0::server::data_url_problem;
using day0::server::parse_chat_request;
using day0::server::RequestLimits;

namespace {

ApiError rejection(const std::string& body, const RequestLimits& limits = {}) {
  ApiError e;
  e.status = 0;
  const auto r = parse_chat_request(body, limits, &e);
  return r ? ApiError{0, "accepted"} : e;
}

}  // namespace

class TestChatRequest : public QObject {
  Q_OBJECT
 private slots:
  void fullRequest() {
    ApiError e;
    const auto r = parse_chat_request(
        "{\"model\":\"m\",\"messages\":[{\"role\":\"developer\",\"content\":\"be brief\"},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]},"
        "{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"hm\"}],"
        "\"temperature\":0.5,\"top_p\":0.9,\"max_completion_tokens\":7,\"max_tokens\":9,\"seed\":42,"
        "\"stop\":[\"x\",\"yz\"],\"stream\":true,\"stream_options\":{\"include_usage\":true},\"n\":1}",
        {}, &e);
    QVERIFY2(r.has_value(), e.message.c_str());
    QCOMPARE(*r->model, std::string("m"));
    QCOMPARE(r->messages.size(), std::size_t{3});
    QCOMPARE(r->messages[0].role, std::string("system"));
    QCOMPARE(r->messages[1].content, std::string("ab"));
    QCOMPARE(r->messages[2].reasoning, std::string("hm"));
    QCOMPARE(r->temperature, 0.5f);
    QCOMPARE(r->top_p, 0.9f);
    QCOMPARE(*r->max_tokens, std::int64_t{7});  // max_completion_tokens wins over the older name
    QCOMPARE(*r->seed, std::uint64_t{42});
    QCOMPARE(r->stop, (std::vector<std::string>{"x", "yz"}));
    QVERIFY(r->stream);
    QVERIFY(r->include_usage);
    QVERIFY(r->images.empty());
  }

  // Unimplemented parameters at values that ask for nothing, and bookkeeping fields, pass.
  void harmlessParameters() {
    ApiError e;
    const auto r = parse_chat_request(
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[],\"tool_choice\":\"none\","
        "\"logprobs\":false,\"top_logprobs\":null,\"response_format\":{\"type\":\"text\"},\"presence_penalty\":0,"
        "\"frequency_penalty\":0.0,\"logit_bias\":{},\"user\":\"u\",\"metadata\":{\"k\":\"v\"},\"store\":false,"
        "\"parallel_tool_calls\":true,\"modalities\":[\"text\"]}",
        {}, &e);
    QVERIFY2(r.has_value(), e.message.c_str());
    // Several at once are all named.
    const ApiError many =
        rejection("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{}],\"logprobs\":true,\"foo\":1}");
    QCOMPARE(many.status, 400);
    for (const char* name : {"'tools'", "'logprobs'", "'foo'"})
      QVERIFY2(many.message.find(name) != std::string::npos, many.message.c_str());
  }

  void defaults() {
    ApiError e;
    const auto r =
        parse_chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stop\":\"END\"}", {}, &e);
    QVERIFY(r.has_value());
    QVERIFY(!r->model && !r->max_tokens && !r->seed && !r->stream);
    QCOMPARE(r->temperature, 1.0f);
    QCOMPARE(r->stop, std::vector<std::string>{"END"});
  }

  // Day0's extensions: off unless asked for.
  void extensions() {
    ApiError e;
    auto r = parse_chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", {}, &e);
    QVERIFY(r.has_value());
    QVERIFY(!r->include_progress);
    QCOMPARE(r->context_overflow, day0::ContextOverflow::stop);
    r = parse_chat_request(
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true,"
        "\"stream_options\":{\"include_progress\":true},\"context_overflow\":\"rolling-window\"}",
        {}, &e);
    QVERIFY(r.has_value());
    QVERIFY(r->include_progress);
    QCOMPARE(r->context_overflow, day0::ContextOverflow::rolling_window);
  }

  void rejected_data() {
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("param");
    QTest::addColumn<QString>("code");
    const QString m = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    QTest::newRow("not json") << "{\"messages\": ["
                              << ""
                              << "invalid_json";
    QTest::newRow("array body") << "[1,2]"
                                << ""
                                << "invalid_type";
    QTest::newRow("no messages") << "{}"
                                 << "messages"
                                 << "missing_required_parameter";
    QTest::newRow("messages string") << "{\"messages\":\"hi\"}"
                                     << "messages"
                                     << "invalid_type";
    QTest::newRow("messages empty") << "{\"messages\":[]}"
                                    << "messages"
                                    << "invalid_value";
    QTest::newRow("role number") << "{\"messages\":[{\"role\":1,\"content\":\"x\"}]}"
                                 << "messages[0].role"
                                 << "invalid_type";
    QTest::newRow("role unknown") << "{\"messages\":[{\"role\":\"king\",\"content\":\"x\"}]}"
                                  << "messages[0].role"
                                  << "invalid_value";
    QTest::newRow("content missing") << "{\"messages\":[{\"role\":\"user\"}]}"
                                     << "messages[0].content"
                                     << "missing_required_parameter";
    QTest::newRow("content number") << "{\"messages\":[{\"role\":\"user\",\"content\":5}]}"
                                    << "messages[0].content"
                                    << "invalid_type";
    QTest::newRow("part type") << "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"audio\"}]}]}"
                               << "messages[0].content[0].type"
                               << "invalid_value";
    QTest::newRow("temperature string") << "{" + m + ",\"temperature\":\"hot\"}"
                                        << "temperature"
                                        << "invalid_type";
    QTest::newRow("temperature high") << "{" + m + ",\"temperature\":2.5}"
                                      << "temperature"
                                      << "invalid_value";
    QTest::newRow("top_p zero") << "{" + m + ",\"top_p\":0}"
                                << "top_p"
                                << "invalid_value";
    QTest::newRow("max_tokens float") << "{" + m + ",\"max_tokens\":1.5}"
                                      << "max_tokens"
                                      << "invalid_type";
    QTest::newRow("max_tokens zero") << "{" + m + ",\"max_tokens\":0}"
                                     << "max_tokens"
                                     << "invalid_value";
    QTest::newRow("seed string") << "{" + m + ",\"seed\":\"7\"}"
                                 << "seed"
                                 << "invalid_type";
    QTest::newRow("stream string") << "{" + m + ",\"stream\":\"yes\"}"
                                   << "stream"
                                   << "invalid_type";
    QTest::newRow("stop number") << "{" + m + ",\"stop\":3}"
                                 << "stop"
                                 << "invalid_type";
    QTest::newRow("stop five") << "{" + m + ",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}"
                               << "stop"
                               << "invalid_value";
    QTest::newRow("stop empty string") << "{" + m + ",\"stop\":[\"\"]}"
                                       << "stop"
                                       << "invalid_value";
    QTest::newRow("n two") << "{" + m + ",\"n\":2}"
                           << "n"
                           << "invalid_value";
    QTest::newRow("model number") << "{" + m + ",\"model\":3}"
                                  << "model"
                                  << "invalid_type";
    QTest::newRow("bad data url") << "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
                                     "\"image_url\":{\"url\":\"data:image/png;base64,@@@@\"}}]}]}"
                                  << "messages[0].content[0].image_url"
                                  << "invalid_image_url";
    QTest::newRow("http image") << "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
                                   "\"image_url\":{\"url\":\"http://example.com/a.png\"}}]}]}"
                                << "messages[0].content[0].image_url"
                                << "invalid_image_url";
    QTest::newRow("missing image file") << "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
                                           "\"image_url\":\"/no/such/file.png\"}]}]}"
                                        << "messages[0].content[0].image_url"
                                        << "invalid_image_url";
    // Parameters the server does not implement, and names OpenAI does not define.
    QTest::newRow("tools") << "{" + m + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}"
                           << "tools"
                           << "unsupported_parameter";
    QTest::newRow("tool_choice") << "{" + m + ",\"tool_choice\":\"required\"}"
                                 << "tool_choice"
                                 << "unsupported_parameter";
    QTest::newRow("response_format") << "{" + m + ",\"response_format\":{\"type\":\"json_schema\"}}"
                                     << "response_format"
                                     << "unsupported_parameter";
    QTest::newRow("logprobs") << "{" + m + ",\"logprobs\":true}"
                              << "logprobs"
                              << "unsupported_parameter";
    QTest::newRow("top_logprobs") << "{" + m + ",\"top_logprobs\":2}"
                                  << "top_logprobs"
                                  << "unsupported_parameter";
    QTest::newRow("frequency_penalty") << "{" + m + ",\"frequency_penalty\":1}"
                                       << "frequency_penalty"
                                       << "unsupported_parameter";
    QTest::newRow("n") << "{" + m + ",\"n\":3}"
                       << "n"
                       << "invalid_value";
    QTest::newRow("overflow policy") << "{" + m + ",\"context_overflow\":\"sideways\"}"
                                     << "context_overflow"
                                     << "invalid_value";
    QTest::newRow("overflow type") << "{" + m + ",\"context_overflow\":3}"
                                   << "context_overflow"
                                   << "invalid_value";
    QTest::newRow("progress type") << "{" + m + ",\"stream_options\":{\"include_progress\":1}}"
                                   << "stream_options.include_progress"
                                   << "invalid_type";
    QTest::newRow("unknown") << "{" + m + ",\"temperatur\":1}"
                             << "temperatur"
                             << "unknown_parameter";
  }
  void rejected() {
    QFETCH(QString, body);
    QFETCH(QString, param);
    QFETCH(QString, code);
    const ApiError e = rejection(body.toStdString());
    QCOMPARE(e.status, 400);
    QVERIFY(!e.message.empty());
    QCOMPARE(QString::fromStdString(e.param), param);
    QCOMPARE(QString::fromStdString(e.code), code);
    // The wire shape: {"error":{"message","type","param","code"}}, param null when empty.
    const auto j = nlohmann::json::parse(day0::server::error_json(e));
    QVERIFY(j["error"]["message"].is_string());
    QCOMPARE(j["error"]["type"].get<std::string>(), std::string("invalid_request_error"));
    QVERIFY(param.isEmpty() ? j["error"]["param"].is_null() : j["error"]["param"].is_string());
    QCOMPARE(QString::fromStdString(j["error"]["code"].get<std::string>()), code);
  }

  void messageCountLimit() {
    RequestLimits limits;
    limits.max_messages = 3;
    std::string body = "{\"messages\":[";
    for (int i = 0; i < 4; ++i) body += std::string(i ? "," : "") + "{\"role\":\"user\",\"content\":\"x\"}";
    body += "]}";
    QVERIFY(QString::fromStdString(rejection(body, limits).message).contains("the limit is 3"));
  }

  void images() {
    ApiError e;
    const auto r = parse_chat_request(
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"what is this\"},"
        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBORw0KGgphYmNk\"}},"
        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"file://" DAY0_SOURCE_DIR "/README.md\"}}]}]}",
        {}, &e);
    QVERIFY2(r.has_value(), e.message.c_str());
    QCOMPARE(r->images.size(), std::size_t{2});
    QCOMPARE(r->messages[0].content, std::string("what is this"));
    QCOMPARE(r->images[0].url, std::string("data:image/png;base64,iVBORw0KGgphYmNk"));
    QCOMPARE(r->images[1].url, std::string("file://" DAY0_SOURCE_DIR "/README.md"));
    QCOMPARE(r->images[1].param, std::string("messages[0].content[2].image_url"));
  }

  // Files on the server are for clients on its own machine: with server_image_files off (a remote
  // client), a path or file:// URL is refused without telling whether the file exists, and a
  // data URL still goes through.
  void serverFilesOnlyForLocalClients() {
    RequestLimits remote;
    remote.server_image_files = false;
    for (const std::string url : {"file://" DAY0_SOURCE_DIR "/README.md", DAY0_SOURCE_DIR "/README.md",
                                  "/no/such/file.png"}) {
      ApiError e;
      const auto r = parse_chat_request(
          "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":\"" + url +
              "\"}]}]}",
          remote, &e);
      QVERIFY(!r.has_value());
      QCOMPARE(e.code, std::string("invalid_image_url"));
      QVERIFY2(e.message.find("data URL") != std::string::npos && e.message.find("exist") == std::string::npos,
               e.message.c_str());
    }
    ApiError e;
    const auto r = parse_chat_request(
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
        "\"image_url\":\"data:image/png;base64,iVBORw0KGgphYmNk\"}]}]}",
        remote, &e);
    QVERIFY2(r.has_value(), e.message.c_str());
    QVERIFY(day0::server::is_loopback_host("127.0.0.1") && day0::server::is_loopback_host("::1") &&
            day0::server::is_loopback_host("::ffff:127.0.0.1"));
    QVERIFY(!day0::server::is_loopback_host("192.168.1.20") && !day0::server::is_loopback_host("::ffff:10.0.0.1"));
  }

  // Each image part keeps its message and its place among the text parts, in order.
  void imagePlaces() {
    ApiError e;
    const auto r = parse_chat_request(
        "{\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":["
        "{\"type\":\"image_url\",\"image_url\":\"data:image/png;base64,iVBORw0KGgphYmNk\"},"
        "{\"type\":\"text\",\"text\":\"before \"},"
        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/jpeg;base64,/9j/4A==\"}},"
        "{\"type\":\"text\",\"text\":\"after\"}]}]}",
        {}, &e);
    QVERIFY2(r.has_value(), e.message.c_str());
    QCOMPARE(r->messages[1].content, std::string("before after"));
    QCOMPARE(r->images.size(), std::size_t{2});
    QCOMPARE(r->images[0].message, std::size_t{1});
    QCOMPARE(r->images[0].offset, std::size_t{0});
    QCOMPARE(r->images[1].message, std::size_t{1});
    QCOMPARE(r->images[1].offset, std::size_t{7});
    QCOMPARE(r->images[1].param, std::string("messages[1].content[2].image_url"));
  }

  // More image parts than the limit, across messages, are a 400 naming the first one over it.
  void imageCountLimit() {
    RequestLimits limits;
    limits.max_images = 2;
    const std::string image = "{\"type\":\"image_url\",\"image_url\":\"data:image/png;base64,iVBORw0KGgphYmNk\"}";
    const std::string two = "{\"messages\":[{\"role\":\"user\",\"content\":[" + image +
                            "]},{\"role\":\"user\",\"content\":[" + image + "]}]}";
    QCOMPARE(rejection(two, limits).message, std::string("accepted"));
    const std::string three = "{\"messages\":[{\"role\":\"user\",\"content\":[" + image +
                              "]},{\"role\":\"user\",\"content\":[" + image + "," + image + "]}]}";
    const ApiError e = rejection(three, limits);
    QCOMPARE(e.status, 400);
    QCOMPARE(e.code, std::string("too_many_images"));
    QCOMPARE(e.param, std::string("messages[1].content[1]"));
    QVERIFY2(QString::fromStdString(e.message).contains("more than 2 images"), e.message.c_str());
  }

  void dataUrls() {
    QVERIFY(!data_url_problem("data:image/png;base64,iVBORw0KGgphYmNk"));
    QVERIFY(!data_url_problem("data:image/jpeg;base64,/9j/4A=="));
    QVERIFY(!data_url_problem("data:image/gif;base64,R0lGODlhAQ=="));
    QVERIFY(data_url_problem("data:text/plain;base64,aGk="));  // not an image
    QVERIFY(data_url_problem("data:image/png,rawbytes"));      // not base64
    QVERIFY(data_url_problem("data:image/png;base64,"));       // empty
    QVERIFY(data_url_problem("data:image/png;base64,abc"));    // length not a multiple of 4
    QVERIFY(data_url_problem("data:image/png;base64,ab=c"));   // padding inside
    QVERIFY(data_url_problem("data:image/png;base64,ab c"));   // a space
    QVERIFY(data_url_problem("data:image/png;base64,a==="));   // three padding characters
    QVERIFY(data_url_problem("image/png;base64,aGk="));        // no scheme
  }

  // Base64 payloads decode to their bytes (every length's padding); anything else is refused.
  void base64() {
    std::mt19937 rng(3);
    for (int n = 0; n < 40; ++n) {
      QByteArray bytes(n, '\0');
      for (auto& b : bytes) b = static_cast<char>(rng());
      const auto decoded = day0::base64_decode(bytes.toBase64().toStdString(), false);
      QVERIFY(decoded.has_value());
      QCOMPARE(*decoded, bytes.toStdString());
    }
    for (const char* bad : {"abc", "ab=c", "a===", "ab c", "ab-_", "=abc", "abcd=bcd"})
      QVERIFY2(!day0::base64_decode(bad, false), bad);
  }

  // Each image's placeholder goes where its part stood; the positions beyond the image token
  // count as the message's extra tokens.
  void placeImages() {
    std::vector<day0::ChatMessage> messages = {{"user", "ab", ""}, {"assistant", "x", ""}, {"user", "cd", ""}};
    const std::vector<day0::server::ImagePart> parts = {
        {0, 0, "u", "p"}, {0, 1, "u", "p"}, {0, 2, "u", "p"}, {2, 2, "u", "p"}};
    day0::server::place_images(parts, {5, 1, 3, 10}, "<I>", &messages);
    QCOMPARE(messages[0].content, std::string("<I>a<I>b<I>"));
    QCOMPARE(messages[0].extra_tokens, std::int64_t{4 + 0 + 2});
    QCOMPARE(messages[1].content, std::string("x"));
    QCOMPARE(messages[1].extra_tokens, std::int64_t{0});
    QCOMPARE(messages[2].content, std::string("cd<I>"));
    QCOMPARE(messages[2].extra_tokens, std::int64_t{9});
  }

  // Random mutations of a valid request never crash the reader; each answer is either a request
  // or a 400 with a message.
  void randomMutations() {
    const std::string valid =
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}]}],"
        "\"temperature\":0.5,\"max_tokens\":7,\"stop\":[\"x\"],\"stream\":true}";
    std::mt19937 rng(7);
    const std::string bytes = "{}[]\":,0123456789.-truefalsnl\\ \x80\xff";
    for (int trial = 0; trial < 3000; ++trial) {
      std::string body = valid;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits; ++k) {
        const std::size_t at = rng() % body.size();
        switch (rng() % 3) {
          case 0:
            body[at] = bytes[rng() % bytes.size()];
            break;
          case 1:
            body.erase(at, 1 + rng() % 3);
            break;
          default:
            body.insert(at, 1, bytes[rng() % bytes.size()]);
        }
        if (body.empty()) body = "{";
      }
      ApiError e;
      e.status = 0;
      const auto r = parse_chat_request(body, {}, &e);
      if (!r) {
        QCOMPARE(e.status, 400);
        QVERIFY(!e.message.empty());
        QVERIFY(!nlohmann::json::parse(day0::server::error_json(e), nullptr, false).is_discarded());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestChatRequest)
#include "test_chat_request.moc"
