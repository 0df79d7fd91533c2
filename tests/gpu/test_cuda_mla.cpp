// The glm5_next sparse-attention kernels against the CPU blocks: absorbed MLA attention
// (kernels/mla_attention) against blocks::mla_attend, dense and over a selection, prefill and
// decode, tiny to released shapes and positions up to 1M; the DSA k-pool indexer
// (kernels/dsa_indexer) against blocks::indexer_select driven through the same token sequence
// (selections compared exactly, a swap of two pools accepted only where their scores agree to
// 1e-5 of the largest score), and the top-k alone on exactly representable scores at 1M tokens,
// where ties are massive.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "backend/cpu/cpu_ops.h"
#include "blocks/dsa_indexer.h"
#include "blocks/mla_attention.h"
#include "core/thread_pool.h"
#include "dsa_indexer.h"
#include "gpu/gpu_test_util.h"
#include "mla_attention.h"

using namespace day0;
using namespace day0::gpu_test;
namespace k = day0::kernels;

namespace {

void set_position(const GuardedBuffer& b, std::int64_t position) {
  const auto p = static_cast<std::int32_t>(position);
  cudaMemcpy(b.as<void>(), &p, sizeof(p), cudaMemcpyHostToDevice);
}

struct MlaCase {
  int heads, nope, v_dim, R;
  std::int64_t pos0, T, capacity;
  std::int64_t width;  // 0: dense
  // Compare with a float64 reference instead: over a million dense positions the CPU block's
  // fp32 running sums drift by more than the tolerance themselves.
  bool float64 = false;
};

// The attention in float64 (the same positions rule as the CPU block), after o_proj: [T, H].
std::vector<double> reference_mla64(ThreadPool& pool, const MlaCase& c, const std::vector<float>& q,
                                    const std::vector<float>& kv_b, const std::vector<float>& latent,
                                    const std::vector<std::int32_t>& selection, const std::vector<float>& o,
                                    std::int64_t H) {
  const std::int64_t nh = c.heads, dn = c.nope, dv = c.v_dim, R = c.R, row = dn + dv;
  std::vector<double> heads_out(c.T * nh * dv);
  pool.parallel_for(static_cast<std::size_t>(c.T * nh), 1, [&](std::size_t begin, std::size_t end) {
    std::vector<double> q_abs(R), ctx(R), scores;
    std::vector<std::int64_t> positions;
    for (std::size_t job = begin; job < end; ++job) {
      const std::int64_t t = static_cast<std::int64_t>(job) / nh, h = static_cast<std::int64_t>(job) % nh;
      const std::int64_t p = c.pos0 + t;
      positions.clear();
      if (c.width == 0) {
        for (std::int64_t j = 0; j <= p; ++j) positions.push_back(j);
      } else {
        for (std::int64_t i = 0; i < c.width; ++i) {
          const std::int32_t j = selection[t * c.width + i];
          if (j >= 0 && j <= p) positions.push_back(j);
        }
      }
      std::fill(q_abs.begin(), q_abs.end(), 0.0);
      for (std::int64_t i = 0; i < dn; ++i)
        for (std::int64_t r = 0; r < R; ++r) q_abs[r] += double(q[(t * nh + h) * dn + i]) * kv_b[(h * row + i) * R + r];
      scores.resize(positions.size());
      double top = -INFINITY;
      for (std::size_t k = 0; k < positions.size(); ++k) {
        double s = 0;
        for (std::int64_t r = 0; r < R; ++r) s += q_abs[r] * latent[positions[k] * R + r];
        scores[k] = s / std::sqrt(double(dn));
        top = std::max(top, scores[k]);
      }
      double z = 0;
      for (auto& s : scores) z += (s = std::exp(s - top));
      std::fill(ctx.begin(), ctx.end(), 0.0);
      for (std::size_t k = 0; k < positions.size(); ++k)
        for (std::int64_t r = 0; r < R; ++r) ctx[r] += scores[k] / z * latent[positions[k] * R + r];
      for (std::int64_t i = 0; i < dv; ++i) {
        double v = 0;
        for (std::int64_t r = 0; r < R; ++r) v += double(kv_b[(h * row + dn + i) * R + r]) * ctx[r];
        heads_out[(t * nh + h) * dv + i] = v;
      }
    }
  });
  std::vector<double> out(c.T * H, 0.0);
  for (std::int64_t t = 0; t < c.T; ++t)
    for (std::int64_t n = 0; n < H; ++n)
      for (std::int64_t i = 0; i < nh * dv; ++i)
        out[t * H + n] += double(o[n * nh * dv + i]) * heads_out[t * nh * dv + i];
  return out;
}

// One mla_attend call against blocks::mla_attend on random data: q_b and o_proj are random
// (o_proj applied to the GPU's head outputs on the CPU), kv_b and the latent cache bf16. Returns
// the relative L2 error of the output after o_proj.
void check_mla(ThreadPool& pool, std::mt19937& rng, const MlaCase& c, double* error) {
  const std::int64_t nh = c.heads, q_lora = 64, H = 256, rows = c.pos0 + c.T;
  blocks::MlaConfig config;
  config.hidden = H;
  config.heads = nh;
  config.q_lora = q_lora;
  config.kv_lora = c.R;
  config.nope = c.nope;
  config.v_dim = c.v_dim;
  const auto q_b = random_floats(rng, nh * c.nope * q_lora, 1.0f / std::sqrt(float(q_lora)));
  const auto kv_b = to_bf16(random_floats(rng, nh * (c.nope + c.v_dim) * c.R, 2.5f / std::sqrt(float(c.R))));
  const auto o = random_floats(rng, H * nh * c.v_dim, 1.0f / std::sqrt(float(nh * c.v_dim)));
  blocks::MlaWeights weights;
  weights.q_b = f32_matrix(q_b, nh * c.nope, q_lora);
  weights.kv_b = bf16_matrix(kv_b, nh * (c.nope + c.v_dim), c.R);
  weights.o = f32_matrix(o, H, nh * c.v_dim);

  const auto latent = to_bf16(random_floats(rng, rows * c.R));
  blocks::MlaCache cache(c.R);
  cache.append(from_bf16(latent).data(), rows);
  const auto q_resid = random_floats(rng, c.T * q_lora);
  std::vector<float> q(c.T * nh * c.nope);
  cpu::linear(pool, q_resid.data(), c.T, weights.q_b, nullptr, q.data());

  std::vector<std::int32_t> selection;
  if (c.width > 0) {
    // Mostly positions <= the query's, some -1, some beyond it (ignored), a few repeated.
    selection.resize(c.T * c.width);
    for (std::int64_t t = 0; t < c.T; ++t) {
      const std::int64_t p = c.pos0 + t;
      for (std::int64_t i = 0; i < c.width; ++i) {
        const unsigned r = rng() % 16;
        std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<unsigned>(p + 1));
        if (r == 0) j = -1;
        if (r == 1) j = p + 1 + rng() % 64;
        if (r == 2 && i > 0) j = selection[t * c.width + i - 1];
        selection[t * c.width + i] = static_cast<std::int32_t>(j);
      }
    }
  }
  std::vector<float> want(c.T * H);
  blocks::mla_attend(pool, config, weights, cache, q_resid.data(), c.T, c.pos0,
                     c.width > 0 ? selection.data() : nullptr, c.width, want.data());

