#include "attention.h"

#include <cmath>

#include "decode_trace.cuh"
#include "device_util.cuh"
#include "tensor_core.cuh"

namespace day0::kernels {
namespace {

constexpr int kTile = 32;           // keys per tile: one per lane
constexpr int kPrefillQueries = 8;  // warps per prefill CTA, one query each
constexpr int kDecodeWarps = 4;
constexpr int kDimsPerLane = kAttentionMaxHeadDim / 32;

// Prefill. Shared memory: K tile [32][d + 1] (odd stride: lane-per-key reads hit distinct
// banks), V tile [32][d], queries [8][d], all fp32.
__global__ void __launch_bounds__(kPrefillQueries * 32)
    attention_prefill_kernel(AttentionArgs a, const uint16_t* __restrict__ q, int64_t T, int64_t pos0,
                             uint16_t* __restrict__ out) {
  extern __shared__ float smem[];
  const int d = a.head_dim, ks = d + 1;
  float* Ks = smem;
  float* Vs = Ks + kTile * ks;
  float* Qs = Vs + kTile * d;
  const int head = blockIdx.y, kvh = head / (a.heads / a.kv_heads);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kPrefillQueries;
  const int64_t t_last = min(T, t0 + kPrefillQueries) - 1;
  for (int i = threadIdx.x; i < kPrefillQueries * d; i += blockDim.x) {
    const int64_t t = t0 + i / d;
    Qs[i] = t < T ? detail::bf16_bits_to_float(q[(t * a.heads + head) * d + i % d]) : 0.0f;
  }
  const int64_t t = t0 + warp;
  const bool valid = t < T;
  const int64_t pos = pos0 + t;
  const int64_t lo = a.window > 0 ? max(int64_t{0}, pos - a.window + 1) : 0;
  const int64_t block_hi = pos0 + t_last;
  const int64_t block_lo = a.window > 0 ? max(int64_t{0}, pos0 + t0 - a.window + 1) : 0;
  // The sink starts the running softmax: m = sink, l = exp(sink - m) = 1, no value.
  float m = a.sinks[head], l = 1.0f;
  float o[kDimsPerLane] = {};
  const float* qw = Qs + warp * d;
  for (int64_t j0 = block_lo; j0 <= block_hi; j0 += kTile) {
    __syncthreads();
    for (int i = threadIdx.x; i < kTile * d; i += blockDim.x) {
      const int key = i / d, c = i % d;
      const int64_t j = j0 + key;
      float kv = 0.0f, vv = 0.0f;
      if (j <= block_hi) {
        const int64_t at = (j * a.kv_heads + kvh) * d + c;
        kv = detail::bf16_bits_to_float(a.k_cache[at]);
        vv = detail::bf16_bits_to_float(a.v_cache[at]);
      }
      Ks[key * ks + c] = kv;
      Vs[key * d + c] = vv;
    }
    __syncthreads();
    if (!valid || j0 > pos || j0 + kTile - 1 < lo) continue;
    const int64_t j = j0 + lane;
    float s = -INFINITY;
    if (j >= lo && j <= pos) {
      float dot = 0.0f;
      const float* kr = Ks + lane * ks;
      for (int c = 0; c < d; ++c) dot += qw[c] * kr[c];
      s = dot * a.scale;
    }
    const float m_new = fmaxf(m, detail::warp_max(s));
    const float correction = expf(m - m_new);
    const float p = s == -INFINITY ? 0.0f : expf(s - m_new);
    l = l * correction + detail::warp_sum(p);
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) o[i] *= correction;
    for (int jj = 0; jj < kTile; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
      if (pj == 0.0f) continue;
#pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) {
        const int c = lane + 32 * i;
        if (c < d) o[i] += pj * Vs[jj * d + c];
      }
    }
    m = m_new;
  }
  if (!valid) return;
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int c = lane + 32 * i;
    if (c < d) out[(t * a.heads + head) * d + c] = detail::float_to_bf16_bits(o[i] / l);
  }
}

