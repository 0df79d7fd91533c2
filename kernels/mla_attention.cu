#include "mla_attention.h"

#include <algorithm>
#include <cmath>

#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kHeadGroup = 16;      // heads one split CTA serves
constexpr int kTile = 32;           // positions per staged latent tile (one per lane in the softmax)
constexpr int kSplitThreads = 256;  // 8 warps: 2 heads each in the softmax
constexpr int kLatPad = 8;          // bf16 padding per staged latent row (spreads the rows over the banks)
constexpr int64_t kMinChunk = 32;   // fewest positions worth a split of their own (one tile)
constexpr int64_t kMaxSplits = 256;
constexpr int64_t kTargetCtas = 1024;  // split CTAs aimed at (several waves on any GPU)
constexpr int kTokTile = 8;            // query tokens per absorb / out CTA (each weight read serves them all)
constexpr int kAbsorbCols = 128;       // q_abs columns per absorb CTA, 4 per thread
constexpr int kAbsorbSlices = 8;       // row slices of an absorb CTA
constexpr int kAbsorbThreads = (kAbsorbCols / 4) * kAbsorbSlices;
constexpr int kMergeCols = 128;   // ctx columns per merge CTA
constexpr int kMergeSlices = 4;   // threads per column, each summing a share of the splits
constexpr int kOutThreads = 256;  // 8 warps
constexpr int kOutRows = 64;      // value rows per out CTA
constexpr float kLog2e = 1.4426950408889634f;

static_assert(kHeadGroup == 2 * (kSplitThreads / 32), "the softmax gives each warp two heads");
static_assert(kSplitThreads == (kHeadGroup / 4) * (kMlaMaxLatent / 8),
              "the ctx phase gives each thread 4 heads x 8 columns");
static_assert(kSplitThreads == (kHeadGroup / 4) * (kTile / 4) * 8,
              "the score phase gives each thread a 4x4 tile of one R-slice");
static_assert(kTile == 32, "one softmax lane per position");
static_assert(kMaxSplits % 32 == 0, "merge_kernel's warp holds kMaxSplits / 32 splits per lane");

constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t head_groups(int heads) { return cdiv(heads, kHeadGroup); }

// Position splits per (query, head group), from the sizes alone (so the scratch bound holds for
// every position and selection).
int64_t split_bound(int64_t T, int heads, int64_t capacity) {
  const int64_t want = cdiv(kTargetCtas, head_groups(heads) * std::max<int64_t>(T, 1));
  return std::max<int64_t>(1, std::min({want, cdiv(capacity, kMinChunk), kMaxSplits}));
}

// Scratch layout: q_abs [T, heads, R], later the merged ctx; ctx partials [T, splits, heads, R]
// (only with more than one split: with one, each split CTA writes its ctx over the q_abs rows that
// it alone reads); m, l [T, splits, heads, 2].
struct Layout {
  float* q_abs;
  float* ctx;
  float* ml;
};

int64_t layout_floats(int64_t T, int heads, int R, int64_t splits) {
  const int64_t rows = T * heads;
  return rows * R + (splits > 1 ? rows * splits * R : 0) + rows * splits * 2;
}

Layout layout(float* scratch, int64_t T, int heads, int R, int64_t splits) {
  const int64_t rows = T * heads;
  Layout l;
  l.q_abs = scratch;
  l.ctx = splits > 1 ? scratch + rows * R : scratch;
  l.ml = scratch + rows * R + (splits > 1 ? rows * splits * R : 0);
  return l;
}

// 16-byte global -> shared copy in flight without registers (sm_80+), grouped by
// cp_async_commit() and awaited with cp_async_wait<N>() (all but the N most recent groups done).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem))),
               "l"(gmem)
               : "memory");
#else
  *static_cast<uint4*>(smem) = *static_cast<const uint4*>(gmem);
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

