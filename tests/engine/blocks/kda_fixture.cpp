#include "engine/blocks/kda_fixture.h"

#include <cmath>
#include <cstring>
#include <random>

#include "engine/safetensors_writer.h"

namespace day0::test {
namespace {

HostTensor random_matrix(std::mt19937& rng, std::uint64_t rows, std::uint64_t cols) {
  std::normal_distribution<float> n(0.0f, 1.0f / std::sqrt(static_cast<float>(cols)));
  HostTensor t{{rows, cols}, std::vector<float>(rows * cols)};
  for (float& v : t.values) v = n(rng);
  return t;
}

HostTensor uniform_vector(std::mt19937& rng, std::uint64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  HostTensor t{{n}, std::vector<float>(n)};
  for (float& v : t.values) v = u(rng);
  return t;
}

}  // namespace

std::map<std::string, HostTensor> random_kda_tensors(const KdaShape& s, const KdaGates& gates, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto H = static_cast<std::uint64_t>(s.hidden), heads = static_cast<std::uint64_t>(s.heads),
             d = static_cast<std::uint64_t>(s.head_dim), D = heads * d, K = static_cast<std::uint64_t>(s.conv_kernel);
  std::map<std::string, HostTensor> t;
  for (const char* x : {"q", "k", "v"}) {
    t[std::string(x) + "_proj.weight"] = random_matrix(rng, D, H);
    // Conv taps around 1/sqrt(K) with both signs, so every tap matters.
    HostTensor conv = random_matrix(rng, D, K);
    conv.shape = {D, 1, K};
    t[std::string(x) + "_conv1d.weight"] = conv;
  }
  t["f_a_proj.weight"] = random_matrix(rng, d, H);
  t["f_b_proj.weight"] = random_matrix(rng, D, d);
  t["dt_bias"] = uniform_vector(rng, D, gates.dt_lo, gates.dt_hi);
  t["A_log"] = uniform_vector(rng, heads, gates.a_log_lo, gates.a_log_hi);
  t["b_proj.weight"] = random_matrix(rng, heads, H);
  t["g_a_proj.weight"] = random_matrix(rng, d, H);
  t["g_b_proj.weight"] = random_matrix(rng, D, d);
  t["o_norm.weight"] = uniform_vector(rng, d, 0.5f, 1.5f);
  t["o_proj.weight"] = random_matrix(rng, H, D);
  return t;
}

void write_kda_checkpoint(const std::filesystem::path& dir, const std::map<std::string, HostTensor>& tensors) {
  std::vector<RawTensor> raw;
  for (const auto& [name, t] : tensors) {
    RawTensor r{kKdaPrefix + "." + name, "F32", t.shape, std::vector<std::uint8_t>(t.values.size() * 4)};
    std::memcpy(r.bytes.data(), t.values.data(), r.bytes.size());
    raw.push_back(std::move(r));
  }
  write_file(dir / "model.safetensors", safetensors_bytes(raw));
}

blocks::KdaConfig kda_config(const KdaShape& s) {
  blocks::KdaConfig c;
  c.hidden = s.hidden;
  c.heads = s.heads;
  c.head_dim = s.head_dim;
  c.conv_kernel = s.conv_kernel;
  c.lower_bound = s.lower_bound;
  c.norm_eps = 1e-5f;
  return c;
}

std::string make_kda_fixture_from(const std::filesystem::path& dir, const KdaShape& shape, KdaFixture& out) {
  out.config = kda_config(shape);
  auto checkpoint = io::Checkpoint::open(dir);
  if (!checkpoint.is_ok()) return checkpoint.status().message();
  out.checkpoint = std::move(checkpoint).value();
  out.weights = std::make_unique<models::WeightSource>(out.checkpoint);
  auto layer = blocks::bind_kda_layer(*out.weights, out.config, kKdaPrefix);
  if (!layer.is_ok()) return layer.status().message();
  out.layer = *layer;
  return {};
}

std::string make_kda_fixture(const std::filesystem::path& dir, const KdaShape& shape, const KdaGates& gates,
                             std::uint32_t seed, KdaFixture& out) {
  out.tensors = random_kda_tensors(shape, gates, seed);
  write_kda_checkpoint(dir, out.tensors);
  return make_kda_fixture_from(dir, shape, out);
}

std::vector<float> random_input(std::int64_t T, std::int64_t hidden, std::uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, scale);
  std::vector<float> x(static_cast<std::size_t>(T * hidden));
  for (float& v : x) v = n(rng);
  return x;
}

// ---- fp64 reference, from the definition of the layer. ----
namespace {

using Vec = std::vector<double>;

// y[t, r] = sum_c x[t, c] W[r, c].  W: [rows, cols].
Vec project(const Vec& x, std::int64_t T, const HostTensor& w) {
  const auto rows = static_cast<std::int64_t>(w.shape[0]), cols = static_cast<std::int64_t>(w.shape.back());
  Vec y(static_cast<std::size_t>(T * rows), 0.0);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t r = 0; r < rows; ++r) {
      double s = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) s += x[t * cols + c] * static_cast<double>(w.values[r * cols + c]);
      y[t * rows + r] = s;
    }
  return y;
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

}  // namespace

