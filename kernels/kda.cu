#include "kda.h"

#include <climits>

#include "device_util.cuh"

namespace day0::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// Causal depthwise convolution + SiLU.

constexpr int kConvThreads = 256;  // channels per CTA, one per thread
constexpr int kMaxConvKernel = 64;
// Tokens per thread. At least K-1 for every allowed K, so only the first tile reads the history.
constexpr int kConvTile = 64;
static_assert(kConvTile >= kMaxConvKernel - 1, "only the first tile may read the conv history");

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// Grid: x = blocks of kConvThreads channels, y = tiles of kConvTile tokens (grid-stride beyond
// gridDim.y). Column c of `history` is read and written only by channel c's thread of the CTAs
// with blockIdx.y == 0, which also advance it after their first tile (the only one that reads it).
__global__ void __launch_bounds__(kConvThreads)
    conv_silu_kernel(const float* __restrict__ in, int64_t T, int64_t channels, int K,
                     const float* __restrict__ weight, float* history, float* __restrict__ out) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(kConvThreads) + threadIdx.x;
  if (c >= channels) return;
  const float* w = weight + c * K;
  const int64_t tiles = (T + kConvTile - 1) / kConvTile;
  for (int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
    const int64_t t0 = tile * kConvTile, t1 = t0 + kConvTile < T ? t0 + kConvTile : T;
    for (int64_t t = t0; t < t1; ++t) {
      // x[t - (K-1) + i]: rows before the call (s < 0) come from the history, row K-1+s.
      float acc = 0.0f;
      for (int i = 0; i < K; ++i) {
        const int64_t s = t - (K - 1) + i;
        const float x = s >= 0 ? in[s * channels + c] : history[(K - 1 + s) * channels + c];
        acc += __ldg(w + i) * x;
      }
      out[t * channels + c] = silu(acc);
    }
  }
  if (blockIdx.y != 0) return;
  // history <- the last K-1 rows of concat(history, in). Row r is row T + r of the
  // concatenation; in ascending r an old row is read (T + r > r) before it is overwritten.
  const int keep = K - 1;
  for (int r = 0; r < keep; ++r) {
    const int64_t s = T + r;
    history[r * channels + c] = s < keep ? history[s * channels + c] : in[(s - keep) * channels + c];
  }
}

// ---------------------------------------------------------------------------------------------
// Row kernels: warps over the (token, head) rows of d values.

constexpr int kRowThreads = 256;
constexpr int kRowWarps = kRowThreads / 32;
constexpr int64_t kMaxRowBlocks = 1 << 20;  // grid-stride beyond

__device__ __forceinline__ double warp_sum_double(double v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// x[0..d) *= scale / sqrt(sum x^2 + eps), the sum in double (whole warp; every lane returns).
__device__ __forceinline__ void l2norm_row(float* x, int d, float eps, float scale, int lane) {
  double ss = 0.0;
  for (int c = lane; c < d; c += 32) ss += static_cast<double>(x[c]) * x[c];
  ss = warp_sum_double(ss);
  const auto f = static_cast<float>(static_cast<double>(scale) / sqrt(ss + static_cast<double>(eps)));
  for (int c = lane; c < d; c += 32) x[c] *= f;
}

__device__ __forceinline__ double sigmoid_double(double x) { return 1.0 / (1.0 + exp(-x)); }
__device__ __forceinline__ float sigmoid_float(float x) { return 1.0f / (1.0f + expf(-x)); }

// Row r = t * heads + h: q, k, g at r * d (= t * D + h * d), beta at r. Three warps per row
// (task = warp index % 3): the q norm, the k norm, the gate and beta.
__global__ void __launch_bounds__(kRowThreads)
    prepare_kernel(float* __restrict__ q, float* __restrict__ k, float* __restrict__ g, float* __restrict__ beta,
                   int64_t rows, int heads, int d, const float* __restrict__ dt_bias, const float* __restrict__ A_log,
                   bool has_lower_bound, float lower_bound, float l2_eps, float q_scale) {
  const int lane = threadIdx.x & 31;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRowWarps;
  for (int64_t w = blockIdx.x * static_cast<int64_t>(kRowWarps) + (threadIdx.x >> 5); w < 3 * rows; w += stride) {
    const int64_t r = w / 3;
    const int task = static_cast<int>(w - r * 3);
    if (task == 0) {
      l2norm_row(q + r * d, d, l2_eps, q_scale, lane);
    } else if (task == 1) {
      l2norm_row(k + r * d, d, l2_eps, 1.0f, lane);
    } else {
      // log a, in double: exp(A_log) may be huge. std::min's and std::clamp's NaN behaviour kept.
      const int h = static_cast<int>(r % heads);
      const double a_log = A_log[h];
      const double rate = exp(80.0 < a_log ? 80.0 : a_log);
      float* row = g + r * d;
      const float* bias = dt_bias + static_cast<int64_t>(h) * d;
      for (int c = lane; c < d; c += 32) {
        const double x = static_cast<double>(row[c]) + bias[c];
        double ld;
        if (has_lower_bound) {
          ld = static_cast<double>(lower_bound) * sigmoid_double(rate * x);
        } else {
          const double softplus = x > 20.0 ? x : log1p(exp(x));
          ld = -rate * softplus;
        }
        row[c] = static_cast<float>(ld < -1e30 ? -1e30 : (0.0 < ld ? 0.0 : ld));
      }
      if (lane == 0) beta[r] = static_cast<float>(sigmoid_double(beta[r]));
    }
  }
}

__global__ void __launch_bounds__(kRowThreads)
    gated_norm_kernel(float* __restrict__ o, const float* __restrict__ gate, const float* __restrict__ o_norm,
                      int64_t rows, int d, float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRowWarps;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kRowWarps) + (threadIdx.x >> 5); r < rows; r += stride) {
    float* x = o + r * d;
    const float* gr = gate + r * d;
    double ss = 0.0;
    for (int c = lane; c < d; c += 32) ss += static_cast<double>(x[c]) * x[c];
    ss = warp_sum_double(ss);
    const double inv = 1.0 / sqrt(ss / d + static_cast<double>(eps));
    for (int c = lane; c < d; c += 32)
      x[c] = static_cast<float>(x[c] * inv * o_norm[c] * static_cast<double>(sigmoid_float(gr[c])));
  }
}

