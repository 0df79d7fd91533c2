// KDA configuration and weight binding: the real tiny glm5_next checkpoint binds and runs (both
// forms against fp64 on its bf16 weights), broken checkpoints and absurd configs give errors
// that name the tensor or field, and random hostile configs never crash.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <random>

#include "engine/blocks/kda_fixture.h"
#include "formats/float_formats.h"
#include "io/model_config.h"

using namespace day0;
using namespace day0::blocks;
using day0::test::HostTensor;
using day0::test::KdaShape;

namespace {

const std::filesystem::path kTinyModel = std::filesystem::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-glm5-next";

bool has(const Status& s, const std::string& fragment) {
  if (s.message().find(fragment) != std::string::npos) return true;
  qWarning("message \"%s\" lacks \"%s\"", s.message().c_str(), fragment.c_str());
  return false;
}

Result<KdaConfig> config_from(const std::string& text_config_json) {
  auto cfg = io::ModelConfig::parse("{\"model_type\": \"glm5_next\", \"text_config\": " + text_config_json + "}");
  if (!cfg.is_ok()) return cfg.status();
  return read_kda_config(cfg->text());
}

// A tensor of the tiny checkpoint as floats (bf16 widened exactly), without the prefix.
HostTensor load_host(const io::Checkpoint& ckpt, const std::string& name) {
  const auto ref = ckpt.find(name);
  if (!ref) qFatal("tiny checkpoint lacks %s", name.c_str());
  HostTensor t{ref->info->shape, {}};
  const auto bytes = ref->file->data(*ref->info);
  if (ref->info->dtype != DType::bf16) qFatal("%s is not bf16", name.c_str());
  t.values.resize(bytes.size() / 2);
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    t.values[i] = formats::bf16_to_f32(bits);
  }
  return t;
}

}  // namespace

class TestKdaBinding : public QObject {
  Q_OBJECT
 private slots:
  void readsTinyModelConfig() {
    auto cfg = io::ModelConfig::load(kTinyModel);
    QVERIFY2(cfg.is_ok(), cfg.status().message().c_str());
    auto k = read_kda_config(cfg->text());
    QVERIFY2(k.is_ok(), k.status().message().c_str());
    QCOMPARE(k->hidden, std::int64_t{64});
    QCOMPARE(k->heads, std::int64_t{4});
    QCOMPARE(k->head_dim, std::int64_t{16});
    QCOMPARE(k->conv_kernel, std::int64_t{4});
    QVERIFY(k->lower_bound.has_value());
    QCOMPARE(*k->lower_bound, -5.0f);
    QCOMPARE(k->norm_eps, 1e-5f);
    QCOMPARE(k->qkv_dim(), std::int64_t{64});
  }

  void readsGateForms() {
    // Absent: transformers' default -5. Null: the softplus form.
    auto absent = config_from("{\"hidden_size\": 32}");
    QVERIFY2(absent.is_ok(), absent.status().message().c_str());
    QCOMPARE(absent->lower_bound.value_or(0.0f), -5.0f);
    QCOMPARE(absent->heads, std::int64_t{64});
    QCOMPARE(absent->head_dim, std::int64_t{128});
    auto null_bound = config_from("{\"hidden_size\": 32, \"linear_lower_bound\": null}");
    QVERIFY2(null_bound.is_ok(), null_bound.status().message().c_str());
    QVERIFY(!null_bound->lower_bound.has_value());
    auto other = config_from("{\"hidden_size\": 32, \"linear_lower_bound\": -2.5, \"rms_norm_eps\": 1e-6}");
    QVERIFY(other.is_ok());
    QCOMPARE(*other->lower_bound, -2.5f);
    QCOMPARE(other->norm_eps, 1e-6f);
    // The Hub's nested form overrides the flat fields; safe_gate restores the bound.
    auto nested = config_from(
        "{\"hidden_size\": 32, \"linear_num_heads\": 2, \"linear_lower_bound\": null, \"linear_attn_config\": "
        "{\"num_heads\": 8, \"head_dim\": 32, \"short_conv_kernel_size\": 3, \"safe_gate\": true}}");
    QVERIFY2(nested.is_ok(), nested.status().message().c_str());
    QCOMPARE(nested->heads, std::int64_t{8});
    QCOMPARE(nested->head_dim, std::int64_t{32});
    QCOMPARE(nested->conv_kernel, std::int64_t{3});
    QCOMPARE(nested->lower_bound.value_or(0.0f), -5.0f);
    auto unsafe = config_from(
        "{\"hidden_size\": 32, \"linear_lower_bound\": null, \"linear_attn_config\": {\"safe_gate\": false}}");
    QVERIFY(unsafe.is_ok());
    QVERIFY(!unsafe->lower_bound.has_value());
    auto nested_bound = config_from("{\"hidden_size\": 32, \"linear_attn_config\": {\"gate_lower_bound\": -3.0}}");
    QVERIFY(nested_bound.is_ok());
    QCOMPARE(*nested_bound->lower_bound, -3.0f);
  }

