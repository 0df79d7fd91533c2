#include "glm_moe.h"

#include <cmath>

#include <cuda_fp16.h>

#include "device_util.cuh"

namespace day0::kernels {
namespace {

__host__ __device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// 1 / (1 + exp(-x)) with exp rounded once to float (as a correctly rounded expf gives it), so the
// router's scores match the CPU's to the last bit but for rare roundings.
__device__ __forceinline__ float sigmoid_router(float x) {
  return 1.0f / (1.0f + static_cast<float>(exp(-static_cast<double>(x))));
}

// silu(min(gate, L)) * clamp(up, -L, L), with std::min and std::clamp's comparisons.
__device__ __forceinline__ float swiglu_value(float gate, float up, float limit) {
  const float g = limit < gate ? limit : gate;
  const float u = up < -limit ? -limit : (limit < up ? limit : up);
  return g / (1.0f + expf(-g)) * u;
}

// ---- Router ----

constexpr int kRouteWarps = 4;  // tokens per CTA, one per warp

// (v, i) beats (bv, bi): higher value, equal values to the lower index; i < 0 is no candidate.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) {
  return i >= 0 && (bi < 0 || v > bv || (v == bv && i < bi));
}

// The best (v, i) over the warp, in every lane.
__device__ __forceinline__ void warp_best(float& v, int& i) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, off);
    const int oi = __shfl_xor_sync(0xffffffffu, i, off);
    if (better(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
}

__global__ void __launch_bounds__(kRouteWarps * 32)
    grouped_topk_kernel(const float* __restrict__ logits, const float* __restrict__ bias, int64_t T, int E, int K,
                        int G, int TG, bool norm, float scaling, int32_t* __restrict__ ids,
                        float* __restrict__ weights) {
  extern __shared__ float choice_all[];  // [kRouteWarps][E]
  __shared__ int sorted_ids[kRouteWarps][kGlmMaxTopK];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kRouteWarps + warp;
  if (t >= T) return;  // the whole warp
  float* c = choice_all + warp * E;
  const float* l = logits + t * E;
  for (int e = lane; e < E; e += 32) c[e] = sigmoid_router(l[e]) + bias[e];
  __syncwarp();

  // Group scores (lane g holds group g's): the sum of the group's two best choice values.
  const int per = E / G;
  float group_score = -INFINITY;
  for (int g = 0; g < G; ++g) {
    float hi = -INFINITY, lo = -INFINITY;
    for (int e = g * per + lane; e < (g + 1) * per; e += 32) {
      const float v = c[e];
      if (v > hi) {
        lo = hi;
        hi = v;
      } else if (v > lo) {
        lo = v;
      }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      const float ohi = __shfl_xor_sync(0xffffffffu, hi, off), olo = __shfl_xor_sync(0xffffffffu, lo, off);
      const float nlo = fmaxf(fminf(hi, ohi), fmaxf(lo, olo));
      hi = fmaxf(hi, ohi);
      lo = nlo;
    }
    if (lane == g) group_score = hi + lo;
  }
  // The topk_group best groups, then the experts outside them masked to -inf (as the CPU does).
  uint32_t kept = 0;
  for (int r = 0; r < TG; ++r) {
    float v = group_score;
    int i = lane < G && !((kept >> lane) & 1u) ? lane : -1;
    warp_best(v, i);
    kept |= 1u << i;
  }
  for (int e = lane; e < E; e += 32)
    if (!((kept >> (e / per)) & 1u)) c[e] = -INFINITY;
  __syncwarp();
  // The top_k best, one per round; a chosen expert's value becomes NaN (never a candidate again).
  int mine = -1;  // lane j: the j-th choice
  for (int j = 0; j < K; ++j) {
    float bv = 0.0f;
    int bi = -1;
    for (int e = lane; e < E; e += 32) {
      const float v = c[e];
      if (v == v && better(v, e, bv, bi)) {
        bv = v;
        bi = e;
      }
    }
    warp_best(bv, bi);
    if (lane == j) mine = bi;
    __syncwarp();
    if (lane == 0 && bi >= 0) c[bi] = NAN;
    __syncwarp();
  }
  // Ascending ids: each choice's rank among the K.
  int rank = 0;
  for (int j = 0; j < K; ++j) {
    const int other = __shfl_sync(0xffffffffu, mine, j);
    if (other < mine) ++rank;
  }
  if (lane < K) sorted_ids[warp][rank] = mine;
  __syncwarp();
  const int id = lane < K ? sorted_ids[warp][lane] : -1;
  const float s = id >= 0 ? sigmoid_router(l[id]) : 0.0f;
  float sum = 0.0f;  // in ascending id order, as the CPU sums
  for (int j = 0; j < K; ++j) sum += __shfl_sync(0xffffffffu, s, j);
  if (lane < K) {
    float w = s;
    if (norm) w /= sum + 1e-20f;
    ids[t * K + lane] = id;
    weights[t * K + lane] = w * scaling;
  }
}

__global__ void swiglu_kernel(const float* __restrict__ gate_up, int64_t T, int64_t I, float limit,
                              float* __restrict__ out) {
  const int64_t total = T * I;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = idx / I, i = idx % I;
    const float* row = gate_up + t * 2 * I;
    out[idx] = swiglu_value(row[i], row[I + i], limit);
  }
}

