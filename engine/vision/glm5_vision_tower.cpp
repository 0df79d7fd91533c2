#include "vision/glm5_vision_tower.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace day0::vision {
namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

// The clamped SwiGLU of the vision MLP and the merger: silu(min(g, L)) * clamp(u, -L, L).
void clamped_swiglu(const float* gate, const float* up, std::int64_t n, float limit, float* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit);
    const float u = std::clamp(up[i], -limit, limit);
    out[i] = silu(g) * u;
  }
}

void layer_norm(float* x, std::int64_t T, std::int64_t D, const cpu::Matrix& weight, const cpu::Matrix& bias,
                float eps) {
  std::vector<float> w(static_cast<std::size_t>(D)), b(static_cast<std::size_t>(D));
  cpu::decode_row(weight, 0, w.data());
  cpu::decode_row(bias, 0, b.data());
  for (std::int64_t t = 0; t < T; ++t) {
    float* r = x + t * D;
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < D; ++i) mean += r[i];
    mean /= static_cast<double>(D);
    for (std::int64_t i = 0; i < D; ++i) var += (r[i] - mean) * (r[i] - mean);
    var /= static_cast<double>(D);
    const auto inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    for (std::int64_t i = 0; i < D; ++i)
      r[i] = (r[i] - static_cast<float>(mean)) * inv * w[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i)];
  }
}

}  // namespace

Result<VisionTowerConfig> parse_vision_config(const io::ModelConfig& config) {
  const auto v = config.vision();
  if (!v)
    return error(ErrorCode::unsupported, config.origin() + ": the model has no vision_config; it takes no images");
  VisionTowerConfig c;
  DAY0_ASSIGN_OR_RETURN(c.depth, v->get_int("depth", {1, 256}));
  DAY0_ASSIGN_OR_RETURN(c.hidden, v->get_int("hidden_size", {1, 1 << 16}));
  DAY0_ASSIGN_OR_RETURN(c.heads, v->get_int("num_heads", {1, 1024}));
  DAY0_ASSIGN_OR_RETURN(c.intermediate, v->get_int("intermediate_size", {1, 1 << 18}));
  DAY0_ASSIGN_OR_RETURN(c.out_hidden, v->get_int("out_hidden_size", {1, 1 << 16}));
  DAY0_ASSIGN_OR_RETURN(c.projection_intermediate, v->get_int("projection_intermediate_size", {1, 1 << 18}));
  DAY0_ASSIGN_OR_RETURN(c.in_channels, v->get_int_or("in_channels", 3, {3, 3}));
  DAY0_ASSIGN_OR_RETURN(c.patch_size, v->get_int_or("patch_size", 14, {1, 1024}));
  DAY0_ASSIGN_OR_RETURN(c.temporal_patch_size, v->get_int_or("temporal_patch_size", 2, {1, 16}));
  DAY0_ASSIGN_OR_RETURN(c.merge_size, v->get_int_or("spatial_merge_size", 2, {1, 16}));
  DAY0_ASSIGN_OR_RETURN(c.rms_norm_eps, v->get_float_or("rms_norm_eps", 1e-5));
  DAY0_ASSIGN_OR_RETURN(c.swiglu_limit, v->get_float("swiglu_limit"));
  DAY0_ASSIGN_OR_RETURN(c.attention_bias, v->get_bool_or("attention_bias", true));
  DAY0_ASSIGN_OR_RETURN(const std::string act, v->get_string_or("hidden_act", "silu"));
  if (act != "silu")
    return error(ErrorCode::unsupported,
                 config.origin() + ": vision_config.hidden_act \"" + act + "\" is not supported (silu)");
  if (const auto rope = v->optional_child("rope_parameters")) {
    DAY0_ASSIGN_OR_RETURN(c.rope_theta, rope->get_float_or("rope_theta", 10000.0));
    DAY0_ASSIGN_OR_RETURN(const std::string type, rope->get_string_or("rope_type", "axial"));
    if (type != "axial")
      return error(ErrorCode::unsupported,
                   config.origin() + ": vision rope_type \"" + type + "\" is not supported (axial)");
  }
  if (c.hidden % c.heads != 0)
    return error(ErrorCode::corrupt_data,
                 config.origin() + ": vision_config.hidden_size is not a multiple of num_heads");
  c.head_dim = c.hidden / c.heads;
  if (c.head_dim % 4 != 0)
    return error(ErrorCode::unsupported,
                 config.origin() + ": the vision head dimension must be a multiple of 4 (2D RoPE)");
  return c;
}

