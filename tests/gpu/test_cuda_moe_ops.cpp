// The CUDA MoE ops against the CPU backend on random MXFP4 experts: router top-k, the
// routing permutation, the online conversion of the routed experts into the shared workspace
// (bit-exact against the single-matrix conversion), the grouped GEMMs over the FP8 and bf16
// workspaces, and the fused MXFP4 decode GEMVs.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <tuple>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "gpu/gpu_test_util.h"
#include "moe_gemm.h"
#include "moe_routing.h"
#include "mxfp4_fp8.h"
#include "mxfp4_gemv.h"

using namespace day0;
using namespace day0::gpu_test;
namespace k = day0::kernels;

namespace {

struct Experts {
  std::int64_t E, rows, cols;
  std::vector<std::uint8_t> blocks, scales;
  std::vector<float> bias;  // [E, rows]
  cpu::Mxfp4Matrix matrix(std::int64_t e) const {
    const std::int64_t nb = rows * cols / 32;
    return {blocks.data() + e * nb * 16, scales.data() + e * nb, rows, cols};
  }
};

Experts random_experts(std::mt19937& rng, std::int64_t E, std::int64_t rows, std::int64_t cols) {
  Experts x{E, rows, cols, {}, {}, {}};
  const std::int64_t nb = E * rows * cols / 32;
  x.blocks.resize(nb * 16);
  x.scales.resize(nb);
  for (auto& b : x.blocks) b = static_cast<std::uint8_t>(rng());
  // Block scales spread over 2^-7 .. 2^-1 around 1/sqrt(cols)-sized weights.
  for (auto& s : x.scales) s = static_cast<std::uint8_t>(120 + rng() % 7);
  x.bias = random_floats(rng, E * rows, 0.1f);
  return x;
}

// The CPU reference of the top-k router: highest first, ties to the lower id, softmax over the k.
void reference_topk(const float* r, int E, int K, std::int32_t* ids, float* w) {
  std::vector<std::int32_t> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + K, order.end(),
                    [&](std::int32_t a, std::int32_t b) { return r[a] > r[b] || (r[a] == r[b] && a < b); });
  double z = 0;
  for (int j = 0; j < K; ++j) z += std::exp(static_cast<double>(r[order[j]]) - r[order[0]]);
  for (int j = 0; j < K; ++j) {
    ids[j] = order[j];
    w[j] = static_cast<float>(std::exp(static_cast<double>(r[order[j]]) - r[order[0]]) / z);
  }
}

void swiglu(const float* gate_up, std::int64_t inter, float* out) {
  for (std::int64_t i = 0; i < inter; ++i) {
    const float gate = std::min(gate_up[2 * i], 7.0f);
    const float up = std::clamp(gate_up[2 * i + 1], -7.0f, 7.0f);
    out[i] = (up + 1.0f) * gate / (1.0f + std::exp(-gate * 1.702f));
  }
}

// The CPU's expert contribution to each token, in fp32: sum over j of weights[t, j] times
// expert ids[t, j] (gate_up, SwiGLU, down, with biases) applied to x[t].
std::vector<float> cpu_moe_delta(ThreadPool& pool, const std::vector<float>& x, const Experts& gate_up,
                                 const Experts& down, const std::vector<std::int32_t>& ids,
                                 const std::vector<float>& weights, int T, int K) {
  const std::int64_t H = down.rows, I = down.cols;
  std::vector<float> delta(static_cast<std::size_t>(T * H), 0.0f), gu(2 * I), act(I), out(H);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < K; ++j) {
      const int e = ids[t * K + j];
      const cpu::Matrix gb{DType::f32, reinterpret_cast<const std::uint8_t*>(gate_up.bias.data() + e * 2 * I), 1,
                           2 * I};
      const cpu::Matrix db{DType::f32, reinterpret_cast<const std::uint8_t*>(down.bias.data() + e * H), 1, H};
      cpu::linear(pool, x.data() + t * H, 1, gate_up.matrix(e), &gb, gu.data());
      swiglu(gu.data(), I, act.data());
      cpu::linear(pool, act.data(), 1, down.matrix(e), &db, out.data());
      for (int c = 0; c < H; ++c) delta[t * H + c] += weights[t * K + j] * out[c];
    }
  return delta;
}