// ---- Grouping the (token, slot) pairs by expert: a stable counting sort ----

constexpr int64_t kChunkTokens = 1024;  // tokens per pass through the scratch
constexpr int kPlaceThreads = 1024;     // pairs per histogram / placement block
constexpr int kMaxPlaceBlocks = static_cast<int>(kChunkTokens * kGlmMaxTopK / kPlaceThreads);
constexpr int kScanThreads = 1024;

// hist[b][e] = pairs of block b (pairs b * kPlaceThreads ...) routed to expert e.
__global__ void __launch_bounds__(kPlaceThreads)
    hist_kernel(const int32_t* __restrict__ ids, int64_t P, int E, int32_t* __restrict__ hist) {
  extern __shared__ int h[];
  for (int e = threadIdx.x; e < E; e += kPlaceThreads) h[e] = 0;
  __syncthreads();
  const int64_t p = static_cast<int64_t>(blockIdx.x) * kPlaceThreads + threadIdx.x;
  if (p < P) {
    const int e = ids[p];
    if (e >= 0 && e < E) atomicAdd(&h[e], 1);  // integer counts: order-independent
  }
  __syncthreads();
  for (int e = threadIdx.x; e < E; e += kPlaceThreads) hist[static_cast<int64_t>(blockIdx.x) * E + e] = h[e];
}

// Exclusive prefix sum of v over the CTA (blockDim.x a multiple of 32); *total gets the sum.
// buf: 33 ints of shared memory.
__device__ __forceinline__ int block_exclusive_scan(int v, int* buf, int* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int incl = v;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int n = __shfl_up_sync(0xffffffffu, incl, off);
    if (lane >= off) incl += n;
  }
  if (lane == 31) buf[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    const int w = lane < warps ? buf[lane] : 0;
    int wi = w;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int n = __shfl_up_sync(0xffffffffu, wi, off);
      if (lane >= off) wi += n;
    }
    if (lane < warps) buf[lane] = wi - w;
    if (lane == 31) buf[32] = wi;
  }
  __syncthreads();
  const int excl = buf[warp] + incl - v;
  *total = buf[32];
  __syncthreads();  // buf may be reused
  return excl;
}