  auto d_q = to_device(q);
  auto d_kv = to_device(kv_b);
  // The rows past the valid ones stay poisoned (huge bf16 values): reading one shows.
  GuardedBuffer d_lat(static_cast<std::size_t>(c.capacity) * c.R * 2);
  cudaMemcpy(d_lat.as<void>(), latent.data(), latent.size() * 2, cudaMemcpyHostToDevice);
  GuardedBuffer d_sel(std::max<std::size_t>(selection.size(), 1) * 4);
  if (!selection.empty()) cudaMemcpy(d_sel.as<void>(), selection.data(), selection.size() * 4, cudaMemcpyHostToDevice);
  GuardedBuffer d_pos(4);
  set_position(d_pos, c.pos0);
  const std::size_t scratch_floats = k::mla_attend_scratch_floats(c.T, c.heads, c.R, c.capacity);
  GuardedBuffer scratch(scratch_floats * 4), out(c.T * nh * c.v_dim * 4);

  k::MlaAttendArgs a;
  a.q = d_q.as<float>();
  a.kv_b = d_kv.as<std::uint16_t>();
  a.latent = d_lat.as<std::uint16_t>();
  a.selection = c.width > 0 ? d_sel.as<std::int32_t>() : nullptr;
  a.width = c.width;
  a.T = c.T;
  a.position = d_pos.as<std::int32_t>();
  a.capacity = c.capacity;
  a.heads = c.heads;
  a.nope = c.nope;
  a.v_dim = c.v_dim;
  a.R = c.R;
  a.scaling = 1.0f / std::sqrt(static_cast<float>(c.nope));
  a.out = out.as<float>();
  a.scratch = scratch.as<float>();
  a.scratch_floats = static_cast<std::int64_t>(scratch_floats);
  CUDA_VERIFY(k::mla_attend(a, nullptr));
  CUDA_VERIFY(cudaDeviceSynchronize());
  const auto heads_out = to_host<float>(out, c.T * nh * c.v_dim);
  std::vector<float> got(c.T * H);
  cpu::linear(pool, heads_out.data(), c.T, weights.o, nullptr, got.data());
  if (c.float64) {
    const auto exact = reference_mla64(pool, c, q, from_bf16(kv_b), from_bf16(latent), selection, o, H);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
      num += (got[i] - exact[i]) * (got[i] - exact[i]);
      den += exact[i] * exact[i];
    }
    *error = std::sqrt(num / den);
    double cnum = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) cnum += (want[i] - exact[i]) * (want[i] - exact[i]);
    qInfo("  (the CPU block against float64: rel L2 %.3g)", std::sqrt(cnum / den));
  } else {
    *error = rel_l2(got, want);
  }
  QVERIFY(out.guard_intact() && scratch.guard_intact());
}

