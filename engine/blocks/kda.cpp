#include "blocks/kda.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "blocks/kda_core.h"

namespace day0::blocks {
namespace {

// Long inputs run in slices of this many chunks, which bounds the scratch memory ([slice, D]
// arrays) and keeps chunk boundaries where one call would put them.
constexpr std::int64_t kChunksPerSlice = 8;

std::vector<float> decode_all(const cpu::Matrix& m) {
  std::vector<float> out(static_cast<std::size_t>(m.rows * m.cols));
  for (std::int64_t r = 0; r < m.rows; ++r) cpu::decode_row(m, r, out.data() + r * m.cols);
  return out;
}

// fn(row) for rows [0, n), spread over the pool.
template <typename Fn>
void for_rows(ThreadPool& pool, std::int64_t n, const Fn& fn) {
  pool.parallel_for(static_cast<std::size_t>(n), 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) fn(static_cast<std::int64_t>(r));
  });
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A [D, 1, K] depthwise-conv weight as a [D, K] view.
Result<cpu::Matrix> conv_weight(const models::WeightSource& weights, const std::string& name, std::int64_t D,
                                std::int64_t K) {
  DAY0_ASSIGN_OR_RETURN(const std::vector<cpu::Matrix> rows, weights.stacked(name, D, 1, K));
  return cpu::Matrix{rows.front().dtype, rows.front().data, D, K};
}

// The per-call arrays of one slice of tokens. D = heads * head_dim.
struct Scratch {
  std::vector<float> q, k, v;    // [T, D]: projections, then conv + SiLU (+ l2norm for q, k)
  std::vector<float> low;        // [T, d]: f_a or g_a output
  std::vector<float> log_decay;  // [T, D]
  std::vector<float> beta;       // [T, heads]
  std::vector<float> core;       // [T, D]
  std::vector<float> gate;       // [T, D]
};

// Depthwise causal conv over time, then SiLU, for `channels` channels of `in` [T, channels]
// (column `offset` of the conv state onwards). history: [K-1, 3D] earlier inputs, oldest first.
void causal_conv_silu(ThreadPool& pool, const std::vector<float>& weight, std::int64_t K, const float* history,
                      std::int64_t history_stride, std::int64_t offset, const float* in, std::int64_t T,
                      std::int64_t channels, float* out) {
  pool.parallel_for(static_cast<std::size_t>(channels), 64, [&](std::size_t begin, std::size_t end) {
    for (auto ch = static_cast<std::int64_t>(begin); ch < static_cast<std::int64_t>(end); ++ch) {
      const float* w = weight.data() + ch * K;
      for (std::int64_t t = 0; t < T; ++t) {
        // out[t] = sum_i w[i] x[t - (K-1) + i]; x before the slice comes from the history.
        float acc = 0.0f;
        for (std::int64_t i = 0; i < K; ++i) {
          const std::int64_t s = t - (K - 1) + i;
          const float x = s >= 0 ? in[s * channels + ch] : history[(K - 1 + s) * history_stride + offset + ch];
          acc += w[i] * x;
        }
        out[t * channels + ch] = silu(acc);
      }
    }
  });
}

// history <- the last K-1 rows of (history, in) for columns [offset, offset + channels).
void advance_conv_history(float* history, std::int64_t history_stride, std::int64_t offset, const float* in,
                          std::int64_t T, std::int64_t channels, std::int64_t K) {
  const std::int64_t keep = K - 1;
  for (std::int64_t r = 0; r < keep; ++r) {
    // Row r of the new history is row (T + r) of the concatenation.
    const std::int64_t s = T + r;
    float* dst = history + r * history_stride + offset;
    if (s < keep)
      std::copy_n(history + s * history_stride + offset, channels, dst);
    else
      std::copy_n(in + (s - keep) * channels, channels, dst);
  }
}

// x / sqrt(sum x^2 + eps) * scale for each head of each row; sums in double so that inputs of
// huge magnitude stay finite.
void l2norm_heads(ThreadPool& pool, float* x, std::int64_t rows, std::int64_t d, float eps, float scale) {
  for_rows(pool, rows, [&](std::int64_t r) {
    float* h = x + r * d;
    double ss = 0.0;
    for (std::int64_t c = 0; c < d; ++c) ss += static_cast<double>(h[c]) * h[c];
    const auto f = static_cast<float>(scale / std::sqrt(ss + eps));
    for (std::int64_t c = 0; c < d; ++c) h[c] *= f;
  });
}

Status check_state(const KdaConfig& config, const KdaState& state) {
  const std::int64_t d = config.head_dim, D = config.qkv_dim();
  if (state.heads != config.heads || state.head_dim != d || state.conv_kernel != config.conv_kernel ||
      state.recurrent.size() != static_cast<std::size_t>(config.heads * d * d) ||
      state.conv.size() != static_cast<std::size_t>((config.conv_kernel - 1) * 3 * D))
    return error(ErrorCode::invalid_argument,
                 fmt::format("KDA state is for {} heads of {} with conv kernel {}, but the layer has {} heads of {} "
                             "with conv kernel {}",
                             state.heads, state.head_dim, state.conv_kernel, config.heads, d, config.conv_kernel));
  return Status::ok();
}

void append(std::vector<float>& dst, const std::vector<float>& src, std::size_t n) {
  dst.insert(dst.end(), src.begin(), src.begin() + static_cast<std::ptrdiff_t>(n));
}

// One slice of at most kChunksPerSlice chunks. `w` holds the decoded small tensors.
struct SmallWeights {
  std::vector<float> q_conv, k_conv, v_conv;  // [D, K]
  std::vector<float> dt_bias;                 // [D]
  std::vector<float> A_log;                   // [heads]
  std::vector<float> o_norm;                  // [d]
};

void forward_slice(ThreadPool& pool, const KdaConfig& config, const KdaLayer& layer, const SmallWeights& w,
                   KdaState& state, const float* x, std::int64_t T, float* out, bool chunked, Scratch& s,
                   KdaTrace* trace) {
  const std::int64_t heads = config.heads, d = config.head_dim, D = config.qkv_dim();
  const std::int64_t K = config.conv_kernel;
  const auto TD = static_cast<std::size_t>(T * D);

  // q, k, v: [T, D] projections, then the causal conv (history from earlier calls) and SiLU.
  s.q.resize(TD);
  s.k.resize(TD);
  s.v.resize(TD);
  s.core.resize(TD);
  cpu::linear(pool, x, T, layer.q_proj, nullptr, s.q.data());
  cpu::linear(pool, x, T, layer.k_proj, nullptr, s.k.data());
  cpu::linear(pool, x, T, layer.v_proj, nullptr, s.v.data());
  const std::int64_t hs = 3 * D;
  float* history = state.conv.data();
  {
    std::vector<float>* parts[3] = {&s.q, &s.k, &s.v};
    const std::vector<float>* weights[3] = {&w.q_conv, &w.k_conv, &w.v_conv};
    for (int p = 0; p < 3; ++p) {
      std::vector<float>& in = *parts[p];
      // core doubles as the conv output buffer before the attention fills it.
      causal_conv_silu(pool, *weights[p], K, history, hs, p * D, in.data(), T, D, s.core.data());
      advance_conv_history(history, hs, p * D, in.data(), T, D, K);
      in.swap(s.core);
    }
  }
  if (trace != nullptr) {
    append(trace->q, s.q, TD);
    append(trace->k, s.k, TD);
    append(trace->v, s.v, TD);
  }
  l2norm_heads(pool, s.q.data(), T * heads, d, config.l2_eps, 1.0f / std::sqrt(static_cast<float>(d)));
  l2norm_heads(pool, s.k.data(), T * heads, d, config.l2_eps, 1.0f);

  // Forget gate: log a = lower_bound * sigmoid(exp(A_log) g) or -exp(A_log) softplus(g),
  // g = f_b(f_a(x)) + dt_bias. Computed in double: exp(A_log) may be huge.
  s.low.resize(static_cast<std::size_t>(T * d));
  s.log_decay.resize(TD);
  cpu::linear(pool, x, T, layer.f_a_proj, nullptr, s.low.data());
  cpu::linear(pool, s.low.data(), T, layer.f_b_proj, nullptr, s.log_decay.data());
  for_rows(pool, T, [&](std::int64_t t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const double rate = std::exp(std::min<double>(w.A_log[h], 80.0));
      float* row = s.log_decay.data() + t * D + h * d;
      for (std::int64_t c = 0; c < d; ++c) {
        const double g = static_cast<double>(row[c]) + w.dt_bias[h * d + c];
        double ld;
        if (config.lower_bound) {
          ld = *config.lower_bound * sigmoid(rate * g);
        } else {
          const double softplus = g > 20.0 ? g : std::log1p(std::exp(g));
          ld = -rate * softplus;
        }
        row[c] = static_cast<float>(std::clamp(ld, -1e30, 0.0));
      }
    }
  });