std::vector<std::int64_t> patch_positions(std::int64_t grid_t, std::int64_t grid_h, std::int64_t grid_w,
                                          std::int64_t merge) {
  std::vector<std::int64_t> pos;
  pos.reserve(static_cast<std::size_t>(grid_t * grid_h * grid_w * 2));
  for (std::int64_t t = 0; t < grid_t; ++t)
    for (std::int64_t bh = 0; bh < grid_h / merge; ++bh)
      for (std::int64_t bw = 0; bw < grid_w / merge; ++bw)
        for (std::int64_t mh = 0; mh < merge; ++mh)
          for (std::int64_t mw = 0; mw < merge; ++mw) {
            pos.push_back(bh * merge + mh);
            pos.push_back(bw * merge + mw);
          }
  return pos;
}

Result<std::unique_ptr<VisionTower>> VisionTower::load(const VisionTowerConfig& c, const models::WeightSource& w,
                                                       const std::string& prefix, ThreadPool& pool) {
  std::unique_ptr<VisionTower> t(new VisionTower(c, pool));
  const std::string p = prefix + ".";
  const std::int64_t D = c.hidden, I = c.intermediate, O = c.out_hidden, M = c.merge_size;
  DAY0_ASSIGN_OR_RETURN(t->patch_w_,
                        w.flattened(p + "patch_embed.proj.weight",
                                    {D, c.in_channels, c.temporal_patch_size, c.patch_size, c.patch_size}));
  DAY0_ASSIGN_OR_RETURN(t->patch_b_, w.vector(p + "patch_embed.proj.bias", D));
  for (std::int64_t i = 0; i < c.depth; ++i) {
    const std::string b = p + "blocks." + std::to_string(i) + ".";
    Block k;
    DAY0_ASSIGN_OR_RETURN(k.norm1, w.vector(b + "norm1.weight", D));
    DAY0_ASSIGN_OR_RETURN(k.norm2, w.vector(b + "norm2.weight", D));
    DAY0_ASSIGN_OR_RETURN(k.qkv_w, w.matrix(b + "attn.qkv.weight", 3 * D, D));
    DAY0_ASSIGN_OR_RETURN(k.proj_w, w.matrix(b + "attn.proj.weight", D, D));
    DAY0_ASSIGN_OR_RETURN(k.q_norm, w.vector(b + "attn.q_norm.weight", c.head_dim));
    DAY0_ASSIGN_OR_RETURN(k.k_norm, w.vector(b + "attn.k_norm.weight", c.head_dim));
    DAY0_ASSIGN_OR_RETURN(k.gate_w, w.matrix(b + "mlp.gate_proj.weight", I, D));
    DAY0_ASSIGN_OR_RETURN(k.up_w, w.matrix(b + "mlp.up_proj.weight", I, D));
    DAY0_ASSIGN_OR_RETURN(k.down_w, w.matrix(b + "mlp.down_proj.weight", D, I));
    if (c.attention_bias) {
      DAY0_ASSIGN_OR_RETURN(k.qkv_b, w.vector(b + "attn.qkv.bias", 3 * D));
      DAY0_ASSIGN_OR_RETURN(k.proj_b, w.vector(b + "attn.proj.bias", D));
      DAY0_ASSIGN_OR_RETURN(k.gate_b, w.vector(b + "mlp.gate_proj.bias", I));
      DAY0_ASSIGN_OR_RETURN(k.up_b, w.vector(b + "mlp.up_proj.bias", I));
      DAY0_ASSIGN_OR_RETURN(k.down_b, w.vector(b + "mlp.down_proj.bias", D));
    }
    t->blocks_.push_back(k);
  }
  DAY0_ASSIGN_OR_RETURN(t->post_norm_, w.vector(p + "post_layernorm.weight", D));
  DAY0_ASSIGN_OR_RETURN(t->down_w_, w.flattened(p + "downsample.weight", {O, D, M, M}));
  DAY0_ASSIGN_OR_RETURN(t->down_b_, w.vector(p + "downsample.bias", O));
  DAY0_ASSIGN_OR_RETURN(t->m_proj_, w.matrix(p + "merger.proj.weight", O, O));
  DAY0_ASSIGN_OR_RETURN(t->m_norm_w_, w.vector(p + "merger.post_projection_norm.weight", O));
  DAY0_ASSIGN_OR_RETURN(t->m_norm_b_, w.vector(p + "merger.post_projection_norm.bias", O));
  DAY0_ASSIGN_OR_RETURN(t->m_gate_, w.matrix(p + "merger.gate_proj.weight", c.projection_intermediate, O));
  DAY0_ASSIGN_OR_RETURN(t->m_up_, w.matrix(p + "merger.up_proj.weight", c.projection_intermediate, O));
  DAY0_ASSIGN_OR_RETURN(t->m_down_, w.matrix(p + "merger.down_proj.weight", O, c.projection_intermediate));
  // inv_freq over the half head (spatial_dim = d/2): theta^(-2i / (d/2)), i < d/4; float32 as HF.
  const std::int64_t spatial = c.head_dim / 2;
  for (std::int64_t i = 0; i < spatial; i += 2)
    t->inv_freq_.push_back(
        1.0f / static_cast<float>(std::pow(c.rope_theta, static_cast<double>(static_cast<float>(i) / spatial))));
  return t;
}

