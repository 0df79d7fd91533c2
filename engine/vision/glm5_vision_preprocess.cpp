#include "vision/glm5_vision_preprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "io/json_util.h"

namespace day0::vision {
namespace {

constexpr std::int64_t kMaxCanvasSide = 1 << 15;

std::int64_t align_up(std::int64_t v, std::int64_t f) { return (v + f - 1) / f * f; }

// Keys' cubic convolution kernel with a = -0.5, the one PyTorch's antialiased path uses.
float cubic_filter(float x) {
  constexpr float a = -0.5f;
  x = std::fabs(x);
  if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
  if (x < 2.0f) return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
  return 0.0f;
}

// Per output index: the first input index, and normalised weights over the taps that follow.
struct Taps {
  std::vector<std::int64_t> first;
  std::vector<std::int64_t> count;
  std::vector<float> weights;  // [out, max_taps]
  std::int64_t max_taps = 0;
};

// Mirrors PyTorch's float32 index/weight computation so that results agree to rounding.
Taps compute_taps(std::int64_t in, std::int64_t out) {
  Taps t;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
  const float invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
  t.max_taps = static_cast<std::int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<std::size_t>(out));
  t.count.resize(static_cast<std::size_t>(out));
  t.weights.assign(static_cast<std::size_t>(out * t.max_taps), 0.0f);
  for (std::int64_t i = 0; i < out; ++i) {
    const float center = scale * (static_cast<float>(i) + 0.5f);
    const std::int64_t lo = std::max<std::int64_t>(static_cast<std::int64_t>(center - support + 0.5f), 0);
    const std::int64_t hi = std::min<std::int64_t>(static_cast<std::int64_t>(center + support + 0.5f), in);
    const std::int64_t n = std::min(hi - lo, t.max_taps);
    float* w = t.weights.data() + i * t.max_taps;
    float total = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) {
      w[j] = cubic_filter((static_cast<float>(j + lo) - center + 0.5f) * invscale);
      total += w[j];
    }
    if (total != 0.0f)
      for (std::int64_t j = 0; j < n; ++j) w[j] /= total;
    t.first[static_cast<std::size_t>(i)] = lo;
    t.count[static_cast<std::size_t>(i)] = n;
  }
  return t;
}

Status read_overrides(const std::filesystem::path& file, ProcessorConfig& c) {
  DAY0_ASSIGN_OR_RETURN(const nlohmann::json j, io::read_json_file(file, 1 << 20));
  if (!j.is_object()) return error(ErrorCode::corrupt_data, file.string() + ": expected a JSON object");
  const auto get_int = [&](const char* key, std::int64_t& dst, std::int64_t lo, std::int64_t hi) -> Status {
    if (!j.contains(key) || j[key].is_null()) return Status::ok();
    if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < lo || j[key].get<std::int64_t>() > hi)
      return error(ErrorCode::corrupt_data,
                   fmt::format("{}: {} must be an integer in [{}, {}]", file.string(), key, lo, hi));
    dst = j[key].get<std::int64_t>();
    return Status::ok();
  };
  const auto get_triple = [&](const char* key, std::array<double, 3>& dst) -> Status {
    if (!j.contains(key) || j[key].is_null()) return Status::ok();
    const auto& v = j[key];
    if (!v.is_array() || v.size() != 3 || !v[0].is_number() || !v[1].is_number() || !v[2].is_number())
      return error(ErrorCode::corrupt_data, file.string() + ": " + key + " must be a list of three numbers");
    for (std::size_t i = 0; i < 3; ++i) dst[i] = v[i].get<double>();
    return Status::ok();
  };
  DAY0_RETURN_IF_ERROR(get_int("patch_size", c.patch_size, 1, 1024));
  DAY0_RETURN_IF_ERROR(get_int("temporal_patch_size", c.temporal_patch_size, 1, 16));
  DAY0_RETURN_IF_ERROR(get_int("merge_size", c.merge_size, 1, 16));
  DAY0_RETURN_IF_ERROR(get_int("min_image_tokens", c.min_image_tokens, 1, 1 << 20));
  DAY0_RETURN_IF_ERROR(get_int("max_image_tokens", c.max_image_tokens, 1, 1 << 20));
  DAY0_RETURN_IF_ERROR(get_triple("image_mean", c.image_mean));
  DAY0_RETURN_IF_ERROR(get_triple("image_std", c.image_std));
  if (j.contains("rescale_factor") && !j["rescale_factor"].is_null()) {
    if (!j["rescale_factor"].is_number() || !(j["rescale_factor"].get<double>() > 0))
      return error(ErrorCode::corrupt_data, file.string() + ": rescale_factor must be a positive number");
    c.rescale_factor = j["rescale_factor"].get<double>();
  }
  for (double s : c.image_std)
    if (!(s > 0)) return error(ErrorCode::corrupt_data, file.string() + ": image_std values must be positive");
  if (c.min_image_tokens > c.max_image_tokens)
    return error(ErrorCode::corrupt_data, file.string() + ": min_image_tokens exceeds max_image_tokens");
  return Status::ok();
}

}  // namespace

