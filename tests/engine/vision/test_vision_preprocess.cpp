// The GLM image processor's geometry and pixel layout: smart-resize canvases against cases worked
// by hand from the processor's formula, the antialiased bicubic resize against a direct fp64
// two-dimensional evaluation of the same kernel, normalisation, padding and the block-major
// patch order with temporal duplication.
#include <QtTest>

#include <cmath>
#include <random>

#include "vision/glm5_vision_preprocess.h"

using day0::vision::ProcessorConfig;

namespace {

// Keys' cubic with a = -0.5, written out from its definition (piecewise polynomial in |x|).
double keys_cubic(double x) {
  x = std::abs(x);
  const double a = -0.5;
  if (x < 1) return (a + 2) * x * x * x - (a + 3) * x * x + 1;
  if (x < 2) return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
  return 0;
}

// One axis of the antialiased filter: weights over input samples for output index i, in fp64.
// Shrinking stretches the kernel by in/out; samples lie at input centres j + 0.5.
std::vector<std::pair<long, double>> axis_weights(long in, long out, long i) {
  const double s = static_cast<double>(in) / out;
  const double stretch = std::max(s, 1.0);
  const double centre = (i + 0.5) * s;
  const double support = 2.0 * stretch;
  std::vector<std::pair<long, double>> w;
  double total = 0;
  const long lo = std::max(0L, static_cast<long>(centre - support + 0.5));
  const long hi = std::min(in, static_cast<long>(centre + support + 0.5));
  for (long j = lo; j < hi; ++j) {
    const double v = keys_cubic((j + 0.5 - centre) / stretch);
    w.emplace_back(j, v);
    total += v;
  }
  for (auto& p : w) p.second /= total;
  return w;
}

double direct_2d(const std::vector<float>& img, long h, long w, long oh, long ow, long y, long x) {
  double acc = 0;
  for (auto [jy, wy] : axis_weights(h, oh, y))
    for (auto [jx, wx] : axis_weights(w, ow, x)) acc += wy * wx * img[static_cast<std::size_t>(jy * w + jx)];
  return acc;
}

day0::io::RgbImage coded_image(long w, long h) {
  // R = x, G = y, B = (x + 2y) mod 256: every pixel says where it came from.
  day0::io::RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<std::size_t>(w * h * 3));
  for (long y = 0; y < h; ++y)
    for (long x = 0; x < w; ++x) {
      auto* p = img.pixels.data() + (y * w + x) * 3;
      p[0] = static_cast<std::uint8_t>(x);
      p[1] = static_cast<std::uint8_t>(y);
      p[2] = static_cast<std::uint8_t>((x + 2 * y) % 256);
    }
  return img;
}

}  // namespace

class TestVisionPreprocess : public QObject {
  Q_OBJECT