// One CTA. Expert e's pairs take sorted rows [offset_e, offset_e + count_e), offsets ascending
// with e; hist[b][e] becomes the first row of block b's pairs of expert e. Each expert's rows
// are cut into tiles of up to TN: tiles[i] = {expert, first row, rows}, *tile_count of them.
__global__ void __launch_bounds__(kScanThreads)
    scan_kernel(int32_t* __restrict__ hist, int blocks, int E, int TN, int32_t* __restrict__ tiles,
                int32_t* __restrict__ tile_count) {
  __shared__ int buf[33];
  __shared__ int carry_rows, carry_tiles;
  if (threadIdx.x == 0) carry_rows = carry_tiles = 0;
  __syncthreads();
  for (int e0 = 0; e0 < E; e0 += kScanThreads) {
    const int e = e0 + threadIdx.x;
    int v[kMaxPlaceBlocks];
    int count = 0;
#pragma unroll
    for (int b = 0; b < kMaxPlaceBlocks; ++b) {
      v[b] = e < E && b < blocks ? hist[static_cast<int64_t>(b) * E + e] : 0;
      count += v[b];
    }
    const int ntiles = (count + TN - 1) / TN;
    int rows_total = 0, tiles_total = 0;
    const int row0 = carry_rows + block_exclusive_scan(count, buf, &rows_total);
    const int tile0 = carry_tiles + block_exclusive_scan(ntiles, buf, &tiles_total);
    if (e < E) {
      int before = row0;
#pragma unroll
      for (int b = 0; b < kMaxPlaceBlocks; ++b) {
        if (b < blocks) hist[static_cast<int64_t>(b) * E + e] = before;
        before += v[b];
      }
      for (int k = 0; k < ntiles; ++k) {
        int32_t* d = tiles + 3 * static_cast<int64_t>(tile0 + k);
        d[0] = e;
        d[1] = row0 + k * TN;
        d[2] = count - k * TN < TN ? count - k * TN : TN;
      }
    }
    __syncthreads();  // every thread has read the carries
    if (threadIdx.x == 0) {
      carry_rows += rows_total;
      carry_tiles += tiles_total;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *tile_count = carry_tiles;
}

// sorted_pair[row] = pair, stably: within an expert, pairs keep their order. The block's warps
// place their pairs in turn; lanes with the same expert rank by lane.
__global__ void __launch_bounds__(kPlaceThreads)
    place_kernel(const int32_t* __restrict__ ids, int64_t P, int E, const int32_t* __restrict__ hist,
                 int32_t* __restrict__ sorted_pair) {
  extern __shared__ int cursor[];
  for (int e = threadIdx.x; e < E; e += kPlaceThreads) cursor[e] = hist[static_cast<int64_t>(blockIdx.x) * E + e];
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t p = static_cast<int64_t>(blockIdx.x) * kPlaceThreads + threadIdx.x;
  int e = p < P ? ids[p] : -1;
  const bool valid = e >= 0 && e < E;
  if (!valid) e = -1;
  const unsigned peers = __match_any_sync(0xffffffffu, e);
  const int rank = __popc(peers & ((1u << lane) - 1u));
  const int count = __popc(peers);
  for (int w = 0; w < kPlaceThreads / 32; ++w) {
    int base = 0;
    if (warp == w && valid) base = cursor[e];
    __syncwarp();
    if (warp == w && valid) {
      if (rank == 0) cursor[e] = base + count;
      sorted_pair[base + rank] = static_cast<int32_t>(p);
    }
    __syncthreads();
  }
}

// ---- The expert GEMVs / tiled GEMMs ----

constexpr int kExpertThreads = 256;
constexpr int kExpertWarps = kExpertThreads / 32;
constexpr int kStageFloats = 8192;      // input values staged per CTA and step: TN rows of 8192 / TN
constexpr float kHalfScale = 16384.0f;  // 2^14, undoing e2m1x8()'s 2^-14 on the input side

// Staged rows are padded by 4 floats after every 32 values, so that the S lanes sharing a weight
// row (each at its own 16-byte unit) read distinct banks.
__device__ __forceinline__ int pad(int k) { return k + ((k >> 5) << 2); }

// 2^(s - 127) of an E8M0 byte; NaN for 0xFF.
__device__ __forceinline__ float e8m0_value(uint8_t s) {
  return s == 0xFF ? __int_as_float(0x7fc00000) : detail::exp2_int(static_cast<int>(s) - 127);
}

__device__ __forceinline__ float2 half2_bits_to_float2(uint32_t bits) {
  return __half22float2(__halves2half2(__ushort_as_half(static_cast<unsigned short>(bits & 0xffffu)),
                                       __ushort_as_half(static_cast<unsigned short>(bits >> 16))));
}

// The 8 E2M1 codes of `w` (element 2i: the low nibble of byte i) times 2^-14, exactly: an fp16
// whose bits 9..11 hold a code's magnitude bits and bit 15 its sign is the code's value times
// 2^-14 (codes 0 and 1 become the fp16 zero and subnormal 2^-15), so a shift and mask per value
// and a conversion give it. Each pair below takes nibbles k and k + 4.
__device__ __forceinline__ void e2m1x8(uint32_t w, float (&v)[8]) {
  const float2 a = half2_bits_to_float2(((w << 9) & 0x0E000E00u) | ((w << 12) & 0x80008000u));  // 0, 4
  const float2 b = half2_bits_to_float2(((w << 5) & 0x0E000E00u) | ((w << 8) & 0x80008000u));   // 1, 5
  const float2 c = half2_bits_to_float2(((w << 1) & 0x0E000E00u) | ((w << 4) & 0x80008000u));   // 2, 6
  const float2 d = half2_bits_to_float2(((w >> 3) & 0x0E000E00u) | (w & 0x80008000u));          // 3, 7
  v[0] = a.x;
  v[4] = a.y;
  v[1] = b.x;
  v[5] = b.y;
  v[2] = c.x;
  v[6] = c.y;
  v[3] = d.x;
  v[7] = d.y;
}

__device__ __forceinline__ void bf16x8(const uint4 w, float (&v)[8]) {
  v[0] = __uint_as_float(w.x << 16);
  v[1] = __uint_as_float(w.x & 0xffff0000u);
  v[2] = __uint_as_float(w.y << 16);
  v[3] = __uint_as_float(w.y & 0xffff0000u);
  v[4] = __uint_as_float(w.z << 16);
  v[5] = __uint_as_float(w.z & 0xffff0000u);
  v[6] = __uint_as_float(w.w << 16);
  v[7] = __uint_as_float(w.w & 0xffff0000u);
}

__device__ __forceinline__ float dot8(const float (&w)[8], const float4 a, const float4 b, float acc) {
  acc = fmaf(w[0], a.x, acc);
  acc = fmaf(w[1], a.y, acc);
  acc = fmaf(w[2], a.z, acc);
  acc = fmaf(w[3], a.w, acc);
  acc = fmaf(w[4], b.x, acc);
  acc = fmaf(w[5], b.y, acc);
  acc = fmaf(w[6], b.z, acc);
  acc = fmaf(w[7], b.w, acc);
  return acc;
}

// One pass over the experts: gate/up rows with the activation (act = swiglu(gate x, up x)) or
// down rows (y = down act).
struct ExpertPass {
  GlmExpertTable table;
  const float* src;  // gate/up: x [T, H]; down: act [rows, I]
  float* dst;        // gate/up: act [rows, I] (sorted row order); down: y [pairs, H]
  int64_t K;         // reduction length: H (gate/up) or I (down)
  int64_t N;         // outputs per row of dst: I (gate/up) or H (down)
  int top_k, E;
  const int32_t* ids;          // [pairs] experts
  const int32_t* sorted_pair;  // grouped: the pair of sorted row r; null: one pair per CTA column
  const int32_t* tiles;        // grouped: [max tiles][3] expert, first sorted row, rows
  const int32_t* tile_count;   // grouped: [1]
  float limit;
};

// Stages rows[n][kc0 .. kc0 + len) for n < cnt into xs (row n at n * kStride, padded), times mul.
template <int TN, int kChunkValues, int kStride>
__device__ __forceinline__ void stage_rows(float* xs, const float* const* rows, int64_t kc0, int len, int cnt,
                                           float mul) {
  constexpr int kQuads = kChunkValues / 4;
  constexpr int kPer = TN * kQuads / kExpertThreads;
  static_assert(kPer * kExpertThreads == TN * kQuads, "whole rounds of float4 loads");
  float4 v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int idx = threadIdx.x + j * kExpertThreads;
    const int n = idx / kQuads, k = 4 * (idx % kQuads);
    v[j] = n < cnt && k < len ? __ldg(reinterpret_cast<const float4*>(rows[n] + kc0 + k))
                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int idx = threadIdx.x + j * kExpertThreads;
    const int n = idx / kQuads, k = 4 * (idx % kQuads);
    if (n < cnt && k < len)
      *reinterpret_cast<float4*>(xs + n * kStride + pad(k)) =
          make_float4(v[j].x * mul, v[j].y * mul, v[j].z * mul, v[j].w * mul);
  }
}

// grid (columns, row blocks). A column is a tile: one (token, slot) pair (sorted_pair null) or
// up to TN pairs of one expert. The CTA stages the tile's input rows in chunks and its slots take
// weight rows: gate/up: slot g takes activation g (gate row g and up row g); down: rows 2g and
// 2g + 1. S lanes share a slot, each taking every S-th 16-byte unit of its rows (S = 4 gives a
// decode step many CTAs; S = 1 has every lane read the same staged values, a broadcast). A lane
// sums its units in order over the whole reduction, then the S lanes add up in a fixed order:
// each pair's result depends on nothing but its own input.
template <bool kMx, bool kGateUp, int TN, int S>
__global__ void __launch_bounds__(kExpertThreads, TN == 1 ? 3 : 1) expert_rows_kernel(const ExpertPass a) {
  constexpr int kChunkValues = kStageFloats / TN;
  constexpr int kStride = kChunkValues + kChunkValues / 8;
  constexpr int kW = kMx ? 32 : 8;             // values per 16-byte unit
  constexpr int kWords = kW / 8;               // 8-value words per unit
  constexpr int kU = TN == 1 ? 2 : 4;          // 16-byte units a lane loads per row and step
  constexpr bool kPrefetch = TN == 1;          // the next step's units load while these are used
  constexpr bool kUnitScale = kMx && TN <= 4;  // scale a unit's sums rather than each weight
  constexpr int kStepUnits = kU * S;
  constexpr int kSlotsPerWarp = 32 / S;
  static_assert(kChunkValues % (kStepUnits * kW) == 0, "chunks of whole steps");
  __shared__ __align__(16) float xs[TN * kStride];
  __shared__ const float* src_rows[TN];
  __shared__ int64_t dst_rows[TN];

  int expert, cnt;
  int64_t r0;
  if (a.sorted_pair == nullptr) {
    r0 = blockIdx.x;
    cnt = 1;
    expert = a.ids[r0];
    if (expert < 0 || expert >= a.E) return;
  } else {
    if (static_cast<int>(blockIdx.x) >= *a.tile_count) return;
    const int32_t* d = a.tiles + 3 * static_cast<int64_t>(blockIdx.x);
    expert = d[0];
    r0 = d[1];
    cnt = d[2];
  }
  if (static_cast<int>(threadIdx.x) < cnt) {
    const int64_t r = r0 + threadIdx.x;
    const int64_t pair = a.sorted_pair != nullptr ? a.sorted_pair[r] : r;
    src_rows[threadIdx.x] = kGateUp ? a.src + (pair / a.top_k) * a.K : a.src + r * a.K;
    dst_rows[threadIdx.x] = kGateUp ? r : pair;
  }

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, s = lane % S;
  const int64_t g = static_cast<int64_t>(blockIdx.y) * (kExpertWarps * kSlotsPerWarp) + warp * kSlotsPerWarp + lane / S;
  const bool active = kGateUp ? g < a.N : 2 * g < a.N;
  const int64_t units_row = a.K / kW;
  const uint4* wrow[2] = {nullptr, nullptr};
  const uint8_t* srow[2] = {nullptr, nullptr};
  if (active) {
    const int64_t ra = kGateUp ? g : 2 * g;
    const int64_t rb = kGateUp ? (kMx ? a.N + g : g) : 2 * g + 1;
    if constexpr (kMx) {
      const uint8_t* blocks = kGateUp ? a.table.gate_up_blocks[expert] : a.table.down_blocks[expert];
      const uint8_t* scales = kGateUp ? a.table.gate_up_scales[expert] : a.table.down_scales[expert];
      wrow[0] = reinterpret_cast<const uint4*>(blocks) + ra * units_row;
      wrow[1] = reinterpret_cast<const uint4*>(blocks) + rb * units_row;
      srow[0] = scales + ra * units_row;
      srow[1] = scales + rb * units_row;
    } else {
      const uint16_t* m0 = kGateUp ? a.table.gate[expert] : a.table.down[expert];
      const uint16_t* m1 = kGateUp ? a.table.up[expert] : a.table.down[expert];
      wrow[0] = reinterpret_cast<const uint4*>(m0 + ra * a.K);
      wrow[1] = reinterpret_cast<const uint4*>(m1 + rb * a.K);
    }
  }

  float acc0[TN], acc1[TN];
#pragma unroll
  for (int n = 0; n < TN; ++n) acc0[n] = acc1[n] = 0.0f;
  for (int64_t kc0 = 0; kc0 < a.K; kc0 += kChunkValues) {
    const int len = static_cast<int>(a.K - kc0 < kChunkValues ? a.K - kc0 : kChunkValues);
    const int units = len / kW;
    const int64_t unit0 = kc0 / kW;
    // A step: lane s takes units u0 + u * S + s (u < kU) of both its rows.
    const auto load = [&](uint4(&wv)[2][kU], float(&fv)[2][kU], int u0) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int unit = u0 + u * S + s;
        const bool in = unit < units;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          wv[r][u] = in ? __ldg(wrow[r] + unit0 + unit) : make_uint4(0u, 0u, 0u, 0u);
          fv[r][u] = kMx && in ? e8m0_value(__ldg(srow[r] + unit0 + unit)) : 0.0f;
        }
      }
    };
    const auto compute = [&](const uint4(&wv)[2][kU], const float(&fv)[2][kU], int u0) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int unit = u0 + u * S + s;
        if (unit >= units) break;
        float p0[TN], p1[TN];  // the unit's sums (kUnitScale)