// q_abs[t, h, r] = sum_i q[t, h, i] * kv_b[h * (nope + v_dim) + i, r]. Grid: (token tiles, heads,
// column blocks of kAbsorbCols). Thread (slice, group) sums rows i = slice, slice + 8, ... for 4
// columns and kTokTile tokens (every weight it loads serves all of them, and each thread keeps 8
// loads in flight); the 8 slices are then added in a fixed order. Dynamic smem: q of the token
// tile [nope][kTokTile], then the slice partials [kAbsorbSlices][kTokTile][kAbsorbCols] floats.
__global__ void __launch_bounds__(kAbsorbThreads)
    absorb_kernel(const float* __restrict__ q, const uint16_t* __restrict__ kv_b, int64_t T, int heads, int nope,
                  int v_dim, int R, float* __restrict__ q_abs) {
  extern __shared__ __align__(16) float q_s[];
  float* part_s = q_s + nope * kTokTile;
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kTokTile;
  const int h = blockIdx.y, col0 = blockIdx.z * kAbsorbCols;
  for (int idx = threadIdx.x; idx < nope * kTokTile; idx += kAbsorbThreads) {
    const int tt = idx / nope, i = idx % nope;
    const int64_t t = t0 + tt;
    q_s[i * kTokTile + tt] = t < T ? q[(t * heads + h) * nope + i] : 0.0f;
  }
  __syncthreads();
  const int group = threadIdx.x % (kAbsorbCols / 4), slice = threadIdx.x / (kAbsorbCols / 4);
  const int r = col0 + 4 * group;
  float acc[kTokTile][4] = {};
  if (r < R) {
    const uint16_t* wk = kv_b + static_cast<int64_t>(h) * (nope + v_dim) * R + r;
#pragma unroll 8
    for (int i = slice; i < nope; i += kAbsorbSlices) {
      const uint2 w = *reinterpret_cast<const uint2*>(wk + static_cast<int64_t>(i) * R);
      const float w0 = bf16_lo(w.x), w1 = bf16_hi(w.x), w2 = bf16_lo(w.y), w3 = bf16_hi(w.y);
      const float4 qa = reinterpret_cast<const float4*>(q_s + i * kTokTile)[0];
      const float4 qb = reinterpret_cast<const float4*>(q_s + i * kTokTile)[1];
      const float qv[kTokTile] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
#pragma unroll
      for (int tt = 0; tt < kTokTile; ++tt) {
        acc[tt][0] = fmaf(qv[tt], w0, acc[tt][0]);
        acc[tt][1] = fmaf(qv[tt], w1, acc[tt][1]);
        acc[tt][2] = fmaf(qv[tt], w2, acc[tt][2]);
        acc[tt][3] = fmaf(qv[tt], w3, acc[tt][3]);
      }
    }
  }
#pragma unroll
  for (int tt = 0; tt < kTokTile; ++tt)
    reinterpret_cast<float4*>(part_s + (slice * kTokTile + tt) * kAbsorbCols)[group] =
        make_float4(acc[tt][0], acc[tt][1], acc[tt][2], acc[tt][3]);
  __syncthreads();
  for (int idx = threadIdx.x; idx < kTokTile * kAbsorbCols; idx += kAbsorbThreads) {
    const int tt = idx / kAbsorbCols, c = idx % kAbsorbCols;
    const int64_t t = t0 + tt;
    if (t >= T || col0 + c >= R) continue;
    float v = 0.0f;
#pragma unroll
    for (int sl = 0; sl < kAbsorbSlices; ++sl) v += part_s[(sl * kTokTile + tt) * kAbsorbCols + c];
    q_abs[(t * heads + h) * R + col0 + c] = v;
  }
}

struct SplitParams {
  const float* q_abs;        // [T, heads, R]
  const uint16_t* latent;    // [capacity, R] bf16
  const int32_t* selection;  // [T, width] or null
  int64_t width;
  const int32_t* position;
  int64_t capacity, T, splits;
  int heads, R, groups;
  float scale_log2;  // scaling * log2(e): scores live in the log2 domain
  float* ctx;        // [T, splits, heads, R] unnormalised partial ctx
  float* ml;         // [T, splits, heads, 2] running max (log2 domain) and sum
};

// Shared memory of split_kernel for latent width R, in bytes.
size_t split_smem_bytes(int R) {
  return sizeof(float) * kHeadGroup * R                                 // q_s
         + sizeof(uint16_t) * 2 * kTile * (R + kLatPad)                 // lat_s, two buffers
         + sizeof(float) * (kHeadGroup * (kTile + 1) + 3 * kHeadGroup)  // s_s, m_s, l_s, alpha_s
         + sizeof(int64_t) * 2 * kTile;                                 // pos_s
}

