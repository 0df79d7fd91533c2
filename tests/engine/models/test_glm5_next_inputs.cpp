// glm5_next inputs: MXFP4 experts written by quantize-experts (bit for bit what the fixture
// generator wrote, and checked against its transformers reference), the day0-cli commands on a
// glm5_next folder, and hostile configs and checkpoints, which must give clear errors.
#include <QtTest>
#include <fstream>
#include <iterator>
#include <random>

#include "app/process_runner.h"
#include "day0/quantize_experts.h"
#include "day0/verify.h"
#include "glm5_test_util.h"
#include "io/checkpoint.h"
#include "models/loaded_model.h"
#include "vision/image_input.h"

using namespace day0;
using namespace day0::test;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");

Status load_status(const fs::path& dir) {
  ThreadPool pool(1);
  auto model = models::load_model(dir, pool);
  return model.is_ok() ? Status::ok() : model.status();
}

bool mentions(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

}  // namespace

class TestGlm5NextInputs : public QObject {
  Q_OBJECT
 private slots:
  // quantize-experts on the bf16 checkpoint writes exactly the MXFP4 tensors of the fixture
  // generator's quantizer, copies every other tensor byte for byte, and the result matches the
  // transformers reference of the MXFP4 checkpoint.
  void quantizeExpertsRoundTrip() {
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "q";
    const auto report = quantize_experts(glm5_model("tiny-glm5-hc4"), out);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    QCOMPARE(report->layers, std::int64_t{4});
    QCOMPARE(report->experts, std::int64_t{32});

    auto ours = io::Checkpoint::open(out);
    auto theirs = io::Checkpoint::open(glm5_model("tiny-glm5-hc4-mxfp4"));
    QVERIFY2(ours.is_ok(), ours.status().message().c_str());
    QVERIFY(theirs.is_ok());
    QCOMPARE((*ours)->tensors().size(), (*theirs)->tensors().size());
    int quantized = 0;
    for (const auto& [name, ref] : (*theirs)->tensors()) {
      const auto mine = (*ours)->find(name);
      QVERIFY2(mine.has_value(), name.c_str());
      QVERIFY2(mine->info->dtype == ref.info->dtype && mine->info->shape == ref.info->shape, name.c_str());
      const auto a = mine->file->data(*mine->info), b = ref.file->data(*ref.info);
      QVERIFY2(std::equal(a.begin(), a.end(), b.begin(), b.end()), name.c_str());
      quantized += name.ends_with("_blocks") || name.ends_with("_scales");
    }
    QCOMPARE(quantized, 16);
    const auto cfg = read_json(out / "config.json");
    QCOMPARE(QString::fromStdString(cfg["quantization_config"]["quant_method"].get<std::string>()), QString("mxfp4"));
    QVERIFY(fs::exists(out / "generation_config.json"));

    VerifyOptions options;
    options.threads = 2;
    const auto verified = verify_model(out, glm5_reference("tiny-glm5-hc4-mxfp4"), options);
    QVERIFY2(verified.is_ok(), verified.status().message().c_str());
    QVERIFY2(verified->passed, format_verify_report(*verified).c_str());

    // Refuses to quantize twice, and to write into a folder that holds files.
    QVERIFY(mentions(quantize_experts(out, fs::path(tmp.path().toStdString()) / "again").status(), "already"));
    QVERIFY(mentions(quantize_experts(glm5_model("tiny-glm5-hc4"), out).status(), "not an empty folder"));
  }