#pragma unroll
        for (int n = 0; n < TN; ++n) p0[n] = p1[n] = 0.0f;
#pragma unroll
        for (int word = 0; word < kWords; ++word) {
          float w0[8], w1[8];
          if constexpr (kMx) {
            e2m1x8(word == 0 ? wv[0][u].x : word == 1 ? wv[0][u].y : word == 2 ? wv[0][u].z : wv[0][u].w, w0);
            e2m1x8(word == 0 ? wv[1][u].x : word == 1 ? wv[1][u].y : word == 2 ? wv[1][u].z : wv[1][u].w, w1);
            if constexpr (!kUnitScale) {
#pragma unroll
              for (int j = 0; j < 8; ++j) {
                w0[j] *= fv[0][u];
                w1[j] *= fv[1][u];
              }
            }
          } else {
            bf16x8(wv[0][u], w0);
            bf16x8(wv[1][u], w1);
          }
          const float* xp = xs + pad(unit * kW + 8 * word);
#pragma unroll
          for (int n = 0; n < TN; ++n) {
            if (n >= cnt) break;
            const float4 xa = *reinterpret_cast<const float4*>(xp + n * kStride);
            const float4 xb = *reinterpret_cast<const float4*>(xp + n * kStride + 4);
            if constexpr (kUnitScale) {
              p0[n] = dot8(w0, xa, xb, p0[n]);
              p1[n] = dot8(w1, xa, xb, p1[n]);
            } else {
              acc0[n] = dot8(w0, xa, xb, acc0[n]);
              acc1[n] = dot8(w1, xa, xb, acc1[n]);
            }
          }
        }
        if constexpr (kUnitScale) {
#pragma unroll
          for (int n = 0; n < TN; ++n) {
            acc0[n] = fmaf(p0[n], fv[0][u], acc0[n]);
            acc1[n] = fmaf(p1[n], fv[1][u], acc1[n]);
          }
        }
      }
    };
    uint4 w[2][kU];
    float f[2][kU];
    if (kPrefetch && active) load(w, f, 0);  // weights: in flight while the input is staged
    __syncthreads();                         // the previous chunk's readers are done (and src_rows is visible)
    stage_rows<TN, kChunkValues, kStride>(xs, src_rows, kc0, len, cnt, kMx ? kHalfScale : 1.0f);
    __syncthreads();
    if (!active) continue;
    if constexpr (kPrefetch) {
      for (int u0 = 0; u0 < units; u0 += kStepUnits) {
        uint4 wn[2][kU];
        float fn[2][kU];
        load(wn, fn, u0 + kStepUnits);
        compute(w, f, u0);
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
          for (int u = 0; u < kU; ++u) {
            w[r][u] = wn[r][u];
            f[r][u] = fn[r][u];
          }
      }
    } else {
      for (int u0 = 0; u0 < units; u0 += kStepUnits) {
        load(w, f, u0);
        compute(w, f, u0);
      }
    }
  }

  // The S lanes of a slot add up (a butterfly: every lane ends with the same sums).
