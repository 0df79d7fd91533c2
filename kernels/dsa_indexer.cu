#include "dsa_indexer.h"

#include <algorithm>
#include <cmath>

#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kAppendThreads = 128;
constexpr int kPoolThreads = 128;

constexpr int kScoreThreads = 256;    // 8 warps; a warp = 8 head-quad lanes x 4 pool-quad groups
constexpr int kPoolTile = 128;        // pools per staged tile: each thread 4 pools x 4 heads
constexpr int64_t kScoreCtas = 1024;  // score CTAs aimed at over a chunk of queries
constexpr int kHistBits = 12;         // the first radix digit: the top 12 bits of a score's key
constexpr int kHistBins = 1 << kHistBits;
constexpr int kSelectThreads = 1024;                // 32 warps, one CTA per query
constexpr int kCap = 8192;                          // candidates one select CTA sorts in shared memory
constexpr int kSelUnroll = 8;                       // scores a select thread loads at once
constexpr int64_t kScoreFloats = int64_t{1} << 25;  // score-row floats of one chunk of queries (128 MiB)

static_assert(kIndexerMaxChosen <= kCap, "the chosen pools are sorted in shared memory");
static_assert(kPoolTile == 4 * 32, "each thread scores pools pq + 32 k, k < 4");

constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Queries whose score rows share the scratch at a time.
int64_t chunk_rows(int64_t T, int64_t npools) {
  return std::max<int64_t>(1, std::min({T, kScoreFloats / std::max<int64_t>(npools, 1), int64_t{65535}}));
}

// Pools visible to the query at position p: the complete ones, at most the cache's.
__device__ __forceinline__ int64_t visible_pools(int64_t p, int kpool, int64_t npools) {
  if (p < 0) return 0;
  const int64_t v = (p + 1) / kpool;
  return v < npools ? v : npools;
}

// Order-preserving unsigned key of a float (larger float, larger key; -0 and +0 the same key).
__device__ __forceinline__ uint32_t score_key(float f) {
  uint32_t u = __float_as_uint(f);
  if (u == 0x80000000u) u = 0u;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// A candidate as one integer: key above, complemented pool index below, so that a larger value
// is a better pool (higher score, then lower index).
__device__ __forceinline__ uint64_t compose(uint32_t key, int64_t j) {
  return (static_cast<uint64_t>(key) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(j));
}
__device__ __forceinline__ int64_t composed_pool(uint64_t c) {
  return static_cast<int64_t>(~static_cast<uint32_t>(c & 0xffffffffu));
}

// LayerNorm of one new key per CTA (two-pass mean and variance over d, like the CPU), and its
// gate copied.
__global__ void __launch_bounds__(kAppendThreads)
    append_kernel(const float* __restrict__ key_raw, const float* __restrict__ gate_raw, int d,
                  const float* __restrict__ ln_w, const float* __restrict__ ln_b, const int32_t* __restrict__ position,
                  float* __restrict__ keys, float* __restrict__ gates) {
  __shared__ float scratch[32];
  const int64_t t = blockIdx.x, row = static_cast<int64_t>(*position) + t;
  const float* k = key_raw + t * d;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < d; c += kAppendThreads) sum += k[c];
  const float mean = detail::block_sum(sum, scratch) / static_cast<float>(d);
  float var = 0.0f;
  for (int c = threadIdx.x; c < d; c += kAppendThreads) var += (k[c] - mean) * (k[c] - mean);
  var = detail::block_sum(var, scratch) / static_cast<float>(d);
  const float inv = 1.0f / sqrtf(var + 1e-6f);
  for (int c = threadIdx.x; c < d; c += kAppendThreads) {
    keys[row * d + c] = (k[c] - mean) * inv * ln_w[c] + ln_b[c];
    gates[row * d + c] = gate_raw[t * d + c];
  }
}