  // beta = sigmoid(b_proj(x)): [T, heads].
  s.beta.resize(static_cast<std::size_t>(T * heads));
  cpu::linear(pool, x, T, layer.b_proj, nullptr, s.beta.data());
  for (float& b : s.beta) b = static_cast<float>(sigmoid(b));
  if (trace != nullptr) {
    append(trace->log_decay, s.log_decay, TD);
    append(trace->beta, s.beta, static_cast<std::size_t>(T * heads));
  }

  // The recurrence, one head per task.
  const std::int64_t chunk = config.chunk_size;
  pool.parallel_for(static_cast<std::size_t>(heads), 1, [&](std::size_t begin, std::size_t end) {
    std::optional<detail::KdaChunkScratch> scratch;
    if (chunked) scratch.emplace(std::min(chunk, T), d);
    for (auto h = static_cast<std::int64_t>(begin); h < static_cast<std::int64_t>(end); ++h) {
      detail::KdaHeadView view;
      view.q = s.q.data() + h * d;
      view.k = s.k.data() + h * d;
      view.v = s.v.data() + h * d;
      view.log_decay = s.log_decay.data() + h * d;
      view.beta = s.beta.data() + h;
      view.out = s.core.data() + h * d;
      view.T = T;
      view.d = d;
      view.stride = D;
      view.beta_stride = heads;
      float* S = state.recurrent.data() + h * d * d;
      if (chunked)
        detail::kda_head_chunked(view, std::min(chunk, T), S, *scratch);
      else
        detail::kda_head_recurrent(view, S);
    }
  });
  if (trace != nullptr) append(trace->core, s.core, TD);

