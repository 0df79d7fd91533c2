// glm5_next's mHC and MoE kernels against the CPU blocks on random inputs: hc_collapse,
// hc_expand and the head's mean of the streams (blocks/hyper_connection.h), the grouped sigmoid
// router (blocks::route), the clamped SwiGLU, and the routed experts of blocks::moe_forward in
// bf16 and MXFP4, in their decode (a pair per CTA column) and prefill (pairs grouped by expert)
// shapes. Guard regions sit behind every output.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "blocks/hyper_connection.h"
#include "blocks/moe.h"
#include "core/thread_pool.h"
#include "glm_moe.h"
#include "glm_moe_gemm.h"
#include "gpu/gpu_test_util.h"
#include "hyper_connection.h"

using namespace day0;
using namespace day0::gpu_test;
namespace k = day0::kernels;

namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// The experts of one MoE layer in both places: host tensors for the CPU blocks, device copies
// stored in reverse expert order (as cache slots might hold them) behind a pointer table.
struct Experts {
  bool mxfp4 = false;
  std::int64_t E = 0, H = 0, I = 0;
  // bf16: [E, I, H], [E, I, H], [E, H, I]
  std::vector<std::uint16_t> gate, up, down;
  // MXFP4: [E, 2I, H/32, 16] + [E, 2I, H/32], [E, H, I/32, 16] + [E, H, I/32]
  std::vector<std::uint8_t> gu_blocks, gu_scales, dn_blocks, dn_scales;

  std::vector<GuardedBuffer> device;  // weights, then the pointer arrays
  k::GlmExpertTable table;

  // Expert e's part of a stacked host tensor of `per` elements per expert.
  template <typename T>
  static const T* at(const std::vector<T>& v, std::int64_t e, std::int64_t per) {
    return v.data() + e * per;
  }

  void bind(blocks::MoeLayer& layer) const {
    for (std::int64_t e = 0; e < E; ++e) {
      if (mxfp4) {
        layer.gate_up_mx.push_back({at(gu_blocks, e, I * H), at(gu_scales, e, 2 * I * H / 32), 2 * I, H});
        layer.down_mx.push_back({at(dn_blocks, e, H * I / 2), at(dn_scales, e, H * I / 32), H, I});
      } else {
        const auto view = [](const std::vector<std::uint16_t>& v, std::int64_t e, std::int64_t rows,
                             std::int64_t cols) {
          return cpu::Matrix{DType::bf16, reinterpret_cast<const std::uint8_t*>(at(v, e, rows * cols)), rows, cols};
        };
        layer.gate.push_back(view(gate, e, I, H));
        layer.up.push_back(view(up, e, I, H));
        layer.down.push_back(view(down, e, H, I));
      }
    }
  }

  // Uploads tensor `v` (`per` elements per expert) with expert e in slot E - 1 - e, and the
  // table of its experts' device pointers.
  template <typename T>
  const T* const* upload(const std::vector<T>& v, std::int64_t per) {
    std::vector<T> reversed(v.size());
    for (std::int64_t e = 0; e < E; ++e) std::copy_n(at(v, e, per), per, reversed.data() + (E - 1 - e) * per);
    device.push_back(to_device(reversed));
    const T* base = device.back().as<T>();
    std::vector<const T*> pointers(static_cast<std::size_t>(E));
    for (std::int64_t e = 0; e < E; ++e) pointers[static_cast<std::size_t>(e)] = base + (E - 1 - e) * per;
    device.push_back(to_device(pointers));
    return device.back().as<const T*>();
  }

  void upload_all() {
    device.reserve(8);
    table.mxfp4 = mxfp4;
    if (mxfp4) {
      table.gate_up_blocks = upload(gu_blocks, I * H);
      table.gate_up_scales = upload(gu_scales, 2 * I * H / 32);
      table.down_blocks = upload(dn_blocks, H * I / 2);
      table.down_scales = upload(dn_scales, H * I / 32);
    } else {
      table.gate = upload(gate, I * H);
      table.up = upload(up, I * H);
      table.down = upload(down, H * I);
    }
  }
};