 private slots:
  void canvases_match_hand_worked_cases() {
    ProcessorConfig c;  // processor defaults: 28 px, 16..8000 tokens, temporal 2
    // 112x140 (h x w): aligned, 2*112*140 = 31360 >= 16 tokens * 1568 = 25088: unchanged, 8x10 patches.
    auto a = day0::vision::plan_canvas(112, 140, c);
    QVERIFY(a.is_ok());
    QCOMPARE(a->height, 112);
    QCOMPARE(a->width, 140);
    QCOMPARE(a->content_height, 112);
    QCOMPARE(a->content_width, 140);
    // 56x84: 2*56*84 = 9408 < 25088, so scale = sqrt(25088 / 9408) = 1.63299; ceil(56 * 1.633) = 92
    // -> 112, ceil(84 * 1.633) = 138 -> 140. Content scale min(112/56, 140/84) = 1.6667 (not capped:
    // the image holds fewer than 16 tokens): floor(93.33) = 93, floor(140.0) = 140.
    auto b = day0::vision::plan_canvas(56, 84, c);
    QVERIFY(b.is_ok());
    QCOMPARE(b->height, 112);
    QCOMPARE(b->width, 140);
    QCOMPARE(b->content_height, 93);
    QCOMPARE(b->content_width, 140);
    // 1000x2000: aligned to 1008x2016, 2*1008*2016 = 4064256 <= 8000 * 1568: canvas 1008x2016; the
    // content scale min(1.008, 1.008) is capped at 1, so the image is only padded.
    auto d = day0::vision::plan_canvas(1000, 2000, c);
    QVERIFY(d.is_ok());
    QCOMPARE(d->height, 1008);
    QCOMPARE(d->width, 2016);
    QCOMPARE(d->content_height, 1000);
    QCOMPARE(d->content_width, 2000);
    // 280x420 with max 64 tokens (100352 px over 2 frames: canvas area <= 50176): the tallest
    // content height that fits is 168 (252 wide -> 168*252 = 42336); 169 needs 196 x 280 = 54880.
    c.max_image_tokens = 64;
    auto e = day0::vision::plan_canvas(280, 420, c);
    QVERIFY(e.is_ok());
    QCOMPARE(e->height, 168);
    QCOMPARE(e->width, 252);
    QCOMPARE(e->content_height, 168);
    QCOMPARE(e->content_width, 252);
    // 1x1 with the defaults: scale = sqrt(25088 / 2) = 112 -> 112x112 canvas, content 112x112.
    c = {};
    auto f = day0::vision::plan_canvas(1, 1, c);
    QVERIFY(f.is_ok());
    QCOMPARE(f->height, 112);
    QCOMPARE(f->width, 112);
    QCOMPARE(f->content_height, 112);
    // Extreme aspect 10 x 5000 with max 64 tokens: bisection over content heights.
    c.max_image_tokens = 64;
    auto g = day0::vision::plan_canvas(10, 5000, c);
    QVERIFY(g.is_ok());
    QVERIFY(g->height % 28 == 0 && g->width % 28 == 0);
    QVERIFY(2 * g->height * g->width <= 64 * 1568);
    // max_image_tokens below one aligned patch pair is an error, not a crash.
    c.max_image_tokens = 0;
    QVERIFY(!day0::vision::plan_canvas(50, 50, c).is_ok());
  }