// Indexer weights of random fp32 matrices (the CPU block reads them as such).
struct IndexerData {
  blocks::IndexerConfig config;
  std::vector<float> wq_b, wk, ln_w, ln_b, proj, ape, gate;
  blocks::IndexerWeights weights() const {
    const auto& c = config;
    blocks::IndexerWeights w;
    w.wq_b = f32_matrix(wq_b, c.heads * c.head_dim, c.q_lora);
    w.wk = f32_matrix(wk, c.head_dim, c.hidden);
    w.k_norm_w = f32_matrix(ln_w, 1, c.head_dim);
    w.k_norm_b = f32_matrix(ln_b, 1, c.head_dim);
    w.weights_proj = f32_matrix(proj, c.heads, c.hidden);
    w.ape = f32_matrix(ape, c.kpool, c.head_dim);
    w.gate = f32_matrix(gate, c.head_dim, c.hidden);
    return w;
  }
};

// The expected row for scores of `visible` pools (the CPU's rule): the min(budget, visible)
// best, higher score first and lower index first among equal ones, as tokens; the tail; -1.
std::vector<std::int32_t> reference_row(const float* scores, std::int64_t visible, std::int64_t budget, int kpool,
                                        std::int64_t p, std::int64_t width) {
  const std::int64_t chosen = std::min(budget, visible);
  std::vector<std::int32_t> order(static_cast<std::size_t>(visible));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + chosen, order.end(), [&](std::int32_t a, std::int32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  std::vector<std::int32_t> row(static_cast<std::size_t>(width), -1);
  std::int64_t n = 0;
  for (std::int64_t j = 0; j < chosen; ++j)
    for (int i = 0; i < kpool; ++i) row[n++] = static_cast<std::int32_t>(order[j] * kpool + i);
  for (std::int64_t pos = visible * kpool; pos <= p; ++pos) row[n++] = static_cast<std::int32_t>(pos);
  return row;
}

// Compares one selection row with the CPU's: the same tail and padding, the same pools in the
// same order except where two swapped pools' scores (`scores`, the test's own float64 ones)
// differ by less than 1e-5 of the largest score. Counts those swaps into *swaps.
void compare_row(const std::int32_t* got, const std::int32_t* want, const std::vector<double>& scores,
                 std::int64_t chosen, int kpool, std::int64_t width, int* swaps, const QString& where) {
  double scale = 1e-30;
  for (const double s : scores) scale = std::max(scale, std::fabs(s));
  std::set<std::int32_t> seen;
  for (std::int64_t r = 0; r < chosen; ++r) {
    const std::int32_t g = got[r * kpool], w = want[r * kpool];
    QVERIFY2(g >= 0 && g % kpool == 0 && g / kpool < static_cast<std::int64_t>(scores.size()),
             qPrintable(where + QString(" rank %1: token %2").arg(r).arg(g)));
    for (int i = 1; i < kpool; ++i) QVERIFY2(got[r * kpool + i] == g + i, qPrintable(where + " pool tokens"));
    QVERIFY2(seen.insert(g).second, qPrintable(where + " repeated pool"));
    if (g == w) continue;
    const double gap = std::fabs(scores[g / kpool] - scores[w / kpool]);
    QVERIFY2(gap < 1e-5 * scale, qPrintable(where + QString(" rank %1: pool %2 (score %3) where the CPU has %4 (%5)")
                                                        .arg(r)
                                                        .arg(g / kpool)
                                                        .arg(scores[g / kpool])
                                                        .arg(w / kpool)
                                                        .arg(scores[w / kpool])));
    ++*swaps;
  }
  for (std::int64_t e = chosen * kpool; e < width; ++e)
    QVERIFY2(got[e] == want[e], qPrintable(where + QString(" entry %1: %2 vs %3").arg(e).arg(got[e]).arg(want[e])));
}

struct IndexerCase {
  int heads, d, kpool;
  std::int64_t topk, H, q_lora;
  std::vector<std::int64_t> steps;  // tokens fed per call
  bool zero_dots;                   // every q . pooled negative: all scores 0, pure index order
};

// Feeds the same tokens to blocks::indexer_select and to indexer_append / indexer_pool /
// indexer_select, comparing every query's selection. The test's own float64 scores (from its
// own LayerNorm and pooling, as the CPU computes them) judge the swaps where a row differs.
void check_indexer(ThreadPool& pool, std::mt19937& rng, const IndexerCase& c, int* swaps) {
  IndexerData data;
  auto& cfg = data.config;
  cfg.hidden = c.H;
  cfg.q_lora = c.q_lora;
  cfg.heads = c.heads;
  cfg.head_dim = c.d;
  cfg.kpool = c.kpool;
  cfg.topk = c.topk;
  const std::int64_t total = std::accumulate(c.steps.begin(), c.steps.end(), std::int64_t{0});
  const std::int64_t capacity = total + 5, npools = capacity / c.kpool, d = c.d, nh = c.heads;
  const std::int64_t width = std::min(c.topk, capacity) + c.kpool - 1;
  data.wk = random_floats(rng, d * c.H, 1.0f / std::sqrt(float(c.H)));
  data.gate = random_floats(rng, d * c.H, 1.0f / std::sqrt(float(c.H)));
  data.proj = random_floats(rng, nh * c.H, 1.0f / std::sqrt(float(c.H)));
  data.ape = random_floats(rng, c.kpool * d, 0.5f);
  data.wq_b = random_floats(rng, nh * d * c.q_lora, 1.0f / std::sqrt(float(c.q_lora)));
  data.ln_w = random_floats(rng, d, 0.1f);
  data.ln_b = random_floats(rng, d, 0.1f);
  for (auto& v : data.ln_w) v += 1.0f;
  auto x = random_floats(rng, total * c.H);
  auto q_resid = random_floats(rng, total * c.q_lora);
  if (c.zero_dots) {
    // Keys = the (positive) bias, so every pooled key is positive; q entirely negative.
    std::uniform_real_distribution<float> u(0.5f, 1.5f);
    for (auto& v : data.ln_w) v = 0.0f;
    for (auto& v : data.ln_b) v = u(rng);
    for (auto& v : data.wq_b) v = -std::fabs(v);
    for (auto& v : q_resid) v = std::fabs(v) + 0.1f;
  }
  const auto weights = data.weights();
  blocks::IndexerCache cache(cfg);

  auto d_lnw = to_device(data.ln_w);
  auto d_lnb = to_device(data.ln_b);
  auto d_ape = to_device(data.ape);
  GuardedBuffer d_keys(capacity * d * 4), d_gates(capacity * d * 4), d_pooled(npools * d * 4), d_pos(4);
  std::vector<float> keys(capacity * d), gates(capacity * d), pooled(npools * d);

  std::int64_t pos0 = 0;
  for (const std::int64_t T : c.steps) {
    const float* xs = x.data() + pos0 * c.H;
    const float* qs = q_resid.data() + pos0 * c.q_lora;
    std::vector<std::int32_t> want(T * width);
    blocks::indexer_select(pool, cfg, weights, cache, xs, qs, T, want.data(), width);

    std::vector<float> key_raw(T * d), gate_raw(T * d), q(T * nh * d), w(T * nh);
    cpu::linear(pool, xs, T, weights.wk, nullptr, key_raw.data());
    cpu::linear(pool, xs, T, weights.gate, nullptr, gate_raw.data());
    cpu::linear(pool, qs, T, weights.wq_b, nullptr, q.data());
    cpu::linear(pool, xs, T, weights.weights_proj, nullptr, w.data());
    auto d_kr = to_device(key_raw);
    auto d_gr = to_device(gate_raw);
    auto d_q = to_device(q);
    auto d_w = to_device(w);
    set_position(d_pos, pos0);
    const std::size_t scratch_bytes = k::indexer_select_scratch_bytes(T, capacity, c.kpool);
    GuardedBuffer scratch(scratch_bytes), sel(T * width * 4);
    CUDA_VERIFY(k::indexer_append(d_kr.as<float>(), d_gr.as<float>(), T, c.d, d_lnw.as<float>(), d_lnb.as<float>(),
                                  d_pos.as<std::int32_t>(), d_keys.as<float>(), d_gates.as<float>(), nullptr));
    CUDA_VERIFY(k::indexer_pool(d_keys.as<float>(), d_gates.as<float>(), d_ape.as<float>(), T, c.d, c.kpool,
                                d_pos.as<std::int32_t>(), d_pooled.as<float>(), nullptr));
    CUDA_VERIFY(k::indexer_select(d_q.as<float>(), d_w.as<float>(), d_pooled.as<float>(), T, c.heads, c.d, c.kpool,
                                  c.topk, d_pos.as<std::int32_t>(), capacity, sel.as<std::int32_t>(), width,
                                  scratch.as<void>(), scratch_bytes, nullptr));
    CUDA_VERIFY(cudaDeviceSynchronize());
    const auto got = to_host<std::int32_t>(sel, T * width);
    QVERIFY(sel.guard_intact() && scratch.guard_intact());

    // The test's keys and pools, as the CPU block computes them.
    for (std::int64_t t = 0; t < T; ++t) {
      const float* kt = key_raw.data() + t * d;
      float mean = 0;
      for (std::int64_t i = 0; i < d; ++i) mean += kt[i];
      mean /= static_cast<float>(d);
      float var = 0;
      for (std::int64_t i = 0; i < d; ++i) var += (kt[i] - mean) * (kt[i] - mean);
      var /= static_cast<float>(d);
      const float inv = 1.0f / std::sqrt(var + 1e-6f);
      for (std::int64_t i = 0; i < d; ++i) {
        keys[(pos0 + t) * d + i] = (kt[i] - mean) * inv * data.ln_w[i] + data.ln_b[i];
        gates[(pos0 + t) * d + i] = gate_raw[t * d + i];
      }
    }
    for (std::int64_t p = pos0 / c.kpool; p < (pos0 + T) / c.kpool; ++p)
      for (std::int64_t ch = 0; ch < d; ++ch) {
        float top = -INFINITY;
        for (int i = 0; i < c.kpool; ++i) top = std::max(top, gates[(p * c.kpool + i) * d + ch] + data.ape[i * d + ch]);
        float z = 0;
        for (int i = 0; i < c.kpool; ++i) z += std::exp(gates[(p * c.kpool + i) * d + ch] + data.ape[i * d + ch] - top);
        float acc = 0;
        for (int i = 0; i < c.kpool; ++i)
          acc += std::exp(gates[(p * c.kpool + i) * d + ch] + data.ape[i * d + ch] - top) / z *
                 keys[(p * c.kpool + i) * d + ch];
        pooled[p * d + ch] = acc;
      }
    // The pooled keys agree closely (they differ by rounding only).
    {
      const std::int64_t n = (pos0 + T) / c.kpool * d;
      const auto gp = to_host<float>(d_pooled, n);
      QVERIFY2(rel_l2(gp.data(), pooled.data(), n) < 1e-5,
               qPrintable(QString::number(rel_l2(gp.data(), pooled.data(), n))));
    }

    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t p = pos0 + t, visible = (p + 1) / c.kpool;
      const QString where = QString("position %1").arg(p);
      if (std::equal(want.begin() + t * width, want.begin() + (t + 1) * width, got.begin() + t * width)) continue;
      QVERIFY2(!c.zero_dots, qPrintable(where + ": with every score 0 the order is the index order"));
      std::vector<double> scores(visible, 0.0);
      for (std::int64_t j = 0; j < visible; ++j)
        for (std::int64_t h = 0; h < nh; ++h) {
          double dot = 0;
          for (std::int64_t i = 0; i < d; ++i) dot += double(q[(t * nh + h) * d + i]) * pooled[j * d + i];
          scores[j] += double(w[t * nh + h]) / std::sqrt(double(nh)) * std::max(dot / std::sqrt(double(d)), 0.0);
        }
      compare_row(got.data() + t * width, want.data() + t * width, scores, std::min(c.topk / c.kpool, visible), c.kpool,
                  width, swaps, where);
      if (QTest::currentTestFailed()) return;
    }
    pos0 += T;
  }
}

}  // namespace

