// KDA numerics: the chunked and the token-by-token forms agree with each other and with an fp64
// implementation written from the math, over prompts of several chunks, split or not, with mild
// gates and with the strongest gates either gate form allows, and stay finite at the extremes.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <numeric>

#include "engine/blocks/kda_fixture.h"

using namespace day0;
using namespace day0::blocks;
using day0::test::KdaFixture;
using day0::test::KdaGates;
using day0::test::KdaShape;
using day0::test::rel_l2;

Q_DECLARE_METATYPE(day0::test::KdaGates)
Q_DECLARE_METATYPE(std::optional<float>)

namespace {

constexpr double kTolerance = 1e-5;

struct Run {
  std::vector<float> out;
  KdaState state;
};

// Runs the layer over x from a fresh state, in calls of the given sizes (one call when empty).
Run run(ThreadPool& pool, const KdaFixture& f, const std::vector<float>& x, std::int64_t T, KdaMode mode,
        std::vector<std::int64_t> calls = {}, const KdaConfig* config = nullptr) {
  const KdaConfig& c = config != nullptr ? *config : f.config;
  if (calls.empty()) calls = {T};
  Run r{std::vector<float>(static_cast<std::size_t>(T * c.hidden)), new_kda_state(c)};
  std::int64_t t0 = 0;
  for (const std::int64_t n : calls) {
    const Status s = kda_forward(pool, c, f.layer, r.state, x.data() + t0 * c.hidden, n, r.out.data() + t0 * c.hidden,
                                 nullptr, mode);
    if (!s.is_ok()) qFatal("kda_forward: %s", s.message().c_str());
    t0 += n;
  }
  if (t0 != T) qFatal("calls cover %lld tokens, not %lld", static_cast<long long>(t0), static_cast<long long>(T));
  return r;
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

void add_gate_rows() {
  QTest::addColumn<KdaGates>("gates");
  QTest::addColumn<std::optional<float>>("lower_bound");
  // Lower-bound form: log a = -5 sigmoid(exp(A_log) g).
  QTest::newRow("bound_mild") << KdaGates{-6, -3, -0.5f, 0.5f} << std::optional<float>(-5.0f);
  QTest::newRow("bound_strongest") << KdaGates{20, 30, 2, 4} << std::optional<float>(-5.0f);
  QTest::newRow("bound_mixed_extremes") << KdaGates{-12, 12, 0, 2} << std::optional<float>(-5.0f);
  // Softplus form: log a = -exp(A_log) softplus(g), unbounded below.
  QTest::newRow("softplus_mild") << KdaGates{-4, -1, -3, -2} << std::optional<float>();
  QTest::newRow("softplus_strong") << KdaGates{5, 10, 1, 3} << std::optional<float>();
  QTest::newRow("softplus_mixed") << KdaGates{-15, 8, -2, 2} << std::optional<float>();
}

}  // namespace

class TestKdaNumerics : public QObject {
  Q_OBJECT
 private:
  ThreadPool pool_{3};

  void fixture(QTemporaryDir& dir, KdaShape shape, const KdaGates& gates, std::uint32_t seed, KdaFixture& f) {
    QVERIFY(dir.isValid());
    const std::string err = test::make_kda_fixture(dir.path().toStdString(), shape, gates, seed, f);
    QVERIFY2(err.empty(), err.c_str());
  }

 private slots:
  // (a) 300 tokens = 4 full chunks of 64 and a partial one.
  void chunkedMatchesRecurrent_data() { add_gate_rows(); }
  void chunkedMatchesRecurrent() {
    QFETCH(KdaGates, gates);
    QFETCH(std::optional<float>, lower_bound);
    QTemporaryDir dir;
    KdaFixture f;
    KdaShape shape;
    shape.lower_bound = lower_bound;
    fixture(dir, shape, gates, 11, f);
    const std::int64_t T = 300;
    const auto x = test::random_input(T, shape.hidden, 5);
    const Run rec = run(pool_, f, x, T, KdaMode::recurrent);
    const Run chk = run(pool_, f, x, T, KdaMode::chunked);
    QVERIFY(all_finite(rec.out));
    const double out_err = rel_l2(chk.out, rec.out), state_err = rel_l2(chk.state.recurrent, rec.state.recurrent);
    qInfo("chunked vs recurrent: output %.2e, state %.2e", out_err, state_err);
    QVERIFY(out_err <= kTolerance);
    QVERIFY(state_err <= kTolerance);
    QCOMPARE(chk.state.conv, rec.state.conv);
    QCOMPARE(chk.state.tokens, T);
  }