#pragma unroll
  for (int n = 0; n < TN; ++n) {
#pragma unroll
    for (int o = 1; o < S; o <<= 1) {
      acc0[n] += __shfl_xor_sync(0xffffffffu, acc0[n], o);
      acc1[n] += __shfl_xor_sync(0xffffffffu, acc1[n], o);
    }
  }
  if (!active || s != 0) return;
#pragma unroll
  for (int n = 0; n < TN; ++n) {
    if (n >= cnt) break;
    if constexpr (kGateUp) {
      a.dst[dst_rows[n] * a.N + g] = swiglu_value(acc0[n], acc1[n], a.limit);
    } else {
      *reinterpret_cast<float2*>(a.dst + dst_rows[n] * a.N + 2 * g) = make_float2(acc0[n], acc1[n]);
    }
  }
}

constexpr int kCombineThreads = 256;
constexpr int kCombineSpan = 4 * kCombineThreads;  // values of H per CTA

// out[t] (+)= sum over j in order of weights[t, j] * y[t * K + j]; grid T * spans.
__global__ void __launch_bounds__(kCombineThreads)
    combine_kernel(const float* __restrict__ y, const int32_t* __restrict__ ids, const float* __restrict__ weights,
                   int K, int E, int64_t H, int64_t spans, bool accumulate, float* __restrict__ out) {
  const int64_t t = blockIdx.x / spans;
  const int64_t q = (blockIdx.x % spans) * kCombineThreads + threadIdx.x;
  if (4 * q >= H) return;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int j = 0; j < K; ++j) {
    const int64_t pair = t * K + j;
    const int e = ids[pair];
    if (e < 0 || e >= E) continue;
    const float w = weights[pair];
    const float4 v = __ldg(reinterpret_cast<const float4*>(y + pair * H) + q);
    sum.x = fmaf(v.x, w, sum.x);
    sum.y = fmaf(v.y, w, sum.y);
    sum.z = fmaf(v.z, w, sum.z);
    sum.w = fmaf(v.w, w, sum.w);
  }
  float4* o = reinterpret_cast<float4*>(out + t * H) + q;
  if (accumulate) {
    const float4 prev = *o;
    sum = make_float4(prev.x + sum.x, prev.y + sum.y, prev.z + sum.z, prev.w + sum.w);
  }
  *o = sum;
}

