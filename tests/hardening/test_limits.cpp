// Limits: the memory plan checked before a model is accepted (a small limit refuses the demo
// model, a gpt-oss-120b-shaped checkpoint streams its experts or is refused by the plan, the
// context is bounded to what fits), and the bounds every request is checked against (sampling parameters, max_new_tokens,
// context length, token ids), all through the public engine API the CLI, app and server use.
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "day0/engine.h"
#include "engine/safetensors_writer.h"
#include "hardening/malformed_cases.h"
#include "hardening/model_mutations.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/architecture.h"

using namespace day0;
namespace fs = std::filesystem;

namespace {

// Tensor bytes of every shard, read from the files themselves: size - 8 - header length.
std::uint64_t tensor_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".safetensors") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::uint8_t le[8];
    in.read(reinterpret_cast<char*>(le), 8);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | le[i];
    total += fs::file_size(entry.path()) - 8 - n;
  }
  return total;
}

// Keys and values of every layer per position, fp32, from config.json.
std::uint64_t gpt_oss_kv_bytes_per_token(const fs::path& dir) {
  std::ifstream in(dir / "config.json");
  const auto c = nlohmann::json::parse(in);
  return 2ull * c["num_hidden_layers"].get<std::uint64_t>() * c["num_key_value_heads"].get<std::uint64_t>() *
         c["head_dim"].get<std::uint64_t>() * 4;
}

struct Outcome {
  std::vector<std::int32_t> tokens;
  Event last;
};

Outcome generate(Engine& engine, const std::shared_ptr<Model>& model, Request request) {
  auto session = engine.new_session(model);
  Outcome out;
  engine
      .submit(session, std::move(request),
              [&](const Event& e) {
                if (e.kind == Event::Kind::token)
                  out.tokens.push_back(e.token);
                else
                  out.last = e;
              })
      ->wait();
  return out;
}

Request hello(std::int64_t max_new = 2) {
  Request r;
  r.context = {1, 2, 3, 4};
  r.stop.max_new_tokens = max_new;
  r.stop.stop_at_eos = false;
  return r;
}