// Pool position / kpool + blockIdx.x, if the new tokens complete it; a thread per channel.
__global__ void __launch_bounds__(kPoolThreads)
    pool_kernel(const float* __restrict__ keys, const float* __restrict__ gates, const float* __restrict__ ape,
                int64_t T, int d, int kpool, const int32_t* __restrict__ position, float* __restrict__ pooled) {
  const int64_t pos0 = *position;
  const int64_t p = pos0 / kpool + blockIdx.x;
  if (p >= (pos0 + T) / kpool) return;
  for (int c = threadIdx.x; c < d; c += kPoolThreads) {
    const float* g = gates + p * kpool * d + c;
    const float* k = keys + p * kpool * d + c;
    float top = -INFINITY;
    for (int i = 0; i < kpool; ++i) top = fmaxf(top, g[static_cast<int64_t>(i) * d] + ape[i * d + c]);
    float z = 0.0f;
    for (int i = 0; i < kpool; ++i) z += expf(g[static_cast<int64_t>(i) * d] + ape[i * d + c] - top);
    // sum_i (e_i / z) * key_i: normalised before the weighted sum, as the CPU does.
    float acc = 0.0f;
    for (int i = 0; i < kpool; ++i) {
      const float e = expf(g[static_cast<int64_t>(i) * d] + ape[i * d + c] - top);
      acc += (e / z) * k[static_cast<int64_t>(i) * d];
    }
    pooled[p * d + c] = acc;
  }
}

struct ScoreParams {
  const float* q;       // [T, heads, d]
  const float* w;       // [T, heads]
  const float* pooled;  // [npools, d]
  const int32_t* position;
  int64_t t0, npools;           // first query of the chunk; pools the cache holds
  int heads, d, kpool, hq_pad;  // hq_pad: head quads, rounded up to a multiple of 8
  float head_scale, dot_scale;  // heads^-0.5, d^-0.5
  float* scores;                // [rows, npools]
  uint32_t* hist;               // [rows, kHistBins], zeroed before the launch
};

size_t score_smem_bytes(int hq_pad, int d) {
  return sizeof(float) * (static_cast<size_t>(hq_pad) * 4 * d + hq_pad * 4 + kPoolTile * (d + 4)) +
         sizeof(uint32_t) * kHistBins;
}

// Scores of query t0 + blockIdx.y against its visible pools, tiles of kPoolTile pools strided
// over blockIdx.x. q (scaled weights beside it) stays in shared memory, interleaved as
// [d / 4][4][hq_pad] float4 so that the 8 head-quad lanes read consecutive words; each thread
// holds a 4-head x 4-pool tile over all of d (pools pq + 32 k of the tile), applies the ReLU and
// head weights for its heads, and the 8 head-quad lanes sum their parts. Also counts the
// scores' top key bits into the query's histogram (shared, then merged once per CTA).
__global__ void __launch_bounds__(kScoreThreads) score_kernel(const ScoreParams p) {
  extern __shared__ __align__(16) float smem[];
  const int d = p.d, d4 = d / 4, hq_pad = p.hq_pad;
  float4* q_s = reinterpret_cast<float4*>(smem);                               // [d4][4][hq_pad]
  float* wq_s = smem + static_cast<size_t>(hq_pad) * 4 * d;                    // [4 * hq_pad]
  float4* p_s = reinterpret_cast<float4*>(wq_s + 4 * hq_pad);                  // [kPoolTile][d4 + 1]
  uint32_t* hist_s = reinterpret_cast<uint32_t*>(p_s + kPoolTile * (d4 + 1));  // [kHistBins]

  const int tid = threadIdx.x;
  const int64_t row = blockIdx.y, t = p.t0 + row;
  const int64_t visible = visible_pools(static_cast<int64_t>(*p.position) + t, p.kpool, p.npools);
  const int64_t ntiles = cdiv(visible, kPoolTile);
  if (static_cast<int64_t>(blockIdx.x) >= ntiles) return;

  for (int idx = tid; idx < d4 * 4 * hq_pad; idx += kScoreThreads) {
    const int hq = idx % hq_pad, i = (idx / hq_pad) % 4, c = idx / (4 * hq_pad), h = 4 * hq + i;
    q_s[idx] = h < p.heads ? reinterpret_cast<const float4*>(p.q + (t * p.heads + h) * d)[c] : make_float4(0, 0, 0, 0);
  }
  for (int h = tid; h < 4 * hq_pad; h += kScoreThreads)
    wq_s[h] = h < p.heads ? p.w[t * p.heads + h] * p.head_scale : 0.0f;
  for (int b = tid; b < kHistBins; b += kScoreThreads) hist_s[b] = 0u;

  const int warp = tid >> 5, lane = tid & 31, hql = lane & 7, pq = warp * 4 + (lane >> 3);
  float* scores = p.scores + row * p.npools;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const int64_t j0 = tile * kPoolTile;
    __syncthreads();  // the previous tile's reads are done (and, the first time, q is staged)
    for (int idx = tid; idx < kPoolTile * d4; idx += kScoreThreads) {
      const int l = idx / d4, c = idx % d4;
      const int64_t j = j0 + l;
      p_s[l * (d4 + 1) + c] =
          j < visible ? reinterpret_cast<const float4*>(p.pooled + j * d)[c] : make_float4(0, 0, 0, 0);
    }
    __syncthreads();
    float part[4] = {};
    for (int hq = hql; hq < hq_pad; hq += 8) {
      float acc[4][4] = {};
      for (int c = 0; c < d4; ++c) {
        float4 qv[4], pv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) qv[i] = q_s[(c * 4 + i) * hq_pad + hq];
#pragma unroll
        for (int k = 0; k < 4; ++k) pv[k] = p_s[(pq + 32 * k) * (d4 + 1) + c];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int k = 0; k < 4; ++k)
            acc[i][k] = fmaf(qv[i].x, pv[k].x,
                             fmaf(qv[i].y, pv[k].y, fmaf(qv[i].z, pv[k].z, fmaf(qv[i].w, pv[k].w, acc[i][k]))));
      }