  void cliCommandsRunGlm5() {
    QTemporaryDir tmp;
    const QString model = QString::fromStdString(glm5_model("tiny-glm5-hc3").string());
    const QString out = tmp.path() + "/q";
    auto r = run_program(kCli, {"quantize-experts", model, out}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
    QVERIFY(r.out.contains("quantized"));
    r = run_program(kCli, {"quantize-experts", model}, quiet_env());
    QCOMPARE(r.exit_code, 2);

    r = run_program(kCli, {"inspect", "--model", out}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("MXFP4"), qPrintable(r.out));

    const auto ids = read_ids(glm5_reference("tiny-glm5-hc3"), "greedy_prompt");
    const auto greedy = read_ids(glm5_reference("tiny-glm5-hc3"), "greedy_ids");
    QStringList tokens;
    for (const auto id : ids) tokens << QString::number(id);
    r = run_program(kCli,
                    {"generate", "--model", model, "--tokens", tokens.join(','), "--max-new-tokens", "24",
                     "--temperature", "0", "--ids"},
                    quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QStringList want;
    for (std::size_t i = 0; i < 24; ++i) want << QString::number(greedy[i]);
    QCOMPARE(r.out.trimmed().split('\n').last().trimmed(), want.join(','));

    // logits: [n, vocab] float32 from one prefill, as the decode reference computes each row.
    const QString npy = tmp.path() + "/logits.npy";
    r = run_program(kCli, {"logits", "--model", model, "--tokens", tokens.join(','), "--out", npy}, quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    {
      std::ifstream in(npy.toStdString(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      QVERIFY(bytes.size() > 10);
      const std::size_t header =
          10 + static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
      const auto reference = read_tensor(glm5_reference("tiny-glm5-hc3"), "logits");
      const std::size_t n = ids.size() * 256;
      QCOMPARE(bytes.size(), header + n * 4);
      std::vector<float> got(n);
      std::memcpy(got.data(), bytes.data() + header, n * 4);
      QVERIFY(max_rel_l2(got.data(), reference.data(), ids.size(), 256) <= 1e-4);
    }

    r = run_program(
        kCli,
        {"verify", "--model", model, "--reference", QString::fromStdString(glm5_reference("tiny-glm5-hc3").string())},
        quiet_env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
  }

  void hostileConfigsGiveClearErrors_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("expect");
    QTest::newRow("absurd hidden") << "hidden_size"
                                   << "1099511627776"
                                   << "hidden_size";
    QTest::newRow("negative experts") << "n_routed_experts"
                                      << "-3"
                                      << "n_routed_experts";
    QTest::newRow("string layers") << "num_hidden_layers"
                                   << "\"six\""
                                   << "num_hidden_layers";
    QTest::newRow("wrong kv rank") << "kv_lora_rank"
                                   << "48"
                                   << "kv_a_proj_with_mqa";
    QTest::newRow("more layers") << "num_hidden_layers"
                                 << "7"
                                 << "layer_types";
    QTest::newRow("rope part") << "qk_rope_head_dim"
                               << "8"
                               << "qk_rope_head_dim";
    QTest::newRow("gqa") << "num_key_value_heads"
                         << "2"
                         << "num_key_value_heads";
    QTest::newRow("bad layer type") << "layer_types"
                                    << "[\"linear_attention\",\"mamba\",\"deepseek_sparse_attention\","
                                       "\"linear_attention\",\"deepseek_sparse_attention\","
                                       "\"deepseek_sparse_attention\"]"
                                    << "mamba";
    QTest::newRow("shared after kda") << "indexer_types"
                                      << "[\"full\",\"shared\",\"shared\",\"full\",\"full\",\"full\"]"
                                      << "shares the indexer";
    QTest::newRow("topk not pooled") << "index_topk"
                                     << "10"
                                     << "index_kpool";
    QTest::newRow("groups") << "n_group"
                            << "3"
                            << "n_group";
    QTest::newRow("activation") << "hidden_act"
                                << "\"gelu\""
                                << "silu";
    QTest::newRow("no tail") << "index_kpool_always_select_tail"
                             << "false"
                             << "always_select_tail";
  }

  void hostileConfigsGiveClearErrors() {
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, expect);
    QTemporaryDir tmp;
    const fs::path dir = copy_model(tmp, "tiny-glm5-hc3");
    auto cfg = read_json(dir / "config.json");
    cfg["text_config"][field.toStdString()] = nlohmann::json::parse(value.toStdString());
    write_json(dir / "config.json", cfg);
    const Status s = load_status(dir);
    QVERIFY(!s.is_ok());
    QVERIFY2(mentions(s, expect.toStdString()), s.message().c_str());
  }

  void missingTensorsAndNanScalesAreNamed() {
    QTemporaryDir tmp;
    // config.json asks for a router the checkpoint does not have.
    {
      const fs::path dir = copy_model(tmp, "tiny-glm5-next");
      auto cfg = read_json(dir / "config.json");
      cfg["text_config"]["mlp_layer_types"][0] = "sparse";
      write_json(dir / "config.json", cfg);
      const Status s = load_status(dir);
      QVERIFY(!s.is_ok());
      QVERIFY2(mentions(s, "model.language_model.layers.0.mlp.gate.weight"), s.message().c_str());
    }
    // An MXFP4 scale of 0xFF (NaN).
    {
      const fs::path dir = copy_model(tmp, "tiny-glm5-hc4-mxfp4");
      const std::uint8_t nan = 0xFF;
      QVERIFY(poke_tensor(dir, "model.language_model.layers.3.mlp.experts.down_proj_scales", 5, &nan, 1));
      const Status s = load_status(dir);
      QVERIFY(!s.is_ok());
      QVERIFY2(mentions(s, "0xFF") && mentions(s, "layers.3.mlp.experts.down_proj"), s.message().c_str());
    }
    // MXFP4 declared but the experts are bf16.
    {
      const fs::path dir = copy_model(tmp, "tiny-glm5-hc4", "declared");
      auto cfg = read_json(dir / "config.json");
      cfg["quantization_config"] = {{"quant_method", "mxfp4"}};
      write_json(dir / "config.json", cfg);
      const Status s = load_status(dir);
      QVERIFY(!s.is_ok());
      QVERIFY2(mentions(s, "gate_up_proj_blocks"), s.message().c_str());
    }
  }

  // A vision config that does not fit the text model (out_hidden_size differing from the hidden
  // size) leaves a text model: it loads and generates, and an image sent to it gets the reason
  // instead of the whole model failing to open. A tower tensor missing is a damaged checkpoint:
  // an error naming it.
  void unusableVisionTowerLeavesATextModel() {
    for (const bool missing_tensor : {false, true}) {
      QTemporaryDir tmp;
      const fs::path dir = copy_model(tmp, "tiny-glm5-next");
      const std::string reason = "out_hidden_size";
      if (missing_tensor) {
        // The tower's first block's attention projection renamed away.
        const std::string from = "model.visual.blocks.0.attn.proj.weight", to = "model.visual.blocks.0.attn.gone.weight";
        bool renamed = false;
        for (const auto& e : fs::directory_iterator(dir)) {
          // The shard's header and the index name it: both renamed.
          if (e.path().extension() != ".safetensors" && e.path().filename() != "model.safetensors.index.json") continue;
          std::string bytes;
          {
            std::ifstream in(e.path(), std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
          }
          const auto at = bytes.find(from);
          if (at == std::string::npos || at > 8 + (1u << 24)) continue;
          bytes.replace(at, from.size(), to);  // same length: the header stays valid
          std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
          renamed |= e.path().extension() == ".safetensors";
        }
        QVERIFY(renamed);
      } else {
        auto cfg = read_json(dir / "config.json");
        cfg["vision_config"]["out_hidden_size"] = cfg["text_config"]["hidden_size"].get<int>() * 2;
        write_json(dir / "config.json", cfg);
      }
      ThreadPool pool(1);
      auto model = models::load_model(dir, pool);
      if (missing_tensor) {
        QVERIFY(!model.is_ok());
        QVERIFY2(mentions(model.status(), "model.visual.blocks.0.attn.proj.weight"), model.status().message().c_str());
        continue;
      }
      QVERIFY2(model.is_ok(), model.status().message().c_str());
      auto state = (*model)->new_state();
      const std::int32_t ids[3] = {1, 2, 3};
      std::vector<float> logits(static_cast<std::size_t>((*model)->vocab_size()));
      QVERIFY((*model)->forward(*state, ids, 1, logits.data(), nullptr).is_ok());
      auto* images = vision::image_input(**model);
      QVERIFY(images != nullptr);
      QVERIFY2(images->images_unavailable().find(reason) != std::string::npos, images->images_unavailable().c_str());
      const auto image = fs::path(DAY0_TEST_DATA_DIR) / "vision" / "aligned_112x140.png";
      const std::int32_t prompt[3] = {12, 358, 56};
      auto prepared = vision::prepare_prompt(**model, prompt, {image}, nullptr);
      QVERIFY(!prepared.is_ok());
      QVERIFY2(mentions(prepared.status(), reason), prepared.status().message().c_str());
    }
  }

  // An index_topk far beyond any context costs nothing: the selection is bounded by the context.
  void hugeIndexTopkRuns() {
    QTemporaryDir tmp;
    const fs::path dir = copy_model(tmp, "tiny-glm5-hc3");
    auto cfg = read_json(dir / "config.json");
    cfg["text_config"]["index_topk"] = 1ll << 30;
    write_json(dir / "config.json", cfg);
    ThreadPool pool(1);
    auto model = models::load_model(dir, pool);
    QVERIFY2(model.is_ok(), model.status().message().c_str());
    auto state = (*model)->new_state();
    const auto ids = read_ids(glm5_reference("tiny-glm5-hc3"), "input_ids");
    std::vector<float> row(static_cast<std::size_t>((*model)->vocab_size()));
    QVERIFY((*model)->forward(*state, ids, 1, row.data(), nullptr).is_ok());
    QVERIFY(std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); }));
  }

  void badTokensAreRejected() {
    ThreadPool pool(1);
    auto model = models::load_model(glm5_model("tiny-glm5-hc4"), pool);
    QVERIFY(model.is_ok());
    auto state = (*model)->new_state();
    std::vector<float> row(static_cast<std::size_t>((*model)->vocab_size()));
    const std::int32_t bad[] = {1, 256};
    const Status s = (*model)->forward(*state, bad, 1, row.data(), nullptr);
    QVERIFY(!s.is_ok() && mentions(s, "vocabulary"));
    QCOMPARE(state->length(), std::int64_t{0});
  }

  // Random edits of config.json's numbers and lists: loading answers ok or an error, never crashes.
  void randomConfigEditsNeverCrash() {
    QTemporaryDir tmp;
    const fs::path dir = copy_model(tmp, "tiny-glm5-hc2-kpool16");
    const auto original = read_json(dir / "config.json");
    std::vector<std::string> keys;
    for (auto it = original["text_config"].begin(); it != original["text_config"].end(); ++it) keys.push_back(it.key());
    std::mt19937 rng(5);
    const std::vector<nlohmann::json> values = {0,
                                                -1,
                                                1,
                                                2,
                                                3,
                                                7,
                                                16,
                                                64,
                                                1 << 20,
                                                1ll << 40,
                                                0.5,
                                                -1e30,
                                                nullptr,
                                                "x",
                                                nlohmann::json::array(),
                                                nlohmann::json::object(),
                                                true};
    int errors = 0;
    for (int round = 0; round < 60; ++round) {
      auto cfg = original;
      for (int edits = 0; edits < 1 + round % 3; ++edits)
        cfg["text_config"][keys[rng() % keys.size()]] = values[rng() % values.size()];
      write_json(dir / "config.json", cfg);
      ThreadPool pool(1);
      auto model = models::load_model(dir, pool);
      if (!model.is_ok()) {
        ++errors;
        QVERIFY(!model.status().message().empty());
        continue;
      }
      auto state = (*model)->new_state();
      std::vector<float> row(static_cast<std::size_t>((*model)->vocab_size()));
      const std::int32_t ids[] = {1, 2, 3, 4, 5};
      (void)(*model)->forward(*state, ids, 1, row.data(), nullptr);
    }
    QVERIFY(errors > 10);
  }
};

QTEST_APPLESS_MAIN(TestGlm5NextInputs)
#include "test_glm5_next_inputs.moc"