Experts random_experts(std::mt19937& rng, bool mxfp4, std::int64_t E, std::int64_t H, std::int64_t I) {
  Experts x;
  x.mxfp4 = mxfp4;
  x.E = E;
  x.H = H;
  x.I = I;
  if (mxfp4) {
    x.gu_blocks.resize(static_cast<std::size_t>(E * I * H));  // 2I * H / 2
    x.gu_scales.resize(static_cast<std::size_t>(E * 2 * I * H / 32));
    x.dn_blocks.resize(static_cast<std::size_t>(E * H * I / 2));
    x.dn_scales.resize(static_cast<std::size_t>(E * H * I / 32));
    for (auto* v : {&x.gu_blocks, &x.dn_blocks})
      for (auto& b : *v) b = static_cast<std::uint8_t>(rng());
    // Block scales 2^-9 .. 2^-1: gate/up sums of a few units, some past the SwiGLU limit.
    for (auto* v : {&x.gu_scales, &x.dn_scales})
      for (auto& s : *v) s = static_cast<std::uint8_t>(118 + rng() % 9);
  } else {
    x.gate = to_bf16(random_floats(rng, static_cast<std::size_t>(E * I * H), 2.0f / std::sqrt(float(H))));
    x.up = to_bf16(random_floats(rng, static_cast<std::size_t>(E * I * H), 2.0f / std::sqrt(float(H))));
    x.down = to_bf16(random_floats(rng, static_cast<std::size_t>(E * H * I), 1.0f / std::sqrt(float(I))));
  }
  return x;
}

struct Router {
  std::vector<std::uint16_t> weight;  // [E, H]
  std::vector<float> bias;            // [E]
};

Router random_router(std::mt19937& rng, std::int64_t E, std::int64_t H) {
  return {to_bf16(random_floats(rng, static_cast<std::size_t>(E * H), 1.0f / std::sqrt(float(H)))),
          random_floats(rng, static_cast<std::size_t>(E), 0.05f)};
}

// The GPU's routed experts for (ids, weights) into a fresh `out` (accumulate false) or onto
// `base` (accumulate true). Fails the test on a CUDA error or an overwritten guard.
std::vector<float> gpu_experts(const Experts& experts, const std::vector<float>& x, std::int64_t T, int K,
                               const std::vector<std::int32_t>& ids, const std::vector<float>& weights, float limit,
                               const std::vector<float>* base, bool tensor_cores = false) {
  const std::int64_t H = experts.H, I = experts.I;
  const int E = static_cast<int>(experts.E);
  auto dx = to_device(x);
  auto di = to_device(ids);
  auto dw = to_device(weights);
  GuardedBuffer out = base != nullptr ? to_device(*base) : GuardedBuffer(static_cast<std::size_t>(T * H) * 4);
  const std::size_t scratch_bytes =
      tensor_cores ? k::glm_moe_gemm_scratch_bytes(T, K, E, H, I) : k::glm_moe_scratch_bytes(T, K, E, H, I);
  GuardedBuffer scratch(scratch_bytes);
  const cudaError_t e =
      tensor_cores
          ? k::glm_moe_experts_gemm(experts.table, dx.as<float>(), T, H, I, E, K, di.as<std::int32_t>(),
                                    dw.as<float>(), limit, base != nullptr, out.as<float>(), scratch.as<void>(),
                                    scratch_bytes, nullptr)
          : k::glm_moe_experts(experts.table, dx.as<float>(), T, H, I, E, K, di.as<std::int32_t>(), dw.as<float>(),
                               limit, base != nullptr, out.as<float>(), scratch.as<void>(), scratch_bytes, nullptr);
  auto got = to_host<float>(out, static_cast<std::size_t>(T * H));
  if (e != cudaSuccess || cudaGetLastError() != cudaSuccess || !out.guard_intact() || !scratch.guard_intact())
    got.assign(got.size(), NAN);
  return got;
}

}  // namespace

class TestCudaGlmMoe : public QObject {
  Q_OBJECT

  struct ExpertCase {
    bool mxfp4;
    int E, K;
    std::int64_t H, I, T;
  };

