// inspect on real checkpoints written by transformers (tests/data/models, made by
// tools/reference/make_tiny_checkpoints.py) and on config-only folders of the full-size models.
// The expected figures come from transformers' own module trees dumped to
// tests/data/models/reference-shapes, not from Day0's code.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include <nlohmann/json.hpp>

#include "day0/model_info.h"
#include "io/model_config.h"
#include "models/architecture.h"

using namespace day0;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kData = DAY0_TEST_DATA_DIR;

json load_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::uint64_t numel(const json& shape) {
  std::uint64_t n = 1;
  for (const auto& d : shape) n *= d.get<std::uint64_t>();
  return n;
}

// Sum of the parameters (and buffers) of transformers' module tree, optionally of names with a prefix.
std::uint64_t reference_params(const json& ref, const std::string& contains = "") {
  std::uint64_t total = 0;
  for (const auto& [name, shape] : ref["tensors"].items())
    if (contains.empty() || name.find(contains) != std::string::npos) total += numel(shape);
  return total;
}

fs::path config_only_folder(QTemporaryDir& tmp, const fs::path& config) {
  const fs::path dir = tmp.path().toStdString();
  fs::copy_file(config, dir / "config.json");
  return dir;
}

bool any_warning_has(const ModelInfo& info, const std::string& fragment) {
  for (const auto& w : info.warnings)
    if (w.find(fragment) != std::string::npos) return true;
  return false;
}

std::string warnings_text(const ModelInfo& info) {
  std::string s;
  for (const auto& w : info.warnings) s += w + "\n";
  return s;
}

}  // namespace

class TestModelInfo : public QObject {
  Q_OBJECT
 private slots:
  void tinyGptOss() {
    const auto info = inspect_model(kData / "models/tiny-gpt-oss");
    QVERIFY2(info.is_ok(), info.status().message().c_str());
    const json ref = load_json(kData / "models/reference-shapes/tiny-gpt-oss.shapes.json");
    QVERIFY2(info->warnings.empty(), warnings_text(*info).c_str());
    QCOMPARE(info->model_type, std::string("gpt_oss"));
    QCOMPARE(info->architecture, std::string("GptOssForCausalLM"));
    QVERIFY(info->supported);
    QVERIFY(info->weights_present);
    QCOMPARE(info->n_shards, std::uint64_t{2});
    QCOMPARE(info->n_tensors, std::uint64_t{ref["checkpoint_tensors"].size()});
    QCOMPARE(info->expert_format, std::string("MXFP4"));
    // MXFP4 blocks count two parameters per byte: the total equals transformers' dequantized model.
    QCOMPARE(info->total_params, reference_params(ref));
    const std::uint64_t experts = reference_params(ref, ".experts.");
    QCOMPARE(info->params_per_expert, experts / (8 * 4));
    const std::uint64_t active =
        reference_params(ref) - experts - reference_params(ref, "embed_tokens") + experts / (8 * 4) * 2 * 4;
    QCOMPARE(info->active_params_per_token, active);
    QCOMPARE(info->routed_experts, std::int64_t{8});
    QCOMPARE(info->experts_per_token, std::int64_t{2});
    QCOMPARE(info->moe_layers, std::int64_t{4});
    const auto index = load_json(kData / "models/tiny-gpt-oss/model.safetensors.index.json");
    QCOMPARE(info->tensor_bytes, index["metadata"]["total_size"].get<std::uint64_t>());
  }

