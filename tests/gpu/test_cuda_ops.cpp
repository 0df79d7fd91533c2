// The dense CUDA ops against the CPU backend (engine/backend/cpu) or a float64 reference, on
// random inputs, with per-op thresholds (VERIFY.md) and guard regions behind every output.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "attention.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cuda/cublaslt_gemm.h"
#include "blocks/rope.h"
#include "core/thread_pool.h"
#include "elementwise.h"
#include "gemv_bf16.h"
#include "gpu/gpu_test_util.h"
#include "rms_norm.h"
#include "rope.h"
#include "sampling.h"

using namespace day0;
using namespace day0::gpu_test;
namespace k = day0::kernels;

namespace {

// Attention with a sink for one query, in float64: softmax over q.k * scale for keys lo..pos
// and the sink logit; out = sum p_j v_j.
std::vector<double> reference_attention(const float* q, const std::vector<float>& keys,
                                        const std::vector<float>& values, int kv_heads, int kvh, int d,
                                        std::int64_t pos, std::int64_t window, float scale, float sink) {
  const std::int64_t lo = window > 0 ? std::max<std::int64_t>(0, pos - window + 1) : 0;
  std::vector<double> s;
  double m = sink;
  for (std::int64_t j = lo; j <= pos; ++j) {
    double dot = 0;
    for (int c = 0; c < d; ++c) dot += static_cast<double>(q[c]) * keys[(j * kv_heads + kvh) * d + c];
    s.push_back(dot * scale);
    m = std::max(m, s.back());
  }
  double z = std::exp(sink - m);
  for (auto& x : s) z += (x = std::exp(x - m));
  std::vector<double> out(static_cast<std::size_t>(d), 0.0);
  for (std::int64_t j = lo; j <= pos; ++j)
    for (int c = 0; c < d; ++c) out[c] += s[j - lo] / z * values[(j * kv_heads + kvh) * d + c];
  return out;
}

}  // namespace

class TestCudaOps : public QObject {
  Q_OBJECT
 private slots:
  void embedding() {
    std::mt19937 rng(1);
    // Rows of whole 16-byte words (one round of loads; past 8,192 values more than one), and a
    // width that is not (the scalar path).
    for (const std::int64_t hidden : {136, 2880, 8200, 30}) {
      const std::int64_t vocab = 97, T = 33;
      const auto table = to_bf16(random_floats(rng, vocab * hidden));
      std::vector<std::int32_t> ids(T);
      for (auto& id : ids) id = static_cast<std::int32_t>(rng() % vocab);
      auto d_table = to_device(table);
      auto d_ids = to_device(ids);
      GuardedBuffer out(T * hidden * 4);
      CUDA_VERIFY(k::embedding_lookup(d_table.as<std::uint16_t>(), hidden, d_ids.as<std::int32_t>(), T, out.as<float>(),
                                      nullptr));
      const auto got = to_host<float>(out, T * hidden);
      std::vector<float> row(hidden);
      for (std::int64_t t = 0; t < T; ++t) {
        cpu::decode_row(bf16_matrix(table, vocab, hidden), ids[t], row.data());
        QVERIFY(std::equal(row.begin(), row.end(), got.begin() + t * hidden));
      }
      QVERIFY(out.guard_intact());
    }
  }

  void rms_norm() {
    std::mt19937 rng(2);
    for (const std::int64_t D : {64, 96, 2880, 3001}) {
      const std::int64_t T = 7;
      auto x = random_floats(rng, T * D, 3.0f);
      auto weight = to_bf16(random_floats(rng, D, 1.0f));
      auto dx = to_device(x);
      auto dw = to_device(weight);
      GuardedBuffer ob(T * D * 2), of(T * D * 4);
      CUDA_VERIFY(k::rms_norm(dx.as<float>(), T, D, dw.as<std::uint16_t>(), 1e-5f, ob.as<std::uint16_t>(),
                              of.as<float>(), nullptr));
      std::vector<float> want(T * D);
      cpu::rms_norm(x.data(), T, D, bf16_matrix(weight, 1, D), 1e-5f, want.data());
      const auto got_f = to_host<float>(of, T * D);
      const auto got_b = from_bf16(to_host<std::uint16_t>(ob, T * D));
      QVERIFY2(rel_l2(got_f, want) < 1e-6, qPrintable(QString::number(rel_l2(got_f, want))));
      QVERIFY2(rel_l2(got_b, want) < 5e-3, qPrintable(QString::number(rel_l2(got_b, want))));
      QVERIFY(ob.guard_intact() && of.guard_intact());
    }
  }