Result<ProcessorConfig> load_processor_config(const io::ModelConfig& config, const std::filesystem::path& dir) {
  ProcessorConfig c;
  if (const auto v = config.vision()) {
    DAY0_ASSIGN_OR_RETURN(c.patch_size, v->get_int_or("patch_size", c.patch_size, {1, 1024}));
    DAY0_ASSIGN_OR_RETURN(c.temporal_patch_size, v->get_int_or("temporal_patch_size", c.temporal_patch_size, {1, 16}));
    DAY0_ASSIGN_OR_RETURN(c.merge_size, v->get_int_or("spatial_merge_size", c.merge_size, {1, 16}));
  }
  const auto file = dir / "preprocessor_config.json";
  std::error_code ec;
  if (std::filesystem::is_regular_file(file, ec)) DAY0_RETURN_IF_ERROR(read_overrides(file, c));
  return c;
}

Result<std::array<std::int64_t, 2>> smart_resize(std::int64_t num_frames, std::int64_t height, std::int64_t width,
                                                 std::int64_t temporal_factor, std::int64_t factor,
                                                 std::int64_t min_tokens, std::int64_t max_tokens) {
  if (height <= 0 || width <= 0 || factor <= 0 || temporal_factor <= 0 || num_frames <= 0)
    return error(ErrorCode::invalid_argument, fmt::format("cannot fit a {}x{} image to the patch grid", width, height));
  const std::int64_t per_token = temporal_factor * factor * factor;
  const std::int64_t min_pixels = min_tokens * per_token;
  const std::int64_t max_pixels = max_tokens * per_token;
  const std::int64_t frames = std::max<std::int64_t>(
      temporal_factor,
      static_cast<std::int64_t>(std::nearbyint(static_cast<double>(num_frames) / temporal_factor)) * temporal_factor);
  std::int64_t h = align_up(height, factor), w = align_up(width, factor);
  if (frames * h * w < min_pixels) {
    const double scale =
        std::sqrt(static_cast<double>(min_pixels) / (static_cast<double>(num_frames) * height * width));
    h = align_up(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(height * scale))), factor);
    w = align_up(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(width * scale))), factor);
  }
  if (frames * h * w > max_pixels) {
    if (max_pixels < frames * factor * factor)
      return error(ErrorCode::invalid_argument,
                   fmt::format("max_image_tokens {} cannot hold one aligned patch", max_tokens));
    // The tallest content height whose aligned canvas fits the budget, by bisection.
    std::int64_t lo = 1, hi = height, best_h = factor, best_w = factor;
    while (lo <= hi) {
      const std::int64_t ch = (lo + hi) / 2;
      const auto cw = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(std::floor(static_cast<double>(width) * static_cast<double>(ch) / height)));
      const std::int64_t ah = align_up(ch, factor), aw = align_up(cw, factor);
      if (frames * ah * aw <= max_pixels) {
        best_h = ah;
        best_w = aw;
        lo = ch + 1;
      } else {
        hi = ch - 1;
      }
    }
    h = best_h;
    w = best_w;
  }
  return std::array<std::int64_t, 2>{h, w};
}