// The latent row attended by entry e of the split's range [.., end), or -1 for none.
__device__ __forceinline__ int64_t entry_position(const SplitParams& p, int64_t t, int64_t qpos, int64_t e,
                                                  int64_t end) {
  if (e >= end) return -1;
  if (p.selection == nullptr) return e;  // dense: entries are positions 0 .. min(qpos, capacity - 1)
  const int64_t j = p.selection[t * p.width + e];
  return j >= 0 && j <= qpos && j < p.capacity ? j : -1;
}

// Stages the latent rows at positions pos[0 .. kTile) into `dst` ([kTile][R + kLatPad] bf16) with
// cp.async (rows of no position, -1, are zero-filled); one commit group per call.
__device__ __forceinline__ void issue_tile(const SplitParams& p, const int64_t* pos, uint16_t* dst) {
  const int R8 = p.R / 8, row = p.R + kLatPad;
  for (int c = threadIdx.x; c < kTile * R8; c += kSplitThreads) {
    const int n = c / R8, part = c % R8;
    const int64_t j = pos[n];
    uint16_t* d = dst + n * row + part * 8;
    if (j >= 0)
      cp_async16(d, p.latent + j * p.R + part * 8);
    else
      *reinterpret_cast<uint4*>(d) = make_uint4(0u, 0u, 0u, 0u);
  }
  cp_async_commit();
}