  // The routed experts of one case (router with grouped routing, no shared expert) against
  // blocks::moe_forward, fed the ids and weights its router chose: relative L2 <= 1e-4; at T 300
  // also bitwise repeatable and the same when accumulated onto a residual. tensor_cores: the
  // prefill form of glm_moe_gemm.h instead of glm_moe.h's.
  void check_routed_experts(ThreadPool& pool, const ExpertCase& c, unsigned seed, bool tensor_cores) {
    const float limit = 7.0f;
    std::mt19937 rng(seed);
    const QString tag = QString("%1%2 E %3 K %4 H %5 I %6 T %7")
                            .arg(tensor_cores ? "gemm " : "")
                            .arg(c.mxfp4 ? "mxfp4" : "bf16")
                            .arg(c.E)
                            .arg(c.K)
                            .arg(c.H)
                            .arg(c.I)
                            .arg(c.T);
    blocks::MoeConfig config;
    config.hidden = c.H;
    config.experts = c.E;
    config.top_k = c.K;
    config.inter = c.I;
    config.shared_inter = 0;
    config.n_group = c.E >= 16 ? 4 : 1;
    config.topk_group = c.E >= 16 ? 2 : 1;
    config.routed_scaling = 1.5f;
    config.swiglu_limit = limit;
    config.mxfp4 = c.mxfp4;
    Experts experts = random_experts(rng, c.mxfp4, c.E, c.H, c.I);
    const Router router = random_router(rng, c.E, c.H);
    blocks::MoeLayer layer;
    layer.router = bf16_matrix(router.weight, c.E, c.H);
    layer.score_bias = f32_matrix(router.bias, 1, c.E);
    experts.bind(layer);
    const auto x = random_floats(rng, static_cast<std::size_t>(c.T * c.H));
    std::vector<float> want(static_cast<std::size_t>(c.T * c.H));
    std::vector<std::int32_t> ids;
    std::vector<float> weights;
    QVERIFY(blocks::moe_forward(pool, config, layer, x.data(), c.T, want.data(), &ids, &weights).is_ok());
    experts.upload_all();
    const auto got = gpu_experts(experts, x, c.T, c.K, ids, weights, limit, nullptr, tensor_cores);
    const double err = rel_l2(got, want);
    if (tensor_cores) qInfo("%s: relative L2 %.2e", qPrintable(tag), err);
    QVERIFY2(err <= 1e-4, qPrintable(tag + QString(": %1").arg(err)));
    if (c.T != 300) return;
    const auto again = gpu_experts(experts, x, c.T, c.K, ids, weights, limit, nullptr, tensor_cores);
    QVERIFY2(std::memcmp(again.data(), got.data(), got.size() * sizeof(float)) == 0,
             qPrintable(tag + " is not repeatable"));
    const auto residual = random_floats(rng, want.size());
    auto sum = gpu_experts(experts, x, c.T, c.K, ids, weights, limit, &residual, tensor_cores);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] -= residual[i];
    QVERIFY2(rel_l2(sum, want) <= 1e-4, qPrintable(tag + QString(" accumulated: %1").arg(rel_l2(sum, want))));
  }
 private slots:
  // hc_collapse against blocks::hc_collapse: hc 2..4 (and 8) at T 1 and 33 (columns split over
  // several CTAs, partial sums in `input`), many tokens and a hidden size too small for partial
  // sums (one CTA per tile finishes its tokens), and odd widths (no vector loads).
  void hc_collapse() {
    ThreadPool pool(2);
    struct Case {
      int hc;
      std::int64_t H, T;
    };
    const Case cases[] = {{2, 1024, 1},   {2, 1024, 33}, {3, 1024, 1}, {3, 1024, 33}, {4, 1024, 1}, {4, 1024, 33},
                          {4, 256, 1100}, {2, 8, 33},    {3, 250, 33}, {3, 1250, 1},  {8, 512, 5}};
    for (const Case& c : cases) {
      std::mt19937 rng(static_cast<unsigned>(31 * c.hc + c.H + 7 * c.T));
      blocks::HcConfig config;
      config.streams = c.hc;
      config.hidden = c.H;
      config.sinkhorn_iters = 20;
      config.rms_eps = 1e-6f;
      config.hc_eps = 1e-6f;
      const std::int64_t mix = config.mix(), width = c.hc * c.H, T = c.T;
      const auto fn =
          to_bf16(random_floats(rng, static_cast<std::size_t>(mix * width), 1.0f / std::sqrt(float(width))));
      const auto base = random_floats(rng, static_cast<std::size_t>(mix), 0.5f);
      std::vector<float> scale = random_floats(rng, 3, 0.2f);
      for (auto& s : scale) s += 1.0f;
      const auto streams = random_floats(rng, static_cast<std::size_t>(T * width), 2.0f);
      const blocks::HcWeights w{bf16_matrix(fn, mix, width), f32_matrix(base, 1, mix), f32_matrix(scale, 1, 3)};
      std::vector<float> want_input(static_cast<std::size_t>(T * c.H)), want_post(static_cast<std::size_t>(T * c.hc)),
          want_comb(static_cast<std::size_t>(T * c.hc * c.hc));
      blocks::hc_collapse(pool, config, w, streams.data(), T, want_input.data(), want_post.data(), want_comb.data());

      auto ds = to_device(streams);
      auto dfn = to_device(fn);
      auto db = to_device(base);
      auto dsc = to_device(scale);
      GuardedBuffer input(want_input.size() * 4), post(want_post.size() * 4), comb(want_comb.size() * 4);
      CUDA_VERIFY(k::hc_collapse(ds.as<float>(), T, c.hc, c.H, dfn.as<std::uint16_t>(), db.as<float>(), dsc.as<float>(),
                                 20, 1e-6f, 1e-6f, input.as<float>(), post.as<float>(), comb.as<float>(), nullptr));
      const auto got_input = to_host<float>(input, want_input.size());
      const auto got_post = to_host<float>(post, want_post.size());
      const auto got_comb = to_host<float>(comb, want_comb.size());
      const QString tag = QString("hc %1 H %2 T %3").arg(c.hc).arg(c.H).arg(c.T);
      QVERIFY2(rel_l2(got_input, want_input) <= 1e-4,
               qPrintable(tag + QString(" input %1").arg(rel_l2(got_input, want_input))));
      QVERIFY2(rel_l2(got_post, want_post) <= 1e-4,
               qPrintable(tag + QString(" post %1").arg(rel_l2(got_post, want_post))));
      QVERIFY2(rel_l2(got_comb, want_comb) <= 1e-4,
               qPrintable(tag + QString(" comb %1").arg(rel_l2(got_comb, want_comb))));
      // comb is (nearly) doubly stochastic after Sinkhorn, and not the identity: it mixes.
      double off_diagonal = 0;
      for (std::int64_t i = 0; i < c.hc; ++i)
        for (std::int64_t j = 0; j < c.hc; ++j)
          if (i != j) off_diagonal += got_comb[static_cast<std::size_t>(i * c.hc + j)];
      QVERIFY2(off_diagonal > 0.1, qPrintable(tag));
      QVERIFY(input.guard_intact() && post.guard_intact() && comb.guard_intact());
    }
  }

  // hc_expand against blocks::hc_expand (in place), vector and scalar paths.
  void hc_expand() {
    struct Case {
      int hc;
      std::int64_t H, T;
    };
    const Case cases[] = {{2, 1024, 3}, {4, 4096, 2}, {3, 250, 5}, {8, 64, 4}, {4, 1300, 33}};
    for (const Case& c : cases) {
      std::mt19937 rng(static_cast<unsigned>(5 * c.hc + c.H + c.T));
      blocks::HcConfig config;
      config.streams = c.hc;
      config.hidden = c.H;
      const std::int64_t T = c.T;
      const auto y = random_floats(rng, static_cast<std::size_t>(T * c.H));
      auto post = random_floats(rng, static_cast<std::size_t>(T * c.hc));
      for (auto& p : post) p = 2.0f * sigmoid(p);
      auto comb = random_floats(rng, static_cast<std::size_t>(T * c.hc * c.hc));
      for (auto& v : comb) v = sigmoid(v) / static_cast<float>(c.hc);
      auto want = random_floats(rng, static_cast<std::size_t>(T * c.hc * c.H));
      auto ds = to_device(want);
      blocks::hc_expand(config, y.data(), post.data(), comb.data(), T, want.data());
      auto dy = to_device(y);
      auto dp = to_device(post);
      auto dc = to_device(comb);
      CUDA_VERIFY(k::hc_expand(dy.as<float>(), dp.as<float>(), dc.as<float>(), T, c.hc, c.H, ds.as<float>(), nullptr));
      const auto got = to_host<float>(ds, want.size());
      QVERIFY2(rel_l2(got, want) <= 1e-5,
               qPrintable(QString("hc %1 H %2: %3").arg(c.hc).arg(c.H).arg(rel_l2(got, want))));
      QVERIFY(ds.guard_intact());
    }
  }

  // hc_mean against the model's head loop: the sum over the streams in order, then / hc.
  void hc_mean() {
    for (const auto& [hc, H] : {std::pair<int, std::int64_t>{4, 4096}, {3, 250}, {2, 8}}) {
      std::mt19937 rng(static_cast<unsigned>(hc + H));
      const std::int64_t T = 7;
      const auto streams = random_floats(rng, static_cast<std::size_t>(T * hc * H));
      std::vector<float> want(static_cast<std::size_t>(T * H), 0.0f);
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t k = 0; k < H; ++k) {
          float o = 0.0f;
          for (int i = 0; i < hc; ++i) o += streams[static_cast<std::size_t>((t * hc + i) * H + k)];
          want[static_cast<std::size_t>(t * H + k)] = o / static_cast<float>(hc);
        }
      auto ds = to_device(streams);
      GuardedBuffer out(want.size() * 4);
      CUDA_VERIFY(k::hc_mean(ds.as<float>(), T, hc, H, out.as<float>(), nullptr));
      const auto got = to_host<float>(out, want.size());
      QVERIFY2(rel_l2(got, want) <= 1e-6, qPrintable(QString("hc %1 H %2").arg(hc).arg(H)));
      QVERIFY(out.guard_intact());
    }
  }

  // The router against blocks::route on the same logits, with exact ties planted (equal logits
  // and biases: the lower id wins on both sides). ids must match except where the CPU's and the
  // GPU's choice values for the swapped experts agree to float rounding (a near-tie); weights
  // must match where the ids do.
  void grouped_sigmoid_topk() {
    ThreadPool pool(2);
    struct Case {
      int E, K, groups, topk_groups;
      bool norm;
    };
    const Case cases[] = {{8, 2, 2, 1, true}, {16, 4, 4, 2, false}, {288, 8, 1, 1, true}, {256, 8, 8, 4, true}};
    for (const Case& c : cases) {
      std::mt19937 rng(static_cast<unsigned>(c.E * 7 + c.K));
      const std::int64_t T = 301, H = 64;
      blocks::MoeConfig config;
      config.hidden = H;
      config.experts = c.E;
      config.top_k = c.K;
      config.n_group = c.groups;
      config.topk_group = c.topk_groups;
      config.norm_topk_prob = c.norm;
      config.routed_scaling = 2.5f;
      Router router = random_router(rng, c.E, H);
      for (int e = 1; e < c.E; e += 2)
        router.bias[static_cast<std::size_t>(e)] = router.bias[static_cast<std::size_t>(e - 1)];
      for (int e = 2; e < c.E; e += 4)  // same logits for rows 2, 3 of every 4: ties for every token
        std::copy_n(router.weight.begin() + e * H, H, router.weight.begin() + (e + 1) * H);
      blocks::MoeLayer layer;
      layer.router = bf16_matrix(router.weight, c.E, H);
      layer.score_bias = f32_matrix(router.bias, 1, c.E);
      const auto x = random_floats(rng, static_cast<std::size_t>(T * H), 3.0f);
      std::vector<std::int32_t> want_ids(static_cast<std::size_t>(T * c.K));
      std::vector<float> want_w(want_ids.size()), logits(static_cast<std::size_t>(T * c.E));
      blocks::route(pool, config, layer, x.data(), T, want_ids.data(), want_w.data());
      cpu::linear(pool, x.data(), T, layer.router, nullptr, logits.data());

      auto dl = to_device(logits);
      auto db = to_device(router.bias);
      GuardedBuffer ids(want_ids.size() * 4), w(want_w.size() * 4);
      CUDA_VERIFY(k::grouped_sigmoid_topk(dl.as<float>(), db.as<float>(), T, c.E, c.K, c.groups, c.topk_groups, c.norm,
                                          2.5f, ids.as<std::int32_t>(), w.as<float>(), nullptr));
      const auto got_ids = to_host<std::int32_t>(ids, want_ids.size());
      const auto got_w = to_host<float>(w, want_w.size());
      int near_ties = 0;
      std::vector<float> same_got, same_want;
      for (std::int64_t t = 0; t < T; ++t) {
        const auto row = [&](const std::vector<std::int32_t>& v) {
          return std::vector<std::int32_t>(v.begin() + t * c.K, v.begin() + (t + 1) * c.K);
        };
        const auto g = row(got_ids), want = row(want_ids);
        QVERIFY2(std::is_sorted(g.begin(), g.end()),
                 qPrintable(QString("E %1 token %2: ids not ascending").arg(c.E).arg(t)));
        if (g == want) {
          for (int j = 0; j < c.K; ++j) {
            same_got.push_back(got_w[static_cast<std::size_t>(t * c.K + j)]);
            same_want.push_back(want_w[static_cast<std::size_t>(t * c.K + j)]);
          }
          continue;
        }
        // A near-tie: every expert in one set and not the other has a choice value within float
        // rounding of the weakest choice the CPU kept.
        const auto choice = [&](int e) {
          return sigmoid(logits[static_cast<std::size_t>(t * c.E + e)]) + router.bias[static_cast<std::size_t>(e)];
        };
        float weakest = INFINITY;
        for (const int e : want) weakest = std::min(weakest, choice(e));
        for (const int e : g) {
          QVERIFY2(e >= 0 && e < c.E, qPrintable(QString("E %1 token %2: id %3").arg(c.E).arg(t).arg(e)));
          if (std::find(want.begin(), want.end(), e) == want.end())
            QVERIFY2(std::fabs(choice(e) - weakest) <= 1e-6f * (1.0f + std::fabs(weakest)),
                     qPrintable(QString("E %1 token %2: expert %3 is no near-tie").arg(c.E).arg(t).arg(e)));
        }
        ++near_ties;
      }
      QVERIFY2(near_ties <= T / 50, qPrintable(QString("E %1: %2 near-ties").arg(c.E).arg(near_ties)));
      QVERIFY2(rel_l2(same_got, same_want) <= 1e-6,
               qPrintable(QString("E %1 weights %2").arg(c.E).arg(rel_l2(same_got, same_want))));
      QVERIFY(ids.guard_intact() && w.guard_intact());
    }
  }

  void clamped_swiglu() {
    std::mt19937 rng(3);
    const std::int64_t T = 37, I = 200;
    const float limit = 7.0f;
    const auto gate_up = random_floats(rng, static_cast<std::size_t>(T * 2 * I), 6.0f);
    std::vector<float> want(static_cast<std::size_t>(T * I));
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t i = 0; i < I; ++i) {
        const float g = std::min(gate_up[static_cast<std::size_t>(t * 2 * I + i)], limit);
        const float u = std::clamp(gate_up[static_cast<std::size_t>(t * 2 * I + I + i)], -limit, limit);
        want[static_cast<std::size_t>(t * I + i)] = g / (1.0f + std::exp(-g)) * u;
      }
    auto d = to_device(gate_up);
    GuardedBuffer out(want.size() * 4);
    CUDA_VERIFY(k::clamped_swiglu(d.as<float>(), T, I, limit, out.as<float>(), nullptr));
    const auto got = to_host<float>(out, want.size());
    QVERIFY2(rel_l2(got, want) <= 1e-6, qPrintable(QString::number(rel_l2(got, want))));
    QVERIFY(out.guard_intact());
  }

  // The routed experts against blocks::moe_forward with no shared expert, fed the ids and
  // weights its router chose. T 1 and 3 run a pair per CTA column; 40 tokens over 64 experts
  // tiles of 4 pairs; 64, 300 and 1,100 (two chunks through the scratch) tiles of 16. Also:
  // accumulate onto a residual, bitwise repeatability, and GLM-5.3-Flash's expert shape (H 4096,
  // I 2048, MXFP4) for a decode step.
  void glm_moe_experts() {
    ThreadPool pool(2);
    const ExpertCase cases[] = {
        {false, 16, 4, 1048, 168, 1},   {false, 16, 4, 1048, 168, 3},  {false, 16, 4, 1048, 168, 64},
        {false, 16, 4, 1048, 168, 300}, {false, 64, 4, 1048, 168, 40}, {false, 16, 4, 1048, 168, 1100},
        {true, 16, 4, 1056, 160, 1},    {true, 16, 4, 1056, 160, 3},   {true, 16, 4, 1056, 160, 64},
        {true, 16, 4, 1056, 160, 300},  {true, 64, 4, 1056, 160, 40},  {true, 8, 8, 4096, 2048, 1},
    };
    for (const ExpertCase& c : cases) {
      check_routed_experts(pool, c, static_cast<unsigned>(c.E + c.H + c.T + (c.mxfp4 ? 1000 : 0)), false);
      if (QTest::currentTestFailed()) return;
    }
  }

  // The tensor-core prefill form (glm_moe_gemm.h) against blocks::moe_forward on MXFP4 experts:
  // partial column tiles (I 160), several row tiles per expert (300 tokens over 16 experts), many
  // experts with few pairs (64 experts, 40 tokens), two chunks (1,100 tokens), GLM-5.3-Flash's
  // expert widths; accumulate onto a residual; bitwise repeatability.
  void glm_moe_experts_gemm() {
    ThreadPool pool(2);
    const ExpertCase cases[] = {{true, 16, 4, 1056, 160, 300},
                                {true, 64, 4, 1056, 160, 40},
                                {true, 16, 4, 1056, 160, 1100},
                                {true, 8, 8, 4096, 2048, 64},
                                {true, 16, 2, 64, 64, 1}};
    for (const ExpertCase& c : cases) {
      check_routed_experts(pool, c, static_cast<unsigned>(7 * c.E + c.H + c.T), true);
      if (QTest::currentTestFailed()) return;
    }
    // Refused: bf16 experts, widths not multiples of 32, too little scratch.
    std::mt19937 rng(3);
    const Experts bf = random_experts(rng, false, 4, 64, 64);
    float* p = reinterpret_cast<float*>(256);
    const std::int32_t* ids = reinterpret_cast<const std::int32_t*>(256);
    QVERIFY(k::glm_moe_experts_gemm(bf.table, p, 1, 64, 64, 4, 2, ids, p, 7.0f, false, p, p, 1 << 30, nullptr) ==
            cudaErrorInvalidValue);
    QCOMPARE(k::glm_moe_gemm_scratch_bytes(1, 2, 4, 48, 64), std::size_t{0});
    k::GlmExpertTable mx;
    mx.mxfp4 = true;
    mx.gate_up_blocks = mx.gate_up_scales = mx.down_blocks = mx.down_scales =
        reinterpret_cast<const std::uint8_t* const*>(256);
    QVERIFY(k::glm_moe_experts_gemm(mx, p, 1, 64, 64, 4, 2, ids, p, 7.0f, false, p, p, 256, nullptr) ==
            cudaErrorInvalidValue);
  }

  // Arguments the launchers refuse, with nothing launched.
  void invalid_arguments() {
    float* p = reinterpret_cast<float*>(256);
    const auto* ids = reinterpret_cast<const std::int32_t*>(256);
    k::GlmExpertTable table;
    table.mxfp4 = true;
    table.gate_up_blocks = table.gate_up_scales = table.down_blocks = table.down_scales =
        reinterpret_cast<const std::uint8_t* const*>(256);
    // MXFP4 needs H and I multiples of 32; bf16 multiples of 8; the scratch must be large enough.
    QVERIFY(k::glm_moe_experts(table, p, 1, 48, 64, 8, 2, ids, p, 7.0f, false, p, p, 1 << 30, nullptr) ==
            cudaErrorInvalidValue);
    QVERIFY(k::glm_moe_experts(table, p, 1, 64, 64, 8, 2, ids, p, 7.0f, false, p, p,
                               k::glm_moe_scratch_bytes(1, 2, 8, 64, 64) - 1, nullptr) == cudaErrorInvalidValue);
    QVERIFY(k::glm_moe_scratch_bytes(1, 2, 8, 60, 64) == 0);
    // Routing: groups must divide the experts, top_k fit the kept groups.
    auto* out_ids = reinterpret_cast<std::int32_t*>(256);
    QVERIFY(k::grouped_sigmoid_topk(p, p, 1, 10, 2, 4, 1, true, 1.0f, out_ids, p, nullptr) == cudaErrorInvalidValue);
    QVERIFY(k::grouped_sigmoid_topk(p, p, 1, 16, 5, 4, 1, true, 1.0f, out_ids, p, nullptr) == cudaErrorInvalidValue);
    const auto* fn = reinterpret_cast<const std::uint16_t*>(256);
    QVERIFY(k::hc_collapse(p, 1, 9, 64, fn, p, p, 20, 1e-6f, 1e-6f, p, p, p, nullptr) == cudaErrorInvalidValue);
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu()) return skip;
  TestCudaGlmMoe test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_glm_moe.moc"