// Decode, one CTA per (head, split): each warp takes every 4th tile of 32 keys of the split,
// lane = key for q.k and lane = dimension for p.v; the warps' (m, l, o) merge in shared memory
// and go to `partial` [heads, splits, d + 2] as (m, l, o[d]) with o unnormalised.
__global__ void __launch_bounds__(kDecodeWarps * 32)
    attention_decode_kernel(AttentionArgs a, const uint16_t* __restrict__ q, const int32_t* __restrict__ length,
                            int splits, float* __restrict__ partial) {
  __shared__ float qs[kAttentionMaxHeadDim];
  __shared__ float wm[kDecodeWarps], wl[kDecodeWarps];
  __shared__ float wo[kDecodeWarps][kAttentionMaxHeadDim];
  const int d = a.head_dim;
  const int head = blockIdx.x, split = blockIdx.y, kvh = head / (a.heads / a.kv_heads);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t len = *length;
  const int64_t lo = a.window > 0 ? max(int64_t{0}, len - a.window) : 0;
  const int64_t n = len - lo;
  const int64_t chunk = ((n + splits - 1) / splits + kTile - 1) / kTile * kTile;
  const int64_t begin = lo + split * chunk, end = min(len, begin + chunk);
  for (int c = threadIdx.x; c < d; c += blockDim.x) qs[c] = detail::bf16_bits_to_float(q[head * d + c]);
  __syncthreads();
  float m = -INFINITY, l = 0.0f;
  float o[kDimsPerLane] = {};
  const int64_t row = static_cast<int64_t>(a.kv_heads) * d;
  for (int64_t j0 = begin + warp * kTile; j0 < end; j0 += kDecodeWarps * kTile) {
    const int64_t j = j0 + lane;
    float s = -INFINITY;
    if (j < end) {
      float dot = 0.0f;
      if ((d & 7) == 0) {
        // 16-byte loads: a key row of d = 64 is 8 loads, all in flight at once.
        const uint4* kr = reinterpret_cast<const uint4*>(a.k_cache + j * row + kvh * d);
        for (int c = 0; c < d / 8; ++c) {
          const uint4 w = __ldg(kr + c);
          const float* qc = qs + 8 * c;
          dot += __uint_as_float(w.x << 16) * qc[0] + __uint_as_float(w.x & 0xffff0000u) * qc[1];
          dot += __uint_as_float(w.y << 16) * qc[2] + __uint_as_float(w.y & 0xffff0000u) * qc[3];
          dot += __uint_as_float(w.z << 16) * qc[4] + __uint_as_float(w.z & 0xffff0000u) * qc[5];
          dot += __uint_as_float(w.w << 16) * qc[6] + __uint_as_float(w.w & 0xffff0000u) * qc[7];
        }
      } else {
        const __nv_bfloat162* kr = reinterpret_cast<const __nv_bfloat162*>(a.k_cache + j * row + kvh * d);
        for (int c = 0; c < d / 2; ++c) {
          const float2 k2 = __bfloat1622float2(kr[c]);
          dot += qs[2 * c] * k2.x + qs[2 * c + 1] * k2.y;
        }
      }
      s = dot * a.scale;
    }
    const float m_new = fmaxf(m, detail::warp_max(s));
    const float correction = expf(m - m_new);
    const float p = s == -INFINITY ? 0.0f : expf(s - m_new);
    l = l * correction + detail::warp_sum(p);
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) o[i] *= correction;
    const int keys = static_cast<int>(min(static_cast<int64_t>(kTile), end - j0));
    for (int jj = 0; jj < keys; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
      const uint16_t* vr = a.v_cache + (j0 + jj) * row + kvh * d;
#pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) {
        const int c = lane + 32 * i;
        if (c < d) o[i] += pj * detail::bf16_bits_to_float(vr[c]);
      }
    }
    m = m_new;
  }
  if (lane == 0) {
    wm[warp] = m;
    wl[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int c = lane + 32 * i;
    if (c < d) wo[warp][c] = o[i];
  }
  __syncthreads();
  float M = -INFINITY;
  for (int w = 0; w < kDecodeWarps; ++w) M = fmaxf(M, wm[w]);
  float* dst = partial + (static_cast<int64_t>(head) * splits + split) * (d + 2);
  for (int c = threadIdx.x; c < d; c += blockDim.x) {
    float sum = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w)
      if (wm[w] != -INFINITY) sum += wo[w][c] * expf(wm[w] - M);
    dst[2 + c] = sum;
  }
  if (threadIdx.x == 0) {
    float L = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w)
      if (wm[w] != -INFINITY) L += wl[w] * expf(wm[w] - M);
    dst[0] = M;
    dst[1] = L;
  }
}