// One (head group, split, query) per CTA, linear block index in that order (the head groups of
// one split run side by side and share its latent rows through L2). For each tile of kTile
// positions (double-buffered through cp.async; the positions of a tile are read a tile ahead,
// by one warp, into shared memory): scores [16 heads, kTile] (each thread a 4x4 tile
// over one eighth of R, reduced across the 8 lanes of the tile), an online-softmax update per
// head (a warp per 2 heads, a lane per position), then ctx [16, R] += p * latent (each thread
// 4 heads x 8 columns in registers). Leaves m, l and the unnormalised ctx of the split.
__global__ void __launch_bounds__(kSplitThreads, 2) split_kernel(const SplitParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int R = p.R, R4 = R / 4, R8 = R / 8, row = R + kLatPad;
  float* q_s = reinterpret_cast<float*>(smem);                          // [kHeadGroup][R]
  uint16_t* lat_s = reinterpret_cast<uint16_t*>(q_s + kHeadGroup * R);  // [2][kTile][row]
  float* s_s = reinterpret_cast<float*>(lat_s + 2 * kTile * row);       // [kHeadGroup][kTile + 1]
  float* m_s = s_s + kHeadGroup * (kTile + 1);                          // [kHeadGroup]
  float* l_s = m_s + kHeadGroup;                                        // [kHeadGroup]
  float* alpha_s = l_s + kHeadGroup;                                    // [kHeadGroup]
  int64_t* pos_s = reinterpret_cast<int64_t*>(alpha_s + kHeadGroup);    // [2][kTile], -1: none

  const int tid = threadIdx.x;
  const int64_t block = blockIdx.x;
  const int group = static_cast<int>(block % p.groups);
  const int64_t split = (block / p.groups) % p.splits, t = block / p.groups / p.splits;
  const int h0 = group * kHeadGroup, nh = min(kHeadGroup, p.heads - h0);
  const int64_t qpos = static_cast<int64_t>(*p.position) + t;
  const int64_t entries =
      p.selection != nullptr ? p.width : (qpos < 0 ? 0 : (qpos + 1 < p.capacity ? qpos + 1 : p.capacity));
  const int64_t chunk = cdiv(cdiv(entries, p.splits), kTile) * kTile;
  const int64_t begin = split * chunk, end = begin + chunk < entries ? begin + chunk : entries;
  const int64_t ntiles = begin < end ? cdiv(end - begin, kTile) : 0;
  const int64_t base = (t * p.splits + split) * p.heads + h0;
  if (ntiles == 0) {  // nothing in range: an empty split (merge_kernel skips it, its ctx unwritten)
    if (tid < nh) {
      p.ml[(base + tid) * 2] = -INFINITY;
      p.ml[(base + tid) * 2 + 1] = 0.0f;
    }
    return;
  }

  // The first tile's positions, the second's loaded ahead (`next`), and q_abs of the group's
  // heads, all loads in flight together.
  int64_t next = -1;
  if (tid < kTile) {
    pos_s[tid] = entry_position(p, t, qpos, begin + tid, end);
    next = entry_position(p, t, qpos, begin + kTile + tid, end);
  }
  {
    constexpr int kRounds = kHeadGroup * (kMlaMaxLatent / 4) / kSplitThreads;
    float4 v[kRounds];
#pragma unroll
    for (int u = 0; u < kRounds; ++u) {
      const int idx = tid + u * kSplitThreads, h = idx / R4, c = idx % R4;
      v[u] = idx < kHeadGroup * R4 && h < nh ? reinterpret_cast<const float4*>(p.q_abs + (t * p.heads + h0 + h) * R)[c]
                                             : make_float4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kRounds; ++u) {
      const int idx = tid + u * kSplitThreads;
      if (idx < kHeadGroup * R4) reinterpret_cast<float4*>(q_s)[idx] = v[u];
    }
  }
  if (tid < kHeadGroup) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.0f;
  }
  __syncthreads();

  // Score phase: heads 4 * shq .. + 3 against positions 4 * snq .. + 3, over the R-slice `slice`.
  const int slice = tid & 7, shq = tid >> 6, snq = (tid >> 3) & 7;
  // Ctx phase: heads 4 * hq .. + 3, columns 8 * oct .. + 7.
  const int hq = tid >> 6, oct = tid & 63;
  const int warp = tid >> 5, lane = tid & 31;
  float acc[4][8] = {};

  issue_tile(p, pos_s, lat_s);
  for (int64_t k = 0; k < ntiles; ++k) {
    const int buf = static_cast<int>(k & 1);
    if (k + 1 < ntiles) {
      if (tid < kTile) pos_s[(buf ^ 1) * kTile + tid] = next;
      __syncthreads();
      issue_tile(p, pos_s + (buf ^ 1) * kTile, lat_s + (buf ^ 1) * kTile * row);
      if (tid < kTile) next = entry_position(p, t, qpos, begin + (k + 2) * kTile + tid, end);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const uint16_t* lat = lat_s + buf * kTile * row;
    const int64_t* pos = pos_s + buf * kTile;

    {
      float s[4][4] = {};
      for (int c = slice; c < R4; c += 8) {
        float4 qv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) qv[i] = reinterpret_cast<const float4*>(q_s + (4 * shq + i) * R)[c];
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          const uint2 raw = *reinterpret_cast<const uint2*>(lat + (4 * snq + n) * row + 4 * c);
          const float l0 = bf16_lo(raw.x), l1 = bf16_hi(raw.x), l2 = bf16_lo(raw.y), l3 = bf16_hi(raw.y);
#pragma unroll
          for (int i = 0; i < 4; ++i)
            s[i][n] = fmaf(qv[i].x, l0, fmaf(qv[i].y, l1, fmaf(qv[i].z, l2, fmaf(qv[i].w, l3, s[i][n]))));
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          s[i][n] += __shfl_xor_sync(0xffffffffu, s[i][n], 1);
          s[i][n] += __shfl_xor_sync(0xffffffffu, s[i][n], 2);
          s[i][n] += __shfl_xor_sync(0xffffffffu, s[i][n], 4);
        }
        // Each of the 8 lanes of the tile writes two of its 16 scores.
#pragma unroll
      for (int idx = 0; idx < 16; ++idx) {
        if ((idx >> 1) != slice) continue;
        const int i = idx >> 2, n = 4 * snq + (idx & 3);
        s_s[(4 * shq + i) * (kTile + 1) + n] = pos[n] >= 0 ? s[i][idx & 3] * p.scale_log2 : -INFINITY;
      }
    }
    __syncthreads();

#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int h = 2 * warp + hh;
      const float x = s_s[h * (kTile + 1) + lane];
      const float m_old = m_s[h];
      const float m_new = fmaxf(m_old, detail::warp_max(x));
      float prob = 0.0f, alpha = 1.0f;
      if (m_new != -INFINITY) {
        prob = exp2f(x - m_new);
        alpha = exp2f(m_old - m_new);
      }
      const float sum = detail::warp_sum(prob);
      s_s[h * (kTile + 1) + lane] = prob;
      if (lane == 0) {
        m_s[h] = m_new;
        l_s[h] = l_s[h] * alpha + sum;
        alpha_s[h] = alpha;
      }
    }
    __syncthreads();

    if (oct < R8) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float a = alpha_s[4 * hq + i];