// ---- Scratch ----

constexpr int kMinTileTokens = 4;  // the smallest grouped tile (the most tiles)

size_t align_up(size_t v) { return (v + 255) & ~static_cast<size_t>(255); }

int64_t max_tiles(int64_t pairs, int64_t experts, int tile_tokens) {
  return (pairs + tile_tokens - 1) / tile_tokens + (pairs < experts ? pairs : experts);
}

struct Layout {
  int64_t chunk_tokens = 0, pairs = 0, blocks = 0;
  size_t act = 0, y = 0, sorted = 0, hist = 0, tiles = 0, tile_count = 0, total = 0;
};

Layout scratch_layout(int64_t T, int K, int E, int64_t H, int64_t I) {
  Layout l;
  l.chunk_tokens = T < kChunkTokens ? T : kChunkTokens;
  l.pairs = l.chunk_tokens * K;
  l.blocks = (l.pairs + kPlaceThreads - 1) / kPlaceThreads;
  size_t off = 0;
  const auto take = [&](size_t bytes) {
    const size_t at = off;
    off += align_up(bytes);
    return at;
  };
  l.act = take(sizeof(float) * static_cast<size_t>(l.pairs * I));
  l.y = take(sizeof(float) * static_cast<size_t>(l.pairs * H));
  l.sorted = take(sizeof(int32_t) * static_cast<size_t>(l.pairs));
  l.hist = take(sizeof(int32_t) * static_cast<size_t>(l.blocks * E));
  l.tiles = take(3 * sizeof(int32_t) * static_cast<size_t>(max_tiles(l.pairs, E, kMinTileTokens)));
  l.tile_count = take(sizeof(int32_t));
  l.total = off;
  return l;
}

