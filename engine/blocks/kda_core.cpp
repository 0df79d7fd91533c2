// The KDA recurrence for one head.
//
// Chunked form. Within a chunk of L tokens (positions i, j < L) with state S0 at its start, let
// E(i, j) = a_{j+1} * ... * a_i (per key channel; E(i, i) = 1) and P_i = a_0 * ... * a_i. Unrolling
// the recurrence gives
//   S before token i's update = diag(P_i) S0 + sum_{j<i} diag(E(i, j)) k_j u_j^T
//   u_i = beta_i (v_i - S0^T (P_i . k_i)) - sum_{j<i} beta_i k_i^T diag(E(i, j)) k_j u_j
//   o_i = S0^T (P_i . q_i) + sum_{j<=i} q_i^T diag(E(i, j)) k_j u_j
//   S after the chunk = diag(P_{L-1}) S0 + sum_j (E(L-1, j) . k_j) u_j^T
// so u solves a unit lower-triangular system (forward substitution) and everything else is
// products with S0. E(i, j) is built as a running product over i for each j: factors a <= 1
// only, so strong decays underflow to zero, no exp() of a positive number is taken, and no
// difference of large cumulative log-decays loses precision (the reference's fallback subtracts
// cumulative sums that reach -320 per chunk). Cost O(L^2 d + L d^2) per chunk.
#include "blocks/kda_core.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/cpu_ops.h"

