#include "blocks/moe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "formats/mxfp4.h"

namespace day0::blocks {
namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

// act[i] = silu(min(gate[i], L)) * clamp(up[i], -L, L)
void clamped_swiglu(const float* gate, const float* up, std::int64_t n, float limit, float* act) {
  for (std::int64_t i = 0; i < n; ++i) act[i] = silu(std::min(gate[i], limit)) * std::clamp(up[i], -limit, limit);
}

// Best-first order of `n` values, ties to the lower index.
std::vector<std::int32_t> best_first(const float* v, std::int64_t n, std::int64_t k) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](std::int32_t a, std::int32_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
  order.resize(static_cast<std::size_t>(k));
  return order;
}

Status check_scales(const std::string& name, const cpu::Mxfp4Matrix& m, std::int64_t expert) {
  const std::size_t n = static_cast<std::size_t>(m.rows * (m.cols / formats::kMxfp4BlockSize));
  if (const void* hit = std::memchr(m.scales, formats::kE8m0Nan, n)) {
    const auto block = static_cast<const std::uint8_t*>(hit) - m.scales;
    return error(ErrorCode::corrupt_data, "tensor " + name + "_scales holds the NaN scale byte 0xFF (expert " +
                                              std::to_string(expert) + ", row " +
                                              std::to_string(block / (m.cols / formats::kMxfp4BlockSize)) +
                                              "): the checkpoint is damaged");
  }
  return Status::ok();
}

}  // namespace

Result<DenseMlp> bind_dense_mlp(const models::WeightSource& weights, const std::string& prefix, std::int64_t hidden,
                                std::int64_t inter) {
  DenseMlp m;
  m.inter = inter;
  DAY0_ASSIGN_OR_RETURN(m.gate, weights.matrix(prefix + "gate_proj.weight", inter, hidden));
  DAY0_ASSIGN_OR_RETURN(m.up, weights.matrix(prefix + "up_proj.weight", inter, hidden));
  DAY0_ASSIGN_OR_RETURN(m.down, weights.matrix(prefix + "down_proj.weight", hidden, inter));
  return m;
}

void dense_mlp_forward(ThreadPool& pool, const DenseMlp& mlp, float swiglu_limit, const float* x, std::int64_t T,
                       float* out) {
  const std::int64_t I = mlp.inter;
  std::vector<float> gate(static_cast<std::size_t>(T * I)), up(gate.size());
  cpu::linear(pool, x, T, mlp.gate, nullptr, gate.data());
  cpu::linear(pool, x, T, mlp.up, nullptr, up.data());
  clamped_swiglu(gate.data(), up.data(), T * I, swiglu_limit, gate.data());
  cpu::linear(pool, gate.data(), T, mlp.down, nullptr, out);
}

Result<MoeLayer> bind_moe(const models::WeightSource& weights, const MoeConfig& config, const std::string& prefix,
                          const BindOptions& options) {
  const std::int64_t E = config.experts, H = config.hidden, I = config.inter;
  MoeLayer L;
  DAY0_ASSIGN_OR_RETURN(L.router, weights.matrix(prefix + "gate.weight", E, H));
  DAY0_ASSIGN_OR_RETURN(L.score_bias, weights.vector(prefix + "gate.e_score_correction_bias", E));
  if (config.mxfp4) {
    DAY0_ASSIGN_OR_RETURN(L.gate_up_mx, weights.stacked_mxfp4(prefix + "experts.gate_up_proj", E, 2 * I, H));
    DAY0_ASSIGN_OR_RETURN(L.down_mx, weights.stacked_mxfp4(prefix + "experts.down_proj", E, H, I));
    for (std::int64_t e = 0; options.check_expert_bytes && e < E; ++e) {
      DAY0_RETURN_IF_ERROR(check_scales(prefix + "experts.gate_up_proj", L.gate_up_mx[static_cast<std::size_t>(e)], e));
      DAY0_RETURN_IF_ERROR(check_scales(prefix + "experts.down_proj", L.down_mx[static_cast<std::size_t>(e)], e));
    }
  } else {
    for (std::int64_t e = 0; e < E; ++e) {
      const std::string x = prefix + "experts." + std::to_string(e) + ".";
      DAY0_ASSIGN_OR_RETURN(auto g, weights.matrix(x + "gate_proj.weight", I, H));
      DAY0_ASSIGN_OR_RETURN(auto u, weights.matrix(x + "up_proj.weight", I, H));
      DAY0_ASSIGN_OR_RETURN(auto d, weights.matrix(x + "down_proj.weight", H, I));
      L.gate.push_back(g);
      L.up.push_back(u);
      L.down.push_back(d);
    }
  }
  if (config.shared_inter > 0) {
    L.has_shared = true;
    DAY0_ASSIGN_OR_RETURN(L.shared, bind_dense_mlp(weights, prefix + "shared_experts.", H, config.shared_inter));
  }
  return L;
}

