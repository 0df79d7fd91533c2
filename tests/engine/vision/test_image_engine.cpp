// Images through the Engine: a request's images give the same greedy tokens as the standalone
// image prompt; a follow-up turn with the same image reuses the session's cache past the image;
// a changed image is not reused past its first row; a text-only model refuses images. And
// `day0-cli chat` with `/image PATH`.
#include <QtTest>

#include <cstring>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "app/process_runner.h"
#include "day0/engine.h"
#include "day0/images.h"
#include "engine/vision/image_bytes.h"

namespace fs = std::filesystem;

namespace {

fs::path tiny() { return fs::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-glm5-next"; }

std::string write_png(const QTemporaryDir& dir, const QString& name, std::uint32_t w, std::uint32_t h, unsigned seed) {
  std::mt19937 rng(seed);
  day0::test::Bytes rgb(static_cast<std::size_t>(w) * h * 3);
  for (auto& v : rgb) v = static_cast<std::uint8_t>(rng());
  const auto png = day0::test::make_png(w, h, 8, 2, rgb, w * 3);
  const std::string path = dir.filePath(name).toStdString();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  return path;
}

struct Outcome {
  std::vector<std::int32_t> tokens;
  day0::Event last;
};

Outcome run(day0::Engine& engine, const std::shared_ptr<day0::Session>& session, const day0::Request& request) {
  Outcome o;
  auto h = engine.submit(session, request, [&](const day0::Event& e) {
    if (e.kind == day0::Event::Kind::token)
      o.tokens.push_back(e.token);
    else
      o.last = e;
  });
  h->wait();
  return o;
}

// A copy of the tiny checkpoint (weights linked) with a plain chat template, its image tokens
// renamed from GLM's to `names` (begin, image, end) when given: another vision model's spelling.
fs::path chat_model(const QTemporaryDir& dir, const std::vector<std::string>& names = {}) {
  const fs::path model = fs::path(dir.path().toStdString()) / "model";
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(tiny())) {
    if (e.path().extension() == ".safetensors") {
      fs::create_symlink(e.path(), model / e.path().filename());
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const char* glm[] = {"<|begin_of_image|>", "<|image|>", "<|end_of_image|>"};
    for (std::size_t k = 0; k < names.size(); ++k)
      for (auto at = text.find(glm[k]); at != std::string::npos; at = text.find(glm[k], at + names[k].size()))
        text.replace(at, std::strlen(glm[k]), names[k]);
    std::ofstream(model / e.path().filename(), std::ios::binary) << text;
  }
  std::ifstream in(model / "tokenizer_config.json");
  auto cfg = nlohmann::json::parse(in);
  cfg["chat_template"] =
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}assistant: {% endif %}";
  std::ofstream(model / "tokenizer_config.json") << cfg.dump();
  return model;
}

}  // namespace

class TestImageEngine : public QObject {
  Q_OBJECT