std::vector<double> kda_reference(const KdaShape& s, const std::map<std::string, HostTensor>& w,
                                  const std::vector<float>& x_in, std::int64_t T, std::vector<double>* state_out) {
  const std::int64_t heads = s.heads, d = s.head_dim, D = heads * d, K = s.conv_kernel;
  const Vec x(x_in.begin(), x_in.end());
  Vec qkv[3];
  const char* names[3] = {"q", "k", "v"};
  for (int p = 0; p < 3; ++p) {
    const Vec pre = project(x, T, w.at(std::string(names[p]) + "_proj.weight"));
    const HostTensor& conv = w.at(std::string(names[p]) + "_conv1d.weight");  // [D, 1, K]
    qkv[p].assign(static_cast<std::size_t>(T * D), 0.0);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t ch = 0; ch < D; ++ch) {
        // Causal: tap K-1 sees the current token, tap 0 the token K-1 steps back (zero before 0).
        double acc = 0.0;
        for (std::int64_t back = 0; back < K; ++back)
          if (t - back >= 0) acc += conv.values[ch * K + (K - 1 - back)] * pre[(t - back) * D + ch];
        qkv[p][t * D + ch] = acc * sigmoid(acc);
      }
  }
  Vec& q = qkv[0];
  Vec& k = qkv[1];
  Vec& v = qkv[2];
  for (std::int64_t i = 0; i < T * heads; ++i) {
    double nq = 0.0, nk = 0.0;
    for (std::int64_t c = 0; c < d; ++c) {
      nq += q[i * d + c] * q[i * d + c];
      nk += k[i * d + c] * k[i * d + c];
    }
    for (std::int64_t c = 0; c < d; ++c) {
      q[i * d + c] /= std::sqrt(nq + 1e-6) * std::sqrt(static_cast<double>(d));
      k[i * d + c] /= std::sqrt(nk + 1e-6);
    }
  }
  const Vec f = project(project(x, T, w.at("f_a_proj.weight")), T, w.at("f_b_proj.weight"));
  const Vec b = project(x, T, w.at("b_proj.weight"));
  const Vec gate = project(project(x, T, w.at("g_a_proj.weight")), T, w.at("g_b_proj.weight"));
  const auto& dt = w.at("dt_bias").values;
  const auto& a_log = w.at("A_log").values;
  const auto& norm_w = w.at("o_norm.weight").values;

  Vec S(static_cast<std::size_t>(heads * d * d), 0.0);
  Vec o(static_cast<std::size_t>(T * D), 0.0);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t h = 0; h < heads; ++h) {
      double* St = S.data() + h * d * d;
      const double beta = sigmoid(b[t * heads + h]);
      const double* qt = q.data() + t * D + h * d;
      const double* kt = k.data() + t * D + h * d;
      const double* vt = v.data() + t * D + h * d;
      for (std::int64_t i = 0; i < d; ++i) {
        const double g = f[t * D + h * d + i] + dt[h * d + i];
        const double rate = std::exp(static_cast<double>(a_log[h]));
        const double log_a =
            s.lower_bound ? *s.lower_bound * sigmoid(rate * g) : -rate * (g > 20.0 ? g : std::log(1.0 + std::exp(g)));
        for (std::int64_t j = 0; j < d; ++j) St[i * d + j] *= std::exp(log_a);
      }
      for (std::int64_t j = 0; j < d; ++j) {
        double recalled = 0.0;
        for (std::int64_t i = 0; i < d; ++i) recalled += St[i * d + j] * kt[i];
        const double delta = beta * (vt[j] - recalled);
        for (std::int64_t i = 0; i < d; ++i) St[i * d + j] += kt[i] * delta;
      }
      for (std::int64_t j = 0; j < d; ++j) {
        double acc = 0.0;
        for (std::int64_t i = 0; i < d; ++i) acc += St[i * d + j] * qt[i];
        o[t * D + h * d + j] = acc;
      }
    }
  // Gated RMSNorm per head, then o_proj.
  for (std::int64_t i = 0; i < T * heads; ++i) {
    double ms = 0.0;
    for (std::int64_t c = 0; c < d; ++c) ms += o[i * d + c] * o[i * d + c];
    ms /= static_cast<double>(d);
    for (std::int64_t c = 0; c < d; ++c)
      o[i * d + c] = o[i * d + c] / std::sqrt(ms + 1e-5) * norm_w[c] * sigmoid(gate[i * d + c]);
  }
  if (state_out != nullptr) *state_out = S;
  return project(o, T, w.at("o_proj.weight"));
}

}  // namespace day0::test
