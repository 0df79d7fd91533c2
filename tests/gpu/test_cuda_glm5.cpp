// Whole-model alignment of glm5_next (GLM-5.3-Flash) on the GPU with the CPU engine (VERIFY.md),
// on the tiny fixture checkpoints (bf16 and MXFP4 experts; hc 2, 3, 4; shared indexers; kpool 4
// and 16): one prefill with per-layer traces (router and indexer selections agree on >= 99% of
// the (token, layer) rows not yet diverged, every differing choice shown to sit on a tie from
// both sides' router logits or pool scores, layer outputs within 2e-2 relative L2, top-1 of the
// logits agrees on >= 99% of positions or differs only on near-ties, KL reported), then decoding
// token by token on the decode graph (the CPU's tokens fed to both), a rewind to the prompt's
// last-but-one token (the KDA snapshot) giving the same logits again, and the device's greedy
// pick equal to the arg max of its logits. Image prompts (the vision tower on the CPU, its
// features fed to the GPU layers as input embeddings) against transformers' logits and the CPU's.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "core/thread_pool.h"
#include "day0/engine.h"
#include "engine/models/glm5_test_util.h"
#include "gpu/gpu_test_util.h"
#include "io/image_decode.h"
#include "models/loaded_model.h"
#include "models/selection_ties.h"
#include "vision/image_input.h"

using namespace day0;
using namespace day0::gpu_test;

