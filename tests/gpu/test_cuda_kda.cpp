// The CUDA KDA kernels (kernels/kda.h) against the CPU: the causal conv + SiLU and its history
// against a direct loop, the q/k/gate/beta preparation and the gated norm against their formulas
// in double, the recurrence against blocks::detail::kda_head_recurrent (chained calls, strong and
// weak gates), and a whole layer against blocks::kda_forward with the projections done on the
// host. All fp32; guard regions behind every output.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "blocks/kda.h"
#include "blocks/kda_core.h"
#include "core/thread_pool.h"
#include "gpu/gpu_test_util.h"
#include "kda.h"

using namespace day0;
using namespace day0::gpu_test;
namespace k = day0::kernels;

#define VERIFY_REL(got, want, tol, what)                                                      \
  do {                                                                                        \
    const double verify_rel_ = rel_l2(got, want);                                             \
    QVERIFY2(verify_rel_ <= (tol), qPrintable(QStringLiteral("%1: relative L2 error %2 > %3") \
                                                  .arg(QString(what))                         \
                                                  .arg(verify_rel_)                           \
                                                  .arg(static_cast<double>(tol))));           \
  } while (0)

namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<float> uniform_floats(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// A device buffer of n floats, zero-filled (guard region poisoned behind it).
GuardedBuffer device_zeros(std::size_t n) {
  GuardedBuffer b(n * sizeof(float));
  cudaMemset(b.as<void>(), 0, n * sizeof(float));
  return b;
}

// out[t, c] = silu(sum_i w[c, i] * x[t + i, c]) over x = concat(history, in); history becomes
// the last K-1 rows of x.
std::vector<float> reference_conv(const std::vector<float>& in, std::int64_t T, std::int64_t C, int K,
                                  const std::vector<float>& w, std::vector<float>& history) {
  std::vector<float> x(history);
  x.insert(x.end(), in.begin(), in.end());
  std::vector<float> out(static_cast<std::size_t>(T * C));
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t c = 0; c < C; ++c) {
      float acc = 0.0f;
      for (int i = 0; i < K; ++i) acc += w[c * K + i] * x[(t + i) * C + c];
      out[t * C + c] = silu(acc);
    }
  history.assign(x.end() - (K - 1) * C, x.end());
  return out;
}

// x / sqrt(sum x^2 + eps) * scale per row of d, in double.
void reference_l2norm(std::vector<float>& x, std::int64_t rows, int d, float eps, float scale) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* h = x.data() + r * d;
    double ss = 0.0;
    for (int c = 0; c < d; ++c) ss += static_cast<double>(h[c]) * h[c];
    const auto f = static_cast<float>(scale / std::sqrt(ss + eps));
    for (int c = 0; c < d; ++c) h[c] *= f;
  }
}

// g [T, D] -> log decay, as kda.cpp.
void reference_gate(std::vector<float>& g, std::int64_t T, int heads, int d, const std::vector<float>& dt_bias,
                    const std::vector<float>& A_log, std::optional<float> lower_bound) {
  for (std::int64_t t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h) {
      const double rate = std::exp(std::min<double>(A_log[h], 80.0));
      for (int c = 0; c < d; ++c) {
        float& v = g[(t * heads + h) * d + c];
        const double x = static_cast<double>(v) + dt_bias[h * d + c];
        const double ld =
            lower_bound ? *lower_bound * sigmoid(rate * x) : -rate * (x > 20.0 ? x : std::log1p(std::exp(x)));
        v = static_cast<float>(std::clamp(ld, -1e30, 0.0));
      }
    }
}

// The gated norm per (t, h) row, as kda.cpp.
void reference_gated_norm(std::vector<float>& o, const std::vector<float>& gate, const std::vector<float>& o_norm,
                          std::int64_t rows, int d, float eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* x = o.data() + r * d;
    const float* g = gate.data() + r * d;
    double ss = 0.0;
    for (int c = 0; c < d; ++c) ss += static_cast<double>(x[c]) * x[c];
    const double inv = 1.0 / std::sqrt(ss / d + eps);
    for (int c = 0; c < d; ++c) x[c] = static_cast<float>(x[c] * inv * o_norm[c] * sigmoid(g[c]));
  }
}