#pragma unroll
      for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i) part[k] += wq_s[4 * hq + i] * fmaxf(acc[i][k] * p.dot_scale, 0.0f);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      part[k] += __shfl_xor_sync(0xffffffffu, part[k], 1);
      part[k] += __shfl_xor_sync(0xffffffffu, part[k], 2);
      part[k] += __shfl_xor_sync(0xffffffffu, part[k], 4);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t j = j0 + pq + 32 * k;
      if (hql == k && j < visible) {
        scores[j] = part[k];
        atomicAdd(&hist_s[score_key(part[k]) >> (32 - kHistBits)], 1u);
      }
    }
  }
  __syncthreads();
  uint32_t* hist = p.hist + row * kHistBins;
  for (int b = tid; b < kHistBins; b += kScoreThreads)
    if (hist_s[b] != 0u) atomicAdd(&hist[b], hist_s[b]);
}

struct SelectParams {
  const float* scores;   // [rows, npools]
  const uint32_t* hist;  // [rows, kHistBins]
  const int32_t* position;
  int64_t t0, npools, budget, width;  // budget: topk / kpool
  int kpool;
  int32_t* selection;  // [T, width]
};

size_t select_smem_bytes() { return sizeof(uint64_t) * kCap + sizeof(uint32_t) * kHistBins; }

// Inclusive prefix sum over the block (kSelectThreads threads); `warp_s`: 32 words of shared
// memory. Ends with a barrier, so warp_s may be reused right after.
__device__ __forceinline__ uint32_t block_inclusive_scan(uint32_t v, uint32_t* warp_s) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t x = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += x;
  }
  if (lane == 31) warp_s[warp] = v;
  __syncthreads();
  uint32_t before = 0;
  for (int w = 0; w < warp; ++w) before += warp_s[w];
  __syncthreads();
  return v + before;
}

struct BinPick {
  uint32_t bin, above, count;  // the bin, the count in the bins above it, the count in it
};

// The bin of h[0 .. nbins) (nbins a power of two, at most kSelectThreads * 4) holding the
// target-th largest element: fewer than `target` lie above it, at least `target` at or above.
// Every thread gets the result.
__device__ BinPick pick_bin(const uint32_t* h, int nbins, uint32_t target, uint32_t* warp_s, BinPick* result) {
  const int per = nbins > kSelectThreads ? nbins / kSelectThreads : 1;
  const int first = threadIdx.x * per;  // in bins counted from the top
  uint32_t local = 0;
  for (int q = 0; q < per && first + q < nbins; ++q) local += h[nbins - 1 - (first + q)];
  uint32_t running = block_inclusive_scan(local, warp_s) - local;
  for (int q = 0; q < per && first + q < nbins; ++q) {
    const int b = nbins - 1 - (first + q);
    if (running < target && running + h[b] >= target) *result = BinPick{static_cast<uint32_t>(b), running, h[b]};
    running += h[b];
  }
  __syncthreads();
  const BinPick r = *result;
  __syncthreads();
  return r;
}

// v[u] = sc[j0 + u * stride] where below `end` (the loads all in flight together).
__device__ __forceinline__ void load_scores(const float* __restrict__ sc, int64_t j0, int stride, int64_t end,
                                            float (&v)[kSelUnroll]) {
#pragma unroll
  for (int u = 0; u < kSelUnroll; ++u) {
    const int64_t j = j0 + static_cast<int64_t>(u) * stride;
    v[u] = j < end ? sc[j] : 0.0f;
  }
}

