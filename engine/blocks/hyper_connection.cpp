#include "blocks/hyper_connection.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace day0::blocks {

Result<HcWeights> bind_hyper_connection(const models::WeightSource& weights, const HcConfig& config,
                                        const std::string& prefix) {
  HcWeights w;
  DAY0_ASSIGN_OR_RETURN(w.fn, weights.matrix(prefix + "fn", config.mix(), config.streams * config.hidden));
  DAY0_ASSIGN_OR_RETURN(w.base, weights.vector(prefix + "base", config.mix()));
  DAY0_ASSIGN_OR_RETURN(w.scale, weights.vector(prefix + "scale", 3));
  return w;
}

namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// comb: [m, m] row-major, c[i * m + j]. Divides every column j by (sum_i c[i][j] + eps).
void normalize_columns(float* c, std::int64_t m, float eps) {
  for (std::int64_t j = 0; j < m; ++j) {
    float sum = 0;
    for (std::int64_t i = 0; i < m; ++i) sum += c[i * m + j];
    const float d = sum + eps;
    for (std::int64_t i = 0; i < m; ++i) c[i * m + j] /= d;
  }
}

void normalize_rows(float* c, std::int64_t m, float eps) {
  for (std::int64_t i = 0; i < m; ++i) {
    float sum = 0;
    for (std::int64_t j = 0; j < m; ++j) sum += c[i * m + j];
    const float d = sum + eps;
    for (std::int64_t j = 0; j < m; ++j) c[i * m + j] /= d;
  }
}

}  // namespace

void hc_collapse(ThreadPool& pool, const HcConfig& config, const HcWeights& weights, const float* streams,
                 std::int64_t T, float* input, float* post, float* comb) {
  const std::int64_t m = config.streams, H = config.hidden, width = m * H, mix_n = config.mix();
  // flat: [T, m*H], the unweighted RMSNorm of the flattened streams.
  std::vector<float> flat(static_cast<std::size_t>(T * width));
  for (std::int64_t t = 0; t < T; ++t) {
    const float* x = streams + t * width;
    const float inv = 1.0f / std::sqrt(cpu::dot(x, x, width) / static_cast<float>(width) + config.rms_eps);
    for (std::int64_t i = 0; i < width; ++i) flat[static_cast<std::size_t>(t * width + i)] = x[i] * inv;
  }
  std::vector<float> mix(static_cast<std::size_t>(T * mix_n));
  cpu::linear(pool, flat.data(), T, weights.fn, nullptr, mix.data());
  std::vector<float> base(static_cast<std::size_t>(mix_n)), scale(3);
  cpu::decode_row(weights.base, 0, base.data());
  cpu::decode_row(weights.scale, 0, scale.data());

  std::vector<float> pre(static_cast<std::size_t>(m));
  for (std::int64_t t = 0; t < T; ++t) {
    const float* mx = mix.data() + t * mix_n;
    for (std::int64_t i = 0; i < m; ++i) {
      pre[static_cast<std::size_t>(i)] = sigmoid(mx[i] * scale[0] + base[static_cast<std::size_t>(i)]) + config.hc_eps;
      post[t * m + i] = 2.0f * sigmoid(mx[m + i] * scale[1] + base[static_cast<std::size_t>(m + i)]);
    }
    float* c = comb + t * m * m;
    for (std::int64_t i = 0; i < m; ++i) {
      float* row = c + i * m;
      float top = -INFINITY;
      for (std::int64_t j = 0; j < m; ++j) {
        row[j] = mx[2 * m + i * m + j] * scale[2] + base[static_cast<std::size_t>(2 * m + i * m + j)];
        top = std::max(top, row[j]);
      }
      float z = 0;
      for (std::int64_t j = 0; j < m; ++j) {
        row[j] = std::exp(row[j] - top);
        z += row[j];
      }
      for (std::int64_t j = 0; j < m; ++j) row[j] = row[j] / z + config.hc_eps;
    }
    normalize_columns(c, m, config.hc_eps);
    for (std::int64_t it = 1; it < config.sinkhorn_iters; ++it) {
      normalize_rows(c, m, config.hc_eps);
      normalize_columns(c, m, config.hc_eps);
    }
    const float* x = streams + t * width;
    float* out = input + t * H;
    std::fill_n(out, H, 0.0f);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t k = 0; k < H; ++k) out[k] += pre[static_cast<std::size_t>(i)] * x[i * H + k];
  }
}

void hc_expand(const HcConfig& config, const float* y, const float* post, const float* comb, std::int64_t T,
               float* streams) {
  const std::int64_t m = config.streams, H = config.hidden;
  std::vector<float> next(static_cast<std::size_t>(m * H));
  for (std::int64_t t = 0; t < T; ++t) {
    float* s = streams + t * m * H;
    const float* c = comb + t * m * m;
    for (std::int64_t i = 0; i < m; ++i) {
      float* o = next.data() + i * H;
      const float p = post[t * m + i];
      for (std::int64_t k = 0; k < H; ++k) o[k] = p * y[t * H + k];
      for (std::int64_t j = 0; j < m; ++j) {
        const float w = c[j * m + i];
        const float* sj = s + j * H;
        for (std::int64_t k = 0; k < H; ++k) o[k] += w * sj[k];
      }
    }
    std::copy(next.begin(), next.end(), s);
  }
}

}  // namespace day0::blocks