// Decode with the query heads of one KV group together: one CTA per (KV head, split), so each
// key and value row is read once for the G query heads that use it (the per-head kernel above
// reads it G times). Per tile of 32 keys a warp takes lane = key for the G scores (q in shared
// memory, pre-scaled, read as broadcasts), then lane = dimension pair for p.v with the tile's
// probabilities in shared memory. Writes the same `partial` rows as the per-head kernel.
template <int G>
__global__ void __launch_bounds__(kDecodeWarps * 32)
    attention_decode_group_kernel(AttentionArgs a, const uint16_t* __restrict__ q, const int32_t* __restrict__ length,
                                  int splits, float* __restrict__ partial) {
  constexpr int kPairs = kAttentionMaxHeadDim / 64;  // dimension pairs per lane
  constexpr int kValueBatch = 16;
  __shared__ __align__(16) float qs[G][kAttentionMaxHeadDim];
  __shared__ __align__(16) float ps[kDecodeWarps][kTile][G];
  __shared__ float wm[kDecodeWarps][G], wl[kDecodeWarps][G];
  __shared__ float wo[kDecodeWarps][G][kAttentionMaxHeadDim];
  DAY0_TRACE_SCOPE(trace::attention);
  detail::pdl_wait();
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  const int d = a.head_dim;
  const int kvh = blockIdx.x, split = blockIdx.y, head0 = kvh * G;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t len = *length;
  const int64_t lo = a.window > 0 ? max(int64_t{0}, len - a.window) : 0;
  const int64_t n = len - lo;
  // Each warp takes a quarter of the split's keys, so short contexts still spread over all warps.
  const int64_t chunk = (n + splits - 1) / splits, sub = (chunk + kDecodeWarps - 1) / kDecodeWarps;
  const int64_t begin = lo + split * chunk + warp * sub;
  const int64_t end = min(min(len, lo + (split + 1) * chunk), begin + sub);
  {
    // All of a thread's query loads in flight at once (G d <= 2048 values, 4 per load).
    constexpr int kU = (G * kAttentionMaxHeadDim + 4 * kDecodeWarps * 32 - 1) / (4 * kDecodeWarps * 32);
    const uint2* q4 = reinterpret_cast<const uint2*>(q + head0 * d);
    const bool vec = (d & 3) == 0 && ((reinterpret_cast<uintptr_t>(q) + head0 * d * 2) & 7u) == 0;
    const int n4 = vec ? G * d / 4 : 0;
    uint2 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = threadIdx.x + u * blockDim.x;
      v[u] = i < n4 ? q4[i] : make_uint2(0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = 4 * (threadIdx.x + u * blockDim.x);
      if (i >= 4 * n4) break;
      qs[i / d][i % d] = __uint_as_float(v[u].x << 16) * a.scale;
      qs[(i + 1) / d][(i + 1) % d] = __uint_as_float(v[u].x & 0xffff0000u) * a.scale;
      qs[(i + 2) / d][(i + 2) % d] = __uint_as_float(v[u].y << 16) * a.scale;
      qs[(i + 3) / d][(i + 3) % d] = __uint_as_float(v[u].y & 0xffff0000u) * a.scale;
    }
    for (int i = 4 * n4 + threadIdx.x; i < G * d; i += blockDim.x)
      qs[i / d][i % d] = detail::bf16_bits_to_float(q[head0 * d + i]) * a.scale;
  }
  __syncthreads();
  float m[G], l[G], o[G][kPairs][2];
#pragma unroll
  for (int h = 0; h < G; ++h) {
    m[h] = -INFINITY;
    l[h] = 0.0f;
#pragma unroll
    for (int i = 0; i < kPairs; ++i) o[h][i][0] = o[h][i][1] = 0.0f;
  }
  const int64_t row = static_cast<int64_t>(a.kv_heads) * d;
  const bool vec = (d & 7) == 0;
  for (int64_t j0 = begin; j0 < end; j0 += kTile) {
    const int64_t j = j0 + lane;
    const bool valid = j < end;
    float s[G];
#pragma unroll
    for (int h = 0; h < G; ++h) s[h] = 0.0f;
    if (valid) {
      if (vec) {
        const uint4* kr = reinterpret_cast<const uint4*>(a.k_cache + j * row + kvh * d);
        uint4 kw[kAttentionMaxHeadDim / 8];
#pragma unroll
        for (int c = 0; c < kAttentionMaxHeadDim / 8; ++c)
          if (c < d / 8) kw[c] = __ldg(kr + c);
#pragma unroll
        for (int c = 0; c < kAttentionMaxHeadDim / 8; ++c) {
          if (c >= d / 8) break;
          const float k0 = __uint_as_float(kw[c].x << 16), k1 = __uint_as_float(kw[c].x & 0xffff0000u);
          const float k2 = __uint_as_float(kw[c].y << 16), k3 = __uint_as_float(kw[c].y & 0xffff0000u);
          const float k4 = __uint_as_float(kw[c].z << 16), k5 = __uint_as_float(kw[c].z & 0xffff0000u);
          const float k6 = __uint_as_float(kw[c].w << 16), k7 = __uint_as_float(kw[c].w & 0xffff0000u);
#pragma unroll
          for (int h = 0; h < G; ++h) {
            const float4 q0 = *reinterpret_cast<const float4*>(&qs[h][8 * c]);
            const float4 q1 = *reinterpret_cast<const float4*>(&qs[h][8 * c + 4]);
            s[h] += k0 * q0.x + k1 * q0.y + k2 * q0.z + k3 * q0.w + k4 * q1.x + k5 * q1.y + k6 * q1.z + k7 * q1.w;
          }
        }
      } else {
        const __nv_bfloat162* kr = reinterpret_cast<const __nv_bfloat162*>(a.k_cache + j * row + kvh * d);
        for (int c = 0; c < d / 2; ++c) {
          const float2 k2 = __bfloat1622float2(kr[c]);
#pragma unroll
          for (int h = 0; h < G; ++h) s[h] += qs[h][2 * c] * k2.x + qs[h][2 * c + 1] * k2.y;
        }
      }
    }
#pragma unroll
    for (int h = 0; h < G; ++h) {
      const float m_new = fmaxf(m[h], detail::warp_max(valid ? s[h] : -INFINITY));
      const float correction = expf(m[h] - m_new);
      const float p = valid ? expf(s[h] - m_new) : 0.0f;
      l[h] = l[h] * correction + p;
#pragma unroll
      for (int i = 0; i < kPairs; ++i) {
        o[h][i][0] *= correction;
        o[h][i][1] *= correction;
      }
      ps[warp][lane][h] = p;
      m[h] = m_new;
    }
    __syncwarp();
    const int keys = static_cast<int>(min(static_cast<int64_t>(kTile), end - j0));
    // The value rows of kValueBatch keys are all in flight before any is used: a full tile costs
    // two memory latencies, not one per few keys.
    for (int jb = 0; jb < keys; jb += kValueBatch) {
      uint32_t vw[kValueBatch][kPairs];
#pragma unroll
      for (int u = 0; u < kValueBatch; ++u) {
        const uint16_t* vr = a.v_cache + (j0 + jb + u) * row + kvh * d;
#pragma unroll
        for (int i = 0; i < kPairs; ++i) {
          const int c = 2 * (lane + 32 * i);
          vw[u][i] = jb + u < keys && c < d ? __ldg(reinterpret_cast<const unsigned*>(vr + c)) : 0u;
        }
      }
#pragma unroll
      for (int u = 0; u < kValueBatch; ++u) {
        if (jb + u >= keys) break;
#pragma unroll
        for (int h = 0; h < G; ++h) {
          const float p = ps[warp][jb + u][h];
#pragma unroll
          for (int i = 0; i < kPairs; ++i) {
            o[h][i][0] += p * __uint_as_float(vw[u][i] << 16);
            o[h][i][1] += p * __uint_as_float(vw[u][i] & 0xffff0000u);
          }
        }
      }
    }
    __syncwarp();
  }
#pragma unroll
  for (int h = 0; h < G; ++h) {
    const float lsum = detail::warp_sum(l[h]);
    if (lane == 0) {
      wm[warp][h] = m[h];
      wl[warp][h] = lsum;
    }
#pragma unroll
    for (int i = 0; i < kPairs; ++i) {
      const int c = 2 * (lane + 32 * i);
      if (c < d) {
        wo[warp][h][c] = o[h][i][0];
        wo[warp][h][c + 1] = o[h][i][1];
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * (d + 2); i += blockDim.x) {
    const int h = i / (d + 2), c = i % (d + 2);
    float M = -INFINITY;
    for (int w = 0; w < kDecodeWarps; ++w) M = fmaxf(M, wm[w][h]);
    float sum = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w) {
      if (wm[w][h] == -INFINITY) continue;
      const float f = expf(wm[w][h] - M);
      sum += (c == 1 ? wl[w][h] : wo[w][h][max(c - 2, 0)]) * f;
    }
    partial[(static_cast<int64_t>(head0 + h) * splits + split) * (d + 2) + c] = c == 0 ? M : sum;
  }
}

// One CTA per head, a thread per dimension: with up to kFastSplits splits every thread issues
// all of its loads (the splits' m, l and its dimension of o) before using any, so the combine
// costs one memory latency.
constexpr int kFastSplits = 32;

__global__ void __launch_bounds__(kAttentionMaxHeadDim)
    attention_combine_kernel(const float* __restrict__ sinks, const float* __restrict__ partial, int head_dim,
                             int splits, float* __restrict__ out) {
  DAY0_TRACE_SCOPE(trace::combine);
  detail::pdl_wait();
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  const int head = blockIdx.x, d = head_dim, c = threadIdx.x;
  if (c >= d) return;
  const float* p = partial + static_cast<int64_t>(head) * splits * (d + 2);
  const float sink = sinks[head];
  if (splits <= kFastSplits) {
    float ms[kFastSplits], ls[kFastSplits], os[kFastSplits];
#pragma unroll
    for (int s = 0; s < kFastSplits; ++s) {
      const bool in = s < splits;
      ms[s] = in ? p[s * (d + 2)] : -INFINITY;
      ls[s] = in ? p[s * (d + 2) + 1] : 0.0f;
      os[s] = in ? p[s * (d + 2) + 2 + c] : 0.0f;
    }
    float M = sink;
#pragma unroll
    for (int s = 0; s < kFastSplits; ++s) M = fmaxf(M, ms[s]);
    float L = expf(sink - M), sum = 0.0f;
#pragma unroll
    for (int s = 0; s < kFastSplits; ++s) {
      if (ms[s] == -INFINITY) continue;
      const float w = expf(ms[s] - M);
      L += ls[s] * w;
      sum += os[s] * w;
    }
    out[head * d + c] = sum / L;
    return;
  }
  float M = sink;
  for (int s = 0; s < splits; ++s) M = fmaxf(M, p[s * (d + 2)]);
  float L = expf(sink - M), sum = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float m = p[s * (d + 2)];
    if (m == -INFINITY) continue;
    const float w = expf(m - M);
    L += p[s * (d + 2) + 1] * w;
    sum += p[s * (d + 2) + 2 + c] * w;
  }
  out[head * d + c] = sum / L;
}