class TestCudaMla : public QObject {
  Q_OBJECT
 private slots:
  void mla_attend() {
    std::mt19937 rng(51);
    ThreadPool pool;
    const MlaCase cases[] = {
        // Tiny: dense prefill from 0, dense decode, prefill and decode over a selection.
        {4, 16, 16, 32, 0, 45, 64, 0},
        {4, 16, 16, 32, 77, 1, 100, 0},
        {4, 16, 16, 32, 50, 20, 80, 40},
        {4, 16, 16, 32, 300, 1, 400, 131},
        // A partial head group, several splits per query with T > 1, R not a power of two.
        {20, 24, 40, 64, 3000, 1, 4096, 0},
        {20, 24, 40, 64, 100, 16, 200, 0},
        {20, 24, 40, 200, 1500, 7, 2000, 300},
        // A long dense prefill: one split per query, ctx written over q_abs.
        {4, 16, 16, 32, 0, 600, 640, 0},
        // Positions near 1M: dense decode over every one, and a selection reaching them.
        {4, 16, 16, 32, (1 << 20) - 1, 2, (1 << 20) + 8, 0, true},
        {4, 16, 16, 32, (1 << 20) - 3, 3, (1 << 20) + 8, 2051},
        // The released shape (heads 64, nope 256, v 256, R 512): dense decode, sparse decode and
        // prefill over 2048 + 3 entries, dense prefill.
        {64, 256, 256, 512, 4000, 1, 8192, 0},
        {64, 256, 256, 512, 30000, 1, 32768, 2051},
        {64, 256, 256, 512, 20000, 24, 32768, 2051},
        {64, 256, 256, 512, 500, 40, 1024, 0},
    };
    for (const auto& c : cases) {
      double error = 0;
      check_mla(pool, rng, c, &error);
      if (QTest::currentTestFailed()) return;
      qInfo("heads %d R %d pos0 %lld T %lld width %lld: rel L2 %.3g%s", c.heads, c.R, static_cast<long long>(c.pos0),
            static_cast<long long>(c.T), static_cast<long long>(c.width), error, c.float64 ? " (float64)" : "");
      QVERIFY2(error <= 1e-3, qPrintable(QString("heads %1 R %2 pos0 %3 T %4 width %5: rel L2 %6")
                                             .arg(c.heads)
                                             .arg(c.R)
                                             .arg(c.pos0)
                                             .arg(c.T)
                                             .arg(c.width)
                                             .arg(error)));
    }
  }