Status check_expert_scales(const MoeConfig& config, const ExpertSlotLayout& slot, const std::uint8_t* bytes,
                           const std::string& layer_prefix, std::int64_t expert) {
  if (!config.mxfp4) return Status::ok();
  const std::int64_t H = config.hidden, I = config.inter;
  DAY0_RETURN_IF_ERROR(check_scales(layer_prefix + "experts.gate_up_proj",
                                    cpu::Mxfp4Matrix{bytes + slot.gate_up_blocks, bytes + slot.gate_up_scales, 2 * I, H},
                                    expert));
  return check_scales(layer_prefix + "experts.down_proj",
                      cpu::Mxfp4Matrix{bytes + slot.down_blocks, bytes + slot.down_scales, H, I}, expert);
}

void route(ThreadPool& pool, const MoeConfig& config, const MoeLayer& layer, const float* x, std::int64_t T,
           std::int32_t* ids, float* weights) {
  const std::int64_t E = config.experts, K = config.top_k, G = config.n_group, per_group = E / G;
  std::vector<float> logits(static_cast<std::size_t>(T * E)), bias(static_cast<std::size_t>(E));
  cpu::linear(pool, x, T, layer.router, nullptr, logits.data());
  cpu::decode_row(layer.score_bias, 0, bias.data());
  std::vector<float> scores(static_cast<std::size_t>(E)), choice(static_cast<std::size_t>(E)),
      group_scores(static_cast<std::size_t>(G));
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t e = 0; e < E; ++e) {
      scores[static_cast<std::size_t>(e)] = 1.0f / (1.0f + std::exp(-logits[static_cast<std::size_t>(t * E + e)]));
      choice[static_cast<std::size_t>(e)] = scores[static_cast<std::size_t>(e)] + bias[static_cast<std::size_t>(e)];
    }
    for (std::int64_t g = 0; g < G; ++g) {
      const auto top2 = best_first(choice.data() + g * per_group, per_group, 2);
      group_scores[static_cast<std::size_t>(g)] = choice[static_cast<std::size_t>(g * per_group + top2[0])] +
                                                  choice[static_cast<std::size_t>(g * per_group + top2[1])];
    }
    const auto groups = best_first(group_scores.data(), G, config.topk_group);
    std::vector<float> masked(static_cast<std::size_t>(E), -INFINITY);
    for (const std::int32_t g : groups)
      for (std::int64_t e = g * per_group; e < (g + 1) * per_group; ++e)
        masked[static_cast<std::size_t>(e)] = choice[static_cast<std::size_t>(e)];
    auto chosen = best_first(masked.data(), E, K);
    std::sort(chosen.begin(), chosen.end());
    float sum = 0;
    for (const std::int32_t e : chosen) sum += scores[static_cast<std::size_t>(e)];
    for (std::int64_t j = 0; j < K; ++j) {
      const std::int32_t e = chosen[static_cast<std::size_t>(j)];
      float w = scores[static_cast<std::size_t>(e)];
      if (config.norm_topk_prob) w /= sum + 1e-20f;
      ids[t * K + j] = e;
      weights[t * K + j] = w * config.routed_scaling;
    }
  }
}