// ---- Tensor-core prefill (head_dim a multiple of 16) ------------------------------------------
// FlashAttention-2 style: a CTA of 4 warps takes 64 queries of one head, each warp 16 of them;
// K and V tiles of 64 keys go through shared memory; S = Q K^T and O += P V run as bf16
// mma.sync m16n8k16 with fp32 accumulators; the softmax runs online in base 2, starting from the
// sink (m = sink, l = 1, no value).
constexpr int kTcQueries = 64, kTcKeys = 64, kTcThreads = 128;

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

template <int D>
__global__ void __launch_bounds__(kTcThreads)
    attention_prefill_tc_kernel(AttentionArgs a, const uint16_t* __restrict__ q, int64_t T, int64_t pos0,
                                uint16_t* __restrict__ out) {
  constexpr int kLd = D + 8;  // row stride in bf16: ldmatrix rows land in distinct banks
  __shared__ alignas(16) uint16_t Qs[kTcQueries][kLd];
  __shared__ alignas(16) uint16_t Ks[kTcKeys][kLd];
  __shared__ alignas(16) uint16_t Vs[kTcKeys][kLd];
  constexpr int kChunks = D / 8;  // 16-byte pieces per row
  const int head = blockIdx.y, kvh = head / (a.heads / a.kv_heads);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const int64_t q0 = static_cast<int64_t>(blockIdx.x) * kTcQueries;
  const int64_t q_last = min(T, q0 + kTcQueries) - 1;
  for (int i = tid; i < kTcQueries * kChunks; i += kTcThreads) {
    const int r = i / kChunks, c = i % kChunks;
    const int64_t t = q0 + r;
    *reinterpret_cast<uint4*>(&Qs[r][c * 8]) =
        t < T ? *reinterpret_cast<const uint4*>(q + (t * a.heads + head) * D + c * 8) : make_uint4(0, 0, 0, 0);
  }
  __syncthreads();
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int k = 0; k < D / 16; ++k) detail::ldsm_x4(qf[k], &Qs[warp * 16 + (lane & 15)][k * 16 + (lane >> 4) * 8]);

  constexpr float kLog2e = 1.4426950408889634f;
  const float scale = a.scale * kLog2e;
  // This thread's two rows: g and g + 8 of the warp's 16.
  int64_t pos[2], lo[2];
  bool valid[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t t = q0 + warp * 16 + g + 8 * h;
    valid[h] = t < T;
    pos[h] = pos0 + t;
    lo[h] = a.window > 0 ? max(int64_t{0}, pos[h] - a.window + 1) : 0;
  }
  const int64_t warp_first = pos0 + q0 + warp * 16, warp_last = min(pos0 + q_last, warp_first + 15);
  const int64_t warp_lo = a.window > 0 ? max(int64_t{0}, warp_first - a.window + 1) : 0;
  const float sink = a.sinks[head] * kLog2e;
  float m[2] = {sink, sink};
  float l[2] = {t4 == 0 ? 1.0f : 0.0f, t4 == 0 ? 1.0f : 0.0f};
  float o[D / 8][4] = {};
  const int64_t block_hi = pos0 + q_last;
  const int64_t block_lo = a.window > 0 ? max(int64_t{0}, pos0 + q0 - a.window + 1) : 0;
  const int64_t row = static_cast<int64_t>(a.kv_heads) * D;
  for (int64_t j0 = block_lo; j0 <= block_hi; j0 += kTcKeys) {
    __syncthreads();
    for (int i = tid; i < kTcKeys * kChunks; i += kTcThreads) {
      const int r = i / kChunks, c = i % kChunks;
      const int64_t j = j0 + r;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = kv;
      if (j <= block_hi) {
        kv = *reinterpret_cast<const uint4*>(a.k_cache + j * row + kvh * D + c * 8);
        vv = *reinterpret_cast<const uint4*>(a.v_cache + j * row + kvh * D + c * 8);
      }
      *reinterpret_cast<uint4*>(&Ks[r][c * 8]) = kv;
      *reinterpret_cast<uint4*>(&Vs[r][c * 8]) = vv;
    }
    __syncthreads();
    if (j0 > warp_last || j0 + kTcKeys - 1 < warp_lo) continue;
    float s[kTcKeys / 8][4] = {};
#pragma unroll
    for (int k = 0; k < D / 16; ++k)
#pragma unroll
      for (int nj = 0; nj < kTcKeys / 16; ++nj) {
        uint32_t b[4];
        detail::ldsm_x4(b, &Ks[nj * 16 + (lane & 7) + ((lane >> 4) << 3)][k * 16 + ((lane >> 3) & 1) * 8]);
        detail::mma_bf16_16816(s[2 * nj], qf[k], b[0], b[1]);
        detail::mma_bf16_16816(s[2 * nj + 1], qf[k], b[2], b[3]);
      }
    float corr[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kTcKeys / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t j = j0 + nt * 8 + 2 * t4 + e;
          float& v = s[nt][2 * h + e];
          v = (valid[h] && j >= lo[h] && j <= pos[h]) ? v * scale : -INFINITY;
          mx = fmaxf(mx, v);
        }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[h], mx);
      corr[h] = exp2f(m[h] - m_new);
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < kTcKeys / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& v = s[nt][2 * h + e];
          v = v == -INFINITY ? 0.0f : exp2f(v - m_new);
          sum += v;
        }
      l[h] = l[h] * corr[h] + sum;
      m[h] = m_new;
    }
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
      o[nt][0] *= corr[0];
      o[nt][1] *= corr[0];
      o[nt][2] *= corr[1];
      o[nt][3] *= corr[1];
    }