// kda_head_recurrent for every head: rows of [T, heads * d], beta [T, heads], state [heads, d, d].
void reference_recurrent(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                         const std::vector<float>& ld, const std::vector<float>& beta, std::int64_t T, int heads, int d,
                         std::vector<float>& state, std::vector<float>& out) {
  out.assign(static_cast<std::size_t>(T * heads * d), 0.0f);
  for (int h = 0; h < heads; ++h) {
    blocks::detail::KdaHeadView view;
    view.q = q.data() + h * d;
    view.k = k.data() + h * d;
    view.v = v.data() + h * d;
    view.log_decay = ld.data() + h * d;
    view.beta = beta.data() + h;
    view.out = out.data() + h * d;
    view.T = T;
    view.d = d;
    view.stride = static_cast<std::int64_t>(heads) * d;
    view.beta_stride = heads;
    blocks::detail::kda_head_recurrent(view, state.data() + static_cast<std::size_t>(h) * d * d);
  }
}

// Largest |got - want| / (|want| + abs_floor) over the values.
double max_rel(const std::vector<float>& got, const std::vector<float>& want, double abs_floor) {
  if (got.size() != want.size()) return INFINITY;
  double m = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    if (std::isnan(want[i])) continue;
    m = std::max(
        m, std::abs(static_cast<double>(got[i]) - want[i]) / (std::abs(static_cast<double>(want[i])) + abs_floor));
  }
  return m;
}

}  // namespace

class TestCudaKda : public QObject {
  Q_OBJECT
 private:
  ThreadPool pool_{2};

 private slots:
  // Chained calls carry the history: single tokens, T < K-1, and inputs over several tiles.
  void conv_silu() {
    std::mt19937 rng(1);
    struct Case {
      int K;
      std::vector<std::int64_t> calls;
    };
    const std::int64_t C = 3 * 2 * 20;  // 3D for 2 heads of 20
    for (const Case& cs : {Case{4, {1, 2, 5, 1, 1}}, Case{4, {70, 1, 200}}, Case{7, {2, 3, 1, 9}}, Case{1, {3, 1}},
                           Case{64, {100, 1, 30}}}) {
      const int K = cs.K;
      const auto w = random_floats(rng, C * K, 0.5f);
      auto d_w = to_device(w);
      std::vector<float> history(static_cast<std::size_t>((K - 1) * C), 0.0f);
      GuardedBuffer d_history = device_zeros(std::max<std::size_t>(history.size(), 1));
      float* hist_ptr = K > 1 ? d_history.as<float>() : nullptr;
      for (const std::int64_t T : cs.calls) {
        const auto in = random_floats(rng, T * C, 1.5f);
        auto d_in = to_device(in);
        GuardedBuffer d_out(T * C * sizeof(float));
        CUDA_VERIFY(k::kda_conv_silu(d_in.as<float>(), T, C, K, d_w.as<float>(), hist_ptr, d_out.as<float>(), nullptr));
        const auto want = reference_conv(in, T, C, K, w, history);
        const auto got = to_host<float>(d_out, T * C);
        VERIFY_REL(got, want, 1e-5, QStringLiteral("conv K=%1 T=%2").arg(K).arg(T));
        // The history is copied input: exactly.
        QVERIFY2(to_host<float>(d_history, history.size()) == history,
                 qPrintable(QStringLiteral("history K=%1 after T=%2").arg(K).arg(T)));
        QVERIFY(d_out.guard_intact());
      }
      QVERIFY(d_history.guard_intact());
      // T == 0 leaves everything as it is.
      CUDA_VERIFY(k::kda_conv_silu(nullptr, 0, C, K, d_w.as<float>(), hist_ptr, nullptr, nullptr));
      QVERIFY(to_host<float>(d_history, history.size()) == history);
    }
  }

