#pragma once
// KDA (Kimi Delta Attention): the linear-attention block of glm5_next (GLM-5.3-Flash) on the CPU.
//
// Per token t and head h (d = head_dim, D = heads * d, x_t the normed input of the attention site):
//   q, k, v  = SiLU(causal depthwise conv over time (kernel K) of x_t W_{q,k,v}^T)       [d] each
//   q        = l2norm(q) / sqrt(d),  k = l2norm(k)       l2norm(x) = x / sqrt(sum x^2 + 1e-6)
//   g        = f_b(f_a(x_t)) + dt_bias                                                  [d] per head
//   log a    = lower_bound * sigmoid(exp(A_log[h]) * g)    (the "safe gate", lower_bound < 0), or
//            = -exp(A_log[h]) * softplus(g)                 (when config.json has no lower bound)
//   beta     = sigmoid(b_proj(x_t)[h])
//   S        = diag(a) S                                    S: [d_k, d_v], decay per key channel
//   S       += k (beta (v - S^T k))^T                       the delta rule
//   o        = S^T q
//   out_t    = o_proj(concat_h RMSNorm_eps(o) * o_norm * sigmoid(g_b(g_a(x_t))))
//
// Two exact forms of the same recurrence: token by token (decode, short inputs) and chunked
// (prefill). The chunked form never exponentiates a positive number and never subtracts
// cumulative log-decays: every decay between two positions is a running product of per-token
// factors a <= 1, so the strongest gates (-5 per token, or unbounded with the softplus form)
// underflow to zero instead of overflowing or losing precision.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/model_config.h"
#include "models/weights.h"

namespace day0::blocks {

struct KdaConfig {
  std::int64_t hidden = 0;       // hidden_size
  std::int64_t heads = 0;        // linear_num_heads
  std::int64_t head_dim = 0;     // linear_head_dim (keys and values alike)
  std::int64_t conv_kernel = 0;  // linear_conv_kernel_dim
  // linear_lower_bound: log a = lower_bound * sigmoid(...). Absent (null in config.json): the
  // softplus form.
  std::optional<float> lower_bound;
  float norm_eps = 1e-5f;  // rms_norm_eps, used by the gated output norm
  float l2_eps = 1e-6f;    // inside the q/k l2norm, as the reference kernels
  // Tokens per chunk of the chunked form, and the longest input that automatic mode runs token
  // by token. Not from config.json: they change speed, not results.
  std::int64_t chunk_size = 64;
  std::int64_t recurrent_max_tokens = 16;

  std::int64_t qkv_dim() const { return heads * head_dim; }  // D
};

// Reads text_config: hidden_size, linear_num_heads, linear_head_dim, linear_conv_kernel_dim,
// linear_lower_bound, rms_norm_eps, hidden_act (must be silu), and the Hub's nested
// linear_attn_config {num_heads, head_dim, short_conv_kernel_size, gate_lower_bound, safe_gate}
// when present (it overrides the flat fields, as transformers does).
Result<KdaConfig> read_kda_config(const io::ConfigView& text_config);

// Views into the checkpoint (nothing copied). D = heads * head_dim, H = hidden, d = head_dim.
struct KdaLayer {
  cpu::Matrix q_proj, k_proj, v_proj;  // [D, H]
  cpu::Matrix q_conv, k_conv, v_conv;  // [D, K]  ({q,k,v}_conv1d.weight [D, 1, K])
  cpu::Matrix f_a_proj;                // [d, H]
  cpu::Matrix f_b_proj;                // [D, d]
  cpu::Matrix dt_bias;                 // [1, D]
  cpu::Matrix A_log;                   // [1, heads]
  cpu::Matrix b_proj;                  // [heads, H]
  cpu::Matrix g_a_proj;                // [d, H]
  cpu::Matrix g_b_proj;                // [D, d]
  cpu::Matrix o_norm;                  // [1, d]
  cpu::Matrix o_proj;                  // [H, D]
};

// prefix: the attention module, e.g. "model.language_model.layers.3.self_attn". A missing tensor
// or one of the wrong shape or dtype is an error naming it.
Result<KdaLayer> bind_kda_layer(const models::WeightSource& weights, const KdaConfig& config,
                                const std::string& prefix);

// What one KDA layer carries from token to token. Plain values: copy it to snapshot a session.
struct KdaState {
  std::int64_t heads = 0, head_dim = 0, conv_kernel = 0;
  std::vector<float> recurrent;  // [heads, d_k, d_v]
  // The last K-1 inputs of the convolution (projections before the conv), oldest first:
  // [K-1, 3D] with the q channels, then k, then v. Zero before the first token.
  std::vector<float> conv;
  std::int64_t tokens = 0;  // tokens consumed so far

  std::uint64_t bytes() const { return (recurrent.size() + conv.size()) * sizeof(float); }
};

KdaState new_kda_state(const KdaConfig& config);

// Intermediate values of one kda_forward call, for dumps and tests. Rows are tokens.
struct KdaTrace {
  std::vector<float> q, k, v;    // [T, D] after conv + SiLU, before l2norm and scaling
  std::vector<float> log_decay;  // [T, D] log a (<= 0)
  std::vector<float> beta;       // [T, heads]
  std::vector<float> core;       // [T, D] S^T q, before the gated norm
  std::vector<float> state;      // [heads, d_k, d_v] after the last token
};

enum class KdaMode { automatic, recurrent, chunked };

// x: [T, hidden] = the normed input of the attention site; out: [T, hidden] after o_proj.
// Advances `state` by T tokens. Splitting a prompt over several calls gives the same result as
// one call (up to float rounding). Automatic mode runs inputs of up to recurrent_max_tokens token
// by token and longer ones in chunks. Threaded over heads and projection rows.
Status kda_forward(ThreadPool& pool, const KdaConfig& config, const KdaLayer& layer, KdaState& state, const float* x,
                   std::int64_t T, float* out, KdaTrace* trace, KdaMode mode = KdaMode::automatic);

}  // namespace day0::blocks