  // (b) Both forms against the fp64 implementation of the definition.
  void matchesFp64Reference_data() { add_gate_rows(); }
  void matchesFp64Reference() {
    QFETCH(KdaGates, gates);
    QFETCH(std::optional<float>, lower_bound);
    QTemporaryDir dir;
    KdaFixture f;
    KdaShape shape;
    shape.lower_bound = lower_bound;
    fixture(dir, shape, gates, 23, f);
    const std::int64_t T = 200;
    const auto x = test::random_input(T, shape.hidden, 6);
    std::vector<double> ref_state;
    const std::vector<double> ref = test::kda_reference(shape, f.tensors, x, T, &ref_state);
    for (const KdaMode mode : {KdaMode::recurrent, KdaMode::chunked}) {
      const Run r = run(pool_, f, x, T, mode);
      const double out_err = rel_l2(r.out, ref), state_err = rel_l2(r.state.recurrent, ref_state);
      qInfo("%s vs fp64: output %.2e, state %.2e", mode == KdaMode::chunked ? "chunked" : "recurrent", out_err,
            state_err);
      QVERIFY(out_err <= kTolerance);
      QVERIFY(state_err <= kTolerance);
    }
  }

  // Real head size (128) and hidden != heads * head_dim, strongest gates and mild ones.
  void fullHeadSize_data() {
    QTest::addColumn<KdaGates>("gates");
    QTest::newRow("mild") << KdaGates{-6, -3, -0.5f, 0.5f};
    QTest::newRow("strongest") << KdaGates{20, 30, 2, 4};
    QTest::newRow("mixed") << KdaGates{-12, 12, 0, 2};
  }
  void fullHeadSize() {
    QFETCH(KdaGates, gates);
    QTemporaryDir dir;
    KdaFixture f;
    const KdaShape shape{40, 2, 128, 4, -5.0f};
    fixture(dir, shape, gates, 31, f);
    const std::int64_t T = 150;
    const auto x = test::random_input(T, shape.hidden, 7);
    const std::vector<double> ref = test::kda_reference(shape, f.tensors, x, T);
    const Run rec = run(pool_, f, x, T, KdaMode::recurrent);
    const Run chk = run(pool_, f, x, T, KdaMode::chunked);
    qInfo("d=128: recurrent %.2e, chunked %.2e vs fp64", rel_l2(rec.out, ref), rel_l2(chk.out, ref));
    QVERIFY(rel_l2(rec.out, ref) <= kTolerance);
    QVERIFY(rel_l2(chk.out, ref) <= kTolerance);
  }

  // One prompt over several calls (conv history and state carried; automatic mode mixes both
  // forms) equals one call.
  void splitCallsEqualOneCall_data() { add_gate_rows(); }
  void splitCallsEqualOneCall() {
    QFETCH(KdaGates, gates);
    QFETCH(std::optional<float>, lower_bound);
    QTemporaryDir dir;
    KdaFixture f;
    KdaShape shape;
    shape.lower_bound = lower_bound;
    fixture(dir, shape, gates, 41, f);
    const std::int64_t T = 300;
    const auto x = test::random_input(T, shape.hidden, 8);
    const Run one = run(pool_, f, x, T, KdaMode::chunked);
    const std::vector<std::int64_t> calls{1, 2, 70, 64, 1, 100, 3, 59};
    for (const KdaMode mode : {KdaMode::automatic, KdaMode::chunked, KdaMode::recurrent}) {
      const Run split = run(pool_, f, x, T, mode, calls);
      QVERIFY(rel_l2(split.out, one.out) <= kTolerance);
      QVERIFY(rel_l2(split.state.recurrent, one.state.recurrent) <= kTolerance);
      QCOMPARE(split.state.conv, one.state.conv);
      QCOMPARE(split.state.tokens, T);
    }
    // The conv history holds the last K-1 projected inputs: a call of 1 token after 299 needs it.
    const Run tail = run(pool_, f, x, T, KdaMode::automatic, {T - 1, 1});
    QVERIFY(rel_l2(tail.out, one.out) <= kTolerance);
  }

