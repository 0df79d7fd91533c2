// glm5_next on the CPU against Hugging Face transformers: every fixture under
// tests/data/reference/glm5_next/ (tools/reference/make_glm5_fixtures.py: cached token-by-token
// decoding, the sound reference for this model) checked layer by layer with VERIFY.md's
// thresholds, the greedy continuation through the caches, chunked feeding, the sparse path
// against dense attention, shared indexers, and rewinding a session.
#include <QtTest>
#include <algorithm>
#include <numeric>

#include "day0/verify.h"
#include "engine/safetensors_writer.h"
#include "glm5_test_util.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/glm5_next_model.h"
#include "models/loaded_model.h"
#include "models/selection_ties.h"

using namespace day0;
using namespace day0::test;

namespace {

// The engine's verdict on where a wrong result starts (first atypical row in forward order).
std::string first_divergence(const VerifyReport& report) { return report.first_divergence; }

std::unique_ptr<models::LoadedModel> load(const fs::path& dir, ThreadPool& pool, bool dense = false) {
  auto config = io::ModelConfig::load(dir);
  if (!config.is_ok()) return nullptr;
  auto ckpt = io::Checkpoint::open(dir);
  if (!ckpt.is_ok()) return nullptr;
  std::shared_ptr<const io::Checkpoint> shared(std::move(*ckpt));
  auto model = models::load_glm5_next(*config, shared, pool, {}, models::Glm5RunOptions{dense});
  if (!model.is_ok()) qWarning("%s", model.status().message().c_str());
  return model.is_ok() ? std::move(*model) : nullptr;
}

// Logits of every position, fed in calls of `chunk` tokens.
std::vector<float> logits_in_chunks(models::LoadedModel& m, models::SessionState& s,
                                    const std::vector<std::int32_t>& ids, std::size_t chunk,
                                    models::ForwardTrace* trace = nullptr) {
  const auto V = static_cast<std::size_t>(m.vocab_size());
  std::vector<float> out(ids.size() * V);
  for (std::size_t i = 0; i < ids.size(); i += chunk) {
    const std::size_t n = std::min(chunk, ids.size() - i);
    const Status st =
        m.forward(s, std::span(ids).subspan(i, n), static_cast<std::int64_t>(n), out.data() + i * V, trace);
    if (!st.is_ok()) return {};
  }
  return out;
}

template <typename T>
RawTensor raw(const std::string& name, const std::string& dtype, std::vector<std::uint64_t> shape,
              const std::vector<T>& values) {
  RawTensor r{name, dtype, std::move(shape), std::vector<std::uint8_t>(values.size() * sizeof(T))};
  std::memcpy(r.bytes.data(), values.data(), r.bytes.size());
  return r;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const char* kFixtures[] = {"tiny-glm5-hc2-kpool16", "tiny-glm5-hc3", "tiny-glm5-hc4", "tiny-glm5-hc4-mxfp4",
                           "tiny-glm5-next"};

}  // namespace

class TestGlm5NextReference : public QObject {
  Q_OBJECT
 private slots:
  void matchesTransformers_data() {
    QTest::addColumn<QString>("name");
    int n = 0;
    for (const auto& entry : fs::directory_iterator(data_dir() / "reference/glm5_next")) {
      if (entry.path().extension() != ".safetensors") continue;
      QTest::newRow(entry.path().stem().c_str()) << QString::fromStdString(entry.path().stem().string());
      ++n;
    }
    QVERIFY2(n >= 5, "expected the fixtures of five tiny glm5_next configurations");
  }