  void antialiased_bicubic_matches_direct_fp64() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 255.0f);
    const long cases[][4] = {{37, 53, 13, 17}, {20, 30, 33, 47}, {64, 48, 64, 20}, {31, 29, 9, 29}, {50, 40, 93, 14}};
    for (const auto& k : cases) {
      const long h = k[0], w = k[1], oh = k[2], ow = k[3];
      std::vector<float> img(static_cast<std::size_t>(h * w));
      for (float& v : img) v = u(rng);
      std::vector<float> out(static_cast<std::size_t>(oh * ow));
      day0::vision::resize_bicubic_antialias(img.data(), 1, h, w, oh, ow, out.data());
      double worst = 0;
      for (long y = 0; y < oh; ++y)
        for (long x = 0; x < ow; ++x)
          worst =
              std::max(worst, std::abs(out[static_cast<std::size_t>(y * ow + x)] - direct_2d(img, h, w, oh, ow, y, x)));
      QVERIFY2(worst < 2e-3,
               qPrintable(QString("%1x%2 -> %3x%4: max |diff| %5").arg(h).arg(w).arg(oh).arg(ow).arg(worst)));
    }
    // A constant image stays constant (weights sum to one) whatever the scale.
    std::vector<float> flat(30 * 40, 77.0f), small(11 * 13);
    day0::vision::resize_bicubic_antialias(flat.data(), 1, 30, 40, 11, 13, small.data());
    for (float v : small) QVERIFY(std::abs(v - 77.0f) < 1e-3f);
  }

  void aligned_image_patches_are_block_major_and_normalised() {
    ProcessorConfig c;
    c.min_image_tokens = 4;
    const long H = 56, W = 84;  // 4 x 6 patches, 2 x 3 merge blocks, no resize with 4 tokens minimum
    const auto img = coded_image(W, H);
    auto v = day0::vision::preprocess_image(img, c);
    QVERIFY2(v.is_ok(), v.status().message().c_str());
    QCOMPARE(v->grid_t, 1);
    QCOMPARE(v->grid_h, 4);
    QCOMPARE(v->grid_w, 6);
    QCOMPARE(v->patch_dim, 3 * 2 * 14 * 14);
    const long blocks_w = 6 / 2;
    for (long r = 0; r < v->patches(); ++r) {
      const long block = r / 4, inner = r % 4;
      const long py0 = ((block / blocks_w) * 2 + inner / 2) * 14;
      const long px0 = ((block % blocks_w) * 2 + inner % 2) * 14;
      const float* row = v->pixel_values.data() + r * v->patch_dim;
      for (long ch = 0; ch < 3; ++ch)
        for (long t = 0; t < 2; ++t)
          for (long y = 0; y < 14; ++y)
            for (long x = 0; x < 14; ++x) {
              const std::uint8_t raw = img.pixels[static_cast<std::size_t>(((py0 + y) * W + px0 + x) * 3 + ch)];
              const double want = (raw / 255.0 - c.image_mean[static_cast<std::size_t>(ch)]) /
                                  c.image_std[static_cast<std::size_t>(ch)];
              const float got = row[((ch * 2 + t) * 14 + y) * 14 + x];
              if (std::abs(got - want) > 2e-6)
                QFAIL(qPrintable(QString("patch %1 c%2 t%3 (%4,%5): %6 vs %7")
                                     .arg(r)
                                     .arg(ch)
                                     .arg(t)
                                     .arg(y)
                                     .arg(x)
                                     .arg(got)
                                     .arg(want)));
            }
    }
  }

  void resized_image_is_padded_with_zero_pixels() {
    ProcessorConfig c;  // 56x84 -> content 93x140 in a 112x140 canvas (see the canvas case above)
    const auto img = coded_image(84, 56);
    day0::vision::Canvas canvas;
    auto px = day0::vision::canvas_pixels(img, c, &canvas);
    QVERIFY(px.is_ok());
    QCOMPARE(canvas.content_height, 93);
    QCOMPARE(px->size(), std::size_t{3 * 112 * 140});
    for (long ch = 0; ch < 3; ++ch)
      for (long y = 93; y < 112; ++y)
        for (long x = 0; x < 140; ++x) QCOMPARE((*px)[static_cast<std::size_t>((ch * 112 + y) * 140 + x)], 0.0f);
    // Inside: integers in 0..255; the green channel (= source row) increases down the content.
    for (float v : *px) QVERIFY(v >= 0 && v <= 255 && v == std::nearbyint(v));
    const float* green = px->data() + 112 * 140;
    QVERIFY(green[10 * 140 + 70] < green[80 * 140 + 70]);
    auto v = day0::vision::preprocess_image(img, c);
    QVERIFY(v.is_ok());
    QCOMPARE(v->grid_h, 8);
    QCOMPARE(v->grid_w, 10);
    // The last patch row holds padding only: (0 - mean) / std in every channel.
    const float* last = v->pixel_values.data() + (v->patches() - 1) * v->patch_dim;
    for (long ch = 0; ch < 3; ++ch)
      QVERIFY(std::abs(last[ch * 2 * 196] +
                       c.image_mean[static_cast<std::size_t>(ch)] / c.image_std[static_cast<std::size_t>(ch)]) < 1e-5);
  }

  void bad_inputs_are_errors() {
    ProcessorConfig c;
    day0::io::RgbImage empty;
    QVERIFY(!day0::vision::preprocess_image(empty, c).is_ok());
    day0::io::RgbImage lying = coded_image(4, 4);
    lying.width = 1000;
    QVERIFY(!day0::vision::preprocess_image(lying, c).is_ok());
  }
};

QTEST_APPLESS_MAIN(TestVisionPreprocess)
#include "test_vision_preprocess.moc"
