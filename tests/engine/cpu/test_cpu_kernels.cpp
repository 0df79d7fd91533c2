// The fast CPU kernels (backend/cpu/fast_kernels_*.cpp) against the reference operators, for
// every instruction set this CPU runs: linear over bf16, f16, f32 and MXFP4 weights on random
// shapes (ragged K tails, token counts around the register and cache tiles, biases), every
// E8M0 scale class (subnormal, normal, overflowing to inf, NaN), row decoding, dot and axpy,
// and whole tiny models (prefill and cached decoding) with each kernel set.
//
// Both implementations decode every weight exactly and sum in fp32, so they may differ only by
// the order of the additions: a few ulps of the sum of |products| per output.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_ops.h"
#include "day0/engine.h"
#include "formats/float_formats.h"

using namespace day0;
namespace fs = std::filesystem;

namespace {

std::vector<cpu::Isa> isas() {
  std::vector<cpu::Isa> out{cpu::Isa::portable};
  if (cpu::best_isa() >= cpu::Isa::avx2) out.push_back(cpu::Isa::avx2);
  if (cpu::best_isa() >= cpu::Isa::avx512) out.push_back(cpu::Isa::avx512);
  return out;
}

struct Plain {
  std::vector<std::uint8_t> bytes;
  cpu::Matrix m;
};

Plain random_matrix(std::mt19937& rng, DType dtype, std::int64_t rows, std::int64_t cols) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int size = dtype == DType::f32 ? 4 : 2;
  Plain p;
  // One spare byte in front: weights in a checkpoint are not aligned.
  p.bytes.resize(static_cast<std::size_t>(rows * cols * size + 1));
  std::uint8_t* data = p.bytes.data() + 1;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const float v = normal(rng);
    if (dtype == DType::f32) {
      std::memcpy(data + 4 * i, &v, 4);
    } else {
      const std::uint16_t bits = dtype == DType::bf16 ? formats::f32_to_bf16(v) : formats::f32_to_f16(v);
      std::memcpy(data + 2 * i, &bits, 2);
    }
  }
  p.m = cpu::Matrix{dtype, data, rows, cols};
  return p;
}

struct Mx {
  std::vector<std::uint8_t> blocks, scales;
  cpu::Mxfp4Matrix m;
};

// Random codes; scales drawn from `scale_pool`.
Mx random_mxfp4(std::mt19937& rng, std::int64_t rows, std::int64_t cols, const std::vector<std::uint8_t>& scale_pool) {
  Mx x;
  const std::int64_t nb = rows * cols / 32;
  x.blocks.resize(static_cast<std::size_t>(nb * 16 + 1));
  x.scales.resize(static_cast<std::size_t>(nb + 1));
  for (auto& b : x.blocks) b = static_cast<std::uint8_t>(rng());
  for (auto& s : x.scales) s = scale_pool[rng() % scale_pool.size()];
  x.m = cpu::Mxfp4Matrix{x.blocks.data() + 1, x.scales.data() + 1, rows, cols};
  return x;
}

std::vector<float> random_vector(std::mt19937& rng, std::int64_t n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = normal(rng);
  return v;
}

// |fast - ref| within a few ulps of the sum of |products| of each output; non-finite outputs
// must be the same class (NaN, +inf, -inf) in both.
template <typename AbsSum>
bool close(const std::vector<float>& fast, const std::vector<float>& ref, const AbsSum& abs_sum, std::int64_t K,
           QString* why) {
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const float a = fast[i], b = ref[i];
    if (std::isnan(b) || std::isinf(b)) {
      // The reference's own order decides between inf and NaN (inf - inf) only where both signs
      // overflow; accept any non-finite value there, else the same class.
      if (std::isfinite(a)) {
        *why = QString("output %1: fast %2, reference %3").arg(i).arg(a).arg(b);
        return false;
      }
      continue;
    }
    const double bound = 4.0 * (static_cast<double>(K) + 8.0) * 1.2e-7 * abs_sum(i) + 1e-30;
    if (!std::isfinite(a) || std::abs(static_cast<double>(a) - b) > bound) {
      *why = QString("output %1: fast %2, reference %3, bound %4").arg(i).arg(a).arg(b).arg(bound);
      return false;
    }
  }
  return true;
}