  void rope_qkv() {
    std::mt19937 rng(3);
    const int heads = 6, kv_heads = 2, d = 24;
    const std::int64_t T = 19, pos0 = 4090, capacity = 4200;
    blocks::Rope rope;
    for (int i = 0; i < d / 2; ++i)
      rope.inv_freq.push_back(std::pow(20000.0f, -2.0f * i / d) * (i < 3 ? 0.125f : 1.0f));
    rope.attention_factor = 1.2079f;
    const int qkv_dim = (heads + 2 * kv_heads) * d;
    auto qkv = random_floats(rng, T * qkv_dim);
    auto d_qkv = to_device(qkv);
    auto d_freq = to_device(rope.inv_freq);
    std::vector<std::int32_t> pos{static_cast<std::int32_t>(pos0)};
    auto d_pos = to_device(pos);
    GuardedBuffer q(T * heads * d * 2), kc(capacity * kv_heads * d * 2), vc(capacity * kv_heads * d * 2);
    k::RopeQkvArgs a;
    a.qkv = d_qkv.as<float>();
    a.T = T;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.head_dim = d;
    a.inv_freq = d_freq.as<float>();
    a.attention_factor = rope.attention_factor;
    a.position = d_pos.as<std::int32_t>();
    a.q_out = q.as<std::uint16_t>();
    a.k_cache = kc.as<std::uint16_t>();
    a.v_cache = vc.as<std::uint16_t>();
    CUDA_VERIFY(k::rope_qkv(a, nullptr));
    std::vector<float> cos(T * d / 2), sin(cos.size());
    rope.tables(pos0, T, cos.data(), sin.data());
    std::vector<float> wq(T * heads * d), wk(T * kv_heads * d), wv(wk.size());
    for (std::int64_t t = 0; t < T; ++t) {
      std::copy_n(qkv.begin() + t * qkv_dim, heads * d, wq.begin() + t * heads * d);
      std::copy_n(qkv.begin() + t * qkv_dim + heads * d, kv_heads * d, wk.begin() + t * kv_heads * d);
      std::copy_n(qkv.begin() + t * qkv_dim + (heads + kv_heads) * d, kv_heads * d, wv.begin() + t * kv_heads * d);
    }
    cpu::rope_halves(wq.data(), T, heads, d, cos.data(), sin.data());
    cpu::rope_halves(wk.data(), T, kv_heads, d, cos.data(), sin.data());
    const auto gq = from_bf16(to_host<std::uint16_t>(q, T * heads * d));
    const auto all_k = from_bf16(to_host<std::uint16_t>(kc, capacity * kv_heads * d));
    const auto all_v = from_bf16(to_host<std::uint16_t>(vc, capacity * kv_heads * d));
    const std::vector<float> gk(all_k.begin() + pos0 * kv_heads * d, all_k.begin() + (pos0 + T) * kv_heads * d);
    const std::vector<float> gv(all_v.begin() + pos0 * kv_heads * d, all_v.begin() + (pos0 + T) * kv_heads * d);
    QVERIFY2(rel_l2(gq, wq) < 5e-3, qPrintable(QString::number(rel_l2(gq, wq))));
    QVERIFY2(rel_l2(gk, wk) < 5e-3, qPrintable(QString::number(rel_l2(gk, wk))));
    QVERIFY2(rel_l2(gv, wv) < 5e-3, qPrintable(QString::number(rel_l2(gv, wv))));
    // Rows outside pos0 .. pos0 + T stay untouched.
    const auto raw_k = to_host<std::uint16_t>(kc, capacity * kv_heads * d);
    QCOMPARE(raw_k[0], static_cast<std::uint16_t>(0xCDCD));
    QCOMPARE(raw_k[(pos0 + T) * kv_heads * d], static_cast<std::uint16_t>(0xCDCD));
    QVERIFY(q.guard_intact() && kc.guard_intact() && vc.guard_intact());
  }