Result<Canvas> plan_canvas(std::int64_t height, std::int64_t width, const ProcessorConfig& c) {
  const std::int64_t factor = c.factor();
  DAY0_ASSIGN_OR_RETURN(const auto hw, smart_resize(c.temporal_patch_size, height, width, c.temporal_patch_size, factor,
                                                    c.min_image_tokens, c.max_image_tokens));
  Canvas canvas;
  canvas.height = hw[0];
  canvas.width = hw[1];
  if (canvas.height > kMaxCanvasSide || canvas.width > kMaxCanvasSide)
    return error(ErrorCode::invalid_argument, fmt::format("a {}x{} image needs a {}x{} canvas, larger than allowed",
                                                          width, height, canvas.width, canvas.height));
  double scale = std::min(static_cast<double>(canvas.height) / height, static_cast<double>(canvas.width) / width);
  const std::int64_t per_token = c.temporal_patch_size * factor * factor;
  if (c.temporal_patch_size * height * width >= per_token * c.min_image_tokens) scale = std::min(1.0, scale);
  canvas.content_height =
      std::max<std::int64_t>(1, std::min(canvas.height, static_cast<std::int64_t>(std::floor(height * scale))));
  canvas.content_width =
      std::max<std::int64_t>(1, std::min(canvas.width, static_cast<std::int64_t>(std::floor(width * scale))));
  return canvas;
}

Result<std::int64_t> image_token_count(std::int64_t height, std::int64_t width, const ProcessorConfig& config) {
  if (height <= 0 || width <= 0)
    return error(ErrorCode::invalid_argument, fmt::format("an image of {}x{} pixels has no size", width, height));
  DAY0_ASSIGN_OR_RETURN(const Canvas canvas, plan_canvas(height, width, config));
  return (canvas.height / config.factor()) * (canvas.width / config.factor());
}

void resize_bicubic_antialias(const float* in, std::int64_t channels, std::int64_t h, std::int64_t w, std::int64_t oh,
                              std::int64_t ow, float* out) {
  // Width pass into [channels, h, ow] (skipped when the width is unchanged), then height pass.
  std::vector<float> tmp;
  const float* src = in;
  if (ow != w) {
    const Taps tx = compute_taps(w, ow);
    tmp.assign(static_cast<std::size_t>(channels * h * ow), 0.0f);
    for (std::int64_t r = 0; r < channels * h; ++r) {
      const float* row = in + r * w;
      float* dst = tmp.data() + r * ow;
      for (std::int64_t x = 0; x < ow; ++x) {
        const float* wt = tx.weights.data() + x * tx.max_taps;
        const float* s = row + tx.first[static_cast<std::size_t>(x)];
        float acc = 0.0f;
        for (std::int64_t j = 0; j < tx.count[static_cast<std::size_t>(x)]; ++j) acc += wt[j] * s[j];
        dst[x] = acc;
      }
    }
    src = tmp.data();
  }
  if (oh == h) {
    std::copy(src, src + channels * h * ow, out);
    return;
  }
  const Taps ty = compute_taps(h, oh);
  for (std::int64_t c = 0; c < channels; ++c) {
    const float* plane = src + c * h * ow;
    float* dst = out + c * oh * ow;
    for (std::int64_t y = 0; y < oh; ++y) {
      const float* wt = ty.weights.data() + y * ty.max_taps;
      const std::int64_t first = ty.first[static_cast<std::size_t>(y)];
      for (std::int64_t x = 0; x < ow; ++x) {
        float acc = 0.0f;
        for (std::int64_t j = 0; j < ty.count[static_cast<std::size_t>(y)]; ++j)
          acc += wt[j] * plane[(first + j) * ow + x];
        dst[y * ow + x] = acc;
      }
    }
  }
}