#pragma unroll
        for (int c = 0; c < 8; ++c) acc[i][c] *= a;
      }
#pragma unroll 4
      for (int n = 0; n < kTile; ++n) {
        const uint4 raw = *reinterpret_cast<const uint4*>(lat + n * row + 8 * oct);
        const float l[8] = {bf16_lo(raw.x), bf16_hi(raw.x), bf16_lo(raw.y), bf16_hi(raw.y),
                            bf16_lo(raw.z), bf16_hi(raw.z), bf16_lo(raw.w), bf16_hi(raw.w)};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float prob = s_s[(4 * hq + i) * (kTile + 1) + n];
#pragma unroll
          for (int c = 0; c < 8; ++c) acc[i][c] = fmaf(prob, l[c], acc[i][c]);
        }
      }
    }
    __syncthreads();
  }

  if (tid < nh) {
    p.ml[(base + tid) * 2] = m_s[tid];
    p.ml[(base + tid) * 2 + 1] = l_s[tid];
  }
  if (oct < R8) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (4 * hq + i >= nh) break;
      float4* dst = reinterpret_cast<float4*>(p.ctx + (base + 4 * hq + i) * R + 8 * oct);
      dst[0] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      dst[1] = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
  }
}

// Merges the splits of (query t, head h) = blockIdx.x into the normalised ctx [R], written over
// the q_abs rows (free once split_kernel is done; with one split they hold its ctx, merged in
// place). Weights exp2(m_s - M) / L with M the largest m of the non-empty splits and
// L = sum l_s exp2(m_s - M); a query that attended nothing gets ctx 0. Warp 0 lists the non-empty
// splits in order with their weights; then per column of this block's kMergeCols, kMergeSlices
// threads each sum every kMergeSlices-th listed split, added in a fixed order.
__global__ void __launch_bounds__(kMergeCols* kMergeSlices)
    merge_kernel(const float* __restrict__ ctx, const float* __restrict__ ml, int64_t splits, int heads, int R,
                 float* __restrict__ merged) {
  __shared__ float w_s[kMaxSplits];
  __shared__ int s_s[kMaxSplits];
  __shared__ float part_s[kMergeSlices][kMergeCols];
  __shared__ int n_s;
  const int64_t th = blockIdx.x, t = th / heads;
  const int h = static_cast<int>(th % heads);
  if (threadIdx.x < 32) {
    constexpr int kPerLane = kMaxSplits / 32;
    const int lane = threadIdx.x;
    float m[kPerLane], l[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int64_t s = lane + 32 * u;
      m[u] = -INFINITY;
      l[u] = 0.0f;
      if (s < splits) {
        const float2 x = *reinterpret_cast<const float2*>(ml + ((t * splits + s) * heads + h) * 2);
        m[u] = x.x;
        l[u] = x.y;
      }
    }
    float M = -INFINITY, L = 0.0f;
#pragma unroll
    for (int u = 0; u < kPerLane; ++u)
      if (l[u] > 0.0f) M = fmaxf(M, m[u]);
    M = detail::warp_max(M);
#pragma unroll
    for (int u = 0; u < kPerLane; ++u)
      if (l[u] > 0.0f) L += l[u] * exp2f(m[u] - M);
    L = detail::warp_sum(L);
    int n = 0;
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const float w = l[u] > 0.0f ? exp2f(m[u] - M) / L : 0.0f;
      const uint32_t ballot = __ballot_sync(0xffffffffu, w != 0.0f);
      const int at = n + __popc(ballot & ((1u << lane) - 1u));
      if (w != 0.0f) {
        w_s[at] = w;
        s_s[at] = lane + 32 * u;
      }
      n += __popc(ballot);
    }
    if (lane == 0) n_s = n;
  }
  __syncthreads();
  const int col = threadIdx.x % kMergeCols, slice = threadIdx.x / kMergeCols;
  const int r = blockIdx.y * kMergeCols + col;
  const int n = n_s;
  float v = 0.0f;
  if (r < R) {
#pragma unroll 8
    for (int k = slice; k < n; k += kMergeSlices) v = fmaf(w_s[k], ctx[((t * splits + s_s[k]) * heads + h) * R + r], v);
  }
  part_s[slice][col] = v;
  __syncthreads();
  if (slice == 0 && r < R) {
#pragma unroll
    for (int sl = 1; sl < kMergeSlices; ++sl) v += part_s[sl][col];
    merged[th * R + r] = v;
  }
}