  void prepare() {
    std::mt19937 rng(2);
    const std::int64_t T = 5;
    for (const int d : {24, 128}) {
      for (const std::optional<float> lower_bound : {std::optional<float>(-5.0f), std::optional<float>()}) {
        const int heads = 3;
        const std::int64_t D = heads * d;
        auto q = random_floats(rng, T * D, 2.0f), kk = random_floats(rng, T * D, 0.5f);
        auto g = random_floats(rng, T * D, 8.0f);  // past 20 after the bias in places
        auto beta = random_floats(rng, T * heads, 3.0f);
        const auto dt_bias = uniform_floats(rng, D, -6.0f, 12.0f);
        // Mild, strong and clamped (exp(100) -> exp(80)) rates.
        const std::vector<float> A_log{-1.0f, 2.5f, 100.0f};
        auto d_q = to_device(q), d_k = to_device(kk), d_g = to_device(g), d_beta = to_device(beta);
        auto d_dt = to_device(dt_bias), d_alog = to_device(A_log);
        k::KdaGateParams p;
        p.dt_bias = d_dt.as<float>();
        p.A_log = d_alog.as<float>();
        p.has_lower_bound = lower_bound.has_value();
        p.lower_bound = lower_bound.value_or(0.0f);
        p.l2_eps = 1e-6f;
        CUDA_VERIFY(k::kda_prepare(d_q.as<float>(), d_k.as<float>(), d_g.as<float>(), d_beta.as<float>(), T, heads, d,
                                   p, nullptr));
        reference_l2norm(q, T * heads, d, 1e-6f, 1.0f / std::sqrt(static_cast<float>(d)));
        reference_l2norm(kk, T * heads, d, 1e-6f, 1.0f);
        reference_gate(g, T, heads, d, dt_bias, A_log, lower_bound);
        for (auto& b : beta) b = static_cast<float>(sigmoid(b));
        const QString what = QStringLiteral("d=%1 %2").arg(d).arg(lower_bound ? "lower bound" : "softplus");
        VERIFY_REL(to_host<float>(d_q, T * D), q, 1e-6, what + " q");
        VERIFY_REL(to_host<float>(d_k, T * D), kk, 1e-6, what + " k");
        VERIFY_REL(to_host<float>(d_beta, T * heads), beta, 1e-6, what + " beta");
        // Per value: the log decays span 1e-30 .. 1e30 in magnitude.
        const double gate_err = max_rel(to_host<float>(d_g, T * D), g, 1e-30);
        QVERIFY2(gate_err <= 1e-5, qPrintable(what + QStringLiteral(" log decay: %1").arg(gate_err)));
        if (!lower_bound) QVERIFY(std::count(g.begin(), g.end(), -1e30f) > 0);  // the clamp was reached
        QVERIFY(d_q.guard_intact() && d_k.guard_intact() && d_g.guard_intact() && d_beta.guard_intact());
      }
    }
  }