  void indexer_against_cpu() {
    std::mt19937 rng(52);
    ThreadPool pool;
    std::vector<std::int64_t> tiny{45};
    for (int i = 0; i < 30; ++i) tiny.push_back(1);
    tiny.push_back(13);
    for (int i = 0; i < 30; ++i) tiny.push_back(1);
    std::vector<std::int64_t> medium{45};
    for (int i = 0; i < 250; ++i) medium.push_back(1);
    medium.push_back(37);
    for (int i = 0; i < 270; ++i) medium.push_back(1);
    std::vector<std::int64_t> released{2062};
    for (int i = 0; i < 40; ++i) released.push_back(1);
    const IndexerCase cases[] = {
        {4, 16, 4, 16, 32, 24, tiny, false},   {4, 16, 4, 16, 32, 24, tiny, true},
        {8, 32, 3, 30, 48, 32, tiny, false},   {16, 64, 4, 64, 96, 48, medium, false},
        {16, 64, 4, 64, 96, 48, medium, true}, {32, 128, 4, 2048, 128, 64, released, false},
    };
    for (const auto& c : cases) {
      int swaps = 0;
      check_indexer(pool, rng, c, &swaps);
      if (QTest::currentTestFailed()) return;
      qInfo("heads %d d %d kpool %d topk %lld%s: %d near-tie swaps", c.heads, c.d, c.kpool,
            static_cast<long long>(c.topk), c.zero_dots ? " (all scores 0)" : "", swaps);
    }
  }