// Blocks for a warp per each of `warps` tasks.
int64_t row_blocks(int64_t warps) {
  const int64_t blocks = (warps + kRowWarps - 1) / kRowWarps;
  return blocks < kMaxRowBlocks ? blocks : kMaxRowBlocks;
}

// ---------------------------------------------------------------------------------------------
// The recurrence.
//
// A CTA holds the state columns j0 .. j0 + kCols of one head in registers for all T tokens. The
// kParts lanes of a column group (lane = group-in-warp * kParts + part) each hold R key channels,
// c = i * kParts + part for i < R, of CJ adjacent value columns, so a column's reductions over c
// are a 3-step butterfly inside its lanes, and each q, k, a value read from shared memory serves
// CJ columns. Per token:
//   kv = sum_c a_c k_c s_c;  oq = sum_c a_c q_c s_c;  qk = sum_c q_c k_c   (one butterfly)
//   s_c *= a_c;  delta = beta (v_j - kv);  s_c += k_c delta;
//   out_j = oq + delta qk  (= sum_c q_c s_c after the update).
// The per-token inputs (q, k, a of the head, v of the CTA's columns, beta) come through shared
// memory in tiles of TT tokens, double-buffered: cp.async brings tile n+1 while the CTA works on
// tile n, so a long input pays one memory latency rather than one per token.

constexpr int kRecThreads = 128;
constexpr int kParts = 8;                        // lanes per column group
constexpr int kGroupsPerWarp = 32 / kParts;      // 4
constexpr int kGroups = kRecThreads / kParts;    // 16 column groups per CTA
constexpr int kMaxHeadDim = 256;

// The layout for R key channels (d <= kParts * R) and CJ value columns per thread.
template <int R, int CJ>
struct RecLayout {
  static_assert(CJ == 2 || CJ == 4, "value columns per thread");
  static constexpr int kCols = kGroups * CJ;  // value columns per CTA
  // A tile buffer holds, per token, q, k and a as [kParts][PS] (channel c at slot
  // (c % kParts) * PS + c / kParts), then v [kCols], then beta. PS pads R so that the kParts
  // 16-byte reads of one token start in distinct banks.
  static constexpr int PS = R % 8 == 0 ? R + 4 : R;
  static constexpr int kQ = 0, kK = kParts * PS, kA = 2 * kParts * PS, kV = 3 * kParts * PS;
  static constexpr int kBeta = kV + kCols;
  static constexpr int F = kBeta + 4;                        // floats per token (16-byte multiple)
  static constexpr int TT = R <= 8 ? 16 : (R <= 16 ? 8 : 4);  // tokens per tile: 2 tiles < 48 KB
  // Copies per token (q, k, log a, v, beta) spread over the threads: at most kSlots each.
  static constexpr int kSlots = (3 * kParts * R + kCols + 1 + kRecThreads - 1) / kRecThreads;
  static_assert(2 * TT * F * sizeof(float) <= 48 * 1024, "static shared memory");
  static_assert(F % 4 == 0 && PS % 4 == 0 && R % 4 == 0, "16-byte reads");
};