  // The decode q/k/v projection with RMSNorm and RoPE fused, against the CPU norm, linear and
  // rope_halves, and bit for bit against the unfused GPU path (normed GEMV, then rope_qkv).
  void qkv_rope_fused() {
    std::mt19937 rng(31);
    ThreadPool pool(2);
    for (const auto& [heads, kv_heads, d, K] :
         {std::tuple<int, int, int, int>{64, 8, 64, 2880}, {6, 2, 24, 64}, {4, 4, 16, 40}}) {
      const std::int64_t T = 2, pos0 = 4090, capacity = 4200;
      blocks::Rope rope;
      for (int i = 0; i < d / 2; ++i) rope.inv_freq.push_back(std::pow(150000.0f, -2.0f * i / d));
      rope.attention_factor = 1.3466f;
      const int N = (heads + 2 * kv_heads) * d;
      const auto w = to_bf16(random_floats(rng, static_cast<std::size_t>(N) * K, 1.0f / std::sqrt(float(K))));
      const auto bias = random_floats(rng, N, 0.1f);
      const auto x = random_floats(rng, T * K, 2.0f);
      const auto norm = to_bf16(random_floats(rng, K, 1.0f));
      std::vector<float> normed(T * K), qkv(T * N);
      cpu::rms_norm(x.data(), T, K, bf16_matrix(norm, 1, K), 1e-5f, normed.data());
      cpu::linear(pool, normed.data(), T, bf16_matrix(w, N, K), nullptr, qkv.data());
      for (std::int64_t i = 0; i < T * N; ++i) qkv[i] += bias[i % N];
      std::vector<float> cos(T * d / 2), sin(cos.size());
      rope.tables(pos0, T, cos.data(), sin.data());
      std::vector<float> wq(T * heads * d), wk(T * kv_heads * d), wv(wk.size());
      for (std::int64_t t = 0; t < T; ++t) {
        std::copy_n(qkv.begin() + t * N, heads * d, wq.begin() + t * heads * d);
        std::copy_n(qkv.begin() + t * N + heads * d, kv_heads * d, wk.begin() + t * kv_heads * d);
        std::copy_n(qkv.begin() + t * N + (heads + kv_heads) * d, kv_heads * d, wv.begin() + t * kv_heads * d);
      }
      cpu::rope_halves(wq.data(), T, heads, d, cos.data(), sin.data());
      cpu::rope_halves(wk.data(), T, kv_heads, d, cos.data(), sin.data());

      auto dw = to_device(w);
      auto db = to_device(bias);
      auto dx = to_device(x);
      auto dn = to_device(norm);
      auto d_freq = to_device(rope.inv_freq);
      std::vector<std::int32_t> pos{static_cast<std::int32_t>(pos0)};
      auto d_pos = to_device(pos);
      const std::size_t cache = static_cast<std::size_t>(capacity) * kv_heads * d * 2;
      GuardedBuffer q(T * heads * d * 2), kc(cache), vc(cache), q2(T * heads * d * 2), kc2(cache), vc2(cache);
      GuardedBuffer dqkv(T * N * 4);
      k::RopeQkvArgs a;
      a.T = T;
      a.heads = heads;
      a.kv_heads = kv_heads;
      a.head_dim = d;
      a.inv_freq = d_freq.as<float>();
      a.attention_factor = rope.attention_factor;
      a.position = d_pos.as<std::int32_t>();
      a.q_out = q.as<std::uint16_t>();
      a.k_cache = kc.as<std::uint16_t>();
      a.v_cache = vc.as<std::uint16_t>();
      CUDA_VERIFY(k::gemv_bf16_qkv_rope(dw.as<std::uint16_t>(), db.as<float>(), dx.as<float>(), dn.as<std::uint16_t>(),
                                        1e-5f, K, a, nullptr));
      const auto gq = from_bf16(to_host<std::uint16_t>(q, T * heads * d));
      const auto all_k = from_bf16(to_host<std::uint16_t>(kc, cache / 2));
      const auto all_v = from_bf16(to_host<std::uint16_t>(vc, cache / 2));
      const std::vector<float> gk(all_k.begin() + pos0 * kv_heads * d, all_k.begin() + (pos0 + T) * kv_heads * d);
      const std::vector<float> gv(all_v.begin() + pos0 * kv_heads * d, all_v.begin() + (pos0 + T) * kv_heads * d);
      QVERIFY2(rel_l2(gq, wq) < 5e-3, qPrintable(QString::number(rel_l2(gq, wq))));
      QVERIFY2(rel_l2(gk, wk) < 5e-3, qPrintable(QString::number(rel_l2(gk, wk))));
      QVERIFY2(rel_l2(gv, wv) < 5e-3, qPrintable(QString::number(rel_l2(gv, wv))));
      QCOMPARE(to_host<std::uint16_t>(kc, cache / 2)[0], static_cast<std::uint16_t>(0xCDCD));
      QVERIFY(q.guard_intact() && kc.guard_intact() && vc.guard_intact());

      a.qkv = dqkv.as<float>();
      a.q_out = q2.as<std::uint16_t>();
      a.k_cache = kc2.as<std::uint16_t>();
      a.v_cache = vc2.as<std::uint16_t>();
      CUDA_VERIFY(k::gemv_bf16_rms_normed(dw.as<std::uint16_t>(), db.as<float>(), dx.as<float>(),
                                          dn.as<std::uint16_t>(), 1e-5f, T, N, K, dqkv.as<float>(), nullptr));
      CUDA_VERIFY(k::rope_qkv(a, nullptr));
      // The same fp32 values rounded once to bf16 (one unit of difference allowed where the
      // compiler contracts the rotation into fused multiply-adds differently).
      const auto close = [](const std::vector<std::uint16_t>& u, const std::vector<std::uint16_t>& v) {
        for (std::size_t i = 0; i < u.size(); ++i)
          if (std::abs(int{u[i]} - int{v[i]}) > 1) return false;
        return u.size() == v.size();
      };
      QVERIFY(close(to_host<std::uint16_t>(q, T * heads * d), to_host<std::uint16_t>(q2, T * heads * d)));
      QVERIFY(close(to_host<std::uint16_t>(kc, cache / 2), to_host<std::uint16_t>(kc2, cache / 2)));
      QVERIFY(close(to_host<std::uint16_t>(vc, cache / 2), to_host<std::uint16_t>(vc2, cache / 2)));
    }
  }