  // Chunk sizes from 1 (every token its own chunk) to past the prompt length; small chunks also
  // make a call run in several slices.
  void chunkSizes() {
    QTemporaryDir dir;
    KdaFixture f;
    const KdaShape shape;
    fixture(dir, shape, KdaGates{-12, 12, 0, 2}, 51, f);
    const std::int64_t T = 150;
    const auto x = test::random_input(T, shape.hidden, 9);
    const Run rec = run(pool_, f, x, T, KdaMode::recurrent);
    for (const std::int64_t chunk : {1, 2, 7, 16, 64, 149, 150, 400}) {
      KdaConfig c = f.config;
      c.chunk_size = chunk;
      const Run chk = run(pool_, f, x, T, KdaMode::chunked, {}, &c);
      const double err = rel_l2(chk.out, rec.out);
      if (err > kTolerance) qWarning("chunk %lld: %.2e", static_cast<long long>(chunk), err);
      QVERIFY(err <= kTolerance);
      // Long calls run in slices of 8 chunks, in either form.
      const Run sliced = run(pool_, f, x, T, KdaMode::recurrent, {}, &c);
      QCOMPARE(sliced.out, rec.out);
    }
  }

  // Conv kernels 1 (no history), 2 and 6 against the reference, with a split call.
  void convKernels() {
    for (const std::int64_t K : {1, 2, 6}) {
      QTemporaryDir dir;
      KdaFixture f;
      KdaShape shape;
      shape.conv_kernel = K;
      fixture(dir, shape, KdaGates{}, 61, f);
      const std::int64_t T = 90;
      const auto x = test::random_input(T, shape.hidden, 10);
      const std::vector<double> ref = test::kda_reference(shape, f.tensors, x, T);
      const Run r = run(pool_, f, x, T, KdaMode::automatic, {3, 1, 1, 85});
      QVERIFY2(rel_l2(r.out, ref) <= kTolerance, qPrintable(QString("kernel %1").arg(K)));
      QCOMPARE(r.state.conv.size(), static_cast<std::size_t>((K - 1) * 3 * f.config.qkv_dim()));
    }
  }

  // (c) Gates far past anything trained: exp(A_log) near float's range, |g| in the hundreds.
  void extremeGatesStayFinite_data() {
    QTest::addColumn<KdaGates>("gates");
    QTest::addColumn<std::optional<float>>("lower_bound");
    QTest::newRow("bound_saturated") << KdaGates{200, 300, 60, 80} << std::optional<float>(-5.0f);
    QTest::newRow("bound_both_ends") << KdaGates{-300, 300, 60, 80} << std::optional<float>(-5.0f);
    QTest::newRow("softplus_huge") << KdaGates{200, 300, 60, 80} << std::optional<float>();
    QTest::newRow("softplus_both_ends") << KdaGates{-300, 300, 60, 80} << std::optional<float>();
    QTest::newRow("softplus_none") << KdaGates{-300, -200, -80, -60} << std::optional<float>();
  }
  void extremeGatesStayFinite() {
    QFETCH(KdaGates, gates);
    QFETCH(std::optional<float>, lower_bound);
    QTemporaryDir dir;
    KdaFixture f;
    KdaShape shape;
    shape.lower_bound = lower_bound;
    fixture(dir, shape, gates, 71, f);
    const std::int64_t T = 200;
    const auto x = test::random_input(T, shape.hidden, 11);
    const Run rec = run(pool_, f, x, T, KdaMode::recurrent);
    const Run chk = run(pool_, f, x, T, KdaMode::chunked);
    QVERIFY(all_finite(rec.out));
    QVERIFY(all_finite(chk.out));
    QVERIFY(all_finite(chk.state.recurrent));
    QVERIFY(rel_l2(chk.out, rec.out) <= kTolerance);
  }

  // (c) Inputs of huge and tiny magnitude, and zeros.
  void extremeInputsStayFinite() {
    QTemporaryDir dir;
    KdaFixture f;
    const KdaShape shape;
    fixture(dir, shape, KdaGates{-6, 3, 0, 1}, 81, f);
    const std::int64_t T = 140;
    for (const float scale : {1e30f, 1e15f, 1e-30f, 0.0f}) {
      const auto x = test::random_input(T, shape.hidden, 12, scale);
      const Run rec = run(pool_, f, x, T, KdaMode::recurrent);
      const Run chk = run(pool_, f, x, T, KdaMode::chunked);
      QVERIFY2(all_finite(rec.out) && all_finite(chk.out), qPrintable(QString("scale %1").arg(scale)));
      QVERIFY2(rel_l2(chk.out, rec.out) <= kTolerance, qPrintable(QString("scale %1").arg(scale)));
    }
  }

  // The thread count changes who computes what, never the result.
  void threadCountDoesNotChangeResults() {
    QTemporaryDir dir;
    KdaFixture f;
    const KdaShape shape;
    fixture(dir, shape, KdaGates{}, 91, f);
    const std::int64_t T = 130;
    const auto x = test::random_input(T, shape.hidden, 13);
    ThreadPool one(1);
    for (const KdaMode mode : {KdaMode::recurrent, KdaMode::chunked}) {
      const Run a = run(one, f, x, T, mode);
      const Run b = run(pool_, f, x, T, mode);
      QCOMPARE(a.out, b.out);
      QCOMPARE(a.state.recurrent, b.state.recurrent);
    }
  }