std::vector<float> decode_all(const cpu::Matrix& m) {
  std::vector<float> out(static_cast<std::size_t>(m.rows * m.cols));
  for (std::int64_t r = 0; r < m.rows; ++r) cpu::reference::decode_row(m, r, out.data() + r * m.cols);
  return out;
}
std::vector<float> decode_all(const cpu::Mxfp4Matrix& m) {
  std::vector<float> out(static_cast<std::size_t>(m.rows * m.cols));
  for (std::int64_t r = 0; r < m.rows; ++r) cpu::reference::decode_row(m, r, out.data() + r * m.cols);
  return out;
}

template <typename W>
void check_linear(ThreadPool& pool, const W& w, const cpu::Matrix* bias, std::mt19937& rng, std::int64_t T,
                  const char* what) {
  const std::int64_t N = w.rows, K = w.cols;
  const auto x = random_vector(rng, T * K);
  std::vector<float> ref(static_cast<std::size_t>(T * N)), fast(ref.size());
  cpu::reference::linear(pool, x.data(), T, w, bias, ref.data());
  cpu::fast::linear(pool, x.data(), T, w, bias, fast.data());
  const auto wf = decode_all(w);
  std::vector<float> bf(static_cast<std::size_t>(N), 0.0f);
  if (bias) cpu::reference::decode_row(*bias, 0, bf.data());
  const auto abs_sum = [&](std::size_t i) {
    const std::int64_t t = static_cast<std::int64_t>(i) / N, n = static_cast<std::int64_t>(i) % N;
    double s = std::abs(bf[static_cast<std::size_t>(n)]);
    for (std::int64_t k = 0; k < K; ++k)
      s += std::abs(static_cast<double>(x[static_cast<std::size_t>(t * K + k)]) * wf[static_cast<std::size_t>(n * K + k)]);
    return s;
  };
  QString why;
  const bool ok = close(fast, ref, abs_sum, K, &why);
  QVERIFY2(ok, qPrintable(QString("%1 [%2 x %3], T %4, %5: %6")
                              .arg(what)
                              .arg(N)
                              .arg(K)
                              .arg(T)
                              .arg(cpu::isa_name(cpu::kernel_isa()))
                              .arg(why)));
}

bool same_value(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::vector<float> model_logits(const fs::path& dir, const std::vector<std::int32_t>& prompt, int decode_steps) {
  EngineOptions eo;
  eo.threads = 2;
  auto engine = Engine::create(eo);
  auto model = engine->load_model(dir);
  if (!model.is_ok()) qFatal("%s", model.status().message().c_str());
  auto session = engine->new_session(*model);
  auto logits = engine->append_logits(session, prompt);
  if (!logits.is_ok()) qFatal("%s", logits.status().message().c_str());
  std::vector<float> all = *logits;
  const std::int64_t vocab = describe(**model).vocab_size;
  for (int s = 0; s < decode_steps; ++s) {
    // The argmax of the last row, fed back: the cached decoding path.
    const float* last = all.data() + all.size() - static_cast<std::size_t>(vocab);
    const auto next = static_cast<std::int32_t>(std::max_element(last, last + vocab) - last);
    const std::vector<std::int32_t> one{next};
    auto step = engine->append_logits(session, one);
    if (!step.is_ok()) qFatal("%s", step.status().message().c_str());
    all.insert(all.end(), step->begin(), step->end());
  }
  return all;
}

}  // namespace

class TestCpuKernels : public QObject {
  Q_OBJECT
 private slots:
  void cleanup() {
    cpu::set_kernel_set(cpu::KernelSet::fast);
    cpu::set_kernel_isa(cpu::best_isa());
  }

  void selection() {
    QVERIFY(cpu::set_kernel_isa(cpu::Isa::portable) == cpu::Isa::portable);
    QCOMPARE(cpu::set_kernel_isa(cpu::Isa::avx512), cpu::best_isa());
    qInfo("best instruction set: %s", cpu::isa_name(cpu::best_isa()));
  }