 private slots:
  void requests_with_images() {
    QTemporaryDir dir;
    const std::string a = write_png(dir, "a.png", 140, 112, 1), b = write_png(dir, "b.png", 140, 112, 2);
    day0::EngineOptions eo;
    eo.threads = 2;
    auto engine = day0::Engine::create(eo);
    auto model = engine->load_model(tiny());
    QVERIFY2(model.is_ok(), model.status().message().c_str());
    auto session = engine->new_session(*model);
    day0::Request req;
    req.context = {5, 6, 334, 358, 335, 7};
    req.images = {a};
    req.sampling.temperature = 0;
    req.stop.max_new_tokens = 4;
    req.stop.stop_at_eos = false;
    const Outcome first = run(*engine, session, req);
    QVERIFY2(first.last.kind == day0::Event::Kind::done, first.last.status.message().c_str());
    QCOMPARE(first.tokens.size(), std::size_t{4});
    QCOMPARE(first.last.stats.context_tokens, 6 - 1 + 20);
    day0::Sampling greedy;
    greedy.temperature = 0;
    auto direct = day0::image_prompt_generate(tiny(), req.context, {a}, greedy, 4, {2});
    QVERIFY2(direct.is_ok(), direct.status().message().c_str());
    QVERIFY(direct->generated == first.tokens);

    // Follow-up turn, same image: the cache is reused past the image.
    day0::Request next = req;
    next.context.insert(next.context.end(), first.tokens.begin(), first.tokens.end());
    next.context.push_back(9);
    const Outcome second = run(*engine, session, next);
    QVERIFY(second.last.kind == day0::Event::Kind::done);
    QVERIFY2(second.last.stats.reused_tokens > 2 + 1 + 20,
             qPrintable(QString::number(second.last.stats.reused_tokens)));

    // The same context with another image: nothing from the image on is reused.
    day0::Request other = next;
    other.images = {b};
    const Outcome third = run(*engine, session, other);
    QVERIFY(third.last.kind == day0::Event::Kind::done);
    QVERIFY2(third.last.stats.reused_tokens <= 3, qPrintable(QString::number(third.last.stats.reused_tokens)));
    auto fresh = engine->new_session(*model);
    const Outcome clean = run(*engine, fresh, other);
    QVERIFY(clean.tokens == third.tokens);

    // Mismatched counts and bad files are request errors.
    day0::Request bad = req;
    bad.images = {a, a};
    QVERIFY(run(*engine, session, bad).last.kind == day0::Event::Kind::error);
    bad.images = {dir.filePath("none.png").toStdString()};
    const Outcome missing = run(*engine, session, bad);
    QVERIFY(missing.last.kind == day0::Event::Kind::error);
    QVERIFY(missing.last.status.message().find("none.png") != std::string::npos);
  }