#pragma unroll
    for (int kk = 0; kk < kTcKeys / 16; ++kk) {
      const uint32_t pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                              pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int nj = 0; nj < D / 16; ++nj) {
        uint32_t b[4];
        detail::ldsm_x4_trans(b, &Vs[kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8][nj * 16 + (lane >> 4) * 8]);
        detail::mma_bf16_16816(o[2 * nj], pa, b[0], b[1]);
        detail::mma_bf16_16816(o[2 * nj + 1], pa, b[2], b[3]);
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (!valid[h]) continue;
    const int64_t t = q0 + warp * 16 + g + 8 * h;
    const float inv = 1.0f / l[h];
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      *reinterpret_cast<uint32_t*>(out + (t * a.heads + head) * D + nt * 8 + 2 * t4) =
          pack_bf16(o[nt][2 * h] * inv, o[nt][2 * h + 1] * inv);
  }
}

template <int D>
cudaError_t launch_prefill_tc(const AttentionArgs& a, const uint16_t* q, int64_t T, int64_t pos0, uint16_t* out,
                              cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((T + kTcQueries - 1) / kTcQueries), static_cast<unsigned>(a.heads));
  attention_prefill_tc_kernel<D><<<grid, kTcThreads, 0, stream>>>(a, q, T, pos0, out);
  return cudaGetLastError();
}

