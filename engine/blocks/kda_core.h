#pragma once
// The KDA recurrence for one head, in its two exact forms. Inputs are rows of [T, D] (or
// [T, heads]) arrays read with a stride, already prepared by kda_forward: q l2-normalised and
// scaled by 1/sqrt(d), k l2-normalised, v, log_decay = log a <= 0 per key channel, beta in (0, 1).
#include <cstdint>
#include <vector>

namespace day0::blocks::detail {

struct KdaHeadView {
  const float* q = nullptr;          // q[t * stride + c], c < d
  const float* k = nullptr;          // likewise
  const float* v = nullptr;          // likewise (d_v = d)
  const float* log_decay = nullptr;  // likewise
  const float* beta = nullptr;       // beta[t * beta_stride]
  float* out = nullptr;              // out[t * stride + c]: S^T q after token t
  std::int64_t T = 0, d = 0, stride = 0, beta_stride = 0;
};

// Token by token: S = diag(a) S; S += k (beta (v - S^T k))^T; o = S^T q.  state: [d_k, d_v].
void kda_head_recurrent(const KdaHeadView& in, float* state);

// Working memory of the chunked form for chunks of up to `chunk` tokens.
struct KdaChunkScratch {
  explicit KdaChunkScratch(std::int64_t chunk, std::int64_t d);
  std::vector<float> a, prod, u, r, kp, qp;  // [chunk, d]
  std::vector<float> kk, kq;                 // [chunk, chunk]
  std::vector<float> w;                      // [d]
};

// The same recurrence a chunk at a time (see kda_core.cpp for the algebra).
void kda_head_chunked(const KdaHeadView& in, std::int64_t chunk, float* state, KdaChunkScratch& scratch);

}  // namespace day0::blocks::detail