bool experts_args_ok(int64_t T, int top_k, int E, int64_t H, int64_t I) {
  return T >= 0 && top_k >= 1 && top_k <= kGlmMaxTopK && E >= 1 && E <= kGlmMaxExperts && H > 0 && I > 0 &&
         H % 8 == 0 && I % 8 == 0;
}

// The gate/up pass then the down pass over `columns` tiles.
template <bool kMx, int TN, int S>
cudaError_t run_passes(const ExpertPass& up, const ExpertPass& down, int64_t columns, int64_t H, int64_t I,
                       cudaStream_t stream) {
  constexpr int64_t kSlots = kExpertWarps * 32 / S;  // slots per CTA
  const int64_t up_blocks = (I + kSlots - 1) / kSlots, down_blocks = (H + 2 * kSlots - 1) / (2 * kSlots);
  if (columns > INT32_MAX || up_blocks > 65535 || down_blocks > 65535) return cudaErrorInvalidValue;
  expert_rows_kernel<kMx, true, TN, S>
      <<<dim3(static_cast<unsigned>(columns), static_cast<unsigned>(up_blocks)), kExpertThreads, 0, stream>>>(up);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  expert_rows_kernel<kMx, false, TN, S>
      <<<dim3(static_cast<unsigned>(columns), static_cast<unsigned>(down_blocks)), kExpertThreads, 0, stream>>>(down);
  return cudaGetLastError();
}

template <bool kMx>
cudaError_t run_chunk(const ExpertPass& up, const ExpertPass& down, int tile_tokens, int64_t columns, int64_t H,
                      int64_t I, cudaStream_t stream) {
  switch (tile_tokens) {
    case 1:
      return run_passes<kMx, 1, 4>(up, down, columns, H, I, stream);
    case 4:
      return run_passes<kMx, 4, 1>(up, down, columns, H, I, stream);
    default:
      return run_passes<kMx, 16, 1>(up, down, columns, H, I, stream);
  }
}

}  // namespace

cudaError_t grouped_sigmoid_topk(const float* logits, const float* bias, int64_t T, int E, int top_k, int n_group,
                                 int topk_group, bool norm_topk_prob, float routed_scaling, int32_t* ids,
                                 float* weights, cudaStream_t stream) {
  if (T < 0 || E < 2 || E > kGlmMaxExperts || n_group < 1 || n_group > kGlmMaxGroups || E % n_group != 0 ||
      E / n_group < 2 || topk_group < 1 || topk_group > n_group || top_k < 1 || top_k > kGlmMaxTopK ||
      top_k > topk_group * (E / n_group))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (logits == nullptr || bias == nullptr || ids == nullptr || weights == nullptr) return cudaErrorInvalidValue;
  const int64_t blocks = (T + kRouteWarps - 1) / kRouteWarps;
  if (blocks > INT32_MAX) return cudaErrorInvalidValue;
  const size_t smem = sizeof(float) * kRouteWarps * static_cast<size_t>(E);
  grouped_topk_kernel<<<static_cast<unsigned>(blocks), kRouteWarps * 32, smem, stream>>>(
      logits, bias, T, E, top_k, n_group, topk_group, norm_topk_prob, routed_scaling, ids, weights);
  return cudaGetLastError();
}

