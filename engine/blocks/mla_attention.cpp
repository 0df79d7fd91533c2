#include "blocks/mla_attention.h"

#include <algorithm>
#include <cmath>

namespace day0::blocks {
namespace {

// Calls with at most this many tokens decode kv_b row by row in each head's job.
constexpr std::int64_t kRowByRowTokens = 4;

}  // namespace

Result<MlaWeights> bind_mla(const models::WeightSource& weights, const MlaConfig& c, const std::string& prefix) {
  MlaWeights w;
  DAY0_ASSIGN_OR_RETURN(w.q_a, weights.matrix(prefix + "q_a_proj.weight", c.q_lora, c.hidden));
  DAY0_ASSIGN_OR_RETURN(w.q_a_norm, weights.vector(prefix + "q_a_layernorm.weight", c.q_lora));
  DAY0_ASSIGN_OR_RETURN(w.q_b, weights.matrix(prefix + "q_b_proj.weight", c.heads * c.nope, c.q_lora));
  DAY0_ASSIGN_OR_RETURN(w.kv_a, weights.matrix(prefix + "kv_a_proj_with_mqa.weight", c.kv_lora, c.hidden));
  DAY0_ASSIGN_OR_RETURN(w.kv_a_norm, weights.vector(prefix + "kv_a_layernorm.weight", c.kv_lora));
  DAY0_ASSIGN_OR_RETURN(w.kv_b, weights.matrix(prefix + "kv_b_proj.weight", c.heads * (c.nope + c.v_dim), c.kv_lora));
  DAY0_ASSIGN_OR_RETURN(w.o, weights.matrix(prefix + "o_proj.weight", c.hidden, c.heads * c.v_dim));
  if (c.bias) {
    DAY0_ASSIGN_OR_RETURN(w.q_a_bias, weights.vector(prefix + "q_a_proj.bias", c.q_lora));
    DAY0_ASSIGN_OR_RETURN(w.kv_a_bias, weights.vector(prefix + "kv_a_proj_with_mqa.bias", c.kv_lora));
    DAY0_ASSIGN_OR_RETURN(w.o_bias, weights.vector(prefix + "o_proj.bias", c.hidden));
  }
  return w;
}

void mla_project(ThreadPool& pool, const MlaConfig& c, const MlaWeights& w, const float* h, std::int64_t T,
                 float* q_resid, float* latent) {
  cpu::linear(pool, h, T, w.q_a, c.bias ? &w.q_a_bias : nullptr, q_resid);
  cpu::rms_norm(q_resid, T, c.q_lora, w.q_a_norm, c.rms_eps, q_resid);
  cpu::linear(pool, h, T, w.kv_a, c.bias ? &w.kv_a_bias : nullptr, latent);
  cpu::rms_norm(latent, T, c.kv_lora, w.kv_a_norm, c.rms_eps, latent);
}

void mla_attend(ThreadPool& pool, const MlaConfig& c, const MlaWeights& w, const MlaCache& cache, const float* q_resid,
                std::int64_t T, std::int64_t pos0, const std::int32_t* selection, std::int64_t width, float* out) {
  const std::int64_t nh = c.heads, dn = c.nope, dv = c.v_dim, R = c.kv_lora, row = dn + dv;
  std::vector<float> q(static_cast<std::size_t>(T * nh * dn));
  cpu::linear(pool, q_resid, T, w.q_b, nullptr, q.data());
  // kv_b as fp32 [heads, nope + v_dim, kv_lora]: decoded once per call for several tokens (into a
  // buffer kept across calls: a fresh 64 MB allocation per layer and token costs more in page
  // faults than the decoding), or row by row inside each head's job for a few tokens (a decode
  // step reads each head's rows once, as stored).
  const bool whole = T > kRowByRowTokens;
  // (The calling thread's buffer: the pool's workers reach it through `decoded`.)
  thread_local std::vector<float> kv_b_buffer;
  float* decoded = nullptr;
  if (whole) {
    kv_b_buffer.resize(static_cast<std::size_t>(nh * row * R));
    decoded = kv_b_buffer.data();
    pool.parallel_for(static_cast<std::size_t>(nh * row), 16, [&](std::size_t begin, std::size_t end) {
      for (std::size_t r = begin; r < end; ++r) cpu::decode_row(w.kv_b, static_cast<std::int64_t>(r), decoded + r * R);
    });
  }
  const float* kv_b = decoded;
  const float scaling = 1.0f / std::sqrt(static_cast<float>(dn));

  std::vector<float> heads_out(static_cast<std::size_t>(T * nh * dv));
  pool.parallel_for(static_cast<std::size_t>(T * nh), 1, [&](std::size_t begin, std::size_t end) {
    std::vector<float> q_abs(static_cast<std::size_t>(R)), ctx(static_cast<std::size_t>(R)), scores,
        kv_row(static_cast<std::size_t>(R));
    std::vector<std::int64_t> positions;
    // Row `r` of head h's kv_b block (r < nope: a key row; then the value rows) as fp32.
    const auto kv_b_row = [&](std::int64_t h, std::int64_t r) -> const float* {
      if (whole) return kv_b + (h * row + r) * R;
      cpu::decode_row(w.kv_b, h * row + r, kv_row.data());
      return kv_row.data();
    };
    for (std::size_t job = begin; job < end; ++job) {
      const std::int64_t t = static_cast<std::int64_t>(job) / nh, h = static_cast<std::int64_t>(job) % nh;
      const std::int64_t p = pos0 + t;
      positions.clear();
      if (selection == nullptr) {
        for (std::int64_t j = 0; j <= p; ++j) positions.push_back(j);
      } else {
        for (std::int64_t i = 0; i < width; ++i) {
          const std::int32_t j = selection[t * width + i];
          if (j >= 0 && j <= p) positions.push_back(j);
        }
      }
      // q_abs = W_kh^T q_h: [kv_lora].
      const float* qh = q.data() + (t * nh + h) * dn;
      std::fill(q_abs.begin(), q_abs.end(), 0.0f);
      for (std::int64_t i = 0; i < dn; ++i) {
        const float* wk = kv_b_row(h, i);
        for (std::int64_t r = 0; r < R; ++r) q_abs[static_cast<std::size_t>(r)] += qh[i] * wk[r];
      }
      scores.resize(positions.size());
      float top = -INFINITY;
      for (std::size_t j = 0; j < positions.size(); ++j) {
        scores[j] = cpu::dot(q_abs.data(), cache.at(positions[j]), R) * scaling;
        top = std::max(top, scores[j]);
      }
      float z = 0;
      for (auto& s : scores) {
        s = std::exp(s - top);
        z += s;
      }
      std::fill(ctx.begin(), ctx.end(), 0.0f);
      for (std::size_t j = 0; j < positions.size(); ++j) {
        const float pj = scores[j] / z;
        const float* cj = cache.at(positions[j]);
        for (std::int64_t r = 0; r < R; ++r) ctx[static_cast<std::size_t>(r)] += pj * cj[r];
      }
      float* o = heads_out.data() + (t * nh + h) * dv;
      for (std::int64_t i = 0; i < dv; ++i) o[i] = cpu::dot(kv_b_row(h, dn + i), ctx.data(), R);
    }
  });
  cpu::linear(pool, heads_out.data(), T, w.o, c.bias ? &w.o_bias : nullptr, out);
}

}  // namespace day0::blocks