  void plainLinear() {
    ThreadPool pool(3);
    std::mt19937 rng(7);
    const std::int64_t Ks[] = {1, 7, 31, 32, 33, 64, 100, 257, 2880};
    const std::int64_t Ts[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 70, 133};
    for (const cpu::Isa isa : isas()) {
      cpu::set_kernel_isa(isa);
      for (const DType dtype : {DType::bf16, DType::f16, DType::f32})
        for (const std::int64_t K : Ks) {
          const std::int64_t N = 1 + static_cast<std::int64_t>(rng() % 37);
          const auto w = random_matrix(rng, dtype, N, K);
          const auto b = random_matrix(rng, dtype, 1, N);
          for (const std::int64_t T : Ts) {
            if (K * T > 200000) continue;
            check_linear(pool, w.m, T % 2 ? &b.m : nullptr, rng, T, dtype_name(dtype).data());
            if (QTest::currentTestFailed()) return;
          }
        }
    }
  }

  void mxfp4Linear() {
    ThreadPool pool(3);
    std::mt19937 rng(11);
    // Every scale class: the subnormal scales 0 and 1, normal ones around 1, the largest finite
    // ones (products overflow to inf at 0xFE and 0xFD), and NaN (0xFF).
    const std::vector<std::uint8_t> normal_scales{0x7A, 0x7D, 0x7F, 0x80, 0x83};
    const std::vector<std::uint8_t> tiny_scales{0x00, 0x01, 0x02};
    const std::vector<std::uint8_t> huge_scales{0xFD, 0xFE, 0x7F};
    const std::vector<std::uint8_t> nan_scales{0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0xFF};
    for (const cpu::Isa isa : isas()) {
      cpu::set_kernel_isa(isa);
      for (const auto* pool_scales : {&normal_scales, &tiny_scales, &huge_scales, &nan_scales})
        for (const std::int64_t K : {32, 64, 96, 320, 2880}) {
          const std::int64_t N = 1 + static_cast<std::int64_t>(rng() % 41);
          const auto w = random_mxfp4(rng, N, K, *pool_scales);
          const auto b = random_matrix(rng, DType::bf16, 1, N);
          for (const std::int64_t T : {1, 2, 3, 5, 8, 11, 64, 67}) {
            check_linear(pool, w.m, T % 2 ? &b.m : nullptr, rng, T, "mxfp4");
            if (QTest::currentTestFailed()) return;
          }
        }
    }
  }