  void attention_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::addColumn<int>("d");
    QTest::addColumn<qint64>("pos0");
    QTest::addColumn<qint64>("T");
    QTest::addColumn<qint64>("window");
    QTest::newRow("gqa 3:1, d 24, window 5") << 6 << 2 << 24 << qint64(0) << qint64(40) << qint64(5);
    QTest::newRow("mqa, d 32, full") << 3 << 1 << 32 << qint64(0) << qint64(37) << qint64(0);
    QTest::newRow("gqa 2:1, d 24 (pair loads), window 5") << 4 << 2 << 24 << qint64(0) << qint64(40) << qint64(5);
    QTest::newRow("gpt-oss heads, d 64, window 128, cached prefix")
        << 64 << 8 << 64 << qint64(300) << qint64(77) << qint64(128);
    QTest::newRow("d 128, full, cached prefix") << 8 << 2 << 128 << qint64(1000) << qint64(50) << qint64(0);
    QTest::newRow("d 16, one query") << 4 << 2 << 16 << qint64(9) << qint64(1) << qint64(8);
    QTest::newRow("d 64, 2048 queries, window 128") << 8 << 1 << 64 << qint64(0) << qint64(2048) << qint64(128);
    QTest::newRow("d 64, 300 queries after 1000, full") << 4 << 2 << 64 << qint64(1000) << qint64(300) << qint64(0);
  }
  void attention() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    QFETCH(int, d);
    QFETCH(qint64, pos0);
    QFETCH(qint64, T);
    QFETCH(qint64, window);
    std::mt19937 rng(4 + heads + d);
    const std::int64_t len = pos0 + T;
    const auto keys = from_bf16(to_bf16(random_floats(rng, len * kv_heads * d)));
    const auto values = from_bf16(to_bf16(random_floats(rng, len * kv_heads * d)));
    const auto q = from_bf16(to_bf16(random_floats(rng, T * heads * d)));
    const auto sinks = random_floats(rng, heads);
    auto dk = to_device(to_bf16(keys));
    auto dv = to_device(to_bf16(values));
    auto dq = to_device(to_bf16(q));
    auto ds = to_device(sinks);
    k::AttentionArgs a;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.head_dim = d;
    a.window = window;
    a.scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.sinks = ds.as<float>();
    a.k_cache = dk.as<std::uint16_t>();
    a.v_cache = dv.as<std::uint16_t>();
    GuardedBuffer out(T * heads * d * 2);
    CUDA_VERIFY(k::attention_prefill(a, dq.as<std::uint16_t>(), T, pos0, out.as<std::uint16_t>(), nullptr));
    const auto got = from_bf16(to_host<std::uint16_t>(out, T * heads * d));
    std::vector<float> want(got.size());
    for (std::int64_t t = 0; t < T; ++t)
      for (int h = 0; h < heads; ++h) {
        const auto r = reference_attention(q.data() + (t * heads + h) * d, keys, values, kv_heads,
                                           h / (heads / kv_heads), d, pos0 + t, window, a.scale, sinks[h]);
        for (int c = 0; c < d; ++c) want[(t * heads + h) * d + c] = static_cast<float>(r[c]);
      }
    QVERIFY2(rel_l2(got, want) < 1e-2, qPrintable(QString("prefill %1").arg(rel_l2(got, want))));
    QVERIFY(out.guard_intact());
    // The CUDA-core kernel (other head widths) on the same inputs.
    GuardedBuffer simple(T * heads * d * 2);
    CUDA_VERIFY(k::attention_prefill(a, dq.as<std::uint16_t>(), T, pos0, simple.as<std::uint16_t>(), nullptr, true));
    const auto got_simple = from_bf16(to_host<std::uint16_t>(simple, T * heads * d));
    QVERIFY2(rel_l2(got_simple, want) < 1e-2, qPrintable(QString("simple prefill %1").arg(rel_l2(got_simple, want))));
    QVERIFY(simple.guard_intact());

    // Decode of the last query, split over the keys.
    for (const int splits : {1, 7, 32}) {
      std::vector<std::int32_t> length{static_cast<std::int32_t>(len)};
      auto dlen = to_device(length);
      GuardedBuffer partial(k::attention_decode_partial_floats(heads, d, splits) * 4), dec(heads * d * 4);
      CUDA_VERIFY(k::attention_decode(a, dq.as<std::uint16_t>() + (T - 1) * heads * d, dlen.as<std::int32_t>(), splits,
                                      partial.as<float>(), dec.as<float>(), nullptr));
      const auto got_d = to_host<float>(dec, heads * d);
      const std::vector<float> want_d(want.end() - heads * d, want.end());
      QVERIFY2(rel_l2(got_d, want_d) < 1e-2, qPrintable(QString("decode %1").arg(rel_l2(got_d, want_d))));
      QVERIFY(dec.guard_intact() && partial.guard_intact());
    }
  }

  // fp32 activations split into two bf16 parts (hi + lo) and multiplied on the tensor cores in
  // two accumulated GEMMs: near-fp32 products, where one bf16 rounding of x alone is ~1e-3 off.
  void split_bf16_gemm() {
    std::mt19937 rng(9);
    ThreadPool pool(2);
    cuda::MemoryLedger ledger;
    auto gemm = cuda::LtGemm::create(&ledger);
    QVERIFY(gemm.is_ok());
    const std::int64_t T = 37, N = 96, K = 256;
    const auto w = to_bf16(random_floats(rng, N * K, 1.0f / std::sqrt(static_cast<float>(K))));
    const auto x = random_floats(rng, T * K, 2.0f);  // not bf16-representable
    std::vector<float> want(T * N);
    cpu::linear(pool, x.data(), T, bf16_matrix(w, N, K), nullptr, want.data());
    auto dw = to_device(w);
    auto dx = to_device(x);
    GuardedBuffer hi(T * K * 2), lo(T * K * 2), y(T * N * 4);
    CUDA_VERIFY(k::split_bf16(dx.as<float>(), T * K, hi.as<std::uint16_t>(), lo.as<std::uint16_t>(), nullptr));
    const auto h = from_bf16(to_host<std::uint16_t>(hi, T * K)), l = from_bf16(to_host<std::uint16_t>(lo, T * K));
    for (std::int64_t i = 0; i < T * K; ++i) {
      QCOMPARE(to_bf16({x[i]})[0], to_bf16({h[i]})[0]);  // hi is x rounded to bf16
      QVERIFY(std::abs(h[i] + l[i] - x[i]) <= std::abs(x[i]) * 1e-5f);
    }
    QVERIFY((*gemm)
                ->linear(dw.as<std::uint16_t>(), hi.as<std::uint16_t>(), y.as<float>(), T, N, K, false, nullptr)
                .is_ok());
    const double hi_only = rel_l2(to_host<float>(y, T * N), want);
    QVERIFY(
        (*gemm)->linear(dw.as<std::uint16_t>(), lo.as<std::uint16_t>(), y.as<float>(), T, N, K, true, nullptr).is_ok());
    const double both = rel_l2(to_host<float>(y, T * N), want);
    qInfo("bf16 activations: %.2e; split in two: %.2e", hi_only, both);
    QVERIFY2(both < 2e-5 && both < hi_only / 20, "the split GEMM is not near fp32");
    QVERIFY(hi.guard_intact() && lo.guard_intact() && y.guard_intact());
  }

  void gemv_and_cublaslt() {
    std::mt19937 rng(5);
    ThreadPool pool(2);
    cuda::MemoryLedger ledger;
    auto gemm = cuda::LtGemm::create(&ledger);
    QVERIFY2(gemm.is_ok(), qPrintable(QString::fromStdString(gemm.status().message())));
    // 40,011 rows: more than the capped grid covers in one pass (odd: a lone last row). K 12,288:
    // the staged input row is exactly 48 KiB, which with the kernel's static shared memory needs
    // the opt-in (GLM-5.3-Flash's dense MLP down projection); K 16,384 is past it.
    for (const auto& [N, K] : {std::pair<std::int64_t, std::int64_t>{5120, 2880},
                               {144, 96},
                               {33, 64},
                               {2880, 4096},
                               {40011, 64},
                               {64, 12288},
                               {40, 16384}}) {
      const std::int64_t T = 3;
      const auto w = to_bf16(random_floats(rng, N * K, 1.0f / std::sqrt(static_cast<float>(K))));
      const auto bias = random_floats(rng, N);
      const auto x = from_bf16(to_bf16(random_floats(rng, T * K)));
      const auto y0 = random_floats(rng, T * N);
      std::vector<float> want(T * N);
      cpu::linear(pool, x.data(), T, bf16_matrix(w, N, K), nullptr, want.data());
      auto dw = to_device(w);
      auto db = to_device(bias);
      auto dx = to_device(x);
      auto dxb = to_device(to_bf16(x));
      GuardedBuffer y(T * N * 4);
      // gemv: plain, with bias, accumulating.
      CUDA_VERIFY(
          k::gemv_bf16(dw.as<std::uint16_t>(), nullptr, dx.as<float>(), T, N, K, false, y.as<float>(), nullptr));
      QVERIFY2(rel_l2(to_host<float>(y, T * N), want) < 1e-5, "gemv");
      CUDA_VERIFY(cudaMemcpy(y.as<float>(), y0.data(), T * N * 4, cudaMemcpyHostToDevice));
      CUDA_VERIFY(
          k::gemv_bf16(dw.as<std::uint16_t>(), db.as<float>(), dx.as<float>(), T, N, K, true, y.as<float>(), nullptr));
      std::vector<float> want_acc(want);
      for (std::int64_t i = 0; i < T * N; ++i) want_acc[i] += y0[i] + bias[i % N];
      QVERIFY2(rel_l2(to_host<float>(y, T * N), want_acc) < 1e-5, "gemv accumulate");
      QVERIFY(y.guard_intact());
      // gemv with the RMSNorm of an fp32 residual row fused in, against norm then linear.
      {
        const auto residual = random_floats(rng, T * K, 3.0f);
        const auto norm = to_bf16(random_floats(rng, K, 1.0f));
        std::vector<float> normed(T * K), want_n(T * N);
        cpu::rms_norm(residual.data(), T, K, bf16_matrix(norm, 1, K), 1e-5f, normed.data());
        cpu::linear(pool, normed.data(), T, bf16_matrix(w, N, K), nullptr, want_n.data());
        for (std::int64_t i = 0; i < T * N; ++i) want_n[i] += bias[i % N];
        auto dr = to_device(residual);
        auto dn = to_device(norm);
        GuardedBuffer yn(T * N * 4);
        CUDA_VERIFY(k::gemv_bf16_rms_normed(dw.as<std::uint16_t>(), db.as<float>(), dr.as<float>(),
                                            dn.as<std::uint16_t>(), 1e-5f, T, N, K, yn.as<float>(), nullptr));
        QVERIFY2(rel_l2(to_host<float>(yn, T * N), want_n) < 1e-5, "normed gemv");
        QVERIFY(yn.guard_intact());
      }
      // cuBLASLt: overwrite, then accumulate, then the bias kernel.
      QVERIFY((*gemm)
                  ->linear(dw.as<std::uint16_t>(), dxb.as<std::uint16_t>(), y.as<float>(), T, N, K, false, nullptr)
                  .is_ok());
      QVERIFY2(rel_l2(to_host<float>(y, T * N), want) < 1e-5, qPrintable(QString("cublaslt %1x%2").arg(N).arg(K)));
      CUDA_VERIFY(cudaMemcpy(y.as<float>(), y0.data(), T * N * 4, cudaMemcpyHostToDevice));
      QVERIFY((*gemm)
                  ->linear(dw.as<std::uint16_t>(), dxb.as<std::uint16_t>(), y.as<float>(), T, N, K, true, nullptr)
                  .is_ok());
      CUDA_VERIFY(k::add_bias_rows(y.as<float>(), db.as<float>(), T, N, nullptr));
      QVERIFY2(rel_l2(to_host<float>(y, T * N), want_acc) < 1e-5, "cublaslt accumulate + bias");
      QVERIFY(y.guard_intact());
    }
    QVERIFY(ledger.bytes(cuda::MemoryCategory::activations) > 0);
  }

  void sampling() {
    std::mt19937 rng(6);
    // The many-CTA arg max: its scratch and counter reused across calls (the counter must come
    // back to zero); 3,000,017 logits take more than one round of its largest grid.
    GuardedBuffer values(k::kArgmaxMaxCtas * 4), indices(k::kArgmaxMaxCtas * 4), done(4);
    CUDA_VERIFY(cudaMemset(done.as<void>(), 0, 4));
    k::ArgmaxScratch scratch;
    scratch.values = values.as<float>();
    scratch.indices = indices.as<std::int32_t>();
    scratch.done = done.as<unsigned>();
    for (const std::int64_t n : {1, 5, 1000, 2049, 201088, 3000017}) {
      auto logits = random_floats(rng, n);
      const std::int64_t hot = static_cast<std::int64_t>(rng() % n);
      logits[hot] = 50.0f;
      if (n > 10) logits[n - 1] = 50.0f;              // a tie: the lower index wins
      if (n > 10) logits[rng() % n] = std::nanf("");  // NaN never wins
      auto d = to_device(logits);
      std::int64_t want = -1;
      for (std::int64_t i = 0; i < n; ++i)
        if (!std::isnan(logits[i]) && (want < 0 || logits[i] > logits[want])) want = i;
      GuardedBuffer out(4), wide(4);
      CUDA_VERIFY(k::argmax(d.as<float>(), n, out.as<std::int32_t>(), nullptr));
      QCOMPARE(static_cast<std::int64_t>(to_host<std::int32_t>(out, 1)[0]), want);
      for (int call = 0; call < 2; ++call) {
        CUDA_VERIFY(cudaMemset(wide.as<void>(), 0xFF, 4));
        CUDA_VERIFY(k::argmax_wide(d.as<float>(), n, scratch, wide.as<std::int32_t>(), nullptr));
        QCOMPARE(static_cast<std::int64_t>(to_host<std::int32_t>(wide, 1)[0]), want);
      }
      QCOMPARE(to_host<std::uint32_t>(done, 1)[0], 0u);
      QVERIFY(out.guard_intact() && wide.guard_intact());
    }
    QVERIFY(values.guard_intact() && indices.guard_intact() && done.guard_intact());
    QCOMPARE(k::argmax_wide(nullptr, 10, scratch, nullptr, nullptr), cudaErrorInvalidValue);
    {
      // The decode step's end: the pick also in the mapped host slot positions[0] & 1, the
      // positions advanced by one, the other host slot untouched; over three steps.
      auto logits = random_floats(rng, 201088);
      logits[777] = 60.0f;
      auto d = to_device(logits);
      std::int32_t* host = nullptr;
      std::int32_t* host_dev = nullptr;
      CUDA_VERIFY(cudaHostAlloc(reinterpret_cast<void**>(&host), 8, cudaHostAllocMapped));
      CUDA_VERIFY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_dev), host, 0));
      GuardedBuffer positions(8), wide(4);
      const std::vector<std::int32_t> start{41, 42};
      CUDA_VERIFY(cudaMemcpy(positions.as<void>(), start.data(), 8, cudaMemcpyHostToDevice));
      k::StepEnd step_end;
      step_end.host_picks = host_dev;
      step_end.positions = positions.as<std::int32_t>();
      for (std::int32_t p = 41; p < 44; ++p) {
        host[0] = host[1] = -7;
        CUDA_VERIFY(k::argmax_wide(d.as<float>(), 201088, scratch, wide.as<std::int32_t>(), nullptr, step_end));
        CUDA_VERIFY(cudaDeviceSynchronize());
        QCOMPARE(host[p & 1], 777);
        QCOMPARE(host[(p + 1) & 1], -7);
        QCOMPARE(to_host<std::int32_t>(wide, 1)[0], 777);
        QCOMPARE(to_host<std::int32_t>(positions, 2), (std::vector<std::int32_t>{p + 1, p + 2}));
      }
      QVERIFY(positions.guard_intact() && wide.guard_intact());
      k::StepEnd no_positions;
      no_positions.host_picks = host_dev;
      QCOMPARE(k::argmax_wide(d.as<float>(), 10, scratch, wide.as<std::int32_t>(), nullptr, no_positions),
               cudaErrorInvalidValue);
      CUDA_VERIFY(cudaFreeHost(host));
    }
    // Temperature draws follow softmax(logits / T): 4 tokens, 4000 draws, each frequency within
    // 5 standard deviations of its probability.
    const std::vector<float> logits{1.0f, 0.0f, -1.0f, 2.0f};
    const float temperature = 0.7f;
    auto d = to_device(logits);
    GuardedBuffer step(4), out(4);
    CUDA_VERIFY(cudaMemset(step.as<void>(), 0, 4));
    std::vector<int> counts(4, 0);
    const int draws = 4000;
    for (int i = 0; i < draws; ++i) {
      CUDA_VERIFY(k::sample_temperature(d.as<float>(), 4, temperature, 1234, step.as<std::int32_t>(),
                                        out.as<std::int32_t>(), nullptr));
      const int t = to_host<std::int32_t>(out, 1)[0];
      QVERIFY(t >= 0 && t < 4);
      ++counts[t];
    }
    double z = 0;
    for (float l : logits) z += std::exp(l / temperature);
    for (int t = 0; t < 4; ++t) {
      const double p = std::exp(logits[t] / temperature) / z;
      const double sd = std::sqrt(p * (1 - p) / draws);
      QVERIFY2(std::abs(counts[t] / static_cast<double>(draws) - p) < 5 * sd + 1e-9,
               qPrintable(QString("token %1: %2 vs %3").arg(t).arg(counts[t] / double(draws)).arg(p)));
    }
    QCOMPARE(to_host<std::int32_t>(step, 1)[0], draws);
  }

  void refuses_bad_arguments() {
    k::AttentionArgs a;
    QCOMPARE(k::attention_prefill(a, nullptr, 1, 0, nullptr, nullptr), cudaErrorInvalidValue);
    a.heads = 4;
    a.kv_heads = 3;  // not a divisor
    QCOMPARE(k::attention_prefill(a, nullptr, 1, 0, nullptr, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::gemv_bf16(nullptr, nullptr, nullptr, 1, 8, 12, false, nullptr, nullptr), cudaErrorInvalidValue);
    QCOMPARE(k::gemv_bf16_rms_normed(nullptr, nullptr, nullptr, nullptr, 1e-5f, 1, 8, 16, nullptr, nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(k::rms_norm(nullptr, 1, 8, nullptr, 1e-5f, nullptr, nullptr, nullptr), cudaErrorInvalidValue);
    CUDA_VERIFY(cudaGetLastError());
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu()) return skip;
  TestCudaOps test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_ops.moc"