  void text_only_models_refuse_images() {
    QTemporaryDir dir;
    const std::string a = write_png(dir, "a.png", 28, 28, 3);
    auto engine = day0::Engine::create();
    auto model = engine->load_model(fs::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-gpt-oss");
    QVERIFY(model.is_ok());
    day0::Request req;
    req.context = {1, 2, 3};
    req.images = {a};
    const Outcome o = run(*engine, engine->new_session(*model), req);
    QVERIFY(o.last.kind == day0::Event::Kind::error);
    QVERIFY2(o.last.status.message().find("takes no images") != std::string::npos, o.last.status.message().c_str());
  }

  void chat_image_command() {
    QTemporaryDir dir;
    const std::string a = write_png(dir, "a.png", 140, 112, 4);
    // The tiny checkpoint has no chat template: a copy gets a plain one (weights linked).
    const fs::path model = chat_model(dir);
    QProcess p;
    p.setProcessEnvironment(day0::test::quiet_env());
    p.start(QString(DAY0_BIN_DIR) + "/day0-cli", {"chat", "--model", QString::fromStdString(model.string()),
                                                  "--no-history", "--max-new-tokens", "3", "--temperature", "0"});
    QVERIFY(p.waitForStarted());
    p.write(QByteArray("/image ") + QByteArray::fromStdString(a) + "\nwhat is this\n/image /nonexistent.png\n/quit\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(60000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QVERIFY2(out.contains("(image attached to the next message)"), qPrintable(out));
    QVERIFY2(out.contains("(no such image file: /nonexistent.png)"), qPrintable(out));
    QVERIFY2(!err.contains("image token"), qPrintable(err));
  }

  // The positions an image takes, as image_token_count says before any decoding of pixels,
  // are those its image token expands to.
  void image_token_count_is_the_expansion() {
    QTemporaryDir dir;
    day0::EngineOptions eo;
    eo.threads = 2;
    auto engine = day0::Engine::create(eo);
    auto model = engine->load_model(tiny());
    QVERIFY2(model.is_ok(), model.status().message().c_str());
    for (const auto& [w, h] : std::vector<std::pair<int, int>>{{140, 112}, {112, 112}, {300, 200}, {75, 130}, {20, 9}}) {
      const std::string png = write_png(dir, QString("%1x%2.png").arg(w).arg(h), w, h, 7);
      const auto counted = day0::image_file_token_count(**model, png);
      QVERIFY2(counted.is_ok(), counted.status().message().c_str());
      QCOMPARE(*day0::image_token_count(**model, w, h), *counted);
      const std::vector<std::int32_t> tokens{5, 334, 358, 335, 7};
      auto expanded = day0::image_prompt_logits(tiny(), tokens, {png}, {2});
      QVERIFY2(expanded.is_ok(), expanded.status().message().c_str());
      QCOMPARE(static_cast<std::int64_t>(expanded->expanded.size()), static_cast<std::int64_t>(tokens.size()) - 1 + *counted);
    }
    QVERIFY(!day0::image_token_count(**model, 0, 10).is_ok());
    auto text_only = engine->load_model(fs::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random");
    QVERIFY2(text_only.is_ok(), text_only.status().message().c_str());
    QVERIFY(!day0::image_token_count(**text_only, 140, 112).is_ok());
  }

  // A conversation whose image takes most of the context: the image's real size counts, so the
  // next turn leaves the first out instead of overflowing the context (a placeholder's three
  // tokens would have let it through, and the engine would have refused the prompt).
  void chat_counts_images_when_fitting_the_context() {
    QTemporaryDir dir;
    const std::string big = write_png(dir, "big.png", 300, 200, 5);
    const fs::path model = chat_model(dir);
    QProcess p;
    p.setProcessEnvironment(day0::test::quiet_env());
    p.start(QString(DAY0_BIN_DIR) + "/day0-cli",
            {"chat", "--model", QString::fromStdString(model.string()), "--no-history", "--max-new-tokens", "2",
             "--temperature", "0", "--context", "128", "--threads", "2"});
    QVERIFY(p.waitForStarted());
    std::string second = "and now tell me more about";
    for (int i = 0; i < 12; ++i) second += " this";
    p.write(QByteArray("/image ") + QByteArray::fromStdString(big) + "\nwhat is it\n" +
            QByteArray::fromStdString(second) + "\n/quit\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out + err));
    QVERIFY2(err.contains("earlier message") && err.contains("left out to fit the context"), qPrintable(err));
    QCOMPARE(err.count("left out to fit the context"), 1);  // the first turn fitted as it was
  }

  // Another vision model's image tokens: /image writes that model's placeholder, not GLM's.
  void chat_uses_the_models_image_placeholder() {
    QTemporaryDir dir;
    const std::string a = write_png(dir, "a.png", 140, 112, 6);
    const fs::path model = chat_model(dir, {"<|vision_start|>", "<|image_pad|>", "<|vision_end|>"});
    QProcess p;
    p.setProcessEnvironment(day0::test::quiet_env());
    p.start(QString(DAY0_BIN_DIR) + "/day0-cli", {"chat", "--model", QString::fromStdString(model.string()),
                                                  "--db", dir.filePath("history.db"), "--max-new-tokens", "2",
                                                  "--temperature", "0", "--threads", "2"});
    QVERIFY(p.waitForStarted());
    p.write(QByteArray("/image ") + QByteArray::fromStdString(a) + "\nwhat is this\n/quit\n");
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out + err));
    QVERIFY2(out.contains("(image attached to the next message)"), qPrintable(out));
    QVERIFY2(!err.contains("image"), qPrintable(err));
    // The message as sent: the model's own placeholder before the text.
    const auto shown = day0::test::run_program(QString(DAY0_BIN_DIR) + "/day0-cli",
                                               {"history", "export", "--format", "json", "--db", dir.filePath("history.db")},
                                               day0::test::quiet_env());
    QVERIFY2(shown.out.contains("<|vision_start|><|image_pad|><|vision_end|>what is this"), qPrintable(shown.out));
    QVERIFY(!shown.out.contains("begin_of_image"));
  }
};

QTEST_GUILESS_MAIN(TestImageEngine)
#include "test_image_engine.moc"