  // indexer_select alone on integer data (every score exact in any order, so the selection must
  // match the reference exactly) at positions near 1M: many distinct scores with frequent ties,
  // few distinct scores (the equal-key path: far more tied pools than fit in shared memory), all
  // scores 0; enough queries for the score rows to be taken in two chunks.
  void indexer_topk_exact() {
    std::mt19937 rng(53);
    const int heads = 4, d = 4, kpool = 4;
    const std::int64_t capacity = (1 << 20) + 256, npools = capacity / kpool, topk = 2048;
    const std::int64_t width = topk + kpool - 1;
    for (const int spread : {64, 1, 0}) {
      const std::int64_t T = spread == 64 ? 130 : 3, pos0 = (1 << 20) - 2;
      std::vector<float> pooled(npools * d), q(T * heads * d), w(T * heads);
      for (auto& v : pooled)
        v = spread == 0 ? 0.0f : static_cast<float>(static_cast<int>(rng() % (2 * spread + 1)) - spread);
      for (auto& v : q) v = static_cast<float>(static_cast<int>(rng() % 17) - 8);
      for (auto& v : w) v = static_cast<float>(static_cast<int>(rng() % 16) - 3);
      auto d_pooled = to_device(pooled);
      auto d_q = to_device(q);
      auto d_w = to_device(w);
      GuardedBuffer d_pos(4), sel(T * width * 4);
      set_position(d_pos, pos0);
      const std::size_t scratch_bytes = k::indexer_select_scratch_bytes(T, capacity, kpool);
      GuardedBuffer scratch(scratch_bytes);
      CUDA_VERIFY(k::indexer_select(d_q.as<float>(), d_w.as<float>(), d_pooled.as<float>(), T, heads, d, kpool, topk,
                                    d_pos.as<std::int32_t>(), capacity, sel.as<std::int32_t>(), width,
                                    scratch.as<void>(), scratch_bytes, nullptr));
      const auto got = to_host<std::int32_t>(sel, T * width);
      QVERIFY(sel.guard_intact() && scratch.guard_intact());
      std::vector<float> scores;
      for (std::int64_t t = 0; t < T; ++t) {
        const std::int64_t p = pos0 + t, visible = (p + 1) / kpool;
        scores.assign(visible, 0.0f);
        for (std::int64_t j = 0; j < visible; ++j) {
          float s = 0;
          for (int h = 0; h < heads; ++h) {
            float dot = 0;
            for (int i = 0; i < d; ++i) dot += q[(t * heads + h) * d + i] * pooled[j * d + i];
            s += w[t * heads + h] * 0.5f * std::max(dot * 0.5f, 0.0f);
          }
          scores[j] = s;
        }
        const auto want = reference_row(scores.data(), visible, topk / kpool, kpool, p, width);
        QVERIFY2(std::equal(want.begin(), want.end(), got.begin() + t * width),
                 qPrintable(QString("spread %1, query %2").arg(spread).arg(t)));
      }
    }
  }