Result<std::vector<float>> canvas_pixels(const io::RgbImage& image, const ProcessorConfig& config, Canvas* canvas_out) {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width * image.height * 3))
    return error(ErrorCode::invalid_argument, "the image has no pixels");
  DAY0_ASSIGN_OR_RETURN(const Canvas canvas, plan_canvas(image.height, image.width, config));
  const std::int64_t H = image.height, W = image.width;
  std::vector<float> planar(static_cast<std::size_t>(3 * H * W));
  for (std::int64_t y = 0; y < H; ++y)
    for (std::int64_t x = 0; x < W; ++x)
      for (std::int64_t c = 0; c < 3; ++c)
        planar[static_cast<std::size_t>((c * H + y) * W + x)] =
            image.pixels[static_cast<std::size_t>((y * W + x) * 3 + c)];
  const std::int64_t ch = canvas.content_height, cw = canvas.content_width;
  std::vector<float> content;
  if (ch != H || cw != W) {
    content.resize(static_cast<std::size_t>(3 * ch * cw));
    resize_bicubic_antialias(planar.data(), 3, H, W, ch, cw, content.data());
    // Back to 8-bit values as torchvision does for uint8 images: clamp, round half to even.
    for (float& v : content) v = std::nearbyint(std::clamp(v, 0.0f, 255.0f));
  } else {
    content = std::move(planar);
  }
  std::vector<float> out(static_cast<std::size_t>(3 * canvas.height * canvas.width), 0.0f);
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t y = 0; y < ch; ++y)
      std::copy_n(content.data() + (c * ch + y) * cw, cw, out.data() + (c * canvas.height + y) * canvas.width);
  if (canvas_out) *canvas_out = canvas;
  return out;
}

Result<VisionInput> preprocess_image(const io::RgbImage& image, const ProcessorConfig& config) {
  Canvas canvas;
  DAY0_ASSIGN_OR_RETURN(std::vector<float> px, canvas_pixels(image, config, &canvas));
  const std::int64_t Hc = canvas.height, Wc = canvas.width;
  // Normalisation with mean and std scaled by 1 / rescale_factor, as transformers fuses them.
  for (std::int64_t c = 0; c < 3; ++c) {
    const auto mean = static_cast<float>(config.image_mean[static_cast<std::size_t>(c)] / config.rescale_factor);
    const auto stdv = static_cast<float>(config.image_std[static_cast<std::size_t>(c)] / config.rescale_factor);
    float* plane = px.data() + c * Hc * Wc;
    for (std::int64_t i = 0; i < Hc * Wc; ++i) plane[i] = (plane[i] - mean) / stdv;
  }
  const std::int64_t P = config.patch_size, T = config.temporal_patch_size, M = config.merge_size;
  VisionInput v;
  v.canvas = canvas;
  v.grid_h = Hc / P;
  v.grid_w = Wc / P;
  v.patch_dim = 3 * T * P * P;
  v.pixel_values.resize(static_cast<std::size_t>(v.patches() * v.patch_dim));
  std::int64_t row = 0;
  for (std::int64_t bh = 0; bh < v.grid_h / M; ++bh)
    for (std::int64_t bw = 0; bw < v.grid_w / M; ++bw)
      for (std::int64_t mh = 0; mh < M; ++mh)
        for (std::int64_t mw = 0; mw < M; ++mw, ++row) {
          const std::int64_t y0 = (bh * M + mh) * P, x0 = (bw * M + mw) * P;
          float* dst = v.pixel_values.data() + row * v.patch_dim;
          for (std::int64_t c = 0; c < 3; ++c)
            for (std::int64_t t = 0; t < T; ++t)
              for (std::int64_t py = 0; py < P; ++py) {
                const float* src = px.data() + (c * Hc + y0 + py) * Wc + x0;
                std::copy_n(src, P, dst);
                dst += P;
              }
        }
  return v;
}

}  // namespace day0::vision