  void recurrent_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("d");
    QTest::addColumn<bool>("strong");
    for (const bool strong : {false, true}) {
      const char* g = strong ? "strong" : "weak";
      QTest::newRow(qPrintable(QStringLiteral("d16_%1").arg(g))) << 3 << 16 << strong;
      QTest::newRow(qPrintable(QStringLiteral("d128_%1").arg(g))) << 3 << 128 << strong;
      // The other register layouts, with a partial block of value columns, and a head size that
      // is not a multiple of 4 (scalar state accesses).
      QTest::newRow(qPrintable(QStringLiteral("d30_%1").arg(g))) << 2 << 30 << strong;
      QTest::newRow(qPrintable(QStringLiteral("d40_%1").arg(g))) << 2 << 40 << strong;
      QTest::newRow(qPrintable(QStringLiteral("d200_%1").arg(g))) << 2 << 200 << strong;
      QTest::newRow(qPrintable(QStringLiteral("d256_%1").arg(g))) << 1 << 256 << strong;
    }
    QTest::newRow("d128_64heads") << 64 << 128 << false;
  }

  // Calls of T = 1, 37, 1, 5 and 37 tokens carry the state from a random start; strong gates
  // have log decays near -5, weak ones near 0.
  void recurrent() {
    QFETCH(int, heads);
    QFETCH(int, d);
    QFETCH(bool, strong);
    std::mt19937 rng(static_cast<std::uint32_t>(3 + d + heads + strong));
    const std::int64_t D = static_cast<std::int64_t>(heads) * d;
    std::vector<float> state = random_floats(rng, static_cast<std::size_t>(heads) * d * d, 0.2f);
    auto d_state = to_device(state);
    for (const std::int64_t T : {1, 37, 1, 5, 37}) {
      auto q = random_floats(rng, T * D), kk = random_floats(rng, T * D), v = random_floats(rng, T * D);
      reference_l2norm(q, T * heads, d, 1e-6f, 1.0f / std::sqrt(static_cast<float>(d)));
      reference_l2norm(kk, T * heads, d, 1e-6f, 1.0f);
      const auto ld = strong ? uniform_floats(rng, T * D, -5.0f, -4.0f) : uniform_floats(rng, T * D, -0.05f, 0.0f);
      auto beta = uniform_floats(rng, T * heads, 0.05f, 0.95f);
      auto d_q = to_device(q), d_k = to_device(kk), d_v = to_device(v), d_ld = to_device(ld), d_beta = to_device(beta);
      GuardedBuffer d_out(T * D * sizeof(float));
      CUDA_VERIFY(k::kda_recurrent(d_q.as<float>(), d_k.as<float>(), d_v.as<float>(), d_ld.as<float>(),
                                   d_beta.as<float>(), T, heads, d, d_state.as<float>(), d_out.as<float>(), nullptr));
      std::vector<float> want;
      reference_recurrent(q, kk, v, ld, beta, T, heads, d, state, want);
      VERIFY_REL(to_host<float>(d_out, T * D), want, 1e-4, QStringLiteral("out T=%1").arg(T));
      VERIFY_REL(to_host<float>(d_state, state.size()), state, 1e-4, QStringLiteral("state after T=%1").arg(T));
      QVERIFY(d_out.guard_intact());
    }
    QVERIFY(d_state.guard_intact());
  }

  void gated_norm() {
    std::mt19937 rng(4);
    const std::int64_t T = 4;
    for (const int d : {24, 128}) {
      const int heads = 3;
      const std::int64_t D = heads * d;
      auto o = random_floats(rng, T * D, 0.3f);
      const auto gate = random_floats(rng, T * D, 2.0f);
      const auto o_norm = uniform_floats(rng, d, 0.5f, 1.5f);
      auto d_o = to_device(o), d_gate = to_device(gate), d_norm = to_device(o_norm);
      CUDA_VERIFY(
          k::kda_gated_norm(d_o.as<float>(), d_gate.as<float>(), d_norm.as<float>(), T, heads, d, 1e-5f, nullptr));
      reference_gated_norm(o, gate, o_norm, T * heads, d, 1e-5f);
      VERIFY_REL(to_host<float>(d_o, T * D), o, 1e-6, QStringLiteral("gated norm d=%1").arg(d));
      QVERIFY(d_o.guard_intact());
    }
  }

  void whole_layer_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("d");
    QTest::addColumn<bool>("bounded");
    QTest::newRow("d16_lower_bound") << 4 << 16 << true;
    QTest::newRow("d16_softplus") << 4 << 16 << false;
    QTest::newRow("d128_lower_bound") << 2 << 128 << true;
  }

  // One KDA layer over 9 tokens in calls of 6 and 3: kda_forward (token by token) against the
  // kernels chained with the projections done on the host: output, recurrent state and conv
  // history.
  void whole_layer() {
    QFETCH(int, heads);
    QFETCH(int, d);
    QFETCH(bool, bounded);
    std::mt19937 rng(static_cast<std::uint32_t>(5 + d + bounded));
    blocks::KdaConfig config;
    config.hidden = 64;
    config.heads = heads;
    config.head_dim = d;
    config.conv_kernel = 4;
    if (bounded) config.lower_bound = -5.0f;
    const std::int64_t H = config.hidden, D = config.qkv_dim(), K = config.conv_kernel;

    // Weights, matrices scaled by 1/sqrt(fan_in).
    const auto mat = [&](std::int64_t rows, std::int64_t cols) {
      return random_floats(rng, rows * cols, 1.0f / std::sqrt(static_cast<float>(cols)));
    };
    const auto q_proj = mat(D, H), k_proj = mat(D, H), v_proj = mat(D, H);
    const auto q_conv = random_floats(rng, D * K, 0.5f), k_conv = random_floats(rng, D * K, 0.5f),
               v_conv = random_floats(rng, D * K, 0.5f);
    const auto f_a = mat(d, H), f_b = mat(D, d), g_a = mat(d, H), g_b = mat(D, d), b_proj = mat(heads, H);
    const auto o_proj = mat(H, D);
    const auto dt_bias = uniform_floats(rng, D, -3.0f, 3.0f);
    const auto A_log = uniform_floats(rng, heads, -0.5f, 1.0f);
    const auto o_norm = uniform_floats(rng, d, 0.5f, 1.5f);
    blocks::KdaLayer layer;
    layer.q_proj = f32_matrix(q_proj, D, H);
    layer.k_proj = f32_matrix(k_proj, D, H);
    layer.v_proj = f32_matrix(v_proj, D, H);
    layer.q_conv = f32_matrix(q_conv, D, K);
    layer.k_conv = f32_matrix(k_conv, D, K);
    layer.v_conv = f32_matrix(v_conv, D, K);
    layer.f_a_proj = f32_matrix(f_a, d, H);
    layer.f_b_proj = f32_matrix(f_b, D, d);
    layer.dt_bias = f32_matrix(dt_bias, 1, D);
    layer.A_log = f32_matrix(A_log, 1, heads);
    layer.b_proj = f32_matrix(b_proj, heads, H);
    layer.g_a_proj = f32_matrix(g_a, d, H);
    layer.g_b_proj = f32_matrix(g_b, D, d);
    layer.o_norm = f32_matrix(o_norm, 1, d);
    layer.o_proj = f32_matrix(o_proj, H, D);

    // The conv weights of all 3D channels: q, then k, then v.
    std::vector<float> conv_w(q_conv);
    conv_w.insert(conv_w.end(), k_conv.begin(), k_conv.end());
    conv_w.insert(conv_w.end(), v_conv.begin(), v_conv.end());
    auto d_conv_w = to_device(conv_w), d_dt = to_device(dt_bias), d_alog = to_device(A_log),
         d_onorm = to_device(o_norm);
    GuardedBuffer d_history = device_zeros((K - 1) * 3 * D);
    GuardedBuffer d_state = device_zeros(static_cast<std::size_t>(heads) * d * d);
    k::KdaGateParams gp;
    gp.dt_bias = d_dt.as<float>();
    gp.A_log = d_alog.as<float>();
    gp.has_lower_bound = bounded;
    gp.lower_bound = config.lower_bound.value_or(0.0f);
    gp.l2_eps = config.l2_eps;

    blocks::KdaState state = blocks::new_kda_state(config);
    for (const std::int64_t T : {6, 3}) {
      const auto x = random_floats(rng, T * H);
      std::vector<float> want(static_cast<std::size_t>(T * H));
      const Status s = blocks::kda_forward(pool_, config, layer, state, x.data(), T, want.data(), nullptr,
                                           blocks::KdaMode::recurrent);
      QVERIFY2(s.is_ok(), s.message().c_str());

      // Host projections: qkv [T, 3D] (q, k, v per row), f_b(f_a(x)), b_proj(x), g_b(g_a(x)).
      std::vector<float> q(T * D), kk(T * D), v(T * D), low(T * d), f(T * D), b(T * heads), gate(T * D);
      cpu::linear(pool_, x.data(), T, layer.q_proj, nullptr, q.data());
      cpu::linear(pool_, x.data(), T, layer.k_proj, nullptr, kk.data());
      cpu::linear(pool_, x.data(), T, layer.v_proj, nullptr, v.data());
      cpu::linear(pool_, x.data(), T, layer.f_a_proj, nullptr, low.data());
      cpu::linear(pool_, low.data(), T, layer.f_b_proj, nullptr, f.data());
      cpu::linear(pool_, x.data(), T, layer.b_proj, nullptr, b.data());
      cpu::linear(pool_, x.data(), T, layer.g_a_proj, nullptr, low.data());
      cpu::linear(pool_, low.data(), T, layer.g_b_proj, nullptr, gate.data());
      std::vector<float> qkv(T * 3 * D);
      for (std::int64_t t = 0; t < T; ++t) {
        std::copy_n(q.begin() + t * D, D, qkv.begin() + t * 3 * D);
        std::copy_n(kk.begin() + t * D, D, qkv.begin() + t * 3 * D + D);
        std::copy_n(v.begin() + t * D, D, qkv.begin() + t * 3 * D + 2 * D);
      }

      auto d_qkv = to_device(qkv), d_f = to_device(f), d_b = to_device(b), d_gate = to_device(gate);
      GuardedBuffer d_conv(T * 3 * D * sizeof(float)), d_q(T * D * sizeof(float)), d_k(T * D * sizeof(float)),
          d_v(T * D * sizeof(float)), d_o(T * D * sizeof(float));
      CUDA_VERIFY(k::kda_conv_silu(d_qkv.as<float>(), T, 3 * D, static_cast<int>(K), d_conv_w.as<float>(),
                                   d_history.as<float>(), d_conv.as<float>(), nullptr));
      // Split the [T, 3D] rows into q, k, v [T, D].
      GuardedBuffer* parts[3] = {&d_q, &d_k, &d_v};
      for (int p = 0; p < 3; ++p)
        CUDA_VERIFY(cudaMemcpy2D(parts[p]->as<void>(), D * sizeof(float), d_conv.as<float>() + p * D,
                                 3 * D * sizeof(float), D * sizeof(float), T, cudaMemcpyDeviceToDevice));
      CUDA_VERIFY(
          k::kda_prepare(d_q.as<float>(), d_k.as<float>(), d_f.as<float>(), d_b.as<float>(), T, heads, d, gp, nullptr));
      CUDA_VERIFY(k::kda_recurrent(d_q.as<float>(), d_k.as<float>(), d_v.as<float>(), d_f.as<float>(), d_b.as<float>(),
                                   T, heads, d, d_state.as<float>(), d_o.as<float>(), nullptr));
      CUDA_VERIFY(k::kda_gated_norm(d_o.as<float>(), d_gate.as<float>(), d_onorm.as<float>(), T, heads, d,
                                    config.norm_eps, nullptr));
      const auto o = to_host<float>(d_o, T * D);
      std::vector<float> got(T * H);
      cpu::linear(pool_, o.data(), T, layer.o_proj, nullptr, got.data());

      VERIFY_REL(got, want, 1e-4, QStringLiteral("layer output, call of %1").arg(T));
      VERIFY_REL(to_host<float>(d_state, state.recurrent.size()), state.recurrent, 1e-4,
                 QStringLiteral("recurrent state, call of %1").arg(T));
      VERIFY_REL(to_host<float>(d_history, state.conv.size()), state.conv, 1e-6,
                 QStringLiteral("conv history, call of %1").arg(T));
      QVERIFY(d_conv.guard_intact() && d_q.guard_intact() && d_k.guard_intact() && d_v.guard_intact() &&
              d_o.guard_intact());
    }
    QVERIFY(d_history.guard_intact() && d_state.guard_intact());
  }

  void refuses_bad_arguments() {
    GuardedBuffer buf(1024 * sizeof(float));  // never touched: nothing launches
    float* p = buf.as<float>();
    k::KdaGateParams gp;
    gp.dt_bias = p;
    gp.A_log = p;
    // conv: negative T, no channels, K out of 1..64, missing buffers, in == out.
    QCOMPARE(k::kda_conv_silu(p, -1, 8, 4, p, p, p + 64, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_conv_silu(p, 1, 0, 4, p, p, p + 64, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_conv_silu(p, 1, 8, 0, p, p, p + 64, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_conv_silu(p, 1, 8, 65, p, p, p + 64, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_conv_silu(p, 1, 8, 4, p, nullptr, p + 64, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_conv_silu(p, 1, 8, 4, p, p, p, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_conv_silu(p, 1, 8, 4, nullptr, p, p + 64, nullptr), cudaErrorInvalidValue);
    // prepare
    QCOMPARE(k::kda_prepare(p, p, p, p, -1, 2, 16, gp, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_prepare(p, p, p, p, 1, 0, 16, gp, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_prepare(p, p, p, p, 1, 2, 0, gp, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_prepare(p, nullptr, p, p, 1, 2, 16, gp, nullptr), cudaErrorInvalidValue);
    k::KdaGateParams no_bias = gp;
    no_bias.dt_bias = nullptr;
    QCOMPARE(k::kda_prepare(p, p, p, p, 1, 2, 16, no_bias, nullptr), cudaErrorInvalidValue);
    // recurrent: head_dim past 256, missing state.
    QCOMPARE(k::kda_recurrent(p, p, p, p, p, -1, 2, 16, p, p, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_recurrent(p, p, p, p, p, 1, 2, 257, p, p, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_recurrent(p, p, p, p, p, 1, 0, 16, p, p, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_recurrent(p, p, p, p, p, 1, 2, 16, nullptr, p, nullptr), cudaErrorInvalidValue);
    // gated norm
    QCOMPARE(k::kda_gated_norm(p, p, p, -1, 2, 16, 1e-5f, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_gated_norm(p, p, nullptr, 1, 2, 16, 1e-5f, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::kda_gated_norm(p, p, p, 1, 2, 0, 1e-5f, nullptr), cudaErrorInvalidValue);
    // T == 0: nothing to do, no buffers needed.
    QCOMPARE(k::kda_conv_silu(nullptr, 0, 8, 4, nullptr, nullptr, nullptr, nullptr), cudaSuccess);
    QCOMPARE(k::kda_prepare(nullptr, nullptr, nullptr, nullptr, 0, 2, 16, k::KdaGateParams{}, nullptr), cudaSuccess);
    QCOMPARE(k::kda_recurrent(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 2, 16, nullptr, nullptr, nullptr),
             cudaSuccess);
    QCOMPARE(k::kda_gated_norm(nullptr, nullptr, nullptr, 0, 2, 16, 1e-5f, nullptr), cudaSuccess);
    CUDA_VERIFY(cudaGetLastError());
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu()) return skip;
  TestCudaKda test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_kda.moc"
