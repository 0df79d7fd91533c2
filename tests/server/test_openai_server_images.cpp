// day0-cli serve with image parts: a model that takes images (the tiny glm5_next checkpoint, on
// the CPU) answers data-URL and file images as the engine does for the same prompt, counting the
// image's expanded positions in usage; a text-only model refuses them; payloads that are not
// images are 400s the server survives; and the decoded images leave no files behind.
#include <httplib.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/process_runner.h"
#include "day0/chat.h"
#include "day0/engine.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const std::string kImage = DAY0_TEST_DATA_DIR "/vision/aligned_112x140.png";
const std::string kOtherImage = DAY0_TEST_DATA_DIR "/vision/small_56x84.png";

// A copy of a tiny checkpoint (weights linked) with a plain chat template, which the tiny
// checkpoints lack.
fs::path chat_model(const QTemporaryDir& dir, const std::string& name) {
  const fs::path source = fs::path(DAY0_TEST_DATA_DIR) / "models" / name;
  const fs::path model = fs::path(dir.path().toStdString()) / name;
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(source)) {
    if (e.path().extension() == ".safetensors")
      fs::create_symlink(e.path(), model / e.path().filename());
    else
      fs::copy_file(e.path(), model / e.path().filename());
  }
  std::ifstream in(model / "tokenizer_config.json");
  json cfg = json::parse(in);
  cfg["chat_template"] =
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}assistant: {% endif %}";
  std::ofstream(model / "tokenizer_config.json") << cfg.dump();
  return model;
}

std::string data_url(const std::string& mime, const QByteArray& bytes) {
  return "data:" + mime + ";base64," + bytes.toBase64().toStdString();
}