// A checkpoint with gpt-oss-120b's shapes: real headers over a sparse data section (no disk used).
fs::path write_sparse_120b(const fs::path& dir) {
  fs::create_directories(dir);
  std::ifstream in(test::demo_model() / "config.json");
  auto c = nlohmann::json::parse(in);
  c["hidden_size"] = 2880;
  c["intermediate_size"] = 2880;
  c["num_hidden_layers"] = 36;
  c["num_local_experts"] = 128;
  c["num_experts_per_tok"] = 4;
  c["num_attention_heads"] = 64;
  c["num_key_value_heads"] = 8;
  c["head_dim"] = 64;
  c["vocab_size"] = 201088;
  c["sliding_window"] = 128;
  c["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 36; ++i) c["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
  test::write_text(dir / "config.json", c.dump(2));
  auto config = io::ModelConfig::load(dir);
  if (!config) throw std::runtime_error(config.status().message());
  const auto expected = models::find_architecture("gpt_oss")->expected_tensors(*config);
  if (!expected) throw std::runtime_error(expected.status().message());
  nlohmann::json header = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& t : *expected) {
    std::uint64_t bits = static_cast<std::uint64_t>(dtype_bits(t.dtype));
    for (const auto d : t.shape) bits *= d;
    header[t.name] = {
        {"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {offset, offset + bits / 8}}};
    offset += bits / 8;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  test::write_file(dir / "model.safetensors", test::safetensors_bytes(text, {}));
  fs::resize_file(dir / "model.safetensors", 8 + text.size() + offset);
  return dir;
}

}  // namespace

class TestLimits : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    EngineOptions options;
    options.threads = 2;
    engine_ = Engine::create(options);
  }
  void cleanupTestCase() { engine_.reset(); }

  void planIsHonest() {
    const fs::path demo = test::demo_model();
    ModelOptions options;
    options.max_context = 8192;
    auto model = engine_->load_model(demo, options);
    QVERIFY2(model, model ? "" : model.status().message().c_str());
    const ModelSummary s = describe(**model);
    QCOMPARE(s.max_context, std::int64_t{8192});
    const std::uint64_t weights = tensor_bytes(demo);
    const std::uint64_t state = gpt_oss_kv_bytes_per_token(demo) * 8192;
    // weights + state + a workspace of at most a few MiB for this 64-wide model.
    QVERIFY2(s.planned_bytes >= weights + state, qPrintable(QString::number(s.planned_bytes)));
    QVERIFY2(s.planned_bytes <= weights + state + (8u << 20), qPrintable(QString::number(s.planned_bytes)));
    QVERIFY(s.available_bytes >= s.planned_bytes);
  }

  // glm5_next caches per position the MLA latent of each DSA layer and, for layers with their
  // own ("full") indexer, its key and gate rows and a pooled key per kpool positions; KDA layers
  // hold a fixed state. Counted here from config.json.
  void planCountsGlmCaches() {
    const fs::path dir = fs::path(DAY0_TEST_DATA_DIR) / "models/tiny-glm5-next";
    std::ifstream in(dir / "config.json");
    const auto c = nlohmann::json::parse(in)["text_config"];
    std::uint64_t per_token = 0;
    for (std::size_t l = 0; l < c["layer_types"].size(); ++l) {
      if (c["layer_types"][l] != "deepseek_sparse_attention") continue;
      per_token += c["kv_lora_rank"].get<std::uint64_t>();
      if (c["indexer_types"][l] == "full") {
        const auto d = c["index_head_dim"].get<std::uint64_t>();
        per_token += 2 * d + d / c["index_kpool"].get<std::uint64_t>();
      }
    }
    std::uint64_t planned[2] = {};
    for (int i = 0; i < 2; ++i) {
      ModelOptions options;
      options.max_context = 1024 * (i + 1);
      auto model = engine_->load_model(dir, options);
      QVERIFY2(model, model ? "" : model.status().message().c_str());
      planned[i] = describe(**model).planned_bytes;
    }
    QCOMPARE(planned[1] - planned[0], 1024 * per_token * 4);
    QVERIFY(planned[0] > tensor_bytes(dir) + 1024 * per_token * 4);  // + the KDA states and a workspace
  }

  void smallLimitRefuses() {
    ModelOptions options;
    options.memory_limit_bytes = 1 << 20;
    auto model = engine_->load_model(test::demo_model(), options);
    QVERIFY(!model);
    QCOMPARE(model.status().code(), ErrorCode::out_of_memory);
    const QString message = QString::fromStdString(model.status().message());
    QVERIFY2(message.contains("this model needs") && message.contains("1.0 MiB is available"), qPrintable(message));
  }

  void environmentLimit() {
    qputenv("DAY0_MEMORY_LIMIT_BYTES", "2M");
    auto refused = engine_->load_model(test::demo_model());
    qputenv("DAY0_MEMORY_LIMIT_BYTES", "lots");
    auto unparsable = engine_->load_model(test::demo_model());
    qunsetenv("DAY0_MEMORY_LIMIT_BYTES");
    QVERIFY(!refused);
    QVERIFY2(QString::fromStdString(refused.status().message()).contains("2.0 MiB is available"),
             refused.status().message().c_str());
    QVERIFY(!unparsable);
    QVERIFY2(QString::fromStdString(unparsable.status().message()).contains("DAY0_MEMORY_LIMIT_BYTES"),
             unparsable.status().message().c_str());
  }

  // Without an explicit context, a limit that cannot hold the model's whole context bounds it
  // to what fits (whole pages), never below 4096 tokens.
  void contextBoundedByMemory() {
    const fs::path demo = test::demo_model();
    const std::uint64_t per_token = gpt_oss_kv_bytes_per_token(demo);
    ModelOptions options;
    options.memory_limit_bytes = tensor_bytes(demo) + (8u << 20) + per_token * 20000;
    auto model = engine_->load_model(demo, options);
    QVERIFY2(model, model ? "" : model.status().message().c_str());
    const std::int64_t context = describe(**model).max_context;
    // The room left after the weights and a workspace of at most 8 MiB holds 20000 to 28192
    // positions; the plan takes whole pages of it.
    QVERIFY2(context >= 20000 - 256 && context <= 20000 + 8192, qPrintable(QString::number(context)));
    QCOMPARE(context % 256, std::int64_t{0});
    QVERIFY(describe(**model).planned_bytes <= options.memory_limit_bytes);
  }

  void contextAboveModelRefused() {
    ModelOptions options;
    options.max_context = 131073;  // the demo's max_position_embeddings is 131072
    auto model = engine_->load_model(test::demo_model(), options);
    QVERIFY(!model);
    QVERIFY2(QString::fromStdString(model.status().message()).contains("max_position_embeddings"),
             model.status().message().c_str());
    options.max_context = -5;
    QVERIFY(!engine_->load_model(test::demo_model(), options));
  }

  // max_position_embeddings of 2^40 is a legal config value: the plan bounds the context to what
  // fits instead of letting the cache grow into a bad_alloc, and refuses 2^40 asked outright.
  void absurdContextInConfig() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "model";
    test::copy_model(test::demo_model(), dir);
    test::edit_json(dir / "config.json", [](nlohmann::json& j) { j["max_position_embeddings"] = 1ll << 40; });
    ModelOptions options;
    options.memory_limit_bytes = 1ull << 30;
    auto model = engine_->load_model(dir, options);
    QVERIFY2(model, model ? "" : model.status().message().c_str());
    QVERIFY(describe(**model).max_context < (1ll << 20));
    options.max_context = 1ll << 40;
    auto refused = engine_->load_model(dir, options);
    QVERIFY(!refused);
    QCOMPARE(refused.status().code(), ErrorCode::out_of_memory);
    QVERIFY2(QString::fromStdString(refused.status().message()).contains("TiB") ||
                 QString::fromStdString(refused.status().message()).contains("GiB of memory"),
             refused.status().message().c_str());
  }

  // A checkpoint with gpt-oss-120b's real shapes passes every structural check. With 16 GiB it
  // does not fit whole (about 60.8 GiB as stored), so the plan streams its experts through a
  // cache of what is left, before anything is read or allocated; with 3 GiB not even its other
  // weights fit, and it is refused, naming the sizes.
  void bigModelStreamedOrRefusedByPlan() {
    QTemporaryDir tmp;
    const fs::path dir = write_sparse_120b(fs::path(tmp.path().toStdString()) / "gpt-oss-120b-shape");
    ModelOptions options;
    options.memory_limit_bytes = 16ull << 30;
    options.max_context = 4096;
    auto model = engine_->load_model(dir, options);
    QVERIFY2(model, model.status().message().c_str());
    const ModelSummary summary = describe(**model);
    QVERIFY(summary.experts.streamed);
    QVERIFY(summary.planned_bytes <= options.memory_limit_bytes);
    QVERIFY(summary.experts.cache_bytes > (8ull << 30) && summary.experts.cache_bytes < (13ull << 30));
    QVERIFY(summary.experts.expert_bytes > (55ull << 30));
    QCOMPARE(summary.experts.lookups, std::uint64_t{0});  // nothing read yet

    // No context asked for: the longest whose caches (144 KiB a token) take at most an eighth of
    // the 11.8 GiB the other weights leave, about 10,700 tokens, in whole pages of 256.
    options.max_context = 0;
    auto automatic = engine_->load_model(dir, options);
    QVERIFY2(automatic, automatic.status().message().c_str());
    const ModelSummary a = describe(**automatic);
    QVERIFY(a.experts.streamed);
    QVERIFY2(a.max_context > 8192 && a.max_context < 12288, qPrintable(QString::number(a.max_context)));
    QCOMPARE(a.max_context % 256, std::int64_t{0});
    QVERIFY(a.planned_bytes <= options.memory_limit_bytes);
    options.max_context = 4096;

    options.memory_limit_bytes = 3ull << 30;
    const auto refused = engine_->load_model(dir, options);
    QVERIFY(!refused);
    QCOMPARE(refused.status().code(), ErrorCode::out_of_memory);
    const QString message = QString::fromStdString(refused.status().message());
    qInfo("%s", qPrintable(message));
    QVERIFY2(QRegularExpression("needs \\d+\\.\\d GiB of memory even with its experts read from disk as needed; "
                                "3.0 GiB is available")
                 .match(message)
                 .hasMatch(),
             qPrintable(message));
  }

  // The GPU check before an upload (no GPU is needed to test the rule itself).
  void deviceCheck() {
    QVERIFY(limits::check_device_memory(10ull << 30, 80ull << 30, "cuda:0").is_ok());
    const Status s = limits::check_device_memory(65ull << 30, 20ull << 30, "cuda:1");
    QCOMPARE(s.code(), ErrorCode::out_of_memory);
    QCOMPARE(QString::fromStdString(s.message()),
             QString("the weights alone need 65.0 GiB of GPU memory; cuda:1 has 20.0 GiB free"));
  }

  // The GPU plan from a program's footprint (no GPU needed): the whole context when it fits,
  // else the longest that does (whole pages), refused below the minimum or for an explicit
  // context that does not fit; the device's reserve is kept.
  void devicePlan() {
    limits::DeviceFootprint f;
    f.weights = 12ull << 30;
    f.workspace = 1ull << 30;
    f.state_bytes = [](std::int64_t n) { return static_cast<std::uint64_t>(n) * (72ull << 10); };
    f.max_context = 131072;
    // 80 GiB free: everything fits (13 GiB + 9 GiB of caches).
    auto all = limits::plan_device_memory(f, 80ull << 30, 0, "cuda:0");
    QVERIFY(all.is_ok());
    QCOMPARE(all->context, std::int64_t{131072});
    QCOMPARE(all->total(), (13ull << 30) + 131072ull * (72ull << 10));
    QCOMPARE(all->available, (80ull << 30) - limits::kDeviceReserve);
    // 20 GiB free: the context shrinks to what fits, in whole pages, and fits.
    auto bounded = limits::plan_device_memory(f, 20ull << 30, 0, "cuda:0");
    QVERIFY(bounded.is_ok());
    QVERIFY(bounded->context < 131072 && bounded->context >= limits::kMinimumContext);
    QCOMPARE(bounded->context % 256, std::int64_t{0});
    QVERIFY(bounded->total() <= bounded->available);
    QVERIFY(f.state_bytes(bounded->context + 256) + (13ull << 30) > bounded->available);
    // 13.5 GiB free: not even the minimum context.
    auto refused = limits::plan_device_memory(f, 27ull << 29, 0, "cuda:1");
    QCOMPARE(refused.status().code(), ErrorCode::out_of_memory);
    QVERIFY(refused.status().message().find("cuda:1") != std::string::npos);
    // An explicit context: granted if it fits, refused if not, invalid above the model's.
    QCOMPARE(limits::plan_device_memory(f, 20ull << 30, 8192, "cuda:0")->context, std::int64_t{8192});
    QCOMPARE(limits::plan_device_memory(f, 20ull << 30, 131072, "cuda:0").status().code(), ErrorCode::out_of_memory);
    QCOMPARE(limits::plan_device_memory(f, 80ull << 30, 200000, "cuda:0").status().code(), ErrorCode::invalid_argument);
  }

  void boundedContextInRequests() {
    ModelOptions options;
    options.max_context = 64;
    auto model = engine_->load_model(test::demo_model(), options);
    QVERIFY(model);
    Request r = hello(1000);
    r.context.assign(60, 7);
    const Outcome bounded = generate(*engine_, *model, r);
    QCOMPARE(bounded.last.kind, Event::Kind::done);
    QCOMPARE(bounded.tokens.size(), std::size_t(4));  // the room left in 64 positions
    r.context.assign(64, 7);
    const Outcome full = generate(*engine_, *model, r);
    QCOMPARE(full.last.kind, Event::Kind::error);
    QVERIFY2(full.last.status.message().find("context holds 64") != std::string::npos,
             full.last.status.message().c_str());
    auto session = engine_->new_session(*model);
    const std::vector<std::int32_t> many(65, 7);
    auto logits = engine_->append_logits(session, many);
    QVERIFY(!logits);
    QVERIFY2(logits.status().message().find("context holds 64") != std::string::npos,
             logits.status().message().c_str());
  }

  void badRequests_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("fragment");
    const char* names[] = {"max_new_tokens",
                           "max_new_tokens",
                           "max_new_tokens",
                           "temperature",
                           "temperature",
                           "temperature",
                           "top_p",
                           "top_p",
                           "top_p",
                           "top_k",
                           "min_p",
                           "repetition_penalty",
                           "repetition_penalty",
                           "presence_penalty",
                           "outside the vocabulary",
                           "outside the vocabulary",
                           "stop string"};
    for (int i = 0; i < static_cast<int>(std::size(names)); ++i)
      QTest::newRow(qPrintable(QString("%1 #%2").arg(names[i]).arg(i))) << i << QString(names[i]);
  }
  void badRequests() {
    QFETCH(int, which);
    QFETCH(QString, fragment);
    auto model = engine_->load_model(test::demo_model());
    QVERIFY(model);
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    constexpr float inf = std::numeric_limits<float>::infinity();
    Request r = hello();
    switch (which) {
      case 0:
        r.stop.max_new_tokens = 0;
        break;
      case 1:
        r.stop.max_new_tokens = -1;
        break;
      case 2:
        r.stop.max_new_tokens = std::numeric_limits<std::int64_t>::max();
        break;
      case 3:
        r.sampling.temperature = -0.5f;
        break;
      case 4:
        r.sampling.temperature = nan;
        break;
      case 5:
        r.sampling.temperature = inf;
        break;
      case 6:
        r.sampling.top_p = 0.0f;
        break;
      case 7:
        r.sampling.top_p = 1.5f;
        break;
      case 8:
        r.sampling.top_p = nan;
        break;
      case 9:
        r.sampling.top_k = -3;
        break;
      case 10:
        r.sampling.min_p = 2.0f;
        break;
      case 11:
        r.sampling.repetition_penalty = 0.0f;
        break;
      case 12:
        r.sampling.repetition_penalty = nan;
        break;
      case 13:
        r.sampling.presence_penalty = -inf;
        break;
      case 14:
        r.context = {1, 384};
        break;  // the demo's vocabulary is 0..383
      case 15:
        r.context = {-2};
        break;
      case 16:
        r.stop.stop_strings.assign(65, "x");
        break;
    }
    const Outcome out = generate(*engine_, *model, r);
    QCOMPARE(out.last.kind, Event::Kind::error);
    QVERIFY(out.tokens.empty());
    QCOMPARE(out.last.status.code(), ErrorCode::invalid_argument);
    QVERIFY2(QString::fromStdString(out.last.status.message()).contains(fragment), out.last.status.message().c_str());
  }

  // The bounds are not so tight that ordinary settings are refused.
  void goodRequestPasses() {
    auto model = engine_->load_model(test::demo_model());
    QVERIFY(model);
    Request r = hello(3);
    r.sampling.temperature = 1.0f;
    r.sampling.top_p = 0.9f;
    r.sampling.top_k = 50;
    r.sampling.min_p = 0.05f;
    r.sampling.repetition_penalty = 1.1f;
    r.sampling.presence_penalty = -0.5f;
    r.stop.max_new_tokens = 3;
    const Outcome out = generate(*engine_, *model, r);
    QCOMPARE(out.last.kind, Event::Kind::done);
    QCOMPARE(out.tokens.size(), std::size_t(3));
  }

 private:
  std::unique_ptr<Engine> engine_;
};

QTEST_APPLESS_MAIN(TestLimits)
#include "test_limits.moc"