// Lanes below this one.
__device__ __forceinline__ uint32_t lanes_below() { return (1u << (threadIdx.x & 31)) - 1u; }

// One query per CTA: the exact top `chosen` of its visible scores by (score, lower index first).
// A radix select over the keys narrows the threshold: the first digit's histogram comes from
// score_kernel; while the candidates (all keys at or above the threshold prefix) exceed kCap,
// one more digit (12, then 8 bits) is counted over the matching keys. Then either all
// candidates are gathered and sorted (bitonic, in shared memory), or, when the whole key is fixed
// and still too many share it, the keys above it are gathered and the equal keys taken in index
// order (warp segments with ordered ballots) before the sort. Writes the row of the selection.
__global__ void __launch_bounds__(kSelectThreads) select_kernel(const SelectParams p) {
  extern __shared__ __align__(16) uint64_t cand[];           // [kCap]
  uint32_t* h_s = reinterpret_cast<uint32_t*>(cand + kCap);  // [kHistBins]
  __shared__ uint32_t warp_s[32];
  __shared__ BinPick pick;
  __shared__ uint32_t count_s;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t row = blockIdx.x, t = p.t0 + row, pos = static_cast<int64_t>(*p.position) + t;
  const int64_t visible = visible_pools(pos, p.kpool, p.npools);
  const int64_t chosen = p.budget < visible ? p.budget : visible;
  const float* sc = p.scores + row * p.npools;
  int32_t* out = p.selection + t * p.width;

  if (chosen > 0) {
    for (int b = tid; b < kHistBins; b += kSelectThreads) h_s[b] = p.hist[row * kHistBins + b];
    __syncthreads();
    BinPick b = pick_bin(h_s, kHistBins, static_cast<uint32_t>(chosen), warp_s, &pick);
    uint32_t prefix = b.bin, above = b.above, count = b.count, need = static_cast<uint32_t>(chosen) - b.above;
    int shift = 32 - kHistBits;  // keys >> shift compare with prefix
    while (above + count > static_cast<uint32_t>(kCap) && shift > 0) {
      const int bits = shift >= 12 ? 12 : shift, next = shift - bits;
      const uint32_t mask = (1u << bits) - 1u;
      for (int i = tid; i < (1 << bits); i += kSelectThreads) h_s[i] = 0u;
      __syncthreads();
      for (int64_t j0 = 0; j0 < visible; j0 += kSelectThreads * kSelUnroll) {
        float v[kSelUnroll];
        load_scores(sc, j0 + tid, kSelectThreads, visible, v);
#pragma unroll
        for (int u = 0; u < kSelUnroll; ++u) {
          uint32_t digit = 0xffffffffu;  // no digit: not in the threshold prefix
          if (j0 + tid + u * kSelectThreads < visible) {
            const uint32_t k = score_key(v[u]);
            if ((k >> shift) == prefix) digit = (k >> next) & mask;
          }
          const uint32_t peers = __match_any_sync(0xffffffffu, digit);
          if (digit != 0xffffffffu && (peers & lanes_below()) == 0u)
            atomicAdd(&h_s[digit], static_cast<uint32_t>(__popc(peers)));
        }
      }
      __syncthreads();
      b = pick_bin(h_s, 1 << bits, need, warp_s, &pick);
      prefix = (prefix << bits) | b.bin;
      above += b.above;
      need -= b.above;
      count = b.count;
      shift = next;
    }

    if (tid == 0) count_s = 0u;
    __syncthreads();
    const bool all = above + count <= static_cast<uint32_t>(kCap);
    // Gathers the keys above the prefix (and, with `all`, those in it) at slots in arrival order.
    for (int64_t j0 = 0; j0 < visible; j0 += kSelectThreads * kSelUnroll) {
      float v[kSelUnroll];
      load_scores(sc, j0 + tid, kSelectThreads, visible, v);
#pragma unroll
      for (int u = 0; u < kSelUnroll; ++u) {
        const int64_t j = j0 + tid + u * kSelectThreads;
        const uint32_t k = score_key(v[u]), hi = k >> shift;
        const bool take = j < visible && (hi > prefix || (all && hi == prefix));
        const uint32_t ballot = __ballot_sync(0xffffffffu, take);
        uint32_t slot = 0;
        if (lane == 0 && ballot != 0u) slot = atomicAdd(&count_s, static_cast<uint32_t>(__popc(ballot)));
        slot = __shfl_sync(0xffffffffu, slot, 0) + __popc(ballot & lanes_below());
        if (take) cand[slot] = compose(k, j);
      }
    }
    uint32_t n = above + count;
    if (!all) {
      // The whole key is fixed (shift 0): take the `need` lowest-index pools with key == prefix,
      // ranked in index order: each warp counts its segment, then ranks its matches.
      n = static_cast<uint32_t>(chosen);
      const int64_t seg = cdiv(cdiv(visible, kSelectThreads / 32), 32) * 32;
      const int64_t start = warp * seg, stop = start + seg < visible ? start + seg : visible;
      uint32_t mine = 0;
      for (int64_t j0 = start; j0 < stop; j0 += 32 * kSelUnroll) {
        float v[kSelUnroll];
        load_scores(sc, j0 + lane, 32, stop, v);
#pragma unroll
        for (int u = 0; u < kSelUnroll; ++u)
          mine += __popc(__ballot_sync(0xffffffffu, j0 + lane + 32 * u < stop && score_key(v[u]) == prefix));
      }
      if (lane == 0) warp_s[warp] = mine;
      __syncthreads();
      uint32_t rank0 = 0;
      for (int w = 0; w < warp; ++w) rank0 += warp_s[w];
      for (int64_t j0 = start; j0 < stop && rank0 < need; j0 += 32 * kSelUnroll) {
        float v[kSelUnroll];
        load_scores(sc, j0 + lane, 32, stop, v);
#pragma unroll
        for (int u = 0; u < kSelUnroll; ++u) {
          const int64_t j = j0 + lane + 32 * u;
          const bool eq = j < stop && score_key(v[u]) == prefix;
          const uint32_t ballot = __ballot_sync(0xffffffffu, eq);
          const uint32_t rank = rank0 + __popc(ballot & lanes_below());
          if (eq && rank < need) cand[above + rank] = compose(prefix, j);
          rank0 += __popc(ballot);
        }
      }
    }
    __syncthreads();

    // Bitonic sort, descending, of the n candidates padded with zeros (below any candidate).
    uint32_t m = 1;
    while (m < n) m <<= 1;
    for (uint32_t i = n + tid; i < m; i += kSelectThreads) cand[i] = 0u;
    __syncthreads();
    for (uint32_t k = 2; k <= m; k <<= 1) {
      for (uint32_t s = k >> 1; s > 0; s >>= 1) {
        for (uint32_t i = tid; i < m / 2; i += kSelectThreads) {
          const uint32_t lo = ((i & ~(s - 1)) << 1) | (i & (s - 1)), hi = lo + s;
          const uint64_t a = cand[lo], c = cand[hi];
          if ((a < c) == ((lo & k) == 0)) {
            cand[lo] = c;
            cand[hi] = a;
          }
        }
        __syncthreads();
      }
    }
    for (int64_t e = tid; e < chosen * p.kpool; e += kSelectThreads)
      out[e] = static_cast<int32_t>(composed_pool(cand[e / p.kpool]) * p.kpool + e % p.kpool);
  }

  // The incomplete tail visible * kpool .. pos, then -1.
  const int64_t base = chosen * p.kpool, tail = pos + 1 - visible * p.kpool;
  for (int64_t e = base + tid; e < p.width; e += kSelectThreads)
    out[e] = e - base < tail ? static_cast<int32_t>(visible * p.kpool + (e - base)) : -1;
}