namespace {

std::int64_t arg_max(const float* row, std::int64_t n) { return std::max_element(row, row + n) - row; }

// Rows whose arg max differs, and how many of those are near-ties: the CPU's margin between the
// two choices is below the row's noise (max |GPU - CPU| over the row).
std::pair<int, int> top1_flips(const std::vector<float>& cpu, const std::vector<float>& gpu, std::int64_t vocab) {
  int flips = 0, ties = 0;
  for (std::size_t r = 0; r < cpu.size() / static_cast<std::size_t>(vocab); ++r) {
    const float* c = cpu.data() + r * vocab;
    const float* g = gpu.data() + r * vocab;
    const std::int64_t a = arg_max(c, vocab), b = arg_max(g, vocab);
    if (a == b) continue;
    ++flips;
    double noise = 0;
    for (std::int64_t i = 0; i < vocab; ++i) noise = std::max<double>(noise, std::abs(g[i] - c[i]));
    ties += std::abs(c[a] - c[b]) <= noise;
  }
  return {flips, ties};
}

// The set of non-negative entries of row t of a [rows, width] trace.
std::set<float> row_set(const std::vector<float>& v, std::size_t width, std::int64_t t) {
  std::set<float> out;
  for (std::size_t i = 0; i < width; ++i) {
    const float x = v[static_cast<std::size_t>(t) * width + i];
    if (x >= 0) out.insert(x);
  }
  return out;
}

// One prefill's per-layer traces, GPU against CPU. A token whose router or indexer choice differs
// at layer l legitimately diverges from there on (and every later token from the next layer on,
// through attention): layer outputs are compared over the tokens not yet diverged, and each must
// be within 2e-2 relative L2 (failure says which is not).
struct TraceComparison {
  double worst = 0;
  int pairs = 0, agree = 0;
  int router_ties = 0, indexer_ties = 0;  // selections that differ, each shown to sit on a tie
  std::string failure;
};

// What the tie checks need from a fixture's config.
models::SelectionShape selection_shape(const std::filesystem::path& dir) {
  const auto config = io::ModelConfig::load(dir);
  return config ? models::selection_shape(*config) : models::SelectionShape{};
}

std::set<std::int64_t> as_ids(const std::set<float>& v) {
  std::set<std::int64_t> out;
  for (const float x : v) out.insert(static_cast<std::int64_t>(x));
  return out;
}

TraceComparison compare_traces(const models::ForwardTrace& cpu_trace, const models::ForwardTrace& gpu_trace,
                               std::int64_t T, std::int64_t H, const models::SelectionShape& shape) {
  TraceComparison r;
  std::int64_t layers = 0;
  while (cpu_trace.tensors.count("hidden." + std::to_string(layers))) ++layers;
  if (layers == 0) {
    r.failure = "no layer traces";
    return r;
  }
  std::vector<std::int64_t> diverged(static_cast<std::size_t>(T), layers);
  const auto compare_sets = [&](const std::string& name, std::int64_t l) {
    const auto cpu_it = cpu_trace.tensors.find(name), gpu_it = gpu_trace.tensors.find(name);
    if (cpu_it == cpu_trace.tensors.end()) return;
    if (gpu_it == gpu_trace.tensors.end()) {
      r.failure = "the GPU did not trace " + name;
      return;
    }
    const std::size_t cw = cpu_it->second.size() / static_cast<std::size_t>(T),
                      gw = gpu_it->second.size() / static_cast<std::size_t>(T);
    for (std::int64_t t = 0; t < T; ++t) {
      if (diverged[static_cast<std::size_t>(t)] < l) continue;
      ++r.pairs;
      const auto cpu_set = row_set(cpu_it->second, cw, t), gpu_set = row_set(gpu_it->second, gw, t);
      if (cpu_set == gpu_set) {
        ++r.agree;
        continue;
      }
      const bool is_router = name.rfind("router.", 0) == 0;
      if (is_router) {
        const std::string stem = name.substr(0, name.size() - std::string(".topk").size());
        const auto cl = cpu_trace.tensors.find(stem + ".logits"), gl = gpu_trace.tensors.find(stem + ".logits"),
                   b = cpu_trace.tensors.find(stem + ".bias");
        if (cl == cpu_trace.tensors.end() || gl == gpu_trace.tensors.end() || b == cpu_trace.tensors.end() ||
            cl->second.size() != gl->second.size()) {
          r.failure = stem + ": no router logits traced on both sides";
          return;
        }
        const std::size_t E = cl->second.size() / static_cast<std::size_t>(T);
        const auto row = [&](const std::vector<float>& v) {
          return std::span<const float>(v).subspan(static_cast<std::size_t>(t) * E, E);
        };
        if (b->second.size() < E ||
            !models::router_choice_tie(row(cl->second), row(gl->second), std::span<const float>(b->second).first(E),
                                       as_ids(cpu_set), as_ids(gpu_set), shape.groups)) {
          r.failure = name + " token " + std::to_string(t) + ": the router choice differs and is not a tie";
          return;
        }
        ++r.router_ties;
      } else {
        const std::string stem = name.substr(0, name.size() - std::string(".topk").size());
        const auto cs = cpu_trace.tensors.find(stem + ".scores"), gs = gpu_trace.tensors.find(stem + ".scores");
        if (cs == cpu_trace.tensors.end() || gs == gpu_trace.tensors.end()) {
          r.failure = stem + ": no pool scores traced on both sides";
          return;
        }
        const std::size_t at = models::pool_scores_offset(0, t, shape.kpool),
                          n = models::pool_scores_count(0, t, shape.kpool);
        if (cs->second.size() != gs->second.size() || at + n > cs->second.size() ||
            !models::indexer_choice_tie(std::span<const float>(cs->second).subspan(at, n),
                                        std::span<const float>(gs->second).subspan(at, n), shape.kpool,
                                        as_ids(cpu_set), as_ids(gpu_set))) {
          r.failure = name + " token " + std::to_string(t) + ": the indexer selection differs and is not a tie";
          return;
        }
        ++r.indexer_ties;
      }
      qInfo("  %s token %lld: the selection differs on a tie", name.c_str(), static_cast<long long>(t));
      for (std::int64_t later = t; later < T; ++later)
        diverged[static_cast<std::size_t>(later)] = std::min(diverged[static_cast<std::size_t>(later)], l);
    }
  };
  for (std::int64_t l = 0; l < layers && r.failure.empty(); ++l) {
    const std::string tag = std::to_string(l);
    compare_sets("indexer." + tag + ".topk", l);
    compare_sets("router." + tag + ".topk", l);
    for (const std::string& name : {"attn." + tag + ".out", "hidden." + tag}) {
      const auto want_it = cpu_trace.tensors.find(name), got_it = gpu_trace.tensors.find(name);
      if (want_it == cpu_trace.tensors.end() || got_it == gpu_trace.tensors.end() ||
          want_it->second.size() != got_it->second.size()) {
        r.failure = name + ": missing or of another size";
        return r;
      }
      const auto& want = want_it->second;
      const auto& got = got_it->second;
      const std::size_t row = want.size() / static_cast<std::size_t>(T);
      std::vector<float> a, b;
      for (std::int64_t t = 0; t < T; ++t) {
        if (diverged[static_cast<std::size_t>(t)] <= l) continue;
        a.insert(a.end(), got.begin() + t * row, got.begin() + (t + 1) * row);
        b.insert(b.end(), want.begin() + t * row, want.begin() + (t + 1) * row);
      }
      if (a.empty()) continue;
      const double err = rel_l2(a, b);
      r.worst = std::max(r.worst, err);
      if (err > 2e-2) r.failure = name + ": relative L2 " + std::to_string(err);
    }
  }
  const auto fin = gpu_trace.tensors.find("hidden.final_norm");
  if (r.failure.empty() && (fin == gpu_trace.tensors.end() || static_cast<std::int64_t>(fin->second.size()) != T * H))
    r.failure = "hidden.final_norm: missing or of another size";
  return r;
}

}  // namespace