  void decodeRowsExactly() {
    std::mt19937 rng(3);
    std::vector<std::uint8_t> every_scale(256);
    for (int i = 0; i < 256; ++i) every_scale[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
    for (const cpu::Isa isa : isas()) {
      cpu::set_kernel_isa(isa);
      // 256 blocks per row, scale b for block b, every code in every block.
      Mx x;
      x.blocks.resize(4 * 256 * 16);
      x.scales.resize(4 * 256);
      for (std::size_t i = 0; i < x.blocks.size(); ++i) x.blocks[i] = static_cast<std::uint8_t>(i * 7 + i / 16);
      for (std::size_t i = 0; i < x.scales.size(); ++i) x.scales[i] = static_cast<std::uint8_t>(i);
      const cpu::Mxfp4Matrix m{x.blocks.data(), x.scales.data(), 4, 256 * 32};
      std::vector<float> ref(static_cast<std::size_t>(m.cols)), fast(ref.size());
      for (std::int64_t r = 0; r < m.rows; ++r) {
        cpu::reference::decode_row(m, r, ref.data());
        cpu::fast::decode_row(m, r, fast.data());
        for (std::size_t i = 0; i < ref.size(); ++i)
          QVERIFY2(same_value(fast[i], ref[i]),
                   qPrintable(QString("%1 row %2 element %3: %4 vs %5")
                                  .arg(cpu::isa_name(isa)).arg(r).arg(i).arg(fast[i]).arg(ref[i])));
      }
      for (const DType dtype : {DType::bf16, DType::f16, DType::f32})
        for (const std::int64_t K : {1, 31, 32, 33, 77, 130}) {
          const auto p = random_matrix(rng, dtype, 3, K);
          std::vector<float> a(static_cast<std::size_t>(K)), b(a.size());
          for (std::int64_t r = 0; r < 3; ++r) {
            cpu::reference::decode_row(p.m, r, a.data());
            cpu::fast::decode_row(p.m, r, b.data());
            QVERIFY(std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
          }
        }
    }
  }

  void dotAndAxpy() {
    std::mt19937 rng(5);
    for (const cpu::Isa isa : isas()) {
      cpu::set_kernel_isa(isa);
      for (const std::int64_t n : {0, 1, 5, 8, 15, 16, 17, 63, 64, 65, 128, 200, 1001}) {
        const auto a = random_vector(rng, n), b = random_vector(rng, n);
        double abs_sum = 0;
        for (std::int64_t i = 0; i < n; ++i) abs_sum += std::abs(static_cast<double>(a[i]) * b[i]);
        const float ref = cpu::reference::dot(a.data(), b.data(), n), fast = cpu::fast::dot(a.data(), b.data(), n);
        QVERIFY2(std::abs(static_cast<double>(ref) - fast) <= 4.0 * (n + 8) * 1.2e-7 * abs_sum + 1e-30,
                 qPrintable(QString("%1 n %2: %3 vs %4").arg(cpu::isa_name(isa)).arg(n).arg(fast).arg(ref)));
        auto y1 = random_vector(rng, n), y2 = y1;
        cpu::reference::axpy(0.37f, a.data(), y1.data(), n);
        cpu::fast::axpy(0.37f, a.data(), y2.data(), n);
        // One rounding either way (a fused multiply-add rounds once, the reference twice).
        for (std::int64_t i = 0; i < n; ++i)
          QVERIFY(std::abs(y1[static_cast<std::size_t>(i)] - y2[static_cast<std::size_t>(i)]) <=
                  2.4e-7f * (std::abs(y1[static_cast<std::size_t>(i)]) + std::abs(0.37f * a[static_cast<std::size_t>(i)])));
      }
    }
  }

  void wholeModels_data() {
    QTest::addColumn<QString>("model");
    for (const char* name : {"tiny-gpt-oss", "tiny-gpt-oss-wide", "tiny-glm5-next", "tiny-glm5-hc4-mxfp4"})
      QTest::newRow(name) << QString::fromStdString((fs::path(DAY0_TEST_DATA_DIR) / "models" / name).string());
  }

  // Prefill (more tokens than a token tile) and cached decoding, fast against reference: the
  // logits of every row within 2e-5 relative L2 (VERIFY.md's CPU-vs-transformers bound is 1e-4
  // typical; the two CPU paths differ only by summation order, far below it).
  void wholeModels() {
    QFETCH(QString, model);
    std::vector<std::int32_t> prompt;
    for (int i = 0; i < 70; ++i) prompt.push_back((i * 37 + 11) % 200);
    cpu::set_kernel_set(cpu::KernelSet::reference);
    const auto ref = model_logits(model.toStdString(), prompt, 6);
    for (const cpu::Isa isa : isas()) {
      cpu::set_kernel_isa(isa);
      cpu::set_kernel_set(cpu::KernelSet::fast);
      const auto fast = model_logits(model.toStdString(), prompt, 6);
      QCOMPARE(fast.size(), ref.size());
      const std::size_t rows = prompt.size() + 6, vocab = ref.size() / rows;
      double worst = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        double d = 0, n = 0;
        for (std::size_t i = r * vocab; i < (r + 1) * vocab; ++i) {
          d += (static_cast<double>(fast[i]) - ref[i]) * (static_cast<double>(fast[i]) - ref[i]);
          n += static_cast<double>(ref[i]) * ref[i];
        }
        worst = std::max(worst, std::sqrt(d / std::max(n, 1e-30)));
      }
      qInfo("%s %s: worst row relative L2 %.3g", qPrintable(model), cpu::isa_name(isa), worst);
      QVERIFY2(worst <= 2e-5, qPrintable(QString("%1: relative L2 %2").arg(cpu::isa_name(isa)).arg(worst)));
    }
  }
};

QTEST_APPLESS_MAIN(TestCpuKernels)
#include "test_cpu_kernels.moc"