Status moe_forward(ThreadPool& pool, const MoeConfig& config, const MoeLayer& layer, const float* x, std::int64_t T,
                   float* out, std::vector<std::int32_t>* ids_out, std::vector<float>* weights_out) {
  const std::int64_t E = config.experts, K = config.top_k, H = config.hidden, I = config.inter;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(T * K));
  std::vector<float> weights(ids.size());
  route(pool, config, layer, x, T, ids.data(), weights.data());
  if (ids_out) *ids_out = ids;
  if (weights_out) *weights_out = weights;

  // Tokens grouped by expert so that each expert's weights are decoded once per call.
  std::vector<std::vector<std::pair<std::int64_t, float>>> by_expert(static_cast<std::size_t>(E));
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < K; ++j)
      by_expert[static_cast<std::size_t>(ids[static_cast<std::size_t>(t * K + j)])].push_back(
          {t, weights[static_cast<std::size_t>(t * K + j)]});

  std::fill_n(out, T * H, 0.0f);
  std::vector<float> xs, gate_up, act, down;
  // One expert's tokens through its weights (views into the map, or into a cache slot).
  const auto run_expert = [&](std::int32_t e, const cpu::Mxfp4Matrix* gate_up_mx, const cpu::Mxfp4Matrix* down_mx,
                              const cpu::Matrix* gate_w, const cpu::Matrix* up_w, const cpu::Matrix* down_w) {
    const auto& routed = by_expert[static_cast<std::size_t>(e)];
    const auto n = static_cast<std::int64_t>(routed.size());
    xs.resize(static_cast<std::size_t>(n * H));
    gate_up.resize(static_cast<std::size_t>(n * 2 * I));
    act.resize(static_cast<std::size_t>(n * I));
    down.resize(static_cast<std::size_t>(n * H));
    for (std::int64_t i = 0; i < n; ++i)
      std::copy_n(x + routed[static_cast<std::size_t>(i)].first * H, H, xs.data() + i * H);
    if (config.mxfp4) {
      // gate_up rows: [0, I) gate, [I, 2I) up.
      cpu::linear(pool, xs.data(), n, *gate_up_mx, nullptr, gate_up.data());
      for (std::int64_t i = 0; i < n; ++i)
        clamped_swiglu(gate_up.data() + i * 2 * I, gate_up.data() + i * 2 * I + I, I, config.swiglu_limit,
                       act.data() + i * I);
      cpu::linear(pool, act.data(), n, *down_mx, nullptr, down.data());
    } else {
      float* gate = gate_up.data();
      float* up = gate_up.data() + n * I;
      cpu::linear(pool, xs.data(), n, *gate_w, nullptr, gate);
      cpu::linear(pool, xs.data(), n, *up_w, nullptr, up);
      clamped_swiglu(gate, up, n * I, config.swiglu_limit, act.data());
      cpu::linear(pool, act.data(), n, *down_w, nullptr, down.data());
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const auto [t, w] = routed[static_cast<std::size_t>(i)];
      for (std::int64_t c = 0; c < H; ++c) out[t * H + c] += down[static_cast<std::size_t>(i * H + c)] * w;
    }
  };
  std::vector<std::int32_t> used;
  for (std::int32_t e = 0; e < E; ++e)
    if (!by_expert[static_cast<std::size_t>(e)].empty()) used.push_back(e);
  if (!layer.fetch) {
    for (const std::int32_t e : used) {
      const auto ue = static_cast<std::size_t>(e);
      if (config.mxfp4)
        run_expert(e, &layer.gate_up_mx[ue], &layer.down_mx[ue], nullptr, nullptr, nullptr);
      else
        run_expert(e, nullptr, nullptr, &layer.gate[ue], &layer.up[ue], &layer.down[ue]);
    }
  } else {
    const ExpertSlotLayout& o = layer.slot;
    DAY0_RETURN_IF_ERROR(layer.fetch(used, [&](std::size_t i, const std::uint8_t* p) {
      const auto ue = static_cast<std::size_t>(used[i]);
      if (config.mxfp4) {
        cpu::Mxfp4Matrix gu = layer.gate_up_mx[ue], dn = layer.down_mx[ue];
        gu.blocks = p + o.gate_up_blocks;
        gu.scales = p + o.gate_up_scales;
        dn.blocks = p + o.down_blocks;
        dn.scales = p + o.down_scales;
        run_expert(used[i], &gu, &dn, nullptr, nullptr, nullptr);
      } else {
        cpu::Matrix g = layer.gate[ue], u = layer.up[ue], d = layer.down[ue];
        g.data = p + o.gate;
        u.data = p + o.up;
        d.data = p + o.down;
        run_expert(used[i], nullptr, nullptr, &g, &u, &d);
      }
      return Status::ok();
    }));
  }
  if (layer.has_shared) {
    std::vector<float> shared(static_cast<std::size_t>(T * H));
    dense_mlp_forward(pool, layer.shared, config.swiglu_limit, x, T, shared.data());
    for (std::int64_t i = 0; i < T * H; ++i) out[i] += shared[static_cast<std::size_t>(i)];
  }
  return Status::ok();
}

}  // namespace day0::blocks