class TestCudaGlm5 : public QObject {
  Q_OBJECT
 private slots:
  void aligns_with_cpu_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QByteArray>("moe_gemm_tokens");  // DAY0_GLM_MOE_GEMM_TOKENS, or empty
    for (const char* m :
         {"tiny-glm5-next", "tiny-glm5-hc2-kpool16", "tiny-glm5-hc3", "tiny-glm5-hc4", "tiny-glm5-hc4-mxfp4"})
      QTest::newRow(m) << QString(m) << QByteArray();
    // The prefill's MXFP4 experts on the tensor cores through the workspace (glm_moe_gemm.h),
    // which the fixtures' 48-token prompts would otherwise not reach.
    QTest::newRow("tiny-glm5-hc4-mxfp4, experts through the workspace")
        << QString("tiny-glm5-hc4-mxfp4") << QByteArray("2");
  }

  void aligns_with_cpu() {
    QFETCH(QString, model);
    QFETCH(QByteArray, moe_gemm_tokens);
    ThreadPool pool(2);
    const auto dir = model_dir(model.toUtf8().constData());
    auto cpu = load_on(dir, pool, "cpu");
    if (!moe_gemm_tokens.isEmpty()) qputenv("DAY0_GLM_MOE_GEMM_TOKENS", moe_gemm_tokens);
    auto gpu = load_on(dir, pool, "cuda");
    qunsetenv("DAY0_GLM_MOE_GEMM_TOKENS");
    QVERIFY(cpu && gpu);
    QCOMPARE(QString::fromStdString(gpu->device_name()), QString("cuda:0"));
    const std::int64_t V = cpu->vocab_size(), T = 48;
    std::mt19937 rng(11);
    std::vector<std::int32_t> tokens(T);
    for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % V);

    // One prefill with per-layer traces.
    models::ForwardTrace cpu_trace, gpu_trace;
    std::vector<float> cpu_logits(T * V), gpu_logits(T * V);
    auto cs = cpu->new_state();
    auto gs = gpu->new_state();
    QVERIFY(cpu->forward(*cs, tokens, T, cpu_logits.data(), &cpu_trace).is_ok());
    const Status st = gpu->forward(*gs, tokens, T, gpu_logits.data(), &gpu_trace);
    QVERIFY2(st.is_ok(), st.message().c_str());
    QCOMPARE(gs->length(), T);

    const TraceComparison tc = compare_traces(cpu_trace, gpu_trace, T, cpu->hidden_size(), selection_shape(dir));
    QVERIFY2(tc.failure.empty(), tc.failure.c_str());
    const double worst = tc.worst;
    const int agree = tc.agree, pairs = tc.pairs;
    QVERIFY2(pairs > 0 && agree >= 0.99 * pairs,
             qPrintable(QString("selections agree on %1 of %2 rows").arg(agree).arg(pairs)));
    const auto [flips, ties] = top1_flips(cpu_logits, gpu_logits, V);
    qInfo("%s prefill: worst layer error %.2e, selections %d/%d (differing on a tie: router %d, indexer %d), top-1 "
          "flips %d (%d near-ties), KL %.2e",
          qPrintable(model), worst, agree, pairs, tc.router_ties, tc.indexer_ties, flips, ties,
          kl_and_top1(cpu_logits, gpu_logits, V).first);
    QVERIFY2(flips == ties, "prefill top-1 flips that are not near-ties");

    // Decoding on the graph path: a 20-token prompt, then 12 tokens the CPU picks, fed to both.
    const std::int64_t P = 20, steps = 12;
    const std::span<const std::int32_t> prompt(tokens.data(), static_cast<std::size_t>(P));
    auto cd = cpu->new_state();
    auto gd = gpu->new_state();
    std::vector<float> c_row(V), g_row(V), first_gpu_row(V);
    QVERIFY(cpu->forward(*cd, prompt, 1, c_row.data(), nullptr).is_ok());
    QVERIFY(gpu->forward(*gd, prompt, 1, g_row.data(), nullptr).is_ok());
    first_gpu_row = g_row;
    std::vector<float> cpu_rows, gpu_rows;
    for (std::int64_t i = 0; i < steps; ++i) {
      cpu_rows.insert(cpu_rows.end(), c_row.begin(), c_row.end());
      gpu_rows.insert(gpu_rows.end(), g_row.begin(), g_row.end());
      const auto next = static_cast<std::int32_t>(arg_max(c_row.data(), V));
      QVERIFY(cpu->forward(*cd, std::span<const std::int32_t>(&next, 1), 1, c_row.data(), nullptr).is_ok());
      const Status s = gpu->forward(*gd, std::span<const std::int32_t>(&next, 1), 1, g_row.data(), nullptr);
      QVERIFY2(s.is_ok(), s.message().c_str());
    }
    QCOMPARE(gd->length(), P + steps);
    const auto [dflips, dties] = top1_flips(cpu_rows, gpu_rows, V);
    qInfo("%s decode: %lld steps, top-1 flips %d (%d near-ties), KL %.2e", qPrintable(model),
          static_cast<long long>(steps), dflips, dties, kl_and_top1(cpu_rows, gpu_rows, V).first);
    QVERIFY2(dflips == dties, "decode top-1 flips that are not near-ties");

    // Regenerating: back to the prompt's last-but-one token (a KDA snapshot), the last token fed
    // again gives the logits it gave the first time.
    QCOMPARE(gd->truncate(P - 1), P - 1);
    QVERIFY(gpu->forward(*gd, prompt.last(1), 1, g_row.data(), nullptr).is_ok());
    QCOMPARE(rel_l2(g_row, first_gpu_row), 0.0);

    // The device's own greedy pick: the arg max of the logits it computed.
    QVERIFY(gpu->begin_picking(Sampling{}, {}).is_ok());
    auto gp = gpu->new_state();
    const auto picked = gpu->forward_pick(*gp, prompt);
    QVERIFY(picked.is_ok());
    QCOMPARE(static_cast<std::int64_t>(*picked), arg_max(first_gpu_row.data(), V));
  }

  // An image prompt end to end on the GPU (tests/data/reference/glm5_vision, made by
  // tools/reference/make_glm5_vision_fixtures.py): the expanded prompt, the logits of every
  // position against transformers' and the CPU engine's (top-1 flips only on near-ties, KL
  // reported), then the reference's greedy tokens fed one by one through the decode graph.
  void image_prompt_data() {
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QStringList>("images");
    QTest::newRow("one image") << QString("one_image") << QStringList{"aligned_112x140"};
    QTest::newRow("two images") << QString("two_images") << QStringList{"aligned_112x140", "aligned_112x112"};
  }
  void image_prompt() {
    QFETCH(QString, fixture);
    QFETCH(QStringList, images);
    const std::filesystem::path data(DAY0_TEST_DATA_DIR);
    const auto file = data / "reference" / "glm5_vision" / (fixture.toStdString() + ".safetensors");
    if (!std::filesystem::exists(file)) QSKIP("no vision reference fixtures");
    ThreadPool pool(2);
    const auto dir = model_dir("tiny-glm5-next");
    auto cpu = load_on(dir, pool, "cpu");
    auto gpu = load_on(dir, pool, "cuda");
    QVERIFY(cpu && gpu);
    auto* g_images = vision::image_input(*gpu);
    auto* c_images = vision::image_input(*cpu);
    QVERIFY2(g_images != nullptr, "the GPU program takes no images");
    QVERIFY(c_images != nullptr);
    const auto prompt = test::read_ids(file, "prompt_ids");
    std::vector<vision::EncodedImage> encoded;
    std::vector<std::int64_t> counts;
    for (const QString& name : images) {
      auto img = io::load_image_file(data / "vision" / (name.toStdString() + ".png"));
      QVERIFY2(img.is_ok(), img.status().message().c_str());
      auto in = vision::preprocess_image(*img, g_images->processor());
      QVERIFY(in.is_ok());
      auto enc = g_images->encode_image(*in, nullptr);
      QVERIFY2(enc.is_ok(), enc.status().message().c_str());
      counts.push_back(enc->tokens);
      encoded.push_back(std::move(*enc));
    }
    const auto& ids = g_images->image_tokens();
    auto expanded = vision::expand_image_placeholders(prompt, ids.image, counts);
    QVERIFY(expanded.is_ok());
    QVERIFY(*expanded == test::read_ids(file, "input_ids"));
    auto where = vision::locate_image_rows(*expanded, ids.image, encoded);
    QVERIFY(where.is_ok());
    const auto T = static_cast<std::int64_t>(expanded->size());
    const std::int64_t V = gpu->vocab_size();
    std::vector<float> g_logits(static_cast<std::size_t>(T * V)), c_logits(g_logits.size());
    auto gs = gpu->new_state();
    auto cs = cpu->new_state();
    models::ForwardTrace g_trace, c_trace;
    Status st = vision::forward_with_images(*g_images, *gs, *expanded, *where, encoded, 0, T, T, g_logits.data(),
                                            &g_trace);
    QVERIFY2(st.is_ok(), st.message().c_str());
    QVERIFY(vision::forward_with_images(*c_images, *cs, *expanded, *where, encoded, 0, T, T, c_logits.data(), &c_trace)
                .is_ok());
    QCOMPARE(gs->length(), T);
    // The prompt is fed as T - 1 rows then 1: the traces hold both passes' rows in order.
    const TraceComparison tc = compare_traces(c_trace, g_trace, T, gpu->hidden_size(), selection_shape(dir));
    qInfo("%s: worst layer error %.2e, selections %d/%d (differing on a tie: router %d, indexer %d)",
          qPrintable(fixture), tc.worst, tc.agree, tc.pairs, tc.router_ties, tc.indexer_ties);
    QVERIFY2(tc.failure.empty(), tc.failure.c_str());
    const auto ref = test::read_tensor(file, "logits");
    QCOMPARE(ref.size(), g_logits.size());
    const auto [rflips, rties] = top1_flips(ref, g_logits, V);
    const auto [cflips, cties] = top1_flips(c_logits, g_logits, V);
    qInfo("%s: %lld positions; against transformers top-1 flips %d (%d near-ties), KL %.2e; against the CPU flips "
          "%d (%d near-ties), KL %.2e",
          qPrintable(fixture), static_cast<long long>(T), rflips, rties, kl_and_top1(ref, g_logits, V).first, cflips,
          cties, kl_and_top1(c_logits, g_logits, V).first);
    QVERIFY2(rflips == rties, "top-1 flips against transformers that are not near-ties");
    QVERIFY2(cflips == cties, "top-1 flips against the CPU that are not near-ties");
    QVERIFY(kl_and_top1(ref, g_logits, V).first < 1e-2);
    // Decoding after the image prompt: the reference's greedy tokens, fed to both.
    const auto greedy = test::read_ids(file, "greedy_ids");
    std::vector<float> g_row(V), c_row(V), g_rows, c_rows;
    for (const std::int32_t next : greedy) {
      QVERIFY(gpu->forward(*gs, std::span<const std::int32_t>(&next, 1), 1, g_row.data(), nullptr).is_ok());
      QVERIFY(cpu->forward(*cs, std::span<const std::int32_t>(&next, 1), 1, c_row.data(), nullptr).is_ok());
      g_rows.insert(g_rows.end(), g_row.begin(), g_row.end());
      c_rows.insert(c_rows.end(), c_row.begin(), c_row.end());
    }
    const auto [dflips, dties] = top1_flips(c_rows, g_rows, V);
    qInfo("%s decode after the image: %zu steps, flips %d (%d near-ties), KL %.2e", qPrintable(fixture), greedy.size(),
          dflips, dties, kl_and_top1(c_rows, g_rows, V).first);
    QVERIFY2(dflips == dties, "decode top-1 flips that are not near-ties");
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu(); skip != 0) return skip;
  TestCudaGlm5 test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_glm5.moc"