  void tinyGlm5Next() {
    const auto info = inspect_model(kData / "models/tiny-glm5-next");
    QVERIFY2(info.is_ok(), info.status().message().c_str());
    const json ref = load_json(kData / "models/reference-shapes/tiny-glm5-next.shapes.json");
    QVERIFY2(info->warnings.empty(), warnings_text(*info).c_str());
    QVERIFY(info->supported);
    QVERIFY(info->has_vision);
    QCOMPARE(info->expert_format, std::string("BF16"));
    QCOMPARE(info->n_tensors, std::uint64_t{ref["tensors"].size()});
    QCOMPARE(info->total_params, reference_params(ref));
    QCOMPARE(info->vision_params, reference_params(ref, "model.visual."));
    QCOMPARE(info->moe_layers, std::int64_t{5});
    QCOMPARE(info->shared_experts, std::int64_t{1});
    const std::uint64_t experts = reference_params(ref, ".mlp.experts.");
    QCOMPARE(info->params_per_expert, experts / (16 * 5));
    const std::uint64_t active = reference_params(ref) - experts - reference_params(ref, "model.visual.") -
                                 reference_params(ref, "embed_tokens") + experts / (16 * 5) * 4 * 5;
    QCOMPARE(info->active_params_per_token, active);
    // Roles come from the layer types: KDA layers are linear attention, the indexer is separate.
    std::map<std::string, std::uint64_t> tensors_by_role;
    for (const auto& g : info->groups) tensors_by_role[g.role] = g.tensors;
    QCOMPARE(tensors_by_role["sparse-attention indexer"], std::uint64_t{2 * 7});  // two "full" DSA layers
    QCOMPARE(tensors_by_role["hyper-connections"], std::uint64_t{6 * 6});
    QCOMPARE(tensors_by_role["routed experts"], std::uint64_t{5 * 16 * 3});
  }