// out[t, h * v_dim + i] = W_vh[i] . ctx[t, h] (ctx merged and normalised). Grid: (token tiles,
// heads, row blocks of kOutRows). The tile's ctx [kTokTile][R] is staged in shared memory; each
// warp takes 4 value rows at a time, all their loads in flight together, for the kTokTile tokens.
__global__ void __launch_bounds__(kOutThreads)
    out_kernel(const float* __restrict__ ctx, const uint16_t* __restrict__ kv_b, int64_t T, int heads, int nope,
               int v_dim, int R, float* __restrict__ out) {
  extern __shared__ __align__(16) float c_s[];  // [kTokTile][R]
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kTokTile;
  const int h = blockIdx.y, row0 = blockIdx.z * kOutRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, R4 = R / 4, R8 = R / 8;
  for (int idx = threadIdx.x; idx < kTokTile * R4; idx += kOutThreads) {
    const int tt = idx / R4, c = idx % R4;
    const int64_t t = t0 + tt;
    reinterpret_cast<float4*>(c_s)[idx] =
        t < T ? reinterpret_cast<const float4*>(ctx + (t * heads + h) * R)[c] : make_float4(0, 0, 0, 0);
  }
  __syncthreads();
  constexpr int kRowsAtOnce = 4;
  for (int rr = warp * kRowsAtOnce; rr < kOutRows; rr += (kOutThreads / 32) * kRowsAtOnce) {
    const uint4* wv[kRowsAtOnce];
#pragma unroll
    for (int u = 0; u < kRowsAtOnce; ++u) {
      const int i = min(row0 + rr + u, v_dim - 1);  // rows past v_dim recompute the last one, unwritten
      wv[u] = reinterpret_cast<const uint4*>(kv_b + (static_cast<int64_t>(h) * (nope + v_dim) + nope + i) * R);
    }
    float acc[kRowsAtOnce][kTokTile] = {};
    for (int c0 = lane; c0 < R8; c0 += 64) {
      // Two 16-byte words of each row per lane in flight (all of R = 512).
      uint4 raw[2][kRowsAtOnce];
#pragma unroll
      for (int u = 0; u < kRowsAtOnce; ++u) {
        raw[0][u] = wv[u][c0];
        raw[1][u] = c0 + 32 < R8 ? wv[u][c0 + 32] : make_uint4(0u, 0u, 0u, 0u);
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int c = c0 + 32 * half;
        if (c >= R8) break;
#pragma unroll
        for (int tt = 0; tt < kTokTile; ++tt) {
          const float4 a = reinterpret_cast<const float4*>(c_s + tt * R + 8 * c)[0];
          const float4 b = reinterpret_cast<const float4*>(c_s + tt * R + 8 * c)[1];
#pragma unroll
          for (int u = 0; u < kRowsAtOnce; ++u) {
            const uint4 w = raw[half][u];
            float v = acc[u][tt];
            v = fmaf(bf16_lo(w.x), a.x, v);
            v = fmaf(bf16_hi(w.x), a.y, v);
            v = fmaf(bf16_lo(w.y), a.z, v);
            v = fmaf(bf16_hi(w.y), a.w, v);
            v = fmaf(bf16_lo(w.z), b.x, v);
            v = fmaf(bf16_hi(w.z), b.y, v);
            v = fmaf(bf16_lo(w.w), b.z, v);
            v = fmaf(bf16_hi(w.w), b.w, v);
            acc[u][tt] = v;
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kRowsAtOnce; ++u) {
      const int i = row0 + rr + u;
#pragma unroll
      for (int tt = 0; tt < kTokTile; ++tt) {
        const float v = detail::warp_sum(acc[u][tt]);
        const int64_t t = t0 + tt;
        if (lane == tt && t < T && i < v_dim) out[t * heads * v_dim + static_cast<int64_t>(h) * v_dim + i] = v;
      }
    }
  }
}

cudaError_t allow_smem(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace

size_t mla_attend_scratch_floats(int64_t T, int heads, int R, int64_t capacity) {
  if (T <= 0 || heads <= 0 || R <= 0 || capacity <= 0) return 0;
  return static_cast<size_t>(layout_floats(T, heads, R, split_bound(T, heads, capacity)));
}

cudaError_t mla_attend(const MlaAttendArgs& a, cudaStream_t stream) {
  if (a.T < 0 || a.heads <= 0 || a.heads > 65535 || a.nope <= 0 || a.v_dim <= 0 || a.R < 8 || a.R > kMlaMaxLatent ||
      a.R % 8 != 0 || a.capacity <= 0 || !std::isfinite(a.scaling))
    return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  if (a.q == nullptr || a.kv_b == nullptr || a.latent == nullptr || a.position == nullptr || a.out == nullptr ||
      a.scratch == nullptr || !detail::aligned16(a.kv_b) || !detail::aligned16(a.latent) ||
      !detail::aligned16(a.scratch) || (a.selection != nullptr && a.width <= 0))
    return cudaErrorInvalidValue;
  if (a.scratch_floats < 0 ||
      static_cast<size_t>(a.scratch_floats) < mla_attend_scratch_floats(a.T, a.heads, a.R, a.capacity))
    return cudaErrorInvalidValue;

  int64_t splits = split_bound(a.T, a.heads, a.capacity);
  if (a.selection != nullptr) splits = std::min(splits, std::max<int64_t>(1, cdiv(a.width, kMinChunk)));
  const int64_t groups = head_groups(a.heads);
  const int64_t split_ctas = groups * splits * a.T;
  if (split_ctas > 0x7fffffff || a.T * a.heads > 0x7fffffff) return cudaErrorInvalidValue;
  const Layout l = layout(a.scratch, a.T, a.heads, a.R, splits);
  const unsigned token_tiles = static_cast<unsigned>(cdiv(a.T, kTokTile));

  const size_t absorb_smem = sizeof(float) * kTokTile * (a.nope + kAbsorbSlices * kAbsorbCols);
  if (const cudaError_t e = allow_smem(reinterpret_cast<const void*>(absorb_kernel), absorb_smem); e != cudaSuccess)
    return e;
  absorb_kernel<<<dim3(token_tiles, a.heads, static_cast<unsigned>(cdiv(a.R, kAbsorbCols))), kAbsorbThreads,
                  absorb_smem, stream>>>(a.q, a.kv_b, a.T, a.heads, a.nope, a.v_dim, a.R, l.q_abs);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;

  SplitParams p;
  p.q_abs = l.q_abs;
  p.latent = a.latent;
  p.selection = a.selection;
  p.width = a.selection != nullptr ? a.width : 0;
  p.position = a.position;
  p.capacity = a.capacity;
  p.T = a.T;
  p.splits = splits;
  p.heads = a.heads;
  p.R = a.R;
  p.groups = static_cast<int>(groups);
  p.scale_log2 = a.scaling * kLog2e;
  p.ctx = l.ctx;
  p.ml = l.ml;
  const size_t split_smem = split_smem_bytes(a.R);
  if (const cudaError_t e = allow_smem(reinterpret_cast<const void*>(split_kernel), split_smem); e != cudaSuccess)
    return e;
  split_kernel<<<static_cast<unsigned>(split_ctas), kSplitThreads, split_smem, stream>>>(p);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;

  merge_kernel<<<dim3(static_cast<unsigned>(a.T * a.heads), static_cast<unsigned>(cdiv(a.R, kMergeCols))),
                 kMergeCols * kMergeSlices, 0, stream>>>(l.ctx, l.ml, splits, a.heads, a.R, l.q_abs);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;

  out_kernel<<<dim3(token_tiles, a.heads, static_cast<unsigned>(cdiv(a.v_dim, kOutRows))), kOutThreads,
               sizeof(float) * kTokTile * a.R, stream>>>(l.q_abs, a.kv_b, a.T, a.heads, a.nope, a.v_dim, a.R, a.out);
  return cudaGetLastError();
}

}  // namespace day0::kernels
