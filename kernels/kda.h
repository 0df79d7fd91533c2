#pragma once
// KDA (Kimi Delta Attention), the linear-attention block of glm5_next, on the GPU: the pieces
// between the projections and o_proj, as engine/blocks/kda.cpp computes them (see kda.h there for
// the math). D = heads * d; rows are tokens. All pointers are device pointers, all tensors fp32.
// Launchers queue on `stream` and return cudaGetLastError() after the launch, or
// cudaErrorInvalidValue for bad arguments (nothing launched); T == 0 launches nothing. Nothing
// allocates or synchronises, so every launcher may be captured in a CUDA graph.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// Causal depthwise convolution over time, then SiLU, for `channels` channels (3D: the q channels,
// then k, then v):
//   out[t, c] = silu(sum_{i<K} weight[c, i] * x[t - (K-1) + i, c])
// where x is the concatenation of `history` and `in` along time. in: [T, channels] (the
// projections); weight: [channels, K], 1 <= K <= 64; history: [K-1, channels], the last K-1
// inputs before this call, oldest first (zeros before the first token; may be null when K == 1);
// out: [T, channels], not aliasing `in`. Advances `history` by the T tokens: it becomes the last
// K-1 rows of concat(history, in), also when T < K-1.
cudaError_t kda_conv_silu(const float* in, int64_t T, int64_t channels, int K, const float* weight, float* history,
                          float* out, cudaStream_t stream);

// The forget gate's parameters: dt_bias [D]; A_log [heads]; the lower bound of the "safe gate"
// form when has_lower_bound, else the softplus form; l2_eps inside the q/k l2norm.
struct KdaGateParams {
  const float* dt_bias = nullptr;
  const float* A_log = nullptr;
  bool has_lower_bound = false;
  float lower_bound = 0.0f;
  float l2_eps = 1e-6f;
};

// In place, per token and head h (rows of q, k, g: [T, D], head h at columns h*d..; beta:
// [T, heads]):
//   q    = q / sqrt(sum q^2 + l2_eps) / sqrt(d)       sums in double
//   k    = k / sqrt(sum k^2 + l2_eps)
//   g    = log decay, in double, from x = g + dt_bias and rate = exp(min(A_log[h], 80)):
//          lower_bound * sigmoid(rate * x), or -rate * softplus(x) (x > 20: softplus = x),
//          clamped to [-1e30, 0]
//   beta = sigmoid(beta)
// 1 <= d; heads >= 1.
cudaError_t kda_prepare(float* q, float* k, float* g, float* beta, int64_t T, int heads, int d,
                        const KdaGateParams& p, cudaStream_t stream);

// The recurrence token by token, for all heads (kda_core.cpp's kda_head_recurrent): per token,
// with a = exp(log_decay),
//   S = diag(a) S;  delta = beta (v - S^T k);  S += k delta^T;  out = S^T q.
// q, k, v, log_decay, out: [T, D] (head h at columns h*d..); beta: [T, heads]; state:
// [heads, d_k = d, d_v = d] (S[h][c][j]), read and written back. 1 <= d <= 256. out must not
// alias the inputs or the state.
cudaError_t kda_recurrent(const float* q, const float* k, const float* v, const float* log_decay, const float* beta,
                          int64_t T, int heads, int d, float* state, float* out, cudaStream_t stream);

// The gated output norm, in place per token and head:
//   o[c] = o[c] / sqrt(mean(o^2) + eps) * o_norm[c] * sigmoid(gate[t, h*d + c])
// o, gate: [T, D]; o_norm: [d] (sum of squares in double).
cudaError_t kda_gated_norm(float* o, const float* gate, const float* o_norm, int64_t T, int heads, int d, float eps,
                           cudaStream_t stream);

}  // namespace day0::kernels