struct RecArgs {
  const float* q;
  const float* k;
  const float* v;
  const float* log_decay;
  const float* beta;
  int64_t T;
  int heads, d;
  bool vec;  // d % CJ == 0 and the state aligned for CJ-wide accesses
  float* state;
  float* out;
};

// CJ adjacent floats at p, of which `valid` exist; vector access when `vec` (then valid == CJ).
template <int CJ>
__device__ __forceinline__ void load_cols(const float* p, bool vec, int valid, float (&x)[CJ]) {
  if (vec) {
    if constexpr (CJ == 4) {
      const float4 v = *reinterpret_cast<const float4*>(p);
      x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    } else {
      const float2 v = *reinterpret_cast<const float2*>(p);
      x[0] = v.x, x[1] = v.y;
    }
    return;
  }
#pragma unroll
  for (int jj = 0; jj < CJ; ++jj) x[jj] = jj < valid ? p[jj] : 0.0f;
}

template <int CJ>
__device__ __forceinline__ void store_cols(float* p, bool vec, int valid, const float (&x)[CJ]) {
  if (vec) {
    if constexpr (CJ == 4)
      *reinterpret_cast<float4*>(p) = make_float4(x[0], x[1], x[2], x[3]);
    else
      *reinterpret_cast<float2*>(p) = make_float2(x[0], x[1]);
    return;
  }
#pragma unroll
  for (int jj = 0; jj < CJ; ++jj)
    if (jj < valid) p[jj] = x[jj];
}