bool valid_args(const AttentionArgs& a) {
  return a.heads > 0 && a.kv_heads > 0 && a.heads % a.kv_heads == 0 && a.head_dim > 0 && a.head_dim % 2 == 0 &&
         a.head_dim <= kAttentionMaxHeadDim && a.window >= 0 && a.sinks != nullptr && a.k_cache != nullptr &&
         a.v_cache != nullptr;
}

}  // namespace

cudaError_t attention_prefill(const AttentionArgs& a, const uint16_t* q, int64_t T, int64_t pos0, uint16_t* out,
                              cudaStream_t stream, bool force_simple_prefill) {
  if (!valid_args(a) || T < 0 || pos0 < 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (q == nullptr || out == nullptr) return cudaErrorInvalidValue;
  if (!force_simple_prefill) {
    switch (a.head_dim) {
      case 16:
        return launch_prefill_tc<16>(a, q, T, pos0, out, stream);
      case 32:
        return launch_prefill_tc<32>(a, q, T, pos0, out, stream);
      case 64:
        return launch_prefill_tc<64>(a, q, T, pos0, out, stream);
      default:
        break;
    }
  }
  const size_t smem = sizeof(float) * (kTile * (a.head_dim + 1) + kTile * a.head_dim + kPrefillQueries * a.head_dim);
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(attention_prefill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>((T + kPrefillQueries - 1) / kPrefillQueries), static_cast<unsigned>(a.heads));
  attention_prefill_kernel<<<grid, kPrefillQueries * 32, smem, stream>>>(a, q, T, pos0, out);
  return cudaGetLastError();
}

int64_t attention_decode_partial_floats(int heads, int head_dim, int splits) {
  return static_cast<int64_t>(heads) * splits * (head_dim + 2);
}

cudaError_t attention_decode(const AttentionArgs& a, const uint16_t* q, const int32_t* length, int splits,
                             float* partial, float* out, cudaStream_t stream) {
  if (!valid_args(a) || splits <= 0 || q == nullptr || length == nullptr || partial == nullptr || out == nullptr)
    return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(a.kv_heads), static_cast<unsigned>(splits));
  cudaError_t e = cudaSuccess;
  switch (a.heads / a.kv_heads) {
    case 1:
      e = detail::launch_pdl(attention_decode_group_kernel<1>, grid, dim3(kDecodeWarps * 32), 0, stream, a, q, length,
                             splits, partial);
      break;
    case 2:
      e = detail::launch_pdl(attention_decode_group_kernel<2>, grid, dim3(kDecodeWarps * 32), 0, stream, a, q, length,
                             splits, partial);
      break;
    case 4:
      e = detail::launch_pdl(attention_decode_group_kernel<4>, grid, dim3(kDecodeWarps * 32), 0, stream, a, q, length,
                             splits, partial);
      break;
    case 8:
      e = detail::launch_pdl(attention_decode_group_kernel<8>, grid, dim3(kDecodeWarps * 32), 0, stream, a, q, length,
                             splits, partial);
      break;
    default:
      attention_decode_kernel<<<dim3(static_cast<unsigned>(a.heads), static_cast<unsigned>(splits)), kDecodeWarps * 32,
                                0, stream>>>(a, q, length, splits, partial);
      e = cudaGetLastError();
  }
  if (e != cudaSuccess) return e;
  return detail::launch_pdl(attention_combine_kernel, dim3(static_cast<unsigned>(a.heads)), dim3(kAttentionMaxHeadDim),
                            0, stream, a.sinks, partial, a.head_dim, splits, out);
}

DAY0_TRACE_SETTER(trace_set_attention)

}  // namespace day0::kernels