QByteArray file_bytes(const std::string& path) {
  QFile f(QString::fromStdString(path));
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

json image_part(const std::string& url) { return {{"type", "image_url"}, {"image_url", {{"url", url}}}}; }
json text_part(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

constexpr int kContext = 512;  // the glm server's --context

// Starts `day0-cli serve` on `model` with TMPDIR set to `tmp`; returns the port, or 0.
int start_server(QProcess& server, const fs::path& model, const QString& tmp) {
  auto env = day0::test::quiet_env();
  env.insert("TMPDIR", tmp);
  server.setProcessEnvironment(env);
  server.start(kCli, {"serve", "--model", QString::fromStdString(model.string()), "--port", "0", "--model-name",
                      "vision", "--threads", "2", "--context", QString::number(kContext)});
  if (!server.waitForStarted(10000)) return 0;
  QString line;
  for (int i = 0; i < 600 && !line.contains("/v1"); ++i) {
    server.waitForReadyRead(100);
    line += QString::fromUtf8(server.readAllStandardOutput());
  }
  const auto m = QRegularExpression("http://127\\.0\\.0\\.1:(\\d+)/v1").match(line);
  if (!m.hasMatch()) qWarning("%s", qPrintable(line + QString::fromUtf8(server.readAllStandardError())));
  return m.hasMatch() ? m.captured(1).toInt() : 0;
}

// Everything under `dir` (files and folders), relative to it.
QStringList entries(const QString& dir) {
  QStringList out;
  for (const auto& e : fs::recursive_directory_iterator(dir.toStdString()))
    out << QString::fromStdString(fs::relative(e.path(), dir.toStdString()).string());
  return out;
}

}  // namespace

class TestOpenAiServerImages : public QObject {
  Q_OBJECT

  QTemporaryDir models_;
  QTemporaryDir tmp_;  // the server's TMPDIR
  fs::path glm_;
  QProcess server_;
  int port_ = 0;
  // The same checkpoint in this process, for what the engine makes of the same prompt.
  std::unique_ptr<day0::Engine> engine_;
  std::shared_ptr<day0::Model> model_;
  std::optional<day0::ChatFormatter> formatter_;
  std::string placeholder_;
  std::int64_t image_positions_ = 0;  // aligned_112x140.png's
  std::string reply_;                 // the data-URL image's reply at temperature 0
  std::int64_t reply_prompt_tokens_ = 0;

  std::unique_ptr<httplib::Client> http(int port = 0) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port ? port : port_);
    c->set_read_timeout(120);
    return c;
  }

  json post(const json& body, int* status, int port = 0) const {
    *status = 0;
    auto res = http(port)->Post("/v1/chat/completions", body.dump(), "application/json");
    if (!res) return {};
    *status = res->status;
    return json::parse(res->body, nullptr, false);
  }

  static json request(const json& content) {
    return {{"messages", {{{"role", "user"}, {"content", content}}}}, {"temperature", 0}, {"max_tokens", 8}};
  }

  // reasoning_content and content of a reply, in that order.
  static std::string text_of(const json& reply) {
    const json& m = reply["choices"][0]["message"];
    return m.value("reasoning_content", "") + m["content"].get<std::string>();
  }

  // Checks an error reply's status, code and param.
  static void expect_error(const json& reply, int status, int expected_status, const std::string& code,
                           const std::string& param = "") {
    QVERIFY2(status == expected_status, reply.dump().c_str());
    QVERIFY2(reply.contains("error") && reply["error"]["code"] == code, reply.dump().c_str());
    QVERIFY(reply["error"]["message"].is_string() && !reply["error"]["message"].get<std::string>().empty());
    QCOMPARE(reply["error"]["type"].get<std::string>(), std::string("invalid_request_error"));
    if (!param.empty()) QCOMPARE(reply["error"]["param"].get<std::string>(), param);
  }

  // The prompt's token count as the model's template and tokenizer write it, for one user message.
  std::int64_t encoded(const std::string& content) const {
    auto tokens = formatter_->encode({{"user", content, ""}}, true);
    return tokens.is_ok() ? static_cast<std::int64_t>(tokens->size()) : -1;
  }

  // The folders the server made in its TMPDIR.
  QStringList server_folders() const { return QDir(tmp_.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot); }
  // The files in them.
  QStringList server_files() const {
    QStringList files;
    for (const QString& e : entries(tmp_.path()))
      if (!server_folders().contains(e)) files << e;
    return files;
  }

 private slots:
  void initTestCase() {
    QVERIFY(models_.isValid() && tmp_.isValid());
    glm_ = chat_model(models_, "tiny-glm5-next");
    port_ = start_server(server_, glm_, tmp_.path());
    QVERIFY(port_ > 0);

    day0::EngineOptions eo;
    eo.threads = 2;  // as the server's --threads, so that greedy replies match bit for bit
    engine_ = day0::Engine::create(eo);
    auto loaded = engine_->load_model(glm_);
    QVERIFY2(loaded.is_ok(), loaded.status().message().c_str());
    model_ = *loaded;
    auto formatter = day0::ChatFormatter::load(glm_);
    QVERIFY2(formatter.is_ok(), formatter.status().message().c_str());
    formatter_.emplace(std::move(*formatter));
    placeholder_ = formatter_->image_placeholder(day0::describe(*model_));
    QCOMPARE(placeholder_, std::string("<|begin_of_image|><|image|><|end_of_image|>"));
    auto positions = day0::image_file_token_count(*model_, kImage);
    QVERIFY2(positions.is_ok(), positions.status().message().c_str());
    image_positions_ = *positions;
    QVERIFY(image_positions_ > 1);
  }

  void cleanupTestCase() {
    server_.terminate();
    QVERIFY(server_.waitForFinished(15000));
    QCOMPARE(server_.exitCode(), 0);
    // The server's temporary folder goes with it.
    QVERIFY2(entries(tmp_.path()).isEmpty(), qPrintable(entries(tmp_.path()).join(", ")));
  }

  // A data-URL image between two text parts: the reply is what the engine gives for the prompt
  // with the image's placeholder in its place, the same twice at temperature 0, and usage counts
  // the image's expanded positions.
  void dataUrlImage() {
    const json content = {text_part("What is in "), image_part(data_url("image/png", file_bytes(kImage))),
                          text_part(" this picture?")};
    int status = 0;
    const json first = post(request(content), &status);
    QVERIFY2(status == 200, first.dump().c_str());
    const json second = post(request(content), &status);
    QVERIFY2(status == 200, second.dump().c_str());
    // The decoded image's file is gone by the time the reply arrives.
    QCOMPARE(server_folders().size(), 1);
    QVERIFY2(server_files().isEmpty(), qPrintable(server_files().join(", ")));
    reply_ = text_of(first);
    QCOMPARE(text_of(second), reply_);
    QVERIFY(first["usage"]["completion_tokens"].get<int>() >= 1);

    const std::string with = "What is in " + placeholder_ + " this picture?";
    reply_prompt_tokens_ = first["usage"]["prompt_tokens"].get<std::int64_t>();
    QCOMPARE(reply_prompt_tokens_, encoded(with) + image_positions_ - 1);
    QCOMPARE(second["usage"]["prompt_tokens"].get<std::int64_t>(), reply_prompt_tokens_);
    // Without the image: fewer by at least the image's positions.
    const json text_only = post(request({text_part("What is in "), text_part(" this picture?")}), &status);
    QVERIFY2(status == 200, text_only.dump().c_str());
    const std::int64_t without = text_only["usage"]["prompt_tokens"].get<std::int64_t>();
    QCOMPARE(without, encoded("What is in  this picture?"));
    QVERIFY2(reply_prompt_tokens_ - without >= image_positions_,
             qPrintable(QString("%1 - %2").arg(reply_prompt_tokens_).arg(without)));

    // The engine, given the same prompt and image file, reads as many positions and says the same.
    day0::Request req;
    auto tokens = formatter_->encode({{"user", with, ""}}, true);
    QVERIFY(tokens.is_ok());
    req.context = *tokens;
    req.images = {kImage};
    req.sampling.temperature = 0;
    req.stop.max_new_tokens = 8;
    req.stop.extra_stop_ids = formatter_->turn_end_ids();
    std::string text;
    day0::Event last;
    auto handle = engine_->submit(engine_->new_session(model_), req, [&](const day0::Event& e) {
      for (const auto& p : e.text) text += p.text;
      if (e.kind == day0::Event::Kind::done || e.kind == day0::Event::Kind::error) last = e;
    });
    handle->wait();
    QVERIFY2(last.kind == day0::Event::Kind::done, last.status.message().c_str());
    QCOMPARE(last.stats.context_tokens, reply_prompt_tokens_);
    QCOMPARE(text, reply_);
  }

  // The same image as a path on the server (plain and file://), whole and streamed, gives the
  // same prompt and the same reply.
  void fileImage() {
    QVERIFY2(reply_prompt_tokens_ > 0, "dataUrlImage runs first");
    for (const std::string& url : {kImage, "file://" + kImage}) {
      const json content = {text_part("What is in "), image_part(url), text_part(" this picture?")};
      int status = 0;
      const json reply = post(request(content), &status);
      QVERIFY2(status == 200, reply.dump().c_str());
      QCOMPARE(text_of(reply), reply_);
      QCOMPARE(reply["usage"]["prompt_tokens"].get<std::int64_t>(), reply_prompt_tokens_);
    }
    json streamed = request({text_part("What is in "), image_part(kImage), text_part(" this picture?")});
    streamed["stream"] = true;
    streamed["stream_options"] = {{"include_usage", true}};
    auto res = http()->Post("/v1/chat/completions", streamed.dump(), "application/json");
    QVERIFY(res && res->status == 200);
    std::string text;
    std::int64_t prompt_tokens = -1;
    bool done = false;
    for (std::size_t at = 0, end; (end = res->body.find("\n\n", at)) != std::string::npos; at = end + 2) {
      const std::string event = res->body.substr(at, end - at);
      if (event == "data: [DONE]") done = true;
      if (event.rfind("data: {", 0) != 0) continue;
      const json chunk = json::parse(event.substr(6));
      QVERIFY2(!chunk.contains("error"), event.c_str());
      if (chunk.contains("usage")) prompt_tokens = chunk["usage"]["prompt_tokens"].get<std::int64_t>();
      for (const auto& choice : chunk["choices"])
        for (const char* key : {"reasoning_content", "content"})
          if (choice["delta"].contains(key)) text += choice["delta"][key].get<std::string>();
    }
    QVERIFY(done);
    QCOMPARE(prompt_tokens, reply_prompt_tokens_);
    QCOMPARE(text, reply_);
  }

  // Images in two turns: the earlier turn's image is part of the prompt too, in order.
  void imagesInEarlierTurns() {
    const auto other = day0::image_file_token_count(*model_, kOtherImage);
    QVERIFY(other.is_ok());
    const json body = {{"messages",
                        {{{"role", "user"}, {"content", {image_part(kOtherImage), text_part("first")}}},
                         {{"role", "assistant"}, {"content", "a picture"}},
                         {{"role", "user"},
                          {"content", {text_part("second "), image_part(data_url("image/png", file_bytes(kImage)))}}}}},
                       {"temperature", 0},
                       {"max_tokens", 4}};
    int status = 0;
    const json reply = post(body, &status);
    QVERIFY2(status == 200, reply.dump().c_str());
    auto tokens = formatter_->encode(
        {{"user", placeholder_ + "first", ""}, {"assistant", "a picture", ""}, {"user", "second " + placeholder_, ""}},
        true);
    QVERIFY(tokens.is_ok());
    QCOMPARE(reply["usage"]["prompt_tokens"].get<std::int64_t>(),
             static_cast<std::int64_t>(tokens->size()) + (*other - 1) + (image_positions_ - 1));
  }

  // An image in a turn that rolling-window leaves out of the prompt goes with it: the prompt is
  // the last turn's alone, and the engine gets no image for it.
  void droppedTurnTakesItsImage() {
    std::string last = "now tell me about";
    while (encoded(last) < kContext / 2 - 12) last += " this";
    const json body = {{"messages",
                        {{{"role", "user"}, {"content", {image_part(kImage), text_part("first")}}},
                         {{"role", "assistant"}, {"content", "a picture"}},
                         {{"role", "user"}, {"content", last}}}},
                       {"temperature", 0},
                       {"max_tokens", kContext / 2},
                       {"context_overflow", "rolling-window"}};
    int status = 0;
    const json reply = post(body, &status);
    QVERIFY2(status == 200, reply.dump().c_str());
    QCOMPARE(reply["context_overflow"]["dropped_messages"].get<int>(), 2);
    QCOMPARE(reply["usage"]["prompt_tokens"].get<std::int64_t>(), encoded(last));
    // Kept, the same image makes the conversation too long for the context.
    json stop = body;
    stop.erase("context_overflow");
    const json refused = post(stop, &status);
    expect_error(refused, status, 400, "context_length_exceeded", "max_tokens");
  }

  // A model that reads text only keeps refusing images, and writes nothing for them.
  void textOnlyModelRefusesImages() {
    QTemporaryDir tmp;
    const fs::path model = chat_model(models_, "tiny-gpt-oss");
    QProcess server;
    const int port = start_server(server, model, tmp.path());
    QVERIFY(port > 0);
    int status = 0;
    const json refused =
        post(request({text_part("see"), image_part(data_url("image/png", file_bytes(kImage)))}), &status, port);
    expect_error(refused, status, 400, "model_does_not_accept_images", "messages[0].content[1].image_url");
    QVERIFY2(refused["error"]["message"].get<std::string>().find("does not accept images") != std::string::npos,
             refused.dump().c_str());
    const json file = post(request(json::array({image_part(kImage)})), &status, port);
    expect_error(file, status, 400, "model_does_not_accept_images");
    const json text = post(request("hello"), &status, port);
    QVERIFY2(status == 200, text.dump().c_str());
    QVERIFY2(entries(tmp.path()).isEmpty(), qPrintable(entries(tmp.path()).join(", ")));
    server.terminate();
    QVERIFY(server.waitForFinished(15000));
  }

  // Payloads that are not images, images the model cannot take, markers in the text and too many
  // images are 400s naming the part; the server goes on serving text and images.
  void badImages() {
    const auto refused = [&](const json& content, const std::string& code, const std::string& param) {
      int status = 0;
      const json reply = post(request(content), &status);
      expect_error(reply, status, 400, code, param);
      return reply["error"]["message"].get<std::string>();
    };
    const std::string not_image =
        refused({text_part("see"), image_part(data_url("image/png", "this is plain text, not a picture"))},
                "invalid_image_format", "messages[0].content[1].image_url");
    QVERIFY2(not_image.find("not a PNG or JPEG") != std::string::npos, not_image.c_str());
    // The server's temporary file is not named to the client.
    QVERIFY2(not_image.find(tmp_.path().toStdString()) == std::string::npos, not_image.c_str());
    const std::string truncated =
        refused(json::array({image_part(data_url("image/png", file_bytes(kImage).left(200)))}), "invalid_image_format",
                "messages[0].content[0].image_url");
    QVERIFY2(truncated.find("PNG") != std::string::npos, truncated.c_str());
    refused(json::array({image_part(data_url("image/gif", QByteArray("GIF89a\x01\x00\x01\x00\x00\x00\x00", 13)))}),
            "invalid_image_format", "messages[0].content[0].image_url");
    refused(json::array({image_part((glm_ / "config.json").string())}), "invalid_image_format",
            "messages[0].content[0].image_url");
    refused(json::array({image_part("data:image/png;base64,!!!!")}), "invalid_image_url",
            "messages[0].content[0].image_url");
    // The model's image markers typed into the text would stand for images that are not there.
    const std::string markers =
        refused({text_part("look: " + placeholder_), image_part(kImage)}, "invalid_value", "messages");
    QVERIFY2(markers.find("image markers") != std::string::npos, markers.c_str());
    // At most 32 images a request.
    json many = json::array();
    const std::string small = data_url("image/png", file_bytes(kOtherImage));
    for (int i = 0; i < 33; ++i) many.push_back(image_part(small));
    refused(many, "too_many_images", "messages[0].content[32]");

    int status = 0;
    const json text = post(request("hello"), &status);
    QVERIFY2(status == 200, text.dump().c_str());
    const json image =
        post(request({text_part("What is in "), image_part(kImage), text_part(" this picture?")}), &status);
    QVERIFY2(status == 200, image.dump().c_str());
    QCOMPARE(text_of(image), reply_);
  }

  // Decoded images are gone once their requests have finished: answered, refused, or dropped by
  // a client that hung up mid-stream.
  void temporaryFilesRemoved() {
    // The data URLs above made the server's folder, and nothing is left in it.
    QCOMPARE(server_folders().size(), 1);
    QVERIFY(server_folders().front().startsWith("day0-server-"));
    const QString folder = QDir(tmp_.path()).filePath(server_folders().front());
    QVERIFY2(entries(folder).isEmpty(), qPrintable(entries(folder).join(", ")));
    QVERIFY(
        !(QFile::permissions(folder) & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther)));

    // A streamed request with two images whose client hangs up at the first event.
    json body = request({image_part(data_url("image/png", file_bytes(kImage))), text_part("and"),
                         image_part(data_url("image/png", file_bytes(kOtherImage)))});
    body["stream"] = true;
    body["max_tokens"] = 200;
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.set_header("Content-Type", "application/json");
    req.body = body.dump();
    bool any = false;
    req.content_receiver = [&](const char*, std::size_t, std::uint64_t, std::uint64_t) {
      any = true;
      return false;
    };
    QVERIFY(!http()->send(req));
    QVERIFY(any);
    QStringList left;
    for (int i = 0; i < 100; ++i) {
      left = entries(folder);
      if (left.isEmpty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
    // Still serving.
    int status = 0;
    post(request("hello"), &status);
    QCOMPARE(status, 200);
    QVERIFY(entries(folder).isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestOpenAiServerImages)
#include "test_openai_server_images.moc"