// Grid: x = heads, y = blocks of kCols value columns.
template <int R, int CJ>
__global__ void __launch_bounds__(kRecThreads) recurrent_kernel(const RecArgs a) {
  using L = RecLayout<R, CJ>;
  constexpr int PS = L::PS, F = L::F, TT = L::TT;
  __shared__ __align__(16) float smem[2 * TT * F];

  const int h = blockIdx.x, d = a.d;
  const int j0 = blockIdx.y * L::kCols;
  const int cols = d - j0 < L::kCols ? d - j0 : L::kCols;
  const int lane = threadIdx.x & 31;
  const int part = lane % kParts;
  const int group = (threadIdx.x >> 5) * kGroupsPerWarp + lane / kParts;
  const int jg = group * CJ;  // first column of this thread, relative to j0
  const int valid = cols - jg < 0 ? 0 : (cols - jg < CJ ? cols - jg : CJ);
  const int64_t D = static_cast<int64_t>(a.heads) * d;
  const int64_t head = static_cast<int64_t>(h) * d;
  const int64_t tiles = (a.T + TT - 1) / TT;

  // This thread's copies of each token: slot m takes element e = threadIdx.x + m * kRecThreads of
  // the token's list (q, k, log a of the head's d channels, then v of the CTA's columns, then
  // beta): from src[m] + t * (row stride) to dst[m] of the token's part of a tile. dst < 0: none.
  const float* src[L::kSlots];
  int dst[L::kSlots];
#pragma unroll
  for (int m = 0; m < L::kSlots; ++m) {
    const int e = threadIdx.x + m * kRecThreads;
    src[m] = nullptr;
    dst[m] = -1;
    if (e < 3 * d) {
      const int which = e / d, c = e - which * d;
      src[m] = (which == 0 ? a.q : (which == 1 ? a.k : a.log_decay)) + head + c;
      dst[m] = which * kParts * PS + (c % kParts) * PS + c / kParts;
    } else if (e < 3 * d + cols) {
      src[m] = a.v + head + j0 + (e - 3 * d);
      dst[m] = L::kV + (e - 3 * d);
    } else if (e == 3 * d + cols) {
      src[m] = a.beta + h;
      dst[m] = L::kBeta;
    }
  }
  // Queues the copies of tokens t0 .. t0 + n into buf (no wait).
  const auto stage = [&](int64_t t0, int n, float* buf) {
#pragma unroll
    for (int m = 0; m < L::kSlots; ++m) {
      if (dst[m] < 0) continue;
      const int64_t stride = dst[m] == L::kBeta ? a.heads : D;
      for (int tt = 0; tt < n; ++tt) detail::cp_async4(buf + tt * F + dst[m], src[m] + (t0 + tt) * stride);
    }
  };

  // Slots that no copy writes (channels and columns past d) stay zero: finite values that keep
  // the zero state of absent channels and columns at zero.
  for (int e = threadIdx.x; e < 2 * TT * F; e += kRecThreads) smem[e] = 0.0f;
  __syncthreads();
  stage(0, static_cast<int>(a.T < TT ? a.T : TT), smem);

  // This thread's state: S[h][i * kParts + part][j0 + jg + jj] (zero where absent).
  float* S = a.state + static_cast<int64_t>(h) * d * d + j0 + jg;
  float s[R][CJ];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int c = i * kParts + part;
#pragma unroll
    for (int jj = 0; jj < CJ; ++jj) s[i][jj] = 0.0f;
    if (c < d && valid > 0) load_cols<CJ>(S + static_cast<int64_t>(c) * d, a.vec, valid, s[i]);
  }

  for (int64_t n = 0; n < tiles; ++n) {
    float* cur = smem + (n & 1) * (TT * F);
    const int64_t t0 = n * TT;
    const int cnt = static_cast<int>(a.T - t0 < TT ? a.T - t0 : TT);
    // Tile n has landed for every thread, and every thread is done with tile n - 1, whose buffer
    // now receives tile n + 1.
    detail::cp_async_wait_all();
    __syncthreads();
    if (n + 1 < tiles) {
      const int64_t next = t0 + TT;
      stage(next, static_cast<int>(a.T - next < TT ? a.T - next : TT), smem + ((n + 1) & 1) * (TT * F));
    }
    // log a -> a, once per channel for the whole CTA.
    for (int c = threadIdx.x; c < d; c += kRecThreads) {
      float* slot = cur + L::kA + (c % kParts) * PS + c / kParts;
      for (int tt = 0; tt < cnt; ++tt) slot[tt * F] = expf(slot[tt * F]);
    }
    __syncthreads();

    for (int tt = 0; tt < cnt; ++tt) {
      const float* tok = cur + tt * F;
      // The dot products read the state before its decay, with a folded into k and q
      // (kv = sum_c (a_c k_c) s_c); the decay itself overlaps the butterfly.
      float av[R], kr[R], akr[R], aqr[R];
      float qk = 0.0f;
#pragma unroll
      for (int i = 0; i < R; i += 4) {
        const float4 a4 = *reinterpret_cast<const float4*>(tok + L::kA + part * PS + i);
        const float4 k4 = *reinterpret_cast<const float4*>(tok + L::kK + part * PS + i);
        const float4 q4 = *reinterpret_cast<const float4*>(tok + L::kQ + part * PS + i);
        const float ax[4] = {a4.x, a4.y, a4.z, a4.w};
        const float kx[4] = {k4.x, k4.y, k4.z, k4.w};
        const float qx[4] = {q4.x, q4.y, q4.z, q4.w};
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          av[i + u] = ax[u];
          kr[i + u] = kx[u];
          akr[i + u] = ax[u] * kx[u];
          aqr[i + u] = ax[u] * qx[u];
          qk = fmaf(qx[u], kx[u], qk);
        }
      }
      float kv[CJ], oq[CJ];
#pragma unroll
      for (int jj = 0; jj < CJ; ++jj) kv[jj] = oq[jj] = 0.0f;
#pragma unroll
      for (int i = 0; i < R; ++i)
#pragma unroll
        for (int jj = 0; jj < CJ; ++jj) {
          kv[jj] = fmaf(akr[i], s[i][jj], kv[jj]);
          oq[jj] = fmaf(aqr[i], s[i][jj], oq[jj]);
        }
      // Sum over the group's kParts lanes (xor of the part bits stays inside the group).
#pragma unroll
      for (int offset = 1; offset < kParts; offset <<= 1) {
#pragma unroll
        for (int jj = 0; jj < CJ; ++jj) {
          kv[jj] += __shfl_xor_sync(0xffffffffu, kv[jj], offset);
          oq[jj] += __shfl_xor_sync(0xffffffffu, oq[jj], offset);
        }
        qk += __shfl_xor_sync(0xffffffffu, qk, offset);
      }
#pragma unroll
      for (int i = 0; i < R; ++i)
#pragma unroll
        for (int jj = 0; jj < CJ; ++jj) s[i][jj] *= av[i];
      const float b = tok[L::kBeta];
      float delta[CJ];
#pragma unroll
      for (int jj = 0; jj < CJ; ++jj) delta[jj] = b * (tok[L::kV + jg + jj] - kv[jj]);
#pragma unroll
      for (int i = 0; i < R; ++i)
#pragma unroll
        for (int jj = 0; jj < CJ; ++jj) s[i][jj] = fmaf(kr[i], delta[jj], s[i][jj]);
      if (part == 0) {
        float* o = a.out + (t0 + tt) * D + head + j0 + jg;
#pragma unroll
        for (int jj = 0; jj < CJ; ++jj)
          if (jj < valid) o[jj] = fmaf(delta[jj], qk, oq[jj]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int c = i * kParts + part;
    if (c < d && valid > 0) store_cols<CJ>(S + static_cast<int64_t>(c) * d, a.vec, valid, s[i]);
  }
}

template <int R, int CJ>
cudaError_t launch_recurrent(RecArgs a, cudaStream_t stream) {
  constexpr int kCols = RecLayout<R, CJ>::kCols;
  a.vec = a.d % CJ == 0 && (reinterpret_cast<uintptr_t>(a.state) % (CJ * sizeof(float))) == 0;
  const dim3 grid(static_cast<unsigned>(a.heads), static_cast<unsigned>((a.d + kCols - 1) / kCols));
  recurrent_kernel<R, CJ><<<grid, kRecThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

// Four value columns per thread, two for d > 128 (registers: R * CJ state values).
template <int R>
cudaError_t launch_recurrent(const RecArgs& a, cudaStream_t stream) {
  if constexpr (R <= 16)
    return launch_recurrent<R, 4>(a, stream);
  else
    return launch_recurrent<R, 2>(a, stream);
}

}  // namespace

cudaError_t kda_conv_silu(const float* in, int64_t T, int64_t channels, int K, const float* weight, float* history,
                          float* out, cudaStream_t stream) {
  if (T < 0 || channels <= 0 || K < 1 || K > kMaxConvKernel) return cudaErrorInvalidValue;
  if (T > 0 && (in == nullptr || weight == nullptr || out == nullptr || in == out || (K > 1 && history == nullptr)))
    return cudaErrorInvalidValue;
  const int64_t blocks = (channels + kConvThreads - 1) / kConvThreads;
  if (blocks > INT_MAX) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  const int64_t tiles = (T + kConvTile - 1) / kConvTile;
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(tiles < 65535 ? tiles : 65535));
  conv_silu_kernel<<<grid, kConvThreads, 0, stream>>>(in, T, channels, K, weight, history, out);
  return cudaGetLastError();
}