// A layer's experts on the device, and decode MoE arguments over them (routes left to the caller).
struct DeviceExperts {
  GuardedBuffer gu_blocks, gu_scales, gu_bias, dn_blocks, dn_scales, dn_bias;
  DeviceExperts(const Experts& gate_up, const Experts& down)
      : gu_blocks(to_device(gate_up.blocks)),
        gu_scales(to_device(gate_up.scales)),
        gu_bias(to_device(gate_up.bias)),
        dn_blocks(to_device(down.blocks)),
        dn_scales(to_device(down.scales)),
        dn_bias(to_device(down.bias)) {}
  k::MoeDecodeArgs args(int T, int H, int I, int K) const {
    k::MoeDecodeArgs m;
    m.T = T;
    m.hidden = H;
    m.inter = I;
    m.top_k = K;
    m.gate_up_blocks = gu_blocks.as<std::uint8_t>();
    m.gate_up_scales = gu_scales.as<std::uint8_t>();
    m.gate_up_bias = gu_bias.as<float>();
    m.down_blocks = dn_blocks.as<std::uint8_t>();
    m.down_scales = dn_scales.as<std::uint8_t>();
    m.down_bias = dn_bias.as<float>();
    return m;
  }
};

// The decode MoE on the GPU (x quantised to split int8, gate_up, down into a copy of `residual`):
// what it added to each residual value, in `delta`. Fails the test on a CUDA error or an
// overwritten guard.
void gpu_decode_moe_delta(const k::MoeDecodeArgs& m, const std::vector<float>& x, const std::vector<float>& residual,
                          std::vector<float>& delta) {
  const std::int64_t T = m.T, H = m.hidden, I = m.inter, K = m.top_k;
  auto dx = to_device(x);
  auto dr = to_device(residual);
  GuardedBuffer xq(T * H / 32 * k::kSplitInt8BlockBytes), xs(T * H / 32 * 4);
  GuardedBuffer act_q(T * K * I / 32 * k::kSplitInt8BlockBytes), act_s(T * K * I / 32 * 4);
  CUDA_VERIFY(k::quantize_split_int8(dx.as<float>(), T, H, xq.as<std::int8_t>(), xs.as<float>(), nullptr));
  CUDA_VERIFY(k::moe_decode_gate_up(m, xq.as<std::int8_t>(), xs.as<float>(), act_q.as<std::int8_t>(), act_s.as<float>(),
                                    nullptr));
  CUDA_VERIFY(k::moe_decode_down(m, act_q.as<std::int8_t>(), act_s.as<float>(), dr.as<float>(), nullptr));
  delta = to_host<float>(dr, static_cast<std::size_t>(T * H));
  for (std::size_t i = 0; i < delta.size(); ++i) delta[i] -= residual[i];
  QVERIFY(xq.guard_intact() && xs.guard_intact() && act_q.guard_intact() && act_s.guard_intact() && dr.guard_intact());
}

}  // namespace

class TestCudaMoeOps : public QObject {
  Q_OBJECT
 private slots:
  void router_topk() {
    std::mt19937 rng(11);
    for (const auto& [E, K] : {std::pair<int, int>{32, 4}, {8, 2}, {128, 4}, {4, 1}, {16, 16}}) {
      const std::int64_t T = 301;
      auto logits = random_floats(rng, T * E);
      for (std::int64_t t = 0; t < T; t += 3) logits[t * E + (t % E)] = logits[t * E + ((t + 1) % E)];  // ties
      auto d = to_device(logits);
      GuardedBuffer ids(T * K * 4), w(T * K * 4);
      CUDA_VERIFY(k::router_topk(d.as<float>(), T, E, K, ids.as<std::int32_t>(), w.as<float>(), nullptr));
      const auto gi = to_host<std::int32_t>(ids, T * K);
      const auto gw = to_host<float>(w, T * K);
      std::vector<std::int32_t> wi(T * K);
      std::vector<float> ww(T * K);
      for (std::int64_t t = 0; t < T; ++t)
        reference_topk(logits.data() + t * E, E, K, wi.data() + t * K, ww.data() + t * K);
      QVERIFY(gi == wi);
      QVERIFY2(rel_l2(gw, ww) < 1e-6, qPrintable(QString::number(rel_l2(gw, ww))));
      QVERIFY(ids.guard_intact() && w.guard_intact());
    }
  }