// Bidirectional attention over one image's n patches. qkv: [n, 3, heads, d] after norm and
// RoPE; out: [n, heads * d].
void VisionTower::attention(const float* qkv, std::int64_t n, float* out) const {
  const std::int64_t H = c_.heads, d = c_.head_dim, D = c_.hidden;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  pool_.parallel_for(static_cast<std::size_t>(n * H), 4, [&](std::size_t begin, std::size_t end) {
    std::vector<float> scores(static_cast<std::size_t>(n));
    for (std::size_t job = begin; job < end; ++job) {
      const std::int64_t i = static_cast<std::int64_t>(job) / H, h = static_cast<std::int64_t>(job) % H;
      const float* q = qkv + i * 3 * D + h * d;
      float mx = -INFINITY;
      for (std::int64_t j = 0; j < n; ++j) {
        scores[static_cast<std::size_t>(j)] = cpu::dot(q, qkv + j * 3 * D + D + h * d, d) * scale;
        mx = std::max(mx, scores[static_cast<std::size_t>(j)]);
      }
      double total = 0.0;
      for (std::int64_t j = 0; j < n; ++j) {
        scores[static_cast<std::size_t>(j)] = std::exp(scores[static_cast<std::size_t>(j)] - mx);
        total += scores[static_cast<std::size_t>(j)];
      }
      float* o = out + i * D + h * d;
      std::fill(o, o + d, 0.0f);
      const auto inv = static_cast<float>(1.0 / total);
      for (std::int64_t j = 0; j < n; ++j) {
        const float p = scores[static_cast<std::size_t>(j)] * inv;
        const float* v = qkv + j * 3 * D + 2 * D + h * d;
        for (std::int64_t e = 0; e < d; ++e) o[e] += p * v[e];
      }
    }
  });
}