namespace day0::blocks::detail {
namespace {

void axpy(float alpha, const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace

void kda_head_recurrent(const KdaHeadView& in, float* S) {
  const std::int64_t d = in.d;
  std::vector<float> a(static_cast<std::size_t>(d)), kv(static_cast<std::size_t>(d));
  for (std::int64_t t = 0; t < in.T; ++t) {
    const float* q = in.q + t * in.stride;
    const float* k = in.k + t * in.stride;
    const float* v = in.v + t * in.stride;
    const float* ld = in.log_decay + t * in.stride;
    const float beta = in.beta[t * in.beta_stride];
    float* o = in.out + t * in.stride;
    for (std::int64_t c = 0; c < d; ++c) a[c] = std::exp(ld[c]);
    // Decay the state and read what it recalls for k: kv = (diag(a) S)^T k.
    std::fill(kv.begin(), kv.end(), 0.0f);
    for (std::int64_t c = 0; c < d; ++c) {
      float* row = S + c * d;
      for (std::int64_t j = 0; j < d; ++j) row[j] *= a[c];
      axpy(k[c], row, kv.data(), d);
    }
    // delta = beta (v - kv); S += k delta^T; o = S^T q.
    for (std::int64_t j = 0; j < d; ++j) kv[j] = beta * (v[j] - kv[j]);
    std::fill(o, o + d, 0.0f);
    for (std::int64_t c = 0; c < d; ++c) {
      float* row = S + c * d;
      axpy(k[c], kv.data(), row, d);
      axpy(q[c], row, o, d);
    }
  }
}

KdaChunkScratch::KdaChunkScratch(std::int64_t chunk, std::int64_t d) {
  const auto cd = static_cast<std::size_t>(chunk * d), cc = static_cast<std::size_t>(chunk * chunk);
  a.resize(cd);
  prod.resize(cd);
  u.resize(cd);
  r.resize(cd);
  kp.resize(cd);
  qp.resize(cd);
  w.resize(static_cast<std::size_t>(d));
  kk.resize(cc);  // beta_i k_i^T diag(E(i, j)) k_j, strictly lower triangle: [chunk, chunk]
  kq.resize(cc);  // q_i^T diag(E(i, j)) k_j, lower triangle with diagonal: [chunk, chunk]
}

void kda_head_chunked(const KdaHeadView& in, std::int64_t chunk, float* S, KdaChunkScratch& s) {
  const std::int64_t d = in.d, C = chunk;
  float* w = s.w.data();
  for (std::int64_t t0 = 0; t0 < in.T; t0 += C) {
    const std::int64_t L = std::min(C, in.T - t0);
    const auto q = [&](std::int64_t i) { return in.q + (t0 + i) * in.stride; };
    const auto k = [&](std::int64_t i) { return in.k + (t0 + i) * in.stride; };
    const auto v = [&](std::int64_t i) { return in.v + (t0 + i) * in.stride; };
    const auto beta = [&](std::int64_t i) { return in.beta[(t0 + i) * in.beta_stride]; };
    const auto a = [&](std::int64_t i) { return s.a.data() + i * d; };
    const auto P = [&](std::int64_t i) { return s.prod.data() + i * d; };
    const auto u = [&](std::int64_t i) { return s.u.data() + i * d; };
    const auto r = [&](std::int64_t i) { return s.r.data() + i * d; };
    const auto kp = [&](std::int64_t i) { return s.kp.data() + i * d; };
    const auto qp = [&](std::int64_t i) { return s.qp.data() + i * d; };
    float* kk = s.kk.data();
    float* kq = s.kq.data();

    // a_i = exp(log a_i) <= 1 and P_i = a_0 ... a_i: [L, d].
    for (std::int64_t i = 0; i < L; ++i) {
      const float* ld = in.log_decay + (t0 + i) * in.stride;
      for (std::int64_t c = 0; c < d; ++c) {
        a(i)[c] = std::exp(ld[c]);
        P(i)[c] = (i == 0 ? 1.0f : P(i - 1)[c]) * a(i)[c];
      }
    }

    // Pairwise terms, column j at a time: w = E(i, j) . k_j as i walks down the chunk.
    for (std::int64_t j = 0; j < L; ++j) {
      std::copy(k(j), k(j) + d, w);
      kq[j * C + j] = cpu::dot(q(j), w, d);
      std::int64_t i = j + 1;
      for (; i < L; ++i) {
        int nonzero = 0;
        for (std::int64_t c = 0; c < d; ++c) {
          w[c] *= a(i)[c];
          nonzero |= static_cast<int>(w[c] != 0.0f);
        }
        if (nonzero == 0) break;  // fully decayed: every later term of this column is zero
        kk[i * C + j] = beta(i) * cpu::dot(k(i), w, d);
        kq[i * C + j] = cpu::dot(q(i), w, d);
      }
      if (i < L) {
        std::fill(w, w + d, 0.0f);
        for (; i < L; ++i) kk[i * C + j] = kq[i * C + j] = 0.0f;
      }
      std::copy(w, w + d, r(j));  // E(L-1, j) . k_j
    }

    // The products with S0 in one pass over its rows (row c stays in cache for all L tokens):
    // u_i = S0^T (P_i . k_i) and o_i = S0^T (P_i . q_i).
    const auto o = [&](std::int64_t i) { return in.out + (t0 + i) * in.stride; };
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t c = 0; c < d; ++c) {
        kp(i)[c] = P(i)[c] * k(i)[c];
        qp(i)[c] = P(i)[c] * q(i)[c];
      }
      std::fill(u(i), u(i) + d, 0.0f);
      std::fill(o(i), o(i) + d, 0.0f);
    }
    for (std::int64_t c = 0; c < d; ++c) {
      const float* row = S + c * d;
      for (std::int64_t i = 0; i < L; ++i) {
        if (kp(i)[c] != 0.0f) axpy(kp(i)[c], row, u(i), d);
        if (qp(i)[c] != 0.0f) axpy(qp(i)[c], row, o(i), d);
      }
    }

    // u_i = beta_i (v_i - S0^T (P_i . k_i)) - sum_{j<i} kk[i, j] u_j.
    for (std::int64_t i = 0; i < L; ++i) {
      const float b = beta(i);
      for (std::int64_t c = 0; c < d; ++c) u(i)[c] = b * (v(i)[c] - u(i)[c]);
      for (std::int64_t j = 0; j < i; ++j)
        if (kk[i * C + j] != 0.0f) axpy(-kk[i * C + j], u(j), u(i), d);
    }

    // o_i = S0^T (P_i . q_i) + sum_{j<=i} kq[i, j] u_j.
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j <= i; ++j)
        if (kq[i * C + j] != 0.0f) axpy(kq[i * C + j], u(j), o(i), d);

    // S = diag(P_{L-1}) S0 + sum_j r_j u_j^T.
    const float* last = P(L - 1);
    for (std::int64_t c = 0; c < d; ++c) {
      float* row = S + c * d;
      for (std::int64_t x = 0; x < d; ++x) row[x] *= last[c];
      for (std::int64_t j = 0; j < L; ++j)
        if (r(j)[c] != 0.0f) axpy(r(j)[c], u(j), row, d);
    }
  }
}

}  // namespace day0::blocks::detail