cudaError_t kda_prepare(float* q, float* k, float* g, float* beta, int64_t T, int heads, int d,
                        const KdaGateParams& p, cudaStream_t stream) {
  if (T < 0 || heads <= 0 || d <= 0) return cudaErrorInvalidValue;
  if (T > 0 && (q == nullptr || k == nullptr || g == nullptr || beta == nullptr || p.dt_bias == nullptr ||
                p.A_log == nullptr))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  // As kda.cpp: the float 1/sqrt(d), widened inside the norm.
  const float q_scale = 1.0f / sqrtf(static_cast<float>(d));
  const int64_t rows = T * heads;
  prepare_kernel<<<static_cast<unsigned>(row_blocks(3 * rows)), kRowThreads, 0, stream>>>(
      q, k, g, beta, rows, heads, d, p.dt_bias, p.A_log, p.has_lower_bound, p.lower_bound, p.l2_eps, q_scale);
  return cudaGetLastError();
}

cudaError_t kda_recurrent(const float* q, const float* k, const float* v, const float* log_decay, const float* beta,
                          int64_t T, int heads, int d, float* state, float* out, cudaStream_t stream) {
  if (T < 0 || heads <= 0 || d <= 0 || d > kMaxHeadDim) return cudaErrorInvalidValue;
  if (T > 0 && (q == nullptr || k == nullptr || v == nullptr || log_decay == nullptr || beta == nullptr ||
                state == nullptr || out == nullptr))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  const RecArgs a{q, k, v, log_decay, beta, T, heads, d, false, state, out};
  if (d <= 32) return launch_recurrent<4>(a, stream);
  if (d <= 64) return launch_recurrent<8>(a, stream);
  if (d <= 128) return launch_recurrent<16>(a, stream);
  return launch_recurrent<32>(a, stream);
}

cudaError_t kda_gated_norm(float* o, const float* gate, const float* o_norm, int64_t T, int heads, int d, float eps,
                           cudaStream_t stream) {
  if (T < 0 || heads <= 0 || d <= 0) return cudaErrorInvalidValue;
  if (T > 0 && (o == nullptr || gate == nullptr || o_norm == nullptr)) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  const int64_t rows = T * heads;
  gated_norm_kernel<<<static_cast<unsigned>(row_blocks(rows)), kRowThreads, 0, stream>>>(o, gate, o_norm, rows, d,
                                                                                        eps);
  return cudaGetLastError();
}

}  // namespace day0::kernels