Result<std::vector<float>> VisionTower::encode(const VisionInput& in, models::ForwardTrace* trace) const {
  const std::int64_t D = c_.hidden, H = c_.heads, d = c_.head_dim, I = c_.intermediate, M = c_.merge_size;
  const std::int64_t N = in.patches();
  if (in.patch_dim != c_.patch_dim())
    return error(ErrorCode::invalid_argument, fmt::format("image patches hold {} values; the vision tower expects {}",
                                                          in.patch_dim, c_.patch_dim()));
  if (N <= 0 || in.grid_h % M != 0 || in.grid_w % M != 0 ||
      in.pixel_values.size() != static_cast<std::size_t>(N * in.patch_dim))
    return error(ErrorCode::invalid_argument,
                 fmt::format("an image grid of {}x{}x{} patches does not fit {}x{} merge blocks", in.grid_t, in.grid_h,
                             in.grid_w, M, M));
  const auto eps = static_cast<float>(c_.rms_norm_eps);
  const auto limit = static_cast<float>(c_.swiglu_limit);
  const auto n = static_cast<std::size_t>(N);

  std::vector<float> x(n * static_cast<std::size_t>(D));
  cpu::linear(pool_, in.pixel_values.data(), N, patch_w_, &patch_b_, x.data());
  if (trace) trace->append("vision.patch_embed", x.data(), x.size());

  // cos/sin: [N, d/2] = [rows * inv_freq, columns * inv_freq].
  const std::vector<std::int64_t> pos = patch_positions(in.grid_t, in.grid_h, in.grid_w, M);
  const std::int64_t quarter = d / 4;
  std::vector<float> cos(n * static_cast<std::size_t>(d / 2)), sin(cos.size());
  for (std::int64_t t = 0; t < N; ++t)
    for (std::int64_t k = 0; k < d / 2; ++k) {
      const float p = static_cast<float>(pos[static_cast<std::size_t>(2 * t + (k < quarter ? 0 : 1))]);
      const float angle = p * inv_freq_[static_cast<std::size_t>(k % quarter)];
      cos[static_cast<std::size_t>(t * (d / 2) + k)] = std::cos(angle);
      sin[static_cast<std::size_t>(t * (d / 2) + k)] = std::sin(angle);
    }

  std::vector<float> h(x.size()), qkv(n * static_cast<std::size_t>(3 * D)), att(x.size()), y(x.size());
  std::vector<float> gate(n * static_cast<std::size_t>(I)), up(gate.size());
  std::vector<float> q(n * static_cast<std::size_t>(D)), k(q.size());
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const Block& L = blocks_[b];
    cpu::rms_norm(x.data(), N, D, L.norm1, eps, h.data());
    cpu::linear(pool_, h.data(), N, L.qkv_w, c_.attention_bias ? &L.qkv_b : nullptr, qkv.data());
    // Per-head RMSNorm of q and k, then the 2D rotation; v stays as projected.
    for (std::int64_t t = 0; t < N; ++t) {
      std::copy_n(qkv.data() + t * 3 * D, D, q.data() + t * D);
      std::copy_n(qkv.data() + t * 3 * D + D, D, k.data() + t * D);
    }
    cpu::rms_norm(q.data(), N * H, d, L.q_norm, eps, q.data());
    cpu::rms_norm(k.data(), N * H, d, L.k_norm, eps, k.data());
    cpu::rope_halves(q.data(), N, H, d, cos.data(), sin.data());
    cpu::rope_halves(k.data(), N, H, d, cos.data(), sin.data());
    for (std::int64_t t = 0; t < N; ++t) {
      std::copy_n(q.data() + t * D, D, qkv.data() + t * 3 * D);
      std::copy_n(k.data() + t * D, D, qkv.data() + t * 3 * D + D);
    }
    // Each frame set of one image attends within itself: the input is a single image here.
    attention(qkv.data(), N, att.data());
    cpu::linear(pool_, att.data(), N, L.proj_w, c_.attention_bias ? &L.proj_b : nullptr, y.data());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];

    cpu::rms_norm(x.data(), N, D, L.norm2, eps, h.data());
    cpu::linear(pool_, h.data(), N, L.gate_w, c_.attention_bias ? &L.gate_b : nullptr, gate.data());
    cpu::linear(pool_, h.data(), N, L.up_w, c_.attention_bias ? &L.up_b : nullptr, up.data());
    clamped_swiglu(gate.data(), up.data(), N * I, limit, gate.data());
    cpu::linear(pool_, gate.data(), N, L.down_w, c_.attention_bias ? &L.down_b : nullptr, y.data());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
    if (trace) trace->append("vision.block." + std::to_string(b), x.data(), x.size());
  }
  cpu::rms_norm(x.data(), N, D, post_norm_, eps, x.data());
  if (trace) trace->append("vision.post_norm", x.data(), x.size());

  // Downsample: the merge^2 consecutive patches of a block, as [D, M, M] (channel-major).
  const std::int64_t G = N / (M * M), O = c_.out_hidden, C = c_.projection_intermediate;
  std::vector<float> blocks_in(static_cast<std::size_t>(G * D * M * M));
  for (std::int64_t g = 0; g < G; ++g)
    for (std::int64_t s = 0; s < M * M; ++s)
      for (std::int64_t ch = 0; ch < D; ++ch)
        blocks_in[static_cast<std::size_t>((g * D + ch) * M * M + s)] =
            x[static_cast<std::size_t>((g * M * M + s) * D + ch)];
  std::vector<float> merged(static_cast<std::size_t>(G * O));
  cpu::linear(pool_, blocks_in.data(), G, down_w_, &down_b_, merged.data());
  if (trace) trace->append("vision.downsample", merged.data(), merged.size());

  std::vector<float> hm(merged.size());
  cpu::linear(pool_, merged.data(), G, m_proj_, nullptr, hm.data());
  layer_norm(hm.data(), G, O, m_norm_w_, m_norm_b_, 1e-5f);
  for (float& v : hm) v = 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f)));
  std::vector<float> mg(static_cast<std::size_t>(G * C)), mu(mg.size());
  cpu::linear(pool_, hm.data(), G, m_gate_, nullptr, mg.data());
  cpu::linear(pool_, hm.data(), G, m_up_, nullptr, mu.data());
  clamped_swiglu(mg.data(), mu.data(), G * C, limit, mg.data());
  std::vector<float> out(static_cast<std::size_t>(G * O));
  cpu::linear(pool_, mg.data(), G, m_down_, nullptr, out.data());
  if (trace) trace->append("vision.merger", out.data(), out.size());
  return out;
}

}  // namespace day0::vision