  // The trace holds what its fields promise, and the state copies.
  void traceAndState() {
    QTemporaryDir dir;
    KdaFixture f;
    const KdaShape shape;
    fixture(dir, shape, KdaGates{-12, 12, 0, 2}, 101, f);
    const std::int64_t T = 70, D = f.config.qkv_dim();
    const auto x = test::random_input(T, shape.hidden, 14);
    KdaState state = new_kda_state(f.config);
    QCOMPARE(state.bytes(), static_cast<std::uint64_t>(
                                (shape.heads * shape.head_dim * shape.head_dim + (shape.conv_kernel - 1) * 3 * D) * 4));
    std::vector<float> out(static_cast<std::size_t>(T * shape.hidden));
    KdaTrace trace;
    QVERIFY(kda_forward(pool_, f.config, f.layer, state, x.data(), T, out.data(), &trace).is_ok());
    QCOMPARE(trace.q.size(), static_cast<std::size_t>(T * D));
    QCOMPARE(trace.v.size(), static_cast<std::size_t>(T * D));
    QCOMPARE(trace.core.size(), static_cast<std::size_t>(T * D));
    QCOMPARE(trace.beta.size(), static_cast<std::size_t>(T * shape.heads));
    QCOMPARE(trace.state, state.recurrent);
    QVERIFY(
        std::all_of(trace.log_decay.begin(), trace.log_decay.end(), [](float g) { return g >= -5.0f && g <= 0.0f; }));
    QVERIFY(std::all_of(trace.beta.begin(), trace.beta.end(), [](float b) { return b > 0.0f && b < 1.0f; }));
    // The gate spans both ends with these parameters.
    const auto [lo, hi] = std::minmax_element(trace.log_decay.begin(), trace.log_decay.end());
    QVERIFY(*lo < -4.9f && *hi > -0.01f);

    // A copied state continues exactly like the original.
    KdaState copy = state;
    const auto more = test::random_input(5, shape.hidden, 15);
    std::vector<float> o1(5 * static_cast<std::size_t>(shape.hidden)), o2(o1.size());
    QVERIFY(kda_forward(pool_, f.config, f.layer, state, more.data(), 5, o1.data(), nullptr).is_ok());
    QVERIFY(kda_forward(pool_, f.config, f.layer, copy, more.data(), 5, o2.data(), nullptr).is_ok());
    QCOMPARE(o1, o2);

    // Zero tokens: nothing changes.
    const KdaState before = state;
    QVERIFY(kda_forward(pool_, f.config, f.layer, state, nullptr, 0, nullptr, nullptr).is_ok());
    QCOMPARE(state.recurrent, before.recurrent);
    QCOMPARE(state.tokens, before.tokens);
  }

  void rejectsBadCalls() {
    QTemporaryDir dir;
    KdaFixture f;
    const KdaShape shape;
    fixture(dir, shape, KdaGates{}, 111, f);
    std::vector<float> x(static_cast<std::size_t>(shape.hidden)), out(x.size());
    KdaConfig other = f.config;
    other.conv_kernel = 3;
    KdaState wrong = new_kda_state(other);
    Status s = kda_forward(pool_, f.config, f.layer, wrong, x.data(), 1, out.data(), nullptr);
    QCOMPARE(s.code(), ErrorCode::invalid_argument);
    QVERIFY2(s.message().find("conv kernel 3") != std::string::npos, s.message().c_str());
    KdaState state = new_kda_state(f.config);
    QCOMPARE(kda_forward(pool_, f.config, f.layer, state, x.data(), -1, out.data(), nullptr).code(),
             ErrorCode::invalid_argument);
    QCOMPARE(kda_forward(pool_, f.config, f.layer, state, nullptr, 1, out.data(), nullptr).code(),
             ErrorCode::invalid_argument);
    KdaConfig no_chunk = f.config;
    no_chunk.chunk_size = 0;
    QCOMPARE(kda_forward(pool_, no_chunk, f.layer, state, x.data(), 1, out.data(), nullptr).code(),
             ErrorCode::invalid_argument);
    QCOMPARE(state.tokens, std::int64_t{0});
  }
};

QTEST_GUILESS_MAIN(TestKdaNumerics)
#include "test_kda_numerics.moc"