  // The fused decode router: RMSNorm, router GEMV and the split int8 copy of the normed row,
  // against the CPU norm and linear: gpt-oss-20b's and gpt-oss-120b's router shapes, small ones, E
  // not a multiple of the 4 rows of a CTA.
  void router_decode() {
    std::mt19937 rng(21);
    ThreadPool pool(2);
    for (const auto& [E, H] : {std::pair<int, int>{32, 2880}, {128, 64}, {8, 96}, {128, 2880}, {30, 256}}) {
      const std::int64_t T = 5;
      const auto x = random_floats(rng, T * H, 3.0f);
      const auto norm = to_bf16(random_floats(rng, H, 1.0f));
      const auto w = to_bf16(random_floats(rng, static_cast<std::size_t>(E) * H, 1.0f / std::sqrt(float(H))));
      const auto bias = random_floats(rng, E, 0.1f);
      std::vector<float> normed(T * H), logits(T * E);
      cpu::rms_norm(x.data(), T, H, bf16_matrix(norm, 1, H), 1e-5f, normed.data());
      const cpu::Matrix bm{DType::f32, reinterpret_cast<const std::uint8_t*>(bias.data()), 1, E};
      cpu::linear(pool, normed.data(), T, bf16_matrix(w, E, H), &bm, logits.data());
      auto dx = to_device(x);
      auto dn = to_device(norm);
      auto dw = to_device(w);
      auto db = to_device(bias);
      GuardedBuffer q(T * H / 32 * k::kSplitInt8BlockBytes), qs(T * H / 32 * 4), gl(T * E * 4);
      CUDA_VERIFY(k::router_decode(dx.as<float>(), dn.as<std::uint16_t>(), 1e-5f, dw.as<std::uint16_t>(),
                                   db.as<float>(), T, E, H, q.as<std::int8_t>(), qs.as<float>(), gl.as<float>(),
                                   nullptr));
      const auto got = to_host<float>(gl, T * E);
      for (std::int64_t i = 0; i < T * E; ++i)
        QVERIFY2(std::fabs(got[i] - logits[i]) <= 1e-5f * (1.0f + std::fabs(logits[i])),
                 qPrintable(QString("logit %1: %2 vs %3").arg(i).arg(got[i]).arg(logits[i])));
      const auto hq = to_host<std::int8_t>(q, T * H / 32 * k::kSplitInt8BlockBytes);
      const auto hs = to_host<float>(qs, T * H / 32);
      for (std::int64_t t = 0; t < T; ++t)
        for (int b = 0; b < H / 32; ++b) {
          float amax = 0.0f;
          for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(normed[t * H + b * 32 + i]));
          for (int i = 0; i < 32; ++i) {
            const std::size_t at = static_cast<std::size_t>((t * H / 32 + b) * 64);
            const double back = hs[t * H / 32 + b] * (hq[at + i] + hq[at + 32 + i] / 254.0);
            QVERIFY(std::fabs(back - normed[t * H + b * 32 + i]) <= amax * 2e-5);
          }
        }
      QVERIFY(q.guard_intact() && qs.guard_intact() && gl.guard_intact());
    }
    GuardedBuffer any(64);
    QCOMPARE(k::router_decode(any.as<float>(), any.as<std::uint16_t>(), 1e-5f, any.as<std::uint16_t>(), any.as<float>(),
                              1, 4, 48, any.as<std::int8_t>(), any.as<float>(), any.as<float>(), nullptr),
             cudaErrorInvalidValue);  // H not a multiple of 32
  }

  // The decode expert GEMVs taking their routes from the logits: ties (lower id first), NaN
  // logits (behind every number), -inf, k = 1 and k = E, E from 7 to 256, several tokens. gate_up
  // reports the routes it took; down must take the same ones (its sums against the CPU with them).
  void decode_routes_from_logits() {
    std::mt19937 rng(33);
    ThreadPool pool(2);
    const int H = 64, I = 32, T = 6;
    for (const auto& [E, K] : {std::pair<int, int>{32, 4}, {30, 3}, {128, 4}, {256, 8}, {7, 1}, {32, 32}, {40, 2}}) {
      const Experts gate_up = random_experts(rng, E, 2 * I, H);
      const Experts down = random_experts(rng, E, H, I);
      const auto x = random_floats(rng, static_cast<std::size_t>(T) * H);
      const auto residual = random_floats(rng, static_cast<std::size_t>(T) * H);
      // Logits from a few values (many ties), NaN and -inf sprinkled in; token 5 all equal.
      std::vector<float> logits(static_cast<std::size_t>(T) * E);
      for (auto& v : logits) {
        const unsigned r = rng() % 16;
        v = r == 0 ? std::nanf("") : r == 1 ? -INFINITY : static_cast<float>(r % 4) * 0.5f;
      }
      for (int e = 0; e < E; ++e) logits[5 * E + e] = 1.0f;
      std::vector<std::int32_t> ids(T * K);
      std::vector<float> weights(T * K);
      for (int t = 0; t < T; ++t) {
        std::vector<float> r(logits.begin() + t * E, logits.begin() + (t + 1) * E);
        for (auto& v : r)
          if (std::isnan(v)) v = -INFINITY;
        reference_topk(r.data(), E, K, ids.data() + t * K, weights.data() + t * K);
        for (int j = 0; j < K; ++j)  // every selected logit -inf: equal weights
          if (std::isnan(weights[t * K + j])) weights[t * K + j] = 1.0f / K;
      }
      const DeviceExperts dev(gate_up, down);
      auto d_logits = to_device(logits);
      GuardedBuffer got_ids(T * K * 4), got_w(T * K * 4);
      CUDA_VERIFY(cudaMemset(got_ids.as<void>(), 0xCD, T * K * 4));
      k::MoeDecodeArgs m = dev.args(T, H, I, K);
      m.logits = d_logits.as<float>();
      m.experts = E;
      m.ids = got_ids.as<std::int32_t>();
      m.weights = got_w.as<float>();
      std::vector<float> got_delta;
      gpu_decode_moe_delta(m, x, residual, got_delta);
      if (QTest::currentTestFailed()) return;
      const auto gi = to_host<std::int32_t>(got_ids, T * K);
      const auto gw = to_host<float>(got_w, T * K);
      QVERIFY2(gi == ids, qPrintable(QString("E %1 k %2").arg(E).arg(K)));
      for (int i = 0; i < T * K; ++i)
        QVERIFY2(std::fabs(gw[i] - weights[i]) <= 1e-6f,
                 qPrintable(QString("weight %1: %2 vs %3").arg(i).arg(gw[i]).arg(weights[i])));
      // The CPU with the reference routes.
      const double err = rel_l2(got_delta, cpu_moe_delta(pool, x, gate_up, down, ids, weights, T, K));
      QVERIFY2(err < 1e-4, qPrintable(QString("E %1 k %2: %3").arg(E).arg(K).arg(err)));
      QVERIFY(got_ids.guard_intact() && got_w.guard_intact());
    }
    // More experts than the GEMVs route themselves, or routes half given: refused.
    k::MoeDecodeArgs m;
    GuardedBuffer any(64);
    m.T = 1;
    m.hidden = 64;
    m.inter = 32;
    m.top_k = 2;
    m.logits = any.as<float>();
    m.experts = k::kDecodeRouteMaxExperts + 1;
    m.gate_up_blocks = m.down_blocks = any.as<std::uint8_t>();
    m.gate_up_scales = m.down_scales = any.as<std::uint8_t>();
    m.gate_up_bias = m.down_bias = any.as<float>();
    QCOMPARE(k::moe_decode_gate_up(m, any.as<std::int8_t>(), any.as<float>(), any.as<std::int8_t>(), any.as<float>(),
                                   nullptr),
             cudaErrorInvalidValue);
    m.experts = 8;
    m.ids = any.as<std::int32_t>();
    QCOMPARE(k::moe_decode_down(m, any.as<std::int8_t>(), any.as<float>(), any.as<float>(), nullptr),
             cudaErrorInvalidValue);
  }

  // The split int8 vectors the decode GEMVs read: every value within max|x| / 64,516 of its
  // block's reconstruction, zero blocks exact, magnitudes from 1e-30 to 1e30.
  void quantize_split_int8() {
    std::mt19937 rng(5);
    const std::int64_t rows = 7, K = 2880;
    auto x = random_floats(rng, rows * K);
    std::uniform_int_distribution<int> exponent(-100, 100);
    for (std::int64_t b = 0; b < rows * K / 32; ++b) {
      const float m = b % 11 == 3 ? 0.0f : std::pow(10.0f, exponent(rng) * 0.3f);
      for (int i = 0; i < 32; ++i) x[b * 32 + i] *= m;
    }
    x[100] = 0.0f;
    auto d = to_device(x);
    GuardedBuffer q(rows * K / 32 * k::kSplitInt8BlockBytes), sc(rows * K / 32 * 4);
    CUDA_VERIFY(k::quantize_split_int8(d.as<float>(), rows, K, q.as<std::int8_t>(), sc.as<float>(), nullptr));
    const auto hq = to_host<std::int8_t>(q, rows * K / 32 * k::kSplitInt8BlockBytes);
    const auto hs = to_host<float>(sc, rows * K / 32);
    for (std::int64_t b = 0; b < rows * K / 32; ++b) {
      float amax = 0.0f;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
      QVERIFY(std::fabs(hs[b] - amax / 127.0f) <= 1e-6f * amax);
      for (int i = 0; i < 32; ++i) {
        const int hi = hq[b * 64 + i], lo = hq[b * 64 + 32 + i];
        QVERIFY(hi >= -127 && hi <= 127 && lo >= -127 && lo <= 127);
        const double back = static_cast<double>(hs[b]) * (hi + lo / 254.0);
        QVERIFY2(std::fabs(back - x[b * 32 + i]) <= amax * (1.0 / 64516 + 1e-6),
                 qPrintable(QString("block %1 value %2: %3 vs %4").arg(b).arg(i).arg(back).arg(x[b * 32 + i])));
      }
    }
    QVERIFY(q.guard_intact() && sc.guard_intact());
    QCOMPARE(k::quantize_split_int8(d.as<float>(), rows, 100, q.as<std::int8_t>(), sc.as<float>(), nullptr),
             cudaErrorInvalidValue);
  }

  void prefill_and_decode_moe_data() {
    QTest::addColumn<int>("E");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("H");
    QTest::addColumn<int>("I");
    QTest::addColumn<int>("T");
    QTest::newRow("E16 k4 H256 I192 T200 (several tiles per expert)") << 16 << 4 << 256 << 192 << 200;
    QTest::newRow("E8 k2 H96 I64 T70 (partial column tiles)") << 8 << 2 << 96 << 64 << 70;
    QTest::newRow("E32 k4 H2880 I2880 T3 (gpt-oss-20b widths)") << 32 << 4 << 2880 << 2880 << 3;
    // Rows of 256 blocks: many load rounds per warp in the decode GEMVs, and down's three staged
    // inputs past the default 48 KB of shared memory.
    QTest::newRow("E4 k2 H8192 I256 T2 (gate_up rows of 256 blocks)") << 4 << 2 << 8192 << 256 << 2;
    QTest::newRow("E6 k3 H512 I8192 T2 (down inputs past 48 KB)") << 6 << 3 << 512 << 8192 << 2;
  }
  void prefill_and_decode_moe() {
    QFETCH(int, E);
    QFETCH(int, K);
    QFETCH(int, H);
    QFETCH(int, I);
    QFETCH(int, T);
    std::mt19937 rng(12 + E + T);
    ThreadPool pool(2);
    const Experts gate_up = random_experts(rng, E, 2 * I, H);
    const Experts down = random_experts(rng, E, H, I);
    const auto x = from_bf16(to_bf16(random_floats(rng, static_cast<std::size_t>(T) * H)));
    const auto residual = random_floats(rng, static_cast<std::size_t>(T) * H);
    auto logits = random_floats(rng, static_cast<std::size_t>(T) * E);
    std::vector<std::int32_t> ids(T * K);
    std::vector<float> weights(T * K);
    for (int t = 0; t < T; ++t) reference_topk(logits.data() + t * E, E, K, ids.data() + t * K, weights.data() + t * K);

    // CPU: each (token, slot) through its expert, in fp32.
    const std::vector<float> want_delta = cpu_moe_delta(pool, x, gate_up, down, ids, weights, T, K);

    const DeviceExperts dev(gate_up, down);
    auto d_ids = to_device(ids);
    auto d_w = to_device(weights);
    const auto delta = [&](const GuardedBuffer& b) {
      auto got = to_host<float>(b, static_cast<std::size_t>(T) * H);
      for (std::size_t i = 0; i < got.size(); ++i) got[i] -= residual[i];
      return got;
    };

    // Decode path: fused MXFP4 GEMVs over split int8 inputs (near fp32: the same 1e-4 bound), with
    // the routes given and with the routes taken from the logits (as the decode step runs them).
    auto d_logits = to_device(logits);
    for (const bool from_logits : {false, true}) {
      k::MoeDecodeArgs m = dev.args(T, H, I, K);
      if (from_logits) {
        m.logits = d_logits.as<float>();
        m.experts = E;
      } else {
        m.ids = d_ids.as<std::int32_t>();
        m.weights = d_w.as<float>();
      }
      std::vector<float> got_delta;
      gpu_decode_moe_delta(m, x, residual, got_delta);
      if (QTest::currentTestFailed()) return;
      const double err = rel_l2(got_delta, want_delta);
      QVERIFY2(err < 1e-4, qPrintable(QString("decode MoE (%1) %2").arg(from_logits ? "logits" : "ids").arg(err)));
    }

    // Prefill path: routes, gather, workspace, grouped GEMMs, combine; FP8 and bf16 workspaces.
    for (const bool fp8 : {true, false}) {
      const std::int64_t pairs = static_cast<std::int64_t>(T) * K;
      const int n_slots = static_cast<int>(std::min<std::int64_t>(E, pairs));
      const std::int64_t max_tiles = k::moe_max_tiles(pairs, E, k::kMoeGemmTileRows);
      GuardedBuffer counts(E * 4), sorted(pairs * 4), row_of(pairs * 4), active(n_slots * 4),
          offsets((n_slots + 1) * 4), active_count(4), tile_slot(max_tiles * 4), tile_row(max_tiles * 4), tile_count(4);
      k::MoeRoutes r;
      r.counts = counts.as<std::int32_t>();
      r.sorted_pair = sorted.as<std::int32_t>();
      r.row_of_pair = row_of.as<std::int32_t>();
      r.active_experts = active.as<std::int32_t>();
      r.slot_offsets = offsets.as<std::int32_t>();
      r.active_count = active_count.as<std::int32_t>();
      r.tile_slot = tile_slot.as<std::int32_t>();
      r.tile_row = tile_row.as<std::int32_t>();
      r.tile_count = tile_count.as<std::int32_t>();
      CUDA_VERIFY(k::moe_build_routes(d_ids.as<std::int32_t>(), T, K, E, k::kMoeGemmTileRows, r, nullptr));
      // The permutation: every pair once, grouped by ascending expert, inverse consistent.
      const auto h_sorted = to_host<std::int32_t>(sorted, pairs);
      const auto h_row_of = to_host<std::int32_t>(row_of, pairs);
      const int n_active = to_host<std::int32_t>(active_count, 1)[0];
      const auto h_active = to_host<std::int32_t>(active, n_active);
      QCOMPARE(n_active, static_cast<int>(std::set<std::int32_t>(ids.begin(), ids.end()).size()));
      for (std::int64_t row = 0; row < pairs; ++row) {
        QCOMPARE(h_row_of[h_sorted[row]], static_cast<std::int32_t>(row));
        if (row > 0) QVERIFY(ids[h_sorted[row - 1]] <= ids[h_sorted[row]]);
      }

      GuardedBuffer xs(pairs * H * 2), act(pairs * I * 2), ys(pairs * H * 4);
      auto dxb = to_device(to_bf16(x));
      CUDA_VERIFY(k::moe_gather_rows(dxb.as<std::uint16_t>(), r.sorted_pair, T, K, H, xs.as<std::uint16_t>(), nullptr));
      const std::int64_t values = static_cast<std::int64_t>(n_slots) * 2 * I * H;
      GuardedBuffer ws(fp8 ? values : values * 2), ws_exp(fp8 ? values / 32 * 2 : 16);
      k::MoeGemmArgs g;
      g.active_experts = r.active_experts;
      g.slot_offsets = r.slot_offsets;
      g.tile_slot = r.tile_slot;
      g.tile_row = r.tile_row;
      g.tile_count = r.tile_count;
      g.max_tiles = max_tiles;
      const auto convert = [&](const GuardedBuffer& blocks, const GuardedBuffer& scales, std::int64_t per_expert) {
        return fp8 ? k::mxfp4_experts_to_fp8_e4m3(blocks.as<std::uint8_t>(), scales.as<std::uint8_t>(), per_expert,
                                                  r.active_experts, r.active_count, n_slots, ws.as<std::uint8_t>(),
                                                  ws_exp.as<std::int16_t>(), nullptr)
                   : k::mxfp4_experts_to_bf16(blocks.as<std::uint8_t>(), scales.as<std::uint8_t>(), per_expert,
                                              r.active_experts, r.active_count, n_slots, ws.as<std::uint16_t>(),
                                              nullptr);
      };
      if (fp8) {
        g.w_fp8 = ws.as<std::uint8_t>();
        g.w_exponent = ws_exp.as<std::int16_t>();
      } else {
        g.w_bf16 = ws.as<std::uint16_t>();
      }
      CUDA_VERIFY(convert(dev.gu_blocks, dev.gu_scales, 2 * I * H / 32));
      if (fp8) {
        // Slot s holds expert active[s] exactly as the single-matrix conversion writes it.
        const std::int64_t nb = 2 * I * H / 32;
        GuardedBuffer one(nb * 32), one_exp(nb * 2);
        const int s = n_active - 1;
        CUDA_VERIFY(k::mxfp4_to_fp8_e4m3(dev.gu_blocks.as<std::uint8_t>() + h_active[s] * nb * 16,
                                         dev.gu_scales.as<std::uint8_t>() + h_active[s] * nb, nb,
                                         one.as<std::uint8_t>(), one_exp.as<std::int16_t>(), nullptr));
        const auto all = to_host<std::uint8_t>(ws, values);
        const auto all_exp = to_host<std::int16_t>(ws_exp, values / 32);
        const auto want_fp8 = to_host<std::uint8_t>(one, nb * 32);
        const auto want_exp = to_host<std::int16_t>(one_exp, nb);
        QVERIFY(std::equal(want_fp8.begin(), want_fp8.end(), all.begin() + s * nb * 32));
        QVERIFY(std::equal(want_exp.begin(), want_exp.end(), all_exp.begin() + s * nb));
      }
      g.x = xs.as<std::uint16_t>();
      g.N = 2 * I;
      g.K = H;
      g.bias = dev.gu_bias.as<float>();
      g.epilogue = k::MoeEpilogue::swiglu;
      g.act_out = act.as<std::uint16_t>();
      CUDA_VERIFY(k::moe_grouped_gemm(g, nullptr));
      CUDA_VERIFY(convert(dev.dn_blocks, dev.dn_scales, H * I / 32));
      g.x = act.as<std::uint16_t>();
      g.N = H;
      g.K = I;
      g.bias = dev.dn_bias.as<float>();
      g.epilogue = k::MoeEpilogue::weighted;
      g.y_out = ys.as<float>();
      g.sorted_pair = r.sorted_pair;
      g.pair_weights = d_w.as<float>();
      CUDA_VERIFY(k::moe_grouped_gemm(g, nullptr));
      auto dr = to_device(residual);
      CUDA_VERIFY(k::moe_combine(ys.as<float>(), r.row_of_pair, T, K, H, dr.as<float>(), nullptr));
      const double err = rel_l2(delta(dr), want_delta);
      // bf16 activations between the two GEMMs: ~1e-3 expected.
      QVERIFY2(err < 2e-2, qPrintable(QString("prefill MoE (%1 workspace) %2").arg(fp8 ? "FP8" : "bf16").arg(err)));
      qInfo("prefill MoE, %s workspace: relative L2 %.2e", fp8 ? "FP8" : "bf16", err);
      for (const GuardedBuffer* b : {&counts, &sorted, &row_of, &active, &offsets, &active_count, &tile_slot, &tile_row,
                                     &tile_count, &xs, &act, &ys, &ws, &ws_exp, &dr})
        QVERIFY(b->guard_intact());
    }
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu()) return skip;
  TestCudaMoeOps test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_moe_ops.moc"