  // Gated output norm per head: RMSNorm(o) * o_norm * sigmoid(g_b(g_a(x))), then o_proj.
  s.gate.resize(TD);
  cpu::linear(pool, x, T, layer.g_a_proj, nullptr, s.low.data());
  cpu::linear(pool, s.low.data(), T, layer.g_b_proj, nullptr, s.gate.data());
  for_rows(pool, T * heads, [&](std::int64_t r) {
    float* o = s.core.data() + r * d;
    const float* g = s.gate.data() + r * d;
    double ss = 0.0;
    for (std::int64_t c = 0; c < d; ++c) ss += static_cast<double>(o[c]) * o[c];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + config.norm_eps);
    for (std::int64_t c = 0; c < d; ++c) o[c] = static_cast<float>(o[c] * inv * w.o_norm[c] * sigmoid(g[c]));
  });
  cpu::linear(pool, s.core.data(), T, layer.o_proj, nullptr, out);
}

}  // namespace

Result<KdaConfig> read_kda_config(const io::ConfigView& c) {
  KdaConfig k;
  DAY0_ASSIGN_OR_RETURN(k.hidden, c.get_int("hidden_size", {1, 1 << 20}));
  DAY0_ASSIGN_OR_RETURN(k.heads, c.get_int_or("linear_num_heads", 64, {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(k.head_dim, c.get_int_or("linear_head_dim", 128, {1, 1024}));
  DAY0_ASSIGN_OR_RETURN(k.conv_kernel, c.get_int_or("linear_conv_kernel_dim", 4, {1, 64}));
  // An explicit null selects the softplus gate; an absent field is transformers' default -5.
  const auto lb_it = c.json().find("linear_lower_bound");
  std::optional<double> lower_bound;
  if (lb_it == c.json().end()) {
    lower_bound = -5.0;
  } else if (!lb_it->is_null()) {
    DAY0_ASSIGN_OR_RETURN(lower_bound, c.get_float("linear_lower_bound"));
  }
  std::string lb_field = c.field_name("linear_lower_bound");
  if (const auto nested = c.optional_child("linear_attn_config")) {
    DAY0_ASSIGN_OR_RETURN(k.heads, nested->get_int_or("num_heads", k.heads, {1, 4096}));
    DAY0_ASSIGN_OR_RETURN(k.head_dim, nested->get_int_or("head_dim", k.head_dim, {1, 1024}));
    DAY0_ASSIGN_OR_RETURN(k.conv_kernel, nested->get_int_or("short_conv_kernel_size", k.conv_kernel, {1, 64}));
    if (nested->has("gate_lower_bound")) {
      DAY0_ASSIGN_OR_RETURN(lower_bound, nested->get_float("gate_lower_bound"));
      lb_field = nested->field_name("gate_lower_bound");
    }
    DAY0_ASSIGN_OR_RETURN(const bool safe_gate, nested->get_bool_or("safe_gate", true));
    if (safe_gate && !lower_bound) lower_bound = -5.0;
  }
  if (lower_bound) {
    // The gate is lower_bound * sigmoid(...): positive values would grow the state without bound.
    if (!std::isfinite(*lower_bound) || *lower_bound > 0.0 || *lower_bound < -1000.0)
      return error(ErrorCode::unsupported,
                   fmt::format("{} is {}; KDA needs a lower bound in [-1000, 0]", lb_field, *lower_bound));
    k.lower_bound = static_cast<float>(*lower_bound);
  }
  DAY0_ASSIGN_OR_RETURN(const double eps, c.get_float_or("rms_norm_eps", 1e-5));
  if (!(eps >= 1e-20 && eps < 1.0))
    return error(ErrorCode::unsupported,
                 fmt::format("{} is {}; expected a value in [1e-20, 1)", c.field_name("rms_norm_eps"), eps));
  k.norm_eps = static_cast<float>(eps);
  DAY0_ASSIGN_OR_RETURN(const std::string act, c.get_string_or("hidden_act", "silu"));
  if (act != "silu" && act != "swish")
    return error(ErrorCode::unsupported, fmt::format("{} is \"{}\"; KDA's short convolution supports silu only",
                                                     c.field_name("hidden_act"), act));
  if (k.heads * k.head_dim > (1 << 20))
    return error(ErrorCode::unsupported,
                 fmt::format("KDA with {} heads of {} exceeds 2^20 channels", k.heads, k.head_dim));
  return k;
}

Result<KdaLayer> bind_kda_layer(const models::WeightSource& weights, const KdaConfig& config,
                                const std::string& prefix) {
  const std::int64_t H = config.hidden, heads = config.heads, d = config.head_dim, D = config.qkv_dim();
  const std::int64_t K = config.conv_kernel;
  const std::string p = prefix + ".";
  KdaLayer l;
  DAY0_ASSIGN_OR_RETURN(l.q_proj, weights.matrix(p + "q_proj.weight", D, H));
  DAY0_ASSIGN_OR_RETURN(l.k_proj, weights.matrix(p + "k_proj.weight", D, H));
  DAY0_ASSIGN_OR_RETURN(l.v_proj, weights.matrix(p + "v_proj.weight", D, H));
  DAY0_ASSIGN_OR_RETURN(l.q_conv, conv_weight(weights, p + "q_conv1d.weight", D, K));
  DAY0_ASSIGN_OR_RETURN(l.k_conv, conv_weight(weights, p + "k_conv1d.weight", D, K));
  DAY0_ASSIGN_OR_RETURN(l.v_conv, conv_weight(weights, p + "v_conv1d.weight", D, K));
  DAY0_ASSIGN_OR_RETURN(l.f_a_proj, weights.matrix(p + "f_a_proj.weight", d, H));
  DAY0_ASSIGN_OR_RETURN(l.f_b_proj, weights.matrix(p + "f_b_proj.weight", D, d));
  DAY0_ASSIGN_OR_RETURN(l.dt_bias, weights.vector(p + "dt_bias", D));
  DAY0_ASSIGN_OR_RETURN(l.A_log, weights.vector(p + "A_log", heads));
  DAY0_ASSIGN_OR_RETURN(l.b_proj, weights.matrix(p + "b_proj.weight", heads, H));
  DAY0_ASSIGN_OR_RETURN(l.g_a_proj, weights.matrix(p + "g_a_proj.weight", d, H));
  DAY0_ASSIGN_OR_RETURN(l.g_b_proj, weights.matrix(p + "g_b_proj.weight", D, d));
  DAY0_ASSIGN_OR_RETURN(l.o_norm, weights.vector(p + "o_norm.weight", d));
  DAY0_ASSIGN_OR_RETURN(l.o_proj, weights.matrix(p + "o_proj.weight", H, D));
  return l;
}

KdaState new_kda_state(const KdaConfig& config) {
  KdaState s;
  s.heads = config.heads;
  s.head_dim = config.head_dim;
  s.conv_kernel = config.conv_kernel;
  s.recurrent.assign(static_cast<std::size_t>(config.heads * config.head_dim * config.head_dim), 0.0f);
  s.conv.assign(static_cast<std::size_t>(std::max<std::int64_t>(config.conv_kernel - 1, 0) * 3 * config.qkv_dim()),
                0.0f);
  return s;
}

Status kda_forward(ThreadPool& pool, const KdaConfig& config, const KdaLayer& layer, KdaState& state, const float* x,
                   std::int64_t T, float* out, KdaTrace* trace, KdaMode mode) {
  if (T < 0) return error(ErrorCode::invalid_argument, fmt::format("KDA forward over {} tokens", T));
  if (T > 0 && (x == nullptr || out == nullptr))
    return error(ErrorCode::invalid_argument, "KDA forward needs input and output buffers");
  if (config.chunk_size < 1 || config.recurrent_max_tokens < 0)
    return error(ErrorCode::invalid_argument, fmt::format("KDA chunk size {} must be at least 1", config.chunk_size));
  DAY0_RETURN_IF_ERROR(check_state(config, state));
  if (trace != nullptr) *trace = KdaTrace{};
  const bool chunked = mode == KdaMode::chunked || (mode == KdaMode::automatic && T > config.recurrent_max_tokens);

  SmallWeights w;
  w.q_conv = decode_all(layer.q_conv);
  w.k_conv = decode_all(layer.k_conv);
  w.v_conv = decode_all(layer.v_conv);
  w.dt_bias = decode_all(layer.dt_bias);
  w.A_log = decode_all(layer.A_log);
  w.o_norm = decode_all(layer.o_norm);

  Scratch scratch;
  const std::int64_t slice = config.chunk_size * kChunksPerSlice;
  for (std::int64_t t0 = 0; t0 < T; t0 += slice) {
    const std::int64_t n = std::min(slice, T - t0);
    forward_slice(pool, config, layer, w, state, x + t0 * config.hidden, n, out + t0 * config.hidden, chunked, scratch,
                  trace);
  }
  state.tokens += T;
  if (trace != nullptr) trace->state = state.recurrent;
  return Status::ok();
}

}  // namespace day0::blocks