  void bad_arguments() {
    GuardedBuffer any(1 << 16);
    k::MlaAttendArgs a;
    a.T = 1;
    a.heads = 4;
    a.nope = 16;
    a.v_dim = 16;
    a.R = 36;  // not a multiple of 8
    a.capacity = 8;
    a.q = any.as<float>();
    a.kv_b = any.as<std::uint16_t>();
    a.latent = any.as<std::uint16_t>();
    a.position = any.as<std::int32_t>();
    a.out = any.as<float>();
    a.scratch = any.as<float>();
    a.scratch_floats = 1 << 12;
    QCOMPARE(k::mla_attend(a, nullptr), cudaErrorInvalidValue);
    a.R = 32;
    a.scratch_floats = 1;  // too little scratch
    QCOMPARE(k::mla_attend(a, nullptr), cudaErrorInvalidValue);
    const std::size_t bytes = k::indexer_select_scratch_bytes(1, 64, 4);
    // width below min(topk, capacity) + kpool - 1
    QCOMPARE(k::indexer_select(any.as<float>(), any.as<float>(), any.as<float>(), 1, 4, 16, 4, 16,
                               any.as<std::int32_t>(), 64, any.as<std::int32_t>(), 18, any.as<void>(), bytes, nullptr),
             cudaErrorInvalidValue);
    // d not a multiple of 4
    QCOMPARE(k::indexer_select(any.as<float>(), any.as<float>(), any.as<float>(), 1, 4, 18, 4, 16,
                               any.as<std::int32_t>(), 64, any.as<std::int32_t>(), 19, any.as<void>(), bytes, nullptr),
             cudaErrorInvalidValue);
    CUDA_VERIFY(cudaGetLastError());
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu()) return skip;
  TestCudaMla test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_mla.moc"