  void matchesTransformers() {
    QFETCH(QString, name);
    VerifyOptions options;
    options.threads = 2;
    const auto report = verify_model(glm5_model(name.toStdString()), glm5_reference(name.toStdString()), options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    const std::string table = format_verify_report(*report);
    const std::string first = first_divergence(*report);
    QVERIFY2(report->passed && first.empty(), ("first diverging: " + first + "\n" + table).c_str());
    bool logits = false, layers = false, router = false, indexer = false, greedy = false, attn = false;
    for (const auto& row : report->rows) {
      logits |= row.name == "logits";
      layers |= row.name.rfind("hidden.", 0) == 0;
      attn |= row.name.rfind("attn.", 0) == 0;
      router |= row.name.rfind("router.", 0) == 0 && row.name.ends_with(".topk");
      indexer |= row.name.rfind("indexer.", 0) == 0;
      if (row.name.rfind("greedy", 0) == 0) {
        greedy = true;
        QVERIFY2(row.name.find("32 tokens") != std::string::npos, table.c_str());
        QCOMPARE(row.agreement, 1.0);
      }
    }
    QVERIFY2(logits && layers && attn && router && indexer && greedy, table.c_str());
    qInfo("%s", table.c_str());

    // KDA recurrent states after the prompt, compared as whole tensors: under strong gates some
    // rows of a state are tiny, so per-row relative errors say nothing there.
    ThreadPool pool(2);
    auto model = load(glm5_model(name.toStdString()), pool);
    QVERIFY(model);
    const fs::path ref = glm5_reference(name.toStdString());
    const auto ids = read_ids(ref, "input_ids");
    models::ForwardTrace trace;
    auto state = model->new_state();
    QVERIFY(!logits_in_chunks(*model, *state, ids, ids.size(), &trace).empty());
    int states = 0;
    for (const auto& [key, got] : trace.tensors) {
      if (!key.ends_with(".final_state")) continue;
      const auto want = read_tensor(ref, key.substr(0, key.size() - 12) + ".state");
      QVERIFY2(want.size() == got.size(), key.c_str());
      const double err = max_rel_l2(got.data(), want.data(), 1, want.size());
      QVERIFY2(err <= 1e-4, (key + ": " + std::to_string(err)).c_str());
      ++states;
    }
    QVERIFY(states >= 2);
  }

  // A dump whose router choice differs from Day0's on a near-tie, with the logits behind it, is
  // reported as a tie and that row passes; one that differs far from a tie fails. The dump is Day0's own
  // trace of a fixture's prompt with token t's weakest chosen expert x swapped for the best
  // unchosen y and, for the tie, the dump's logit of x lowered so that its x scores just below
  // y (noise = the sigmoid change of x, the dump's gap between them far below it).
  void routerTiesAreReportedAsTies() {
    const std::string name = "tiny-glm5-hc3";  // one routing group
    ThreadPool pool(2);
    auto model = load(glm5_model(name), pool);
    QVERIFY(model);
    const auto ids = read_ids(glm5_reference(name), "input_ids");
    const auto T = static_cast<std::int64_t>(ids.size());
    models::ForwardTrace trace;
    auto state = model->new_state();
    const auto logits = logits_in_chunks(*model, *state, ids, ids.size(), &trace);
    QVERIFY(!logits.empty());
    std::string layer;
    for (const auto& [key, v] : trace.tensors)
      if (key.rfind("router.", 0) == 0 && key.ends_with(".logits")) layer = key.substr(0, key.size() - 7);
    QVERIFY2(!layer.empty(), "no router logits traced");
    const auto& topk = trace.tensors.at(layer + ".topk");
    const auto& rl = trace.tensors.at(layer + ".logits");
    const auto& bias = trace.tensors.at(layer + ".bias");
    const std::size_t K = topk.size() / static_cast<std::size_t>(T), E = rl.size() / static_cast<std::size_t>(T);
    // Per token: the weakest chosen and the best unchosen expert, and their choice-score gap.
    struct Edge {
      std::int64_t t, x, y;
      double gap;
    };
    std::vector<Edge> edges;
    for (std::int64_t t = 0; t < T; ++t) {
      std::set<std::int64_t> chosen;
      for (std::size_t j = 0; j < K; ++j) chosen.insert(static_cast<std::int64_t>(topk[t * K + j]));
      const auto c = [&](std::int64_t e) { return sigmoid(rl[t * E + e]) + bias[static_cast<std::size_t>(e)]; };
      std::int64_t x = -1, y = -1;
      for (std::int64_t e = 0; e < static_cast<std::int64_t>(E); ++e) {
        if (chosen.count(e) && (x < 0 || c(e) < c(x))) x = e;
        if (!chosen.count(e) && (y < 0 || c(e) > c(y))) y = e;
      }
      edges.push_back({t, x, y, c(x) - c(y)});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.gap < b.gap; });
    const Edge near = edges.front(), far = edges.back();
    QVERIFY(far.gap > 10 * near.gap && far.gap > 1e-3);

    const auto write_dump = [&](const fs::path& file, bool with_far) {
      std::vector<std::int32_t> ref_topk(topk.begin(), topk.end());
      std::vector<float> ref_logits = rl;
      for (const Edge* e : {&near, with_far ? &far : nullptr}) {
        if (e == nullptr) continue;
        for (std::size_t j = 0; j < K; ++j)
          if (ref_topk[e->t * K + j] == e->x) ref_topk[e->t * K + j] = static_cast<std::int32_t>(e->y);
      }
      // The dump's x scores a hair below its y: sigmoid(logit_x) lowered by gap + 1e-7.
      const double target = sigmoid(rl[near.t * E + near.x]) - near.gap - 1e-7;
      ref_logits[near.t * E + near.x] = static_cast<float>(std::log(target / (1.0 - target)));
      std::vector<std::int32_t> input(ids.begin(), ids.end());
      const auto U = static_cast<std::uint64_t>(T);
      write_file(file, safetensors_bytes({raw("input_ids", "I32", {U}, input),
                                          raw(layer + ".topk", "I32", {U, K}, ref_topk),
                                          raw(layer + ".logits", "F32", {U, E}, ref_logits),
                                          raw("logits", "F32", {U, logits.size() / U}, logits)}));
    };
    QTemporaryDir tmp;
    VerifyOptions options;
    options.threads = 2;
    const fs::path tie_dump = fs::path(tmp.path().toStdString()) / "tie.safetensors";
    write_dump(tie_dump, false);
    auto report = verify_model(glm5_model(name), tie_dump, options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    const std::string table = format_verify_report(*report);
    qInfo("%s", table.c_str());
    const auto row = std::find_if(report->rows.begin(), report->rows.end(),
                                  [&](const VerifyRow& r) { return r.name == layer + ".topk"; });
    QVERIFY(row != report->rows.end());
    QCOMPARE(row->ties, std::int64_t{1});
    QCOMPARE(row->agreement, 1.0);
    QVERIFY2(row->pass, table.c_str());
    QVERIFY2(table.find("(1 on a tie)") != std::string::npos, table.c_str());

    const fs::path far_dump = fs::path(tmp.path().toStdString()) / "far.safetensors";
    write_dump(far_dump, true);
    report = verify_model(glm5_model(name), far_dump, options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    const auto far_row = std::find_if(report->rows.begin(), report->rows.end(),
                                      [&](const VerifyRow& r) { return r.name == layer + ".topk"; });
    QVERIFY(far_row != report->rows.end());
    QCOMPARE(far_row->ties, std::int64_t{1});
    QCOMPARE(far_row->agreement, static_cast<double>(T - 1) / static_cast<double>(T));
    QVERIFY(!far_row->pass && !report->passed);
  }

  // The tie rules themselves: a swap within the noise is a tie, past it is not; grouped routing
  // compares the groups' scores; indexer pools by their scores, the shared tail ignored.
  void tieRules() {
    const std::vector<float> bias(4, 0.0f);
    const std::vector<float> a{2.0f, 1.0f, 0.999f, -3.0f}, b{2.0f, 0.998f, 1.001f, -3.0f};
    // Expert 1 against 2: their sigmoid gap (~2e-4) is within 2 x the noise (~4e-4).
    QVERIFY(models::router_choice_tie(a, b, bias, {0, 1}, {0, 2}, 1));
    // Expert 1 against 3: far apart.
    QVERIFY(!models::router_choice_tie(a, b, bias, {0, 1}, {0, 3}, 1));
    // Identical logits: no noise, so no swap is a tie.
    QVERIFY(!models::router_choice_tie(a, a, bias, {0, 1}, {0, 2}, 1));
    // Two groups of two: {0,1} against {2,3} with group scores 1.5+1.4 and 1.45+1.44 ... via logits.
    const std::vector<float> g1{0.5f, 0.4f, 0.45f, 0.44f}, g2{0.49f, 0.39f, 0.46f, 0.45f};
    QVERIFY(models::router_choice_tie(g1, g2, std::vector<float>(4, 0.0f), {0}, {2}, 2));
    // Indexer: pools 0..3 visible (kpool 2, tokens 0..7); token sets differ in pool 1 vs 2.
    const std::vector<float> s1{1.0f, 0.50f, 0.499f, 0.1f}, s2{1.0f, 0.499f, 0.50f, 0.1f};
    QVERIFY(models::indexer_choice_tie(s1, s2, 2, {0, 1, 2, 3, 8}, {0, 1, 4, 5, 8}));
    QVERIFY(!models::indexer_choice_tie(s1, s2, 2, {0, 1, 2, 3}, {0, 1, 6, 7}));
    QCOMPARE(models::pool_scores_offset(0, 3, 2), std::size_t{0 + 1 + 1});
    QCOMPARE(models::pool_scores_count(0, 3, 2), std::size_t{2});
  }

  // The same dump checked against another configuration's weights fails, and names a layer.
  void aWrongModelFailsAndNamesItsFirstLayer() {
    VerifyOptions options;
    options.threads = 2;
    const auto report = verify_model(glm5_model("tiny-glm5-hc4-mxfp4"), glm5_reference("tiny-glm5-hc4"), options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    QVERIFY(!report->passed);
    // Same weights except the experts (MXFP4 vs bf16): the embedding and the first layer (dense
    // MLP) agree; the first difference is the first MoE layer's output.
    QCOMPARE(QString::fromStdString(first_divergence(*report)), QString("hidden.1"));
  }

  // A damaged weight in one layer: every earlier dump still agrees, the per-layer comparison
  // names that layer.
  void perLayerComparisonNamesTheDamagedLayer() {
    QTemporaryDir tmp;
    const fs::path dir = copy_model(tmp, "tiny-glm5-hc3");
    const std::uint16_t big = 0x4100;  // bf16 8.0
    QVERIFY(poke_tensor(dir, "model.language_model.layers.4.self_attn.kv_b_proj.weight", 64, &big, 2));
    VerifyOptions options;
    options.threads = 2;
    const auto report = verify_model(dir, glm5_reference("tiny-glm5-hc3"), options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    QCOMPARE(QString::fromStdString(first_divergence(*report)), QString("attn.4.out"));
  }

  // Day0's own prefill, decode and chunked feeding agree with the reference rows.
  void chunkedFeedingMatchesTheDecodeReference() {
    ThreadPool pool(2);
    for (const char* name : kFixtures) {
      auto model = load(glm5_model(name), pool);
      QVERIFY(model);
      const auto ids = read_ids(glm5_reference(name), "input_ids");
      const auto want = read_tensor(glm5_reference(name), "logits");
      const auto V = static_cast<std::size_t>(model->vocab_size());
      for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, ids.size()}) {
        auto state = model->new_state();
        const auto got = logits_in_chunks(*model, *state, ids, chunk);
        QCOMPARE(got.size(), want.size());
        const double err = max_rel_l2(got.data(), want.data(), ids.size(), V);
        QVERIFY2(err <= 1e-4,
                 (std::string(name) + " chunk " + std::to_string(chunk) + ": " + std::to_string(err)).c_str());
      }
    }
  }

  // Below index_topk tokens of context the indexer selects everything: sparse == dense. Above,
  // selection drops pools and the outputs differ.
  void sparseEqualsDenseBelowIndexTopk() {
    ThreadPool pool(2);
    const std::string name = "tiny-glm5-hc2-kpool16";  // index_topk 16, k-pools of 16
    auto sparse = load(glm5_model(name), pool);
    auto dense = load(glm5_model(name), pool, true);
    QVERIFY(sparse && dense);
    const auto ids = read_ids(glm5_reference(name), "input_ids");
    const auto V = static_cast<std::size_t>(sparse->vocab_size());
    const std::vector<std::int32_t> shorter(ids.begin(), ids.begin() + 16);
    auto s1 = sparse->new_state();
    auto s2 = dense->new_state();
    const auto a = logits_in_chunks(*sparse, *s1, shorter, 5);
    const auto b = logits_in_chunks(*dense, *s2, shorter, 5);
    QVERIFY(!a.empty() && a.size() == b.size());
    QVERIFY2(max_rel_l2(a.data(), b.data(), shorter.size(), V) <= 1e-6, "sparse and dense differ below index_topk");

    auto s3 = sparse->new_state();
    auto s4 = dense->new_state();
    const auto c = logits_in_chunks(*sparse, *s3, ids, ids.size());
    const auto d = logits_in_chunks(*dense, *s4, ids, ids.size());
    const std::size_t last = ids.size() - 1;
    QVERIFY2(max_rel_l2(c.data() + last * V, d.data() + last * V, 1, V) > 1e-3,
             "at 8x index_topk the sparse path must differ from dense attention");
  }

  // A shared layer attends exactly the selection of the full layer before it; the dump of the
  // reference shows the same (its decode path hands the selection on).
  void sharedIndexerReusesThePreviousSelection() {
    ThreadPool pool(2);
    const std::string name = "tiny-glm5-hc3";  // layers 2 and 5 share the indexers of 1 and 4
    auto model = load(glm5_model(name), pool);
    QVERIFY(model);
    const auto ids = read_ids(glm5_reference(name), "input_ids");
    models::ForwardTrace trace;
    auto state = model->new_state();
    QVERIFY(!logits_in_chunks(*model, *state, ids, 9, &trace).empty());
    for (const auto& [shared, full] : {std::pair{2, 1}, std::pair{5, 4}}) {
      const auto& a = trace.tensors["indexer." + std::to_string(shared) + ".topk"];
      const auto& b = trace.tensors["indexer." + std::to_string(full) + ".topk"];
      QVERIFY(!a.empty());
      QVERIFY(a == b);
      QVERIFY(read_tensor(glm5_reference(name), "indexer." + std::to_string(shared) + ".topk") ==
              read_tensor(glm5_reference(name), "indexer." + std::to_string(full) + ".topk"));
    }
    // Selection really drops tokens at the end of the prompt: fewer than all positions.
    const auto& sel = trace.tensors["indexer.1.topk"];
    const std::size_t width = sel.size() / ids.size();
    const auto kept =
        std::count_if(sel.end() - static_cast<std::ptrdiff_t>(width), sel.end(), [](float v) { return v >= 0; });
    QVERIFY(kept < static_cast<std::ptrdiff_t>(ids.size()));
  }

  // Two turns, then a branch from the end of turn one: the same logits as a fresh session fed the
  // branch; KDA states rewind only to snapshots, and truncate() says how far it got.
  void truncateBranchesLikeAFreshSession() {
    ThreadPool pool(2);
    const std::string name = "tiny-glm5-hc3";
    auto model = load(glm5_model(name), pool);
    QVERIFY(model);
    const auto ids = read_ids(glm5_reference(name), "input_ids");
    const auto V = static_cast<std::size_t>(model->vocab_size());
    const std::vector<std::int32_t> turn1(ids.begin(), ids.begin() + 20), turn2(ids.begin() + 20, ids.begin() + 40),
        branch(ids.begin() + 40, ids.begin() + 64);

    auto state = model->new_state();
    std::vector<float> row(V);
    QVERIFY(model->forward(*state, turn1, 1, row.data(), nullptr).is_ok());
    QVERIFY(model->forward(*state, turn2, 1, row.data(), nullptr).is_ok());
    QCOMPARE(state->length(), std::int64_t{40});
    QCOMPARE(state->truncate(20), std::int64_t{20});  // a snapshot exists at the end of turn one
    std::vector<float> got(branch.size() * V);
    QVERIFY(model->forward(*state, branch, static_cast<std::int64_t>(branch.size()), got.data(), nullptr).is_ok());

    std::vector<std::int32_t> fresh_ids(turn1);
    fresh_ids.insert(fresh_ids.end(), branch.begin(), branch.end());
    auto fresh = model->new_state();
    const auto want = logits_in_chunks(*model, *fresh, fresh_ids, fresh_ids.size());
    QVERIFY(max_rel_l2(got.data(), want.data() + turn1.size() * V, branch.size(), V) <= 1e-5);

    // Between snapshots: it rewinds to the newest one before, the caller feeds the rest.
    const std::int64_t kept = state->truncate(27);
    QCOMPARE(kept, std::int64_t{20});
    std::vector<std::int32_t> rest(fresh_ids.begin() + kept, fresh_ids.begin() + 30);
    std::vector<float> tail(rest.size() * V);
    QVERIFY(model->forward(*state, rest, static_cast<std::int64_t>(rest.size()), tail.data(), nullptr).is_ok());
    QVERIFY(max_rel_l2(tail.data(), want.data() + static_cast<std::size_t>(kept) * V, rest.size(), V) <= 1e-5);

    // Only the last few calls are kept: after many one-token calls, an old position rewinds to
    // the oldest kept snapshot or to the start, never to a wrong state.
    for (std::size_t i = 30; i < 40; ++i)
      QVERIFY(model->forward(*state, std::span(fresh_ids).subspan(i, 1), 1, row.data(), nullptr).is_ok());
    const std::int64_t back = state->truncate(31);
    QVERIFY(back <= 31);
    std::vector<std::int32_t> refeed(fresh_ids.begin() + back, fresh_ids.begin() + 35);
    std::vector<float> again(refeed.size() * V);
    QVERIFY(model->forward(*state, refeed, static_cast<std::int64_t>(refeed.size()), again.data(), nullptr).is_ok());
    QVERIFY(max_rel_l2(again.data(), want.data() + static_cast<std::size_t>(back) * V, refeed.size(), V) <= 1e-5);
    QCOMPARE(state->truncate(0), std::int64_t{0});
    QCOMPARE(state->length(), std::int64_t{0});
  }

  // MXFP4 experts: the quantized checkpoint runs its own expert path (checked against its own
  // reference above), not the bf16 weights of its twin: the logits differ by the quantization.
  void mxfp4PathIsNotTheBf16Path() {
    ThreadPool pool(2);
    auto bf16 = load(glm5_model("tiny-glm5-hc4"), pool);
    auto mx = load(glm5_model("tiny-glm5-hc4-mxfp4"), pool);
    QVERIFY(bf16 && mx);
    const auto ids = read_ids(glm5_reference("tiny-glm5-hc4"), "input_ids");
    auto s1 = bf16->new_state();
    auto s2 = mx->new_state();
    const auto a = logits_in_chunks(*bf16, *s1, ids, ids.size());
    const auto b = logits_in_chunks(*mx, *s2, ids, ids.size());
    const double err = max_rel_l2(b.data(), a.data(), ids.size(), static_cast<std::size_t>(bf16->vocab_size()));
    QVERIFY2(std::isfinite(err) && err > 1e-3, std::to_string(err).c_str());
  }
};

QTEST_APPLESS_MAIN(TestGlm5NextReference)
#include "test_glm5_next_reference.moc"
