// The vision tower and the joining of images with text, on the committed tiny glm5_next
// checkpoint (random vision weights): shapes and traces; the tower against a direct fp64
// evaluation written here from transformers' Glm5NextVisionModel description; placeholder
// expansion, row location and prefix keys; an image prompt fed at once equals the same input
// embeddings fed one position at a time; a changed image changes nothing before it.
#include <QtTest>

#include <cmath>
#include <random>
#include <set>

#include "backend/cpu/cpu_ops.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/loaded_model.h"
#include "models/weights.h"
#include "vision/glm5_vision_tower.h"
#include "vision/image_input.h"

namespace fs = std::filesystem;
using day0::vision::VisionInput;

namespace {

fs::path tiny_model() { return fs::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-glm5-next"; }

day0::io::RgbImage random_image(long w, long h, unsigned seed) {
  std::mt19937 rng(seed);
  day0::io::RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<std::size_t>(w * h * 3));
  for (auto& p : img.pixels) p = static_cast<std::uint8_t>(rng());
  return img;
}

double rel_l2(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

// Weights as fp64 matrices, read row by row from the checkpoint.
struct Weights {
  std::shared_ptr<const day0::io::Checkpoint> ckpt;
  std::vector<double> get(const std::string& name, std::int64_t rows, std::int64_t cols) const {
    const day0::models::WeightSource w(ckpt);
    auto m = rows == 1 ? w.vector(name, cols) : w.matrix(name, rows, cols);
    if (!m.is_ok()) qFatal("%s", m.status().message().c_str());
    std::vector<float> row(static_cast<std::size_t>(cols));
    std::vector<double> out;
    for (std::int64_t r = 0; r < rows; ++r) {
      day0::cpu::decode_row(*m, r, row.data());
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  }
  std::vector<double> flat(const std::string& name, const std::vector<std::int64_t>& shape) const {
    const day0::models::WeightSource w(ckpt);
    auto m = w.flattened(name, shape);
    if (!m.is_ok()) qFatal("%s", m.status().message().c_str());
    std::vector<float> row(static_cast<std::size_t>(m->cols));
    std::vector<double> out;
    for (std::int64_t r = 0; r < m->rows; ++r) {
      day0::cpu::decode_row(*m, r, row.data());
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  }
};

// y = x W^T + b over rows.
std::vector<double> lin(const std::vector<double>& x, long n, long in, const std::vector<double>& w, long out,
                        const std::vector<double>* b) {
  std::vector<double> y(static_cast<std::size_t>(n * out));
  for (long t = 0; t < n; ++t)
    for (long o = 0; o < out; ++o) {
      double acc = b ? (*b)[static_cast<std::size_t>(o)] : 0.0;
      for (long i = 0; i < in; ++i)
        acc += x[static_cast<std::size_t>(t * in + i)] * w[static_cast<std::size_t>(o * in + i)];
      y[static_cast<std::size_t>(t * out + o)] = acc;
    }
  return y;
}

void rms(std::vector<double>& x, long n, long d, const std::vector<double>& w, double eps) {
  for (long t = 0; t < n; ++t) {
    double ss = 0;
    for (long i = 0; i < d; ++i) ss += x[static_cast<std::size_t>(t * d + i)] * x[static_cast<std::size_t>(t * d + i)];
    const double inv = 1.0 / std::sqrt(ss / d + eps);
    for (long i = 0; i < d; ++i) x[static_cast<std::size_t>(t * d + i)] *= inv * w[static_cast<std::size_t>(i)];
  }
}

double silu(double v) { return v / (1 + std::exp(-v)); }

// Glm5NextVisionModel in fp64, one image, from the module descriptions: patch positions come
// from the processor's layout (rows of 2x2 blocks, each block's 4 patches row-major).
std::vector<double> reference_tower(const Weights& W, const day0::vision::VisionTowerConfig& c, const VisionInput& in) {
  const long N = in.patches(), D = c.hidden, Hh = c.heads, d = c.head_dim, I = c.intermediate, M = c.merge_size;
  const long O = c.out_hidden, C = c.projection_intermediate, P = in.patch_dim;
  std::vector<double> px(in.pixel_values.begin(), in.pixel_values.end());
  const auto pb = W.get("model.visual.patch_embed.proj.bias", 1, D);
  auto x = lin(px, N, P, W.flat("model.visual.patch_embed.proj.weight", {D, 3, 2, 14, 14}), D, &pb);
  // position of row r: block b = r / 4 in a (grid_w / 2)-wide block grid, inner (r % 4) / 2, r % 2
  std::vector<double> ph(static_cast<std::size_t>(N)), pw(static_cast<std::size_t>(N));
  for (long r = 0; r < N; ++r) {
    const long b = r / (M * M), bw = in.grid_w / M;
    ph[static_cast<std::size_t>(r)] = static_cast<double>((b / bw) * M + (r % (M * M)) / M);
    pw[static_cast<std::size_t>(r)] = static_cast<double>((b % bw) * M + r % M);
  }
  const auto angle = [&](long r, long j) {  // j in [0, d): cat(h freqs, w freqs) twice
    const long k = j % (d / 2);
    const long f = k % (d / 4);
    const double inv = std::pow(c.rope_theta, -2.0 * f / (d / 2.0));
    return (k < d / 4 ? ph : pw)[static_cast<std::size_t>(r)] * inv;
  };
  for (long blk = 0; blk < c.depth; ++blk) {
    const std::string p = "model.visual.blocks." + std::to_string(blk) + ".";
    auto h = x;
    rms(h, N, D, W.get(p + "norm1.weight", 1, D), c.rms_norm_eps);
    const auto qb = W.get(p + "attn.qkv.bias", 1, 3 * D);
    auto qkv = lin(h, N, D, W.get(p + "attn.qkv.weight", 3 * D, D), 3 * D, &qb);
    const auto qn = W.get(p + "attn.q_norm.weight", 1, d), kn = W.get(p + "attn.k_norm.weight", 1, d);
    std::vector<double> q(static_cast<std::size_t>(N * D)), k(q.size()), v(q.size());
    for (long r = 0; r < N; ++r)
      for (long i = 0; i < D; ++i) {
        q[static_cast<std::size_t>(r * D + i)] = qkv[static_cast<std::size_t>(r * 3 * D + i)];
        k[static_cast<std::size_t>(r * D + i)] = qkv[static_cast<std::size_t>(r * 3 * D + D + i)];
        v[static_cast<std::size_t>(r * D + i)] = qkv[static_cast<std::size_t>(r * 3 * D + 2 * D + i)];
      }
    rms(q, N * Hh, d, qn, c.rms_norm_eps);
    rms(k, N * Hh, d, kn, c.rms_norm_eps);
    const auto rope = [&](std::vector<double>& t) {
      std::vector<double> o = t;
      for (long r = 0; r < N; ++r)
        for (long hh = 0; hh < Hh; ++hh)
          for (long j = 0; j < d; ++j) {
            const double* src = t.data() + r * D + hh * d;
            const double rot = j < d / 2 ? -src[j + d / 2] : src[j - d / 2];
            o[static_cast<std::size_t>(r * D + hh * d + j)] =
                src[j] * std::cos(angle(r, j)) + rot * std::sin(angle(r, j));
          }
      t = o;
    };
    rope(q);
    rope(k);
    std::vector<double> att(static_cast<std::size_t>(N * D), 0.0);
    for (long hh = 0; hh < Hh; ++hh)
      for (long i = 0; i < N; ++i) {
        std::vector<double> s(static_cast<std::size_t>(N));
        double mx = -1e300, tot = 0;
        for (long j = 0; j < N; ++j) {
          double dot = 0;
          for (long e = 0; e < d; ++e)
            dot += q[static_cast<std::size_t>(i * D + hh * d + e)] * k[static_cast<std::size_t>(j * D + hh * d + e)];
          s[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, s[static_cast<std::size_t>(j)]);
        }
        for (auto& z : s) tot += (z = std::exp(z - mx));
        for (long j = 0; j < N; ++j)
          for (long e = 0; e < d; ++e)
            att[static_cast<std::size_t>(i * D + hh * d + e)] +=
                s[static_cast<std::size_t>(j)] / tot * v[static_cast<std::size_t>(j * D + hh * d + e)];
      }
    const auto prb = W.get(p + "attn.proj.bias", 1, D);
    const auto o = lin(att, N, D, W.get(p + "attn.proj.weight", D, D), D, &prb);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    h = x;
    rms(h, N, D, W.get(p + "norm2.weight", 1, D), c.rms_norm_eps);
    const auto gb = W.get(p + "mlp.gate_proj.bias", 1, I), ub = W.get(p + "mlp.up_proj.bias", 1, I),
               db = W.get(p + "mlp.down_proj.bias", 1, D);
    auto g = lin(h, N, D, W.get(p + "mlp.gate_proj.weight", I, D), I, &gb);
    const auto u = lin(h, N, D, W.get(p + "mlp.up_proj.weight", I, D), I, &ub);
    for (std::size_t i = 0; i < g.size(); ++i)
      g[i] = silu(std::min(g[i], c.swiglu_limit)) * std::clamp(u[i], -c.swiglu_limit, c.swiglu_limit);
    const auto dn = lin(g, N, I, W.get(p + "mlp.down_proj.weight", D, I), D, &db);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += dn[i];
  }
  rms(x, N, D, W.get("model.visual.post_layernorm.weight", 1, D), c.rms_norm_eps);
  // Conv2d over each block: input [D, 2, 2] with the block's patches at (r % 4) / 2, r % 2.
  const long G = N / (M * M);
  std::vector<double> blocks(static_cast<std::size_t>(G * D * M * M));
  for (long r = 0; r < N; ++r)
    for (long ch = 0; ch < D; ++ch)
      blocks[static_cast<std::size_t>(((r / (M * M)) * D + ch) * M * M + (r % (M * M)))] =
          x[static_cast<std::size_t>(r * D + ch)];
  const auto dsb = W.get("model.visual.downsample.bias", 1, O);
  auto y = lin(blocks, G, D * M * M, W.flat("model.visual.downsample.weight", {O, D, M, M}), O, &dsb);
  auto hm = lin(y, G, O, W.get("model.visual.merger.proj.weight", O, O), O, nullptr);
  const auto lw = W.get("model.visual.merger.post_projection_norm.weight", 1, O),
             lb = W.get("model.visual.merger.post_projection_norm.bias", 1, O);
  for (long t = 0; t < G; ++t) {
    double mean = 0, var = 0;
    for (long i = 0; i < O; ++i) mean += hm[static_cast<std::size_t>(t * O + i)];
    mean /= O;
    for (long i = 0; i < O; ++i) var += std::pow(hm[static_cast<std::size_t>(t * O + i)] - mean, 2);
    var /= O;
    for (long i = 0; i < O; ++i) {
      double& z = hm[static_cast<std::size_t>(t * O + i)];
      z = (z - mean) / std::sqrt(var + 1e-5) * lw[static_cast<std::size_t>(i)] + lb[static_cast<std::size_t>(i)];
      z = 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    }
  }
  auto mg = lin(hm, G, O, W.get("model.visual.merger.gate_proj.weight", C, O), C, nullptr);
  const auto mu = lin(hm, G, O, W.get("model.visual.merger.up_proj.weight", C, O), C, nullptr);
  for (std::size_t i = 0; i < mg.size(); ++i)
    mg[i] = silu(std::min(mg[i], c.swiglu_limit)) * std::clamp(mu[i], -c.swiglu_limit, c.swiglu_limit);
  return lin(mg, G, C, W.get("model.visual.merger.down_proj.weight", O, C), O, nullptr);
}

}  // namespace

class TestVisionTower : public QObject {
  Q_OBJECT

  day0::ThreadPool pool_{2};
  std::unique_ptr<day0::models::LoadedModel> model_;
  day0::vision::ImageInputModel* images_ = nullptr;

 private slots:
  void initTestCase() {
    auto m = day0::models::load_model(tiny_model(), pool_);
    QVERIFY2(m.is_ok(), m.status().message().c_str());
    model_ = std::move(*m);
    images_ = day0::vision::image_input(*model_);
    QVERIFY(images_ != nullptr);
    QCOMPARE(images_->image_tokens().image, 358);
    QCOMPARE(images_->image_tokens().begin, 334);
    QCOMPARE(images_->image_tokens().end, 335);
  }

  void patch_positions_are_block_major() {
    const auto pos = day0::vision::patch_positions(1, 4, 6, 2);
    QCOMPARE(pos.size(), std::size_t{48});
    // first block (0,0): (0,0) (0,1) (1,0) (1,1); second block starts at column 2
    const std::int64_t want[] = {0, 0, 0, 1, 1, 0, 1, 1, 0, 2, 0, 3, 1, 2, 1, 3};
    for (int i = 0; i < 16; ++i) QCOMPARE(pos[static_cast<std::size_t>(i)], want[i]);
    // every (row, column) once
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (std::size_t i = 0; i < pos.size(); i += 2) seen.insert({pos[i], pos[i + 1]});
    QCOMPARE(seen.size(), std::size_t{24});
  }

  void tower_shapes_and_direct_fp64_reference() {
    auto config = day0::io::ModelConfig::load(tiny_model());
    QVERIFY(config.is_ok());
    auto vc = day0::vision::parse_vision_config(*config);
    QVERIFY2(vc.is_ok(), vc.status().message().c_str());
    auto input = day0::vision::preprocess_image(random_image(140, 112, 11), images_->processor());
    QVERIFY2(input.is_ok(), input.status().message().c_str());
    QCOMPARE(input->grid_h, 8);
    QCOMPARE(input->grid_w, 10);
    day0::models::ForwardTrace trace;
    auto enc = images_->encode_image(*input, &trace);
    QVERIFY2(enc.is_ok(), enc.status().message().c_str());
    QCOMPARE(enc->tokens, 20);
    QCOMPARE(enc->features.size(), std::size_t{20 * 64});
    QCOMPARE(trace.tensors["vision.patch_embed"].size(), std::size_t{80 * 32});
    QCOMPARE(trace.tensors["vision.block.1"].size(), std::size_t{80 * 32});
    QCOMPARE(trace.tensors["vision.downsample"].size(), std::size_t{20 * 64});
    for (float v : enc->features) QVERIFY(std::isfinite(v));

    auto ckpt = day0::io::Checkpoint::open(tiny_model());
    QVERIFY(ckpt.is_ok());
    Weights W{std::shared_ptr<const day0::io::Checkpoint>(std::move(*ckpt))};
    const auto ref = reference_tower(W, *vc, *input);
    const double err = rel_l2(enc->features, ref);
    qInfo("tower vs direct fp64: rel L2 %.3g", err);
    QVERIFY2(err < 1e-5, qPrintable(QString::number(err)));

    // Same pixels, same hash and features; other pixels, other ones.
    auto again = images_->encode_image(*input, nullptr);
    QVERIFY(again.is_ok());
    QVERIFY(again->features == enc->features);
    QCOMPARE(again->hash, enc->hash);
    auto other_in = day0::vision::preprocess_image(random_image(140, 112, 12), images_->processor());
    auto other = images_->encode_image(*other_in, nullptr);
    QVERIFY(other->hash != enc->hash);
    QVERIFY(other->features != enc->features);
  }

  void placeholders_expand_and_locate() {
    const std::vector<std::int32_t> prompt{5, 334, 358, 335, 7, 334, 358, 335, 9};
    const std::vector<std::int64_t> counts{3, 2};
    auto ex = day0::vision::expand_image_placeholders(prompt, 358, counts);
    QVERIFY(ex.is_ok());
    const std::vector<std::int32_t> want{5, 334, 358, 358, 358, 335, 7, 334, 358, 358, 335, 9};
    QVERIFY(*ex == want);
    std::vector<day0::vision::EncodedImage> ims(2);
    ims[0].tokens = 3;
    ims[0].hash = 111;
    ims[1].tokens = 2;
    ims[1].hash = 222;
    auto where = day0::vision::locate_image_rows(*ex, 358, ims);
    QVERIFY(where.is_ok());
    const std::vector<std::int32_t> img{-1, -1, 0, 0, 0, -1, -1, -1, 1, 1, -1, -1};
    const std::vector<std::int64_t> row{0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0};
    QVERIFY(where->image == img);
    QVERIFY(where->row == row);
    // Keys: text keeps its ids, image rows are negative and follow the image's hash.
    const auto k1 = day0::vision::history_keys(*ex, *where, ims);
    ims[1].hash = 333;
    const auto k2 = day0::vision::history_keys(*ex, *where, ims);
    for (std::size_t p = 0; p < want.size(); ++p) {
      if (img[p] < 0)
        QCOMPARE(k1[p], std::int64_t{want[p]});
      else
        QVERIFY(k1[p] < 0);
      QCOMPARE(k1[p] == k2[p], img[p] != 1);
    }
    QVERIFY(k1[2] != k1[3]);  // rows of one image differ
    // Mismatches are errors.
    QVERIFY(!day0::vision::expand_image_placeholders(prompt, 358, std::vector<std::int64_t>{3}).is_ok());
    QVERIFY(!day0::vision::expand_image_placeholders(prompt, 358, std::vector<std::int64_t>{3, 0}).is_ok());
    ims[1].tokens = 3;
    QVERIFY(!day0::vision::locate_image_rows(*ex, 358, ims).is_ok());
    ims.pop_back();
    QVERIFY(!day0::vision::locate_image_rows(*ex, 358, ims).is_ok());
  }

  void image_prompt_feeds_consistently() {
    auto in_a = day0::vision::preprocess_image(random_image(140, 112, 21), images_->processor());
    auto in_b = day0::vision::preprocess_image(random_image(112, 112, 22), images_->processor());
    QVERIFY(in_a.is_ok() && in_b.is_ok());
    std::vector<day0::vision::EncodedImage> ims;
    ims.push_back(*images_->encode_image(*in_a, nullptr));
    ims.push_back(*images_->encode_image(*in_b, nullptr));
    QCOMPARE(ims[1].tokens, 16);
    const std::vector<std::int32_t> prompt{11, 12, 334, 358, 335, 13, 334, 358, 335, 14, 15};
    auto ex = day0::vision::expand_image_placeholders(prompt, 358, std::vector<std::int64_t>{20, 16});
    QVERIFY(ex.is_ok());
    QCOMPARE(ex->size(), std::size_t{11 - 2 + 36});
    auto where = day0::vision::locate_image_rows(*ex, 358, ims);
    QVERIFY(where.is_ok());
    const auto T = static_cast<std::int64_t>(ex->size());
    const std::int64_t V = model_->vocab_size();

    std::vector<float> all(static_cast<std::size_t>(T * V));
    auto s1 = model_->new_state();
    QVERIFY(day0::vision::forward_with_images(*images_, *s1, *ex, *where, ims, 0, T, T, all.data(), nullptr).is_ok());
    // One position at a time with the cache.
    auto s2 = model_->new_state();
    std::vector<float> step(static_cast<std::size_t>(V));
    double worst = 0;
    for (std::int64_t p = 0; p < T; ++p) {
      QVERIFY(day0::vision::forward_with_images(*images_, *s2, *ex, *where, ims, p, p + 1, 1, step.data(), nullptr)
                  .is_ok());
      double num = 0, den = 0;
      for (std::int64_t v = 0; v < V; ++v) {
        const double a = all[static_cast<std::size_t>(p * V + v)], b = step[static_cast<std::size_t>(v)];
        num += (a - b) * (a - b);
        den += b * b;
      }
      worst = std::max(worst, std::sqrt(num / den));
    }
    qInfo("image prompt, prefill vs one position at a time: max rel L2 %.3g", worst);
    QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));

    // The image rows really carry the features: a text-only embedding of the same ids differs.
    std::vector<float> text_only(static_cast<std::size_t>(T * V));
    auto s3 = model_->new_state();
    QVERIFY(model_->forward(*s3, *ex, T, text_only.data(), nullptr).is_ok());
    QVERIFY(std::equal(all.begin(), all.begin() + 3 * V, text_only.begin()));  // before the first image
    QVERIFY(!std::equal(all.begin() + 3 * V, all.begin() + 4 * V, text_only.begin() + 3 * V));

    // Another second image: rows before it are unchanged, rows from it on change.
    auto in_c = day0::vision::preprocess_image(random_image(112, 112, 23), images_->processor());
    ims[1] = *images_->encode_image(*in_c, nullptr);
    std::vector<float> changed(static_cast<std::size_t>(T * V));
    auto s4 = model_->new_state();
    QVERIFY(
        day0::vision::forward_with_images(*images_, *s4, *ex, *where, ims, 0, T, T, changed.data(), nullptr).is_ok());
    const std::int64_t second = 3 + 20 + 3;  // 11 12 <b>, 20 image rows, <e> 13 <b>: image two starts here
    QCOMPARE((*ex)[static_cast<std::size_t>(second)], 358);
    QCOMPARE((*ex)[static_cast<std::size_t>(second - 1)], 334);
    QVERIFY(std::equal(all.begin(), all.begin() + second * V, changed.begin()));
    QVERIFY(!std::equal(all.begin() + second * V, all.end(), changed.begin() + second * V));
  }

  void text_only_models_take_no_images() {
    day0::ThreadPool pool(1);
    auto m = day0::models::load_model(fs::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-gpt-oss", pool);
    QVERIFY2(m.is_ok(), m.status().message().c_str());
    QVERIFY(day0::vision::image_input(**m) == nullptr);
  }
};

QTEST_APPLESS_MAIN(TestVisionTower)
#include "test_vision_tower.moc"