  void rejectsAbsurdConfigs_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("field");
    QTest::newRow("no hidden") << "{}"
                               << "hidden_size";
    QTest::newRow("zero heads") << "{\"hidden_size\": 32, \"linear_num_heads\": 0}"
                                << "linear_num_heads";
    QTest::newRow("negative dim") << "{\"hidden_size\": 32, \"linear_head_dim\": -16}"
                                  << "linear_head_dim";
    QTest::newRow("huge dim") << "{\"hidden_size\": 32, \"linear_head_dim\": 100000}"
                              << "linear_head_dim";
    QTest::newRow("zero kernel") << "{\"hidden_size\": 32, \"linear_conv_kernel_dim\": 0}"
                                 << "linear_conv_kernel_dim";
    QTest::newRow("huge kernel") << "{\"hidden_size\": 32, \"linear_conv_kernel_dim\": 4096}"
                                 << "linear_conv_kernel_dim";
    QTest::newRow("string heads") << "{\"hidden_size\": 32, \"linear_num_heads\": \"64\"}"
                                  << "linear_num_heads";
    QTest::newRow("positive bound") << "{\"hidden_size\": 32, \"linear_lower_bound\": 1.0}"
                                    << "linear_lower_bound";
    QTest::newRow("absurd bound") << "{\"hidden_size\": 32, \"linear_lower_bound\": -1e9}"
                                  << "linear_lower_bound";
    QTest::newRow("string bound") << "{\"hidden_size\": 32, \"linear_lower_bound\": \"-5\"}"
                                  << "linear_lower_bound";
    QTest::newRow("zero eps") << "{\"hidden_size\": 32, \"rms_norm_eps\": 0}"
                              << "rms_norm_eps";
    QTest::newRow("negative eps") << "{\"hidden_size\": 32, \"rms_norm_eps\": -1e-5}"
                                  << "rms_norm_eps";
    QTest::newRow("gelu") << "{\"hidden_size\": 32, \"hidden_act\": \"gelu\"}"
                          << "hidden_act";
    QTest::newRow("nested heads") << "{\"hidden_size\": 32, \"linear_attn_config\": {\"num_heads\": -1}}"
                                  << "num_heads";
    QTest::newRow("nested bound") << "{\"hidden_size\": 32, \"linear_attn_config\": {\"gate_lower_bound\": 3}}"
                                  << "gate_lower_bound";
    QTest::newRow("too many channels") << "{\"hidden_size\": 32, \"linear_num_heads\": 4096, \"linear_head_dim\": 1024}"
                                       << "channels";
  }
  void rejectsAbsurdConfigs() {
    QFETCH(QString, json);
    QFETCH(QString, field);
    const auto k = config_from(json.toStdString());
    QVERIFY(!k.is_ok());
    QVERIFY(has(k.status(), field.toStdString()));
  }

  // Random values of every type in every field (each field absent, sensible or hostile): an error
  // or a config in range, never a crash.
  void hostileConfigsNeverCrash() {
    std::mt19937 rng(7);
    const std::vector<std::pair<const char*, std::vector<const char*>>> fields = {
        {"hidden_size", {"32", "1"}},
        {"linear_num_heads", {"4", "1"}},
        {"linear_head_dim", {"16", "3"}},
        {"linear_conv_kernel_dim", {"4", "1"}},
        {"linear_lower_bound", {"-5.0", "null", "0"}},
        {"rms_norm_eps", {"1e-5", "1e-6"}},
        {"hidden_act", {"\"silu\""}},
        {"linear_attn_config", {"{}", "{\"num_heads\": 2, \"safe_gate\": false}"}}};
    const std::vector<const char*> hostile = {"0",
                                              "-1",
                                              "1e308",
                                              "-1e308",
                                              "9223372036854775807",
                                              "3.5",
                                              "-0.0",
                                              "null",
                                              "true",
                                              "\"x\"",
                                              "[]",
                                              "{}",
                                              "-1000",
                                              "1e-300",
                                              "{\"num_heads\": 1e20}",
                                              "[1,2]",
                                              "\"\"",
                                              "{\"gate_lower_bound\": null, \"safe_gate\": 3}"};
    int ok = 0, rejected = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string json = "{";
      for (const auto& [field, sensible] : fields) {
        const unsigned pick = rng() % 3;
        if (pick == 0) continue;
        const char* value = pick == 1 ? sensible[rng() % sensible.size()] : hostile[rng() % hostile.size()];
        json += std::string(json.size() > 1 ? "," : "") + "\"" + field + "\": " + value;
      }
      json += "}";
      const auto k = config_from(json);
      if (!k.is_ok()) {
        ++rejected;
        QVERIFY(!k.status().message().empty());
        continue;
      }
      ++ok;
      QVERIFY2(k->hidden >= 1 && k->heads >= 1 && k->head_dim >= 1 && k->conv_kernel >= 1, json.c_str());
      QVERIFY2(k->norm_eps > 0.0f && k->norm_eps < 1.0f, json.c_str());
      QVERIFY2(!k->lower_bound || (*k->lower_bound <= 0.0f && *k->lower_bound >= -1000.0f), json.c_str());
    }
    qInfo("%d accepted, %d rejected", ok, rejected);
    QVERIFY(ok > 50 && rejected > 100);
  }

  // Layers 0, 3 and 5 of the tiny checkpoint are KDA layers: they bind, and both forms match the
  // fp64 implementation on their bf16 weights; layer 1 is an MLA layer and names what it lacks.
  void bindsAndRunsTinyModelLayers() {
    auto cfg = io::ModelConfig::load(kTinyModel);
    QVERIFY(cfg.is_ok());
    auto config = read_kda_config(cfg->text());
    QVERIFY(config.is_ok());
    auto opened = io::Checkpoint::open(kTinyModel);
    QVERIFY2(opened.is_ok(), opened.status().message().c_str());
    std::shared_ptr<const io::Checkpoint> ckpt = std::move(opened).value();
    const models::WeightSource weights(ckpt);
    ThreadPool pool(2);
    const KdaShape shape{config->hidden, config->heads, config->head_dim, config->conv_kernel, config->lower_bound};
    for (const int li : {0, 3, 5}) {
      const std::string prefix = "model.language_model.layers." + std::to_string(li) + ".self_attn";
      auto layer = bind_kda_layer(weights, *config, prefix);
      QVERIFY2(layer.is_ok(), layer.status().message().c_str());
      std::map<std::string, HostTensor> host;
      for (const char* n : {"q_proj.weight", "k_proj.weight", "v_proj.weight", "q_conv1d.weight", "k_conv1d.weight",
                            "v_conv1d.weight", "f_a_proj.weight", "f_b_proj.weight", "dt_bias", "A_log",
                            "b_proj.weight", "g_a_proj.weight", "g_b_proj.weight", "o_norm.weight", "o_proj.weight"})
        host[n] = load_host(*ckpt, prefix + "." + n);
      const std::int64_t T = 150;
      const auto x = test::random_input(T, shape.hidden, static_cast<std::uint32_t>(li) + 1);
      const std::vector<double> ref = test::kda_reference(shape, host, x, T);
      for (const KdaMode mode : {KdaMode::recurrent, KdaMode::chunked}) {
        KdaState state = new_kda_state(*config);
        std::vector<float> out(static_cast<std::size_t>(T * shape.hidden));
        QVERIFY(kda_forward(pool, *config, *layer, state, x.data(), T, out.data(), nullptr, mode).is_ok());
        const double err = test::rel_l2(out, ref);
        qInfo("layer %d %s vs fp64: %.2e", li, mode == KdaMode::chunked ? "chunked" : "recurrent", err);
        QVERIFY(err <= 1e-5);
      }
    }
    const auto mla = bind_kda_layer(weights, *config, "model.language_model.layers.1.self_attn");
    QCOMPARE(mla.status().code(), ErrorCode::not_found);
    QVERIFY(has(mla.status(), "model.language_model.layers.1.self_attn.q_proj.weight"));
  }

  // Every tensor, removed in turn: the error names it.
  void missingTensorIsNamed() {
    const KdaShape shape;
    const auto full = test::random_kda_tensors(shape, {}, 3);
    for (const auto& [name, t] : full) {
      QTemporaryDir dir;
      auto tensors = full;
      tensors.erase(name);
      test::write_kda_checkpoint(dir.path().toStdString(), tensors);
      test::KdaFixture f;
      const std::string err = test::make_kda_fixture_from(dir.path().toStdString(), shape, f);
      QVERIFY2(err.find(test::kKdaPrefix + "." + name) != std::string::npos, err.c_str());
      QVERIFY2(err.find("no tensor") != std::string::npos, err.c_str());
    }
  }

  // Every tensor with a wrong shape (one more row; a conv weight without its middle axis).
  void wrongShapeIsNamed() {
    const KdaShape shape;
    const auto full = test::random_kda_tensors(shape, {}, 4);
    for (const auto& [name, t] : full) {
      for (int variant = 0; variant < 2; ++variant) {
        QTemporaryDir dir;
        auto tensors = full;
        HostTensor& bad = tensors[name];
        if (variant == 0) {
          bad.shape[0] += 1;
        } else {
          if (bad.shape.size() != 3) continue;
          bad.shape = {bad.shape[0], bad.shape[2]};
        }
        std::uint64_t n = 1;
        for (const auto s : bad.shape) n *= s;
        bad.values.resize(n, 0.5f);
        test::write_kda_checkpoint(dir.path().toStdString(), tensors);
        test::KdaFixture f;
        const std::string err = test::make_kda_fixture_from(dir.path().toStdString(), shape, f);
        QVERIFY2(err.find(test::kKdaPrefix + "." + name) != std::string::npos, err.c_str());
        QVERIFY2(err.find("shape") != std::string::npos, err.c_str());
      }
    }
  }

  // A wrong config (more heads than the checkpoint holds) fails on the first tensor it reaches.
  void configCheckpointMismatchIsNamed() {
    const KdaShape shape;
    QTemporaryDir dir;
    test::write_kda_checkpoint(dir.path().toStdString(), test::random_kda_tensors(shape, {}, 5));
    KdaShape wider = shape;
    wider.heads += 1;
    test::KdaFixture f;
    const std::string err = test::make_kda_fixture_from(dir.path().toStdString(), wider, f);
    QVERIFY2(err.find("q_proj.weight has shape [72, 48] but config.json implies [96, 48]") != std::string::npos,
             err.c_str());
  }
};

QTEST_GUILESS_MAIN(TestKdaBinding)
#include "test_kda_binding.moc"