  void expectedTensorsMatchReleasedLayouts_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("gpt-oss-20b") << "gpt-oss-20b-shape";
    QTest::newRow("gpt-oss-120b") << "gpt-oss-120b-shape";
    QTest::newRow("GLM-5.3-Flash") << "glm-5.3-flash-shape";
  }
  void expectedTensorsMatchReleasedLayouts() {
    QFETCH(QString, name);
    const auto config = io::ModelConfig::load(kData / "configs" / (name.toStdString() + ".config.json"));
    QVERIFY(config.is_ok());
    const json ref = load_json(kData / "models/reference-shapes" / (name.toStdString() + ".shapes.json"));
    // The checkpoint layout transformers writes (gpt-oss: the released MXFP4 layout).
    std::map<std::string, std::vector<std::uint64_t>> reference;
    for (const auto& [tensor, entry] : ref["checkpoint_tensors"].items())
      reference[tensor] = entry["shape"].get<std::vector<std::uint64_t>>();
    if (ref.contains("checkpoint_expert_tensors")) {
      for (const auto& [pattern, entry] : ref["checkpoint_expert_tensors"].items()) {
        for (const auto& layer : entry["layers"]) {
          for (int e = 0; e < entry["num_experts"].get<int>(); ++e) {
            std::string tensor = pattern;
            tensor.replace(tensor.find("{layer}"), 7, std::to_string(layer.get<int>()));
            tensor.replace(tensor.find("{expert}"), 8, std::to_string(e));
            reference[tensor] = entry["shape"].get<std::vector<std::uint64_t>>();
          }
        }
      }
    }
    const auto* arch = models::find_architecture(config->model_type());
    QVERIFY(arch != nullptr);
    const auto expected = arch->expected_tensors(*config);
    QVERIFY2(expected.is_ok(), expected.status().message().c_str());
    QCOMPARE(expected->size(), reference.size());
    for (const auto& t : *expected) {
      const auto it = reference.find(t.name);
      QVERIFY2(it != reference.end(), t.name.c_str());
      QVERIFY2(it->second == t.shape, t.name.c_str());
    }
  }

  void configOnlyFolders_data() { expectedTensorsMatchReleasedLayouts_data(); }
  void configOnlyFolders() {
    QFETCH(QString, name);
    QTemporaryDir tmp;
    const auto dir = config_only_folder(tmp, kData / "configs" / (name.toStdString() + ".config.json"));
    const auto info = inspect_model(dir);
    QVERIFY2(info.is_ok(), info.status().message().c_str());
    QVERIFY(!info->weights_present);
    QCOMPARE(info->count_source, std::string("config"));
    const json ref = load_json(kData / "models/reference-shapes" / (name.toStdString() + ".shapes.json"));
    QCOMPARE(info->total_params, reference_params(ref));
    QVERIFY(info->active_params_per_token < info->total_params / 5);
  }

  void knownFigures() {
    // gpt-oss-20b: 20.9 B total and 3.6 B active per token, the figures OpenAI published.
    QTemporaryDir tmp;
    auto info = inspect_model(config_only_folder(tmp, kData / "configs/gpt-oss-20b-shape.config.json"));
    QVERIFY(info.is_ok());
    QVERIFY(info->total_params > 20'900'000'000ull && info->total_params < 20'930'000'000ull);
    QVERIFY(info->active_params_per_token > 3'600'000'000ull && info->active_params_per_token < 3'620'000'000ull);
    QCOMPARE(info->expert_format, std::string("MXFP4"));
  }

  void indexOnlyFolder() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const char* f : {"config.json", "model.safetensors.index.json"})
      fs::copy_file(kData / "models/tiny-gpt-oss" / f, dir / f);
    auto info = inspect_model(dir);
    QVERIFY2(info.is_ok(), info.status().message().c_str());
    QVERIFY(!info->weights_present);
    QCOMPARE(info->n_shards, std::uint64_t{2});
    QCOMPARE(info->shards_present, std::uint64_t{0});
    const auto full = inspect_model(kData / "models/tiny-gpt-oss");
    QCOMPARE(info->total_params, full->total_params);
    QCOMPARE(info->active_params_per_token, full->active_params_per_token);
    QCOMPARE(info->tensor_bytes, full->tensor_bytes);
    QCOMPARE(info->expert_format, std::string("MXFP4"));
    QVERIFY2(info->warnings.empty(), warnings_text(*info).c_str());
    // Half downloaded: still a plan, and it says how far the download got.
    fs::copy_file(kData / "models/tiny-gpt-oss/model-00001-of-00002.safetensors",
                  dir / "model-00001-of-00002.safetensors");
    info = inspect_model(dir);
    QVERIFY(info.is_ok());
    QVERIFY(!info->weights_present);
    QCOMPARE(info->shards_present, std::uint64_t{1});
    QVERIFY(format_model_info(*info).find("1 of 2 shard(s) present") != std::string::npos);
  }

  void configThatDisagreesWithTensors() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const auto& entry : fs::directory_iterator(kData / "models/tiny-gpt-oss"))
      fs::copy_file(entry.path(), dir / entry.path().filename());
    json config = load_json(dir / "config.json");
    config["num_local_experts"] = 16;
    std::ofstream(dir / "config.json") << config.dump();
    const auto info = inspect_model(dir);
    QVERIFY2(info.is_ok(), info.status().message().c_str());
    QVERIFY(any_warning_has(*info,
                            "model.layers.0.mlp.experts.gate_up_proj_blocks has shape [8, 128, 2, 16] "
                            "but config.json implies [16, 128, 2, 16]"));
  }

  void unsupportedArchitecture() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::ofstream(dir / "config.json") << R"({"model_type":"llama","hidden_size":64})";
    fs::copy_file(kData / "models/tiny-gpt-oss/model-00002-of-00002.safetensors", dir / "model.safetensors");
    const auto info = inspect_model(dir);
    QVERIFY2(info.is_ok(), info.status().message().c_str());
    QVERIFY(!info->supported);
    QVERIFY(info->support_note.find("llama") != std::string::npos);
    QVERIFY(info->support_note.find("gpt_oss") != std::string::npos);
    QVERIFY(info->total_params > 0);
  }

  void malformedConfigs_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("message");
    QTest::newRow("absurd hidden size") << R"({"hidden_size": 1000000000000})"
                                        << "hidden_size must be between";
    QTest::newRow("string layers") << R"({"num_hidden_layers": "four"})"
                                   << "num_hidden_layers must be an integer";
    QTest::newRow("top-k above experts") << R"({"num_experts_per_tok": 99})"
                                         << "num_experts_per_tok must be between";
    QTest::newRow("missing vocab") << R"({"vocab_size": null})"
                                   << "vocab_size is missing";
    QTest::newRow("heads not multiple of kv") << R"({"num_key_value_heads": 3})"
                                              << "not a multiple";
    QTest::newRow("unknown quantization") << R"({"quantization_config": {"quant_method": "gptq"}})"
                                          << "gptq";
  }
  void malformedConfigs() {
    QFETCH(QString, edit);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    json config = load_json(kData / "models/tiny-gpt-oss/config.json");
    config.merge_patch(json::parse(edit.toStdString()));
    std::ofstream(dir / "config.json") << config.dump();
    const auto info = inspect_model(dir);
    QVERIFY(!info.is_ok());
    QVERIFY2(info.status().message().find(message.toStdString()) != std::string::npos, info.status().message().c_str());
  }

  void malformedGlmConfigs_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("message");
    QTest::newRow("layer types too short") << R"({"text_config": {"layer_types": ["linear_attention"]}})"
                                           << "layer_types lists 1 layers";
    QTest::newRow("unknown layer type")
        << R"({"text_config": {"layer_types": ["linear_attention","mamba","linear_attention","linear_attention","linear_attention","linear_attention"]}})"
        << "\"mamba\"";
    QTest::newRow("shared indexer after KDA")
        << R"({"text_config": {"indexer_types": ["full","shared","full","full","full","full"]}})"
        << "shares the indexer";
    QTest::newRow("vision heads") << R"({"vision_config": {"num_heads": 5}})"
                                  << "not a multiple";
  }
  void malformedGlmConfigs() {
    QFETCH(QString, edit);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    json config = load_json(kData / "models/tiny-glm5-next/config.json");
    config.merge_patch(json::parse(edit.toStdString()));
    std::ofstream(dir / "config.json") << config.dump();
    const auto info = inspect_model(dir);
    QVERIFY(!info.is_ok());
    QVERIFY2(info.status().message().find(message.toStdString()) != std::string::npos, info.status().message().c_str());
  }

  // The GPU program's plan for glm5_next (in builds with the CUDA backend; no GPU needed): the
  // weights as the GPU keeps them, caches that grow with the context, and a clear refusal
  // naming the config field when a shape is beyond what its kernels take.
  void glm5GpuPlan_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("message");
    QTest::newRow("fits the kernels") << "{}"
                                      << "";
    QTest::newRow("latent too wide") << R"({"text_config": {"kv_lora_rank": 1024}})"
                                     << "kv_lora_rank is 1024";
    QTest::newRow("too many streams") << R"({"text_config": {"hc_mult": 9}})"
                                      << "hc_mult is 9";
    QTest::newRow("too many pools selected") << R"({"text_config": {"index_topk": 65536, "index_kpool": 4}})"
                                             << "index_topk is 65536";
    QTest::newRow("KDA heads too wide") << R"({"text_config": {"linear_head_dim": 512}})"
                                        << "linear_head_dim is 512";
  }
  void glm5GpuPlan() {
    QFETCH(QString, edit);
    QFETCH(QString, message);
    const models::Architecture* arch = models::find_architecture("glm5_next");
    QVERIFY(arch != nullptr);
    if (arch->device_footprint == nullptr) QSKIP("this build has no CUDA backend");
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    json config = load_json(kData / "models/tiny-glm5-next/config.json");
    config.merge_patch(json::parse(edit.toStdString()));
    std::ofstream(dir / "config.json") << config.dump();
    const auto loaded = io::ModelConfig::load(dir);
    QVERIFY(loaded.is_ok());
    const auto footprint = arch->device_footprint(*loaded, true);
    if (!message.isEmpty()) {
      QVERIFY(!footprint.is_ok());
      QVERIFY2(footprint.status().message().find(message.toStdString()) != std::string::npos,
               footprint.status().message().c_str());
      return;
    }
    QVERIFY2(footprint.is_ok(), footprint.status().message().c_str());
    // Every text tensor at two bytes a value (no MXFP4 experts here), vision left out.
    std::uint64_t text_values = 0;
    const auto tensors = arch->expected_tensors(*loaded);
    QVERIFY(tensors.is_ok());
    for (const auto& t : *tensors) {
      if (t.role == models::TensorRole::vision || t.role == models::TensorRole::mtp) continue;
      std::uint64_t n = 1;
      for (const auto d : t.shape) n *= d;
      text_values += n;
    }
    QCOMPARE(footprint->weights, 2 * text_values);
    QVERIFY(footprint->workspace > 0);
    QCOMPARE(footprint->max_context, config["text_config"]["max_position_embeddings"].get<std::int64_t>());
    // Latent and indexer caches grow with the context; the KDA state and snapshots do not.
    const std::uint64_t short_ctx = footprint->state_bytes(256), long_ctx = footprint->state_bytes(256 * 1024);
    QVERIFY(short_ctx > 0 && long_ctx > 10 * short_ctx);
  }

  void notAModelFolder() {
    QTemporaryDir tmp;
    auto info = inspect_model(tmp.path().toStdString());
    QCOMPARE(info.status().code(), ErrorCode::not_found);
    QVERIFY(info.status().message().find("no config.json") != std::string::npos);
    QCOMPARE(inspect_model("/nonexistent").status().code(), ErrorCode::not_found);
  }
};

QTEST_APPLESS_MAIN(TestModelInfo)
#include "test_model_info.moc"