cudaError_t allow_smem(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace

cudaError_t indexer_append(const float* key_raw, const float* gate_raw, int64_t T, int d, const float* ln_w,
                           const float* ln_b, const int32_t* position, float* keys, float* gates, cudaStream_t stream) {
  if (T < 0 || d <= 0 || T > 0x7fffffff) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (key_raw == nullptr || gate_raw == nullptr || ln_w == nullptr || ln_b == nullptr || position == nullptr ||
      keys == nullptr || gates == nullptr)
    return cudaErrorInvalidValue;
  append_kernel<<<static_cast<unsigned>(T), kAppendThreads, 0, stream>>>(key_raw, gate_raw, d, ln_w, ln_b, position,
                                                                         keys, gates);
  return cudaGetLastError();
}

cudaError_t indexer_pool(const float* keys, const float* gates, const float* ape, int64_t T, int d, int kpool,
                         const int32_t* position, float* pooled, cudaStream_t stream) {
  if (T < 0 || d <= 0 || kpool <= 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (keys == nullptr || gates == nullptr || ape == nullptr || position == nullptr || pooled == nullptr)
    return cudaErrorInvalidValue;
  // At most T / kpool + 1 pools end among T consecutive tokens.
  const int64_t blocks = T / kpool + 1;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  pool_kernel<<<static_cast<unsigned>(blocks), kPoolThreads, 0, stream>>>(keys, gates, ape, T, d, kpool, position,
                                                                          pooled);
  return cudaGetLastError();
}

size_t indexer_select_scratch_bytes(int64_t T, int64_t capacity, int kpool) {
  if (T <= 0 || capacity <= 0 || kpool <= 0) return 0;
  const int64_t npools = capacity / kpool;
  const int64_t rows = chunk_rows(T, npools);
  // Histograms first (16 KiB a row), so the score rows stay 16-byte aligned.
  return static_cast<size_t>(rows) * (sizeof(uint32_t) * kHistBins + sizeof(float) * static_cast<size_t>(npools));
}

cudaError_t indexer_select(const float* q, const float* w, const float* pooled, int64_t T, int heads, int d, int kpool,
                           int64_t topk, const int32_t* position, int64_t capacity, int32_t* selection, int64_t width,
                           void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (T < 0 || heads <= 0 || d < 4 || d > 256 || d % 4 != 0 || kpool <= 0 || topk < 0 || capacity <= 0 ||
      capacity / kpool > 0x7fffffff || width < std::min(topk, capacity) + kpool - 1)
    return cudaErrorInvalidValue;
  const int64_t npools = capacity / kpool;
  const int64_t budget = std::min(topk / kpool, npools);
  if (budget > kIndexerMaxChosen) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (q == nullptr || w == nullptr || pooled == nullptr || position == nullptr || selection == nullptr ||
      scratch == nullptr || !detail::aligned16(q) || !detail::aligned16(pooled) || !detail::aligned16(scratch) ||
      scratch_bytes < indexer_select_scratch_bytes(T, capacity, kpool))
    return cudaErrorInvalidValue;

  const int64_t rows = chunk_rows(T, npools);
  uint32_t* hist = static_cast<uint32_t*>(scratch);
  float* scores = reinterpret_cast<float*>(hist + rows * kHistBins);

  ScoreParams sp;
  sp.q = q;
  sp.w = w;
  sp.pooled = pooled;
  sp.position = position;
  sp.npools = npools;
  sp.heads = heads;
  sp.d = d;
  sp.kpool = kpool;
  sp.hq_pad = static_cast<int>(cdiv(cdiv(heads, 4), 8) * 8);
  sp.head_scale = 1.0f / std::sqrt(static_cast<float>(heads));
  sp.dot_scale = 1.0f / std::sqrt(static_cast<float>(d));
  sp.scores = scores;
  sp.hist = hist;
  const size_t score_smem = score_smem_bytes(sp.hq_pad, d);
  if (const cudaError_t e = allow_smem(reinterpret_cast<const void*>(score_kernel), score_smem); e != cudaSuccess)
    return e;

  SelectParams lp;
  lp.scores = scores;
  lp.hist = hist;
  lp.position = position;
  lp.npools = npools;
  lp.budget = budget;
  lp.width = width;
  lp.kpool = kpool;
  lp.selection = selection;
  const size_t select_smem = select_smem_bytes();
  if (const cudaError_t e = allow_smem(reinterpret_cast<const void*>(select_kernel), select_smem); e != cudaSuccess)
    return e;

  // Chunks of queries share the score rows; each: clear the histograms, score, select.
  for (int64_t t0 = 0; t0 < T; t0 += rows) {
    const int64_t n = std::min(rows, T - t0);
    if (const cudaError_t e = cudaMemsetAsync(hist, 0, sizeof(uint32_t) * kHistBins * n, stream); e != cudaSuccess)
      return e;
    sp.t0 = t0;
    const int64_t gx = std::max<int64_t>(1, std::min(cdiv(npools, kPoolTile), kScoreCtas / n));
    score_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(n)), kScoreThreads, score_smem, stream>>>(sp);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    lp.t0 = t0;
    select_kernel<<<static_cast<unsigned>(n), kSelectThreads, select_smem, stream>>>(lp);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace day0::kernels