cudaError_t clamped_swiglu(const float* gate_up, int64_t T, int64_t I, float limit, float* out, cudaStream_t stream) {
  if (T < 0 || I <= 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (gate_up == nullptr || out == nullptr) return cudaErrorInvalidValue;
  const int64_t blocks = (T * I + 255) / 256;
  swiglu_kernel<<<static_cast<unsigned>(blocks < 16384 ? blocks : 16384), 256, 0, stream>>>(gate_up, T, I, limit, out);
  return cudaGetLastError();
}

size_t glm_moe_scratch_bytes(int64_t T, int top_k, int E, int64_t H, int64_t I) {
  if (!experts_args_ok(T, top_k, E, H, I) || T == 0) return 0;
  return scratch_layout(T, top_k, E, H, I).total;
}

cudaError_t glm_moe_experts(const GlmExpertTable& table, const float* x, int64_t T, int64_t H, int64_t I, int E,
                            int top_k, const int32_t* ids, const float* weights, float limit, bool accumulate,
                            float* out, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (!experts_args_ok(T, top_k, E, H, I) || (table.mxfp4 && (H % 32 != 0 || I % 32 != 0)))
    return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  const bool have_table = table.mxfp4 ? table.gate_up_blocks != nullptr && table.gate_up_scales != nullptr &&
                                            table.down_blocks != nullptr && table.down_scales != nullptr
                                      : table.gate != nullptr && table.up != nullptr && table.down != nullptr;
  if (!have_table || x == nullptr || ids == nullptr || weights == nullptr || out == nullptr || scratch == nullptr ||
      !aligned16(x) || !aligned16(out) || (reinterpret_cast<uintptr_t>(scratch) & 255u) != 0)
    return cudaErrorInvalidValue;
  const Layout l = scratch_layout(T, top_k, E, H, I);
  if (scratch_bytes < l.total) return cudaErrorInvalidValue;
  auto* base = static_cast<uint8_t*>(scratch);
  float* act = reinterpret_cast<float*>(base + l.act);
  float* y = reinterpret_cast<float*>(base + l.y);
  int32_t* sorted = reinterpret_cast<int32_t*>(base + l.sorted);
  int32_t* hist = reinterpret_cast<int32_t*>(base + l.hist);
  int32_t* tiles = reinterpret_cast<int32_t*>(base + l.tiles);
  int32_t* tile_count = reinterpret_cast<int32_t*>(base + l.tile_count);
  const int64_t spans = (H + kCombineSpan - 1) / kCombineSpan;

  for (int64_t t0 = 0; t0 < T; t0 += l.chunk_tokens) {
    const int64_t tn = T - t0 < l.chunk_tokens ? T - t0 : l.chunk_tokens;
    const int64_t pairs = tn * top_k;
    const int32_t* chunk_ids = ids + t0 * top_k;
    // Tokens per tile from the mean pairs per active expert: one (a pair per CTA column, no
    // sort) while experts mostly see one pair, else 4 or 16 of an expert's pairs per tile.
    const int64_t active = pairs < E ? pairs : E;
    const int64_t per_expert = (pairs + active - 1) / active;
    const int tile_tokens = per_expert <= 1 ? 1 : per_expert <= kMinTileTokens ? kMinTileTokens : 16;

    ExpertPass up{};
    up.table = table;
    up.src = x + t0 * H;
    up.dst = act;
    up.K = H;
    up.N = I;
    up.top_k = top_k;
    up.E = E;
    up.ids = chunk_ids;
    up.limit = limit;
    int64_t columns = pairs;
    if (tile_tokens > 1) {
      const int64_t blocks = (pairs + kPlaceThreads - 1) / kPlaceThreads;
      const size_t smem = sizeof(int32_t) * static_cast<size_t>(E);
      hist_kernel<<<static_cast<unsigned>(blocks), kPlaceThreads, smem, stream>>>(chunk_ids, pairs, E, hist);
      scan_kernel<<<1, kScanThreads, 0, stream>>>(hist, static_cast<int>(blocks), E, tile_tokens, tiles, tile_count);
      place_kernel<<<static_cast<unsigned>(blocks), kPlaceThreads, smem, stream>>>(chunk_ids, pairs, E, hist, sorted);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
      up.sorted_pair = sorted;
      up.tiles = tiles;
      up.tile_count = tile_count;
      columns = max_tiles(pairs, E, tile_tokens);
    }
    ExpertPass down = up;
    down.src = act;
    down.dst = y;
    down.K = I;
    down.N = H;
    const cudaError_t e = table.mxfp4 ? run_chunk<true>(up, down, tile_tokens, columns, H, I, stream)
                                      : run_chunk<false>(up, down, tile_tokens, columns, H, I, stream);
    if (e != cudaSuccess) return e;
    if (tn * spans > INT32_MAX) return cudaErrorInvalidValue;
    combine_kernel<<<static_cast<unsigned>(tn * spans), kCombineThreads, 0, stream>>>(
        y, chunk_ids, weights + t0 * top_k, top_k, E, H, spans, accumulate, out + t0 * H);
    if (const cudaError_t e2 = cudaGetLastError(); e2 != cudaSuccess) return e2;
  }
  return cudaSuccess;
}

}  // namespace day0::kernels
