#include "mxfp4_gemv.h"

#include "decode_routes.cuh"
#include "decode_trace.cuh"
#include "moe_routing.h"
#include "split_int8.cuh"
#include "tensor_core.cuh"

namespace day0::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kMinCtas = 3;      // gate_up register cap (85): 3 CTAs per multiprocessor, one wave
constexpr int kTileRows = 16;    // rows of one MMA tile
constexpr int kGroupBlocks = 4;  // 32-value blocks per MMA group: one per lane of a quad
constexpr int kUnroll = 2;       // groups per lane in flight (two 16-byte loads each)
constexpr int kGateUpTiles = 4;  // gate_up CTA: 32 units = 64 interleaved gate/up rows
constexpr int kDownWarps = 16;   // down CTA: 16 rows, (routed expert, part of I) per warp
constexpr int kDownSplits = 4;   // parts of I per routed expert

// Split int8 vectors as MMA B operands in shared memory: the blocks as they are (64 bytes: hi,
// lo), then one zero block (read by the lanes whose B columns belong to another block), then the
// block scales / 254 (zero past the last block up to a multiple of 4). The zero block sits 16
// bytes past a 128-byte boundary: its two 16-byte reads then fall in banks that no lane reading a
// real block uses in the same quarter warp.
constexpr int kStagedBlock = 64;

// Groups of four blocks in a row of nb blocks (the last one may be partial).
__host__ __device__ constexpr int group_count(int nb) { return (nb + kGroupBlocks - 1) / kGroupBlocks; }

__host__ __device__ constexpr int zero_offset(int vectors, int nb) {
  return (vectors * nb * kStagedBlock + 127) / 128 * 128 + 16;
}

__host__ __device__ constexpr int staged_bytes(int vectors, int nb) {
  return zero_offset(vectors, nb) + 32 + vectors * group_count(nb) * kGroupBlocks * 4;
}

// Stages `vectors` consecutive split int8 vectors of nb blocks (q, scale) into shared memory in
// the layout above. A thread's first round of loads (up to 4 x 16 bytes of the vectors and one
// scale: the whole of a decode vector) is in flight before its first store, and before it calls
// `meanwhile()` (work that can use the loads' latency); ends with a barrier. Returns the scales'
// address.
template <typename Meanwhile>
__device__ __forceinline__ const float* stage_split_int8(const int8_t* __restrict__ q, const float* __restrict__ scale,
                                                         int vectors, int nb, uint8_t* smem, Meanwhile&& meanwhile) {
  constexpr int kU = 4;
  const int n = vectors * nb * kStagedBlock / 16;
  uint4 v[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int i = threadIdx.x + u * blockDim.x;
    v[u] = i < n ? __ldg(reinterpret_cast<const uint4*>(q) + i) : make_uint4(0, 0, 0, 0);
  }
  const int padded = group_count(nb) * kGroupBlocks;
  float sv;
  {
    const int i = threadIdx.x, vi = i / padded, b = i - vi * padded;
    sv = i < vectors * padded && b < nb ? __ldg(scale + vi * nb + b) : 0.0f;
  }
  meanwhile();
  uint8_t* zero = smem + zero_offset(vectors, nb);
  float* scales = reinterpret_cast<float*>(zero + 32);
  for (int base = 0; base < n; base += blockDim.x * kU) {
    if (base > 0) {
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int i = base + threadIdx.x + u * blockDim.x;
        v[u] = i < n ? __ldg(reinterpret_cast<const uint4*>(q) + i) : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      if (i < n) reinterpret_cast<uint4*>(smem)[i] = v[u];
    }
  }
  if (threadIdx.x < 8) reinterpret_cast<uint32_t*>(zero)[threadIdx.x] = 0u;
  if (threadIdx.x < vectors * padded) scales[threadIdx.x] = sv * (1.0f / 254.0f);
  for (int i = threadIdx.x + blockDim.x; i < vectors * padded; i += blockDim.x) {
    const int vi = i / padded, b = i - vi * padded;
    scales[i] = b < nb ? __ldg(scale + vi * nb + b) * (1.0f / 254.0f) : 0.0f;
  }
  __syncthreads();
  return scales;
}

__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// Four E2M1 codes (the low 16 bits of `codes`) as int8 twice their magnitude when positive,
// 0 when negative: the selector's bit 3 (the code's sign) makes prmt replicate the selected
// byte's sign bit, which is 0 in this table.
__device__ __forceinline__ uint32_t e2m1x4_positive(uint32_t codes) { return prmt(0x03020100u, 0x0C080604u, codes); }

// One round of a lane's loads for mxfp4_tile_dot(): groups qq .. qq + kU - 1 (those below q1) of
// its block t in rows g and g + 8, codes and scales.
template <int kU>
struct TileRound {
  uint4 w[kU][2];
  uint32_t sc[kU][2];
  __device__ __forceinline__ void load(const uint4* const (&rows)[2], const uint8_t* const (&scales)[2], int nb, int qq,
                                       int q1, int t) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int b = (qq + u) * kGroupBlocks + t;
      const bool in = qq + u < q1 && b < nb;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        w[u][r] = in ? __ldg(rows[r] + b) : make_uint4(0, 0, 0, 0);
        sc[u][r] = in ? __ldg(scales[r] + b) : 0u;
      }
    }
  }
};

// A 16-row tile of MXFP4 rows dotted with one staged split int8 vector over the groups [q0, q1)
// of four blocks, by int8 tensor-core MMAs. Lane (g, t) = (lane / 4, lane % 4) loads block
// 4q + t of rows g and g + 8 (16 bytes each: a quad reads 64 contiguous bytes of a row). One
// MMA takes 8 codes of each of the group's 4 blocks: the k indices of the A and B fragments that
// lane t holds (4t..4t+3 and 16+4t..16+4t+3) belong to block t, and B column 2b + level holds
// block b's hi or lo values, zero elsewhere, so C column 2t + level is the dot product of block t
// alone: lane (g, t) ends the group with rows g and g + 8 of its own block, exact in int32, and
// applies that block's scales. Negative codes go through a second MMA into their own accumulators
// (subtracted at the end), so the decode is two byte permutes per 4 codes.
// rows / scales: row g's and row g + 8's blocks and scales; vec: the staged vector's first block;
// zero: the staged zero block; sx: the vector's scales / 254; rd: the lane's loads, holding the
// first round already when first_loaded. out: rows g and g + 8, summed over the quad.
template <int kU>
__device__ __forceinline__ void mxfp4_tile_dot(const uint4* const (&rows)[2], const uint8_t* const (&scales)[2],
                                               const uint8_t* vec, const uint8_t* zero, const float* sx, int nb, int q0,
                                               int q1, int lane, TileRound<kU>& rd, bool first_loaded,
                                               float (&out)[2]) {
  const int g = lane >> 2, t = lane & 3;
  const bool real_b = (g >> 1) == t;  // this lane's B columns (2g, 2g+1 / 2) are block t's
  const int level = (g & 1) * 32;
  float acc0 = 0.0f, acc1 = 0.0f;
  for (int qq = q0; qq < q1; qq += kU) {
    if (qq != q0 || !first_loaded) rd.load(rows, scales, nb, qq, q1, t);
    const auto& w = rd.w;
    const auto& sc = rd.sc;
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int q = qq + u;
      if (q >= q1) break;
      const int b = q * kGroupBlocks + t;
      const uint8_t* src = real_b && b < nb ? vec + b * kStagedBlock + level : zero;
      const uint4 x0 = *reinterpret_cast<const uint4*>(src), x1 = *reinterpret_cast<const uint4*>(src + 16);
      const uint32_t xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
      const uint32_t wg[4] = {w[u][0].x, w[u][0].y, w[u][0].z, w[u][0].w};
      const uint32_t wh[4] = {w[u][1].x, w[u][1].y, w[u][1].z, w[u][1].w};
      int cp[4] = {0, 0, 0, 0}, cn[4] = {0, 0, 0, 0};  // positive and negative codes
#pragma unroll
      for (int m = 0; m < 4; ++m) {  // word m: codes 8m..8m+7 of the block
        const uint32_t a = wg[m], h = wh[m], an = a ^ 0x88888888u, hn = h ^ 0x88888888u;
        detail::mma_s8_16832(cp, e2m1x4_positive(a), e2m1x4_positive(h), e2m1x4_positive(a >> 16),
                             e2m1x4_positive(h >> 16), xv[2 * m], xv[2 * m + 1]);
        detail::mma_s8_16832(cn, e2m1x4_positive(an), e2m1x4_positive(hn), e2m1x4_positive(an >> 16),
                             e2m1x4_positive(hn >> 16), xv[2 * m], xv[2 * m + 1]);
      }
      const int c[4] = {cp[0] - cn[0], cp[1] - cn[1], cp[2] - cn[2], cp[3] - cn[3]};
      const float x = sx[b];
      acc0 = fmaf(static_cast<float>(c[0] * 254 + c[1]), x * detail::e8m0_half(sc[u][0]), acc0);
      acc1 = fmaf(static_cast<float>(c[2] * 254 + c[3]), x * detail::e8m0_half(sc[u][1]), acc1);
    }
  }
  acc0 += __shfl_xor_sync(0xffffffffu, acc0, 1);
  acc1 += __shfl_xor_sync(0xffffffffu, acc1, 1);
  acc0 += __shfl_xor_sync(0xffffffffu, acc0, 2);
  acc1 += __shfl_xor_sync(0xffffffffu, acc1, 2);
  out[0] = acc0;
  out[1] = acc1;
}

// The groups [q0, q1) of part `split` of `splits` of ng groups.
__device__ __forceinline__ void split_range(int ng, int split, int splits, int& q0, int& q1) {
  const int per = (ng + splits - 1) / splits;
  q0 = min(ng, split * per);
  q1 = min(ng, q0 + per);
}

// The rows g and g + 8 (g = lane / 4) of the 16-row tile whose first row is row0 of an MXFP4
// matrix (blocks, scales), and the groups [q0, q1) of part `split` of `splits` of the row.
struct TilePart {
  const uint4* rows[2];
  const uint8_t* scales[2];
  int q0, q1;
  __device__ __forceinline__ TilePart(const uint8_t* blocks, const uint8_t* sc, int64_t row0, int nb, int split,
                                      int splits, int lane) {
    const int64_t g = lane >> 2;
    rows[0] = reinterpret_cast<const uint4*>(blocks + (row0 + g) * nb * 16);
    rows[1] = reinterpret_cast<const uint4*>(blocks + (row0 + g + 8) * nb * 16);
    scales[0] = sc + (row0 + g) * nb;
    scales[1] = sc + (row0 + g + 8) * nb;
    split_range(group_count(nb), split, splits, q0, q1);
  }
};

// A TilePart dotted with a staged vector: mxfp4_tile_dot() for this lane's rows g and g + 8.
// first_loaded: rd already holds the part's first round of loads.
__device__ __forceinline__ void tile_part_dot(const TilePart& p, int nb, const uint8_t* vec, const uint8_t* zero,
                                              const float* sx, int lane, TileRound<kUnroll>& rd, bool first_loaded,
                                              float (&out)[2]) {
  mxfp4_tile_dot<kUnroll>(p.rows, p.scales, vec, zero, sx, nb, p.q0, p.q1, lane, rd, first_loaded, out);
}

// One CTA per (32 units of I, routed pair): the 64 gate/up rows (interleaved) are 4 tiles; warp w
// takes tile w % 4 over half w / 4 of H, the CTA adds the halves, applies the activation and
// writes the 32 units as one split int8 block. With the logits given, warp 0 takes the token's
// routes while the input's loads are in flight.
__global__ void __launch_bounds__(kWarps * 32, kMinCtas)
    gate_up_kernel(MoeDecodeArgs a, const int8_t* __restrict__ x_q, const float* __restrict__ x_scale,
                   int8_t* __restrict__ act_q, float* __restrict__ act_scale) {
  constexpr int kSplits = kWarps / kGateUpTiles;
  extern __shared__ __align__(16) uint8_t staged[];
  __shared__ float part[kSplits][kGateUpTiles * kTileRows];
  __shared__ detail::RouteScratch routes;
  DAY0_TRACE_SCOPE(trace::gate_up);
  detail::pdl_wait();  // the routes and inputs come from the router
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  const int H = a.hidden, I = a.inter, k = a.top_k, nb = H / 32;
  const int64_t pair = blockIdx.y, t = pair / k;
  const int j = static_cast<int>(pair - t * k);
  const bool from_logits = a.logits != nullptr;
  int64_t e = from_logits ? 0 : a.ids[pair];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float* sx = stage_split_int8(x_q + t * nb * kSplitInt8BlockBytes, x_scale + t * nb, 1, nb, staged, [&] {
    if (!from_logits || warp != 0) return;
    detail::warp_routes(a.logits + t * a.experts, a.experts, k, lane, routes);
    if (blockIdx.x == 0 && j == 0 && a.ids != nullptr && lane < k) {
      a.ids[t * k + lane] = routes.id[lane];
      a.weights[t * k + lane] = routes.weight[lane];
    }
  });
  if (from_logits) e = routes.id[j];
  const int tile = warp % kGateUpTiles, split = warp / kGateUpTiles;
  const int64_t row0 = e * 2 * I + 2 * static_cast<int64_t>(blockIdx.x) * 32 + tile * kTileRows;
  // Warp 0's epilogue biases (unit `lane`: gate row 2 lane, up row 2 lane + 1) load with its dot.
  const int64_t gate_row = e * 2 * I + 2 * (static_cast<int64_t>(blockIdx.x) * 32 + lane);
  float gate_bias = 0.0f, up_bias = 0.0f;
  if (warp == 0) {
    gate_bias = __ldg(a.gate_up_bias + gate_row);
    up_bias = __ldg(a.gate_up_bias + gate_row + 1);
  }
  const int g = lane >> 2;
  float dots[2];
  TileRound<kUnroll> rd;
  tile_part_dot(TilePart(a.gate_up_blocks, a.gate_up_scales, row0, nb, split, kSplits, lane), nb, staged,
                staged + zero_offset(1, nb), sx, lane, rd, false, dots);
  if ((lane & 3) == 0) {
    part[split][tile * kTileRows + g] = dots[0];
    part[split][tile * kTileRows + g + 8] = dots[1];
  }
  __syncthreads();
  if (warp == 0) {
    // Unit u: gate row 2u, up row 2u + 1 of the CTA.
    float gsum = 0.0f, usum = 0.0f;
#pragma unroll
    for (int s = 0; s < kSplits; ++s) {
      gsum += part[s][2 * lane];
      usum += part[s][2 * lane + 1];
    }
    const float gate = fminf(gsum + gate_bias, a.swiglu_limit);
    const float up = fminf(fmaxf(usum + up_bias, -a.swiglu_limit), a.swiglu_limit);
    const float glu = gate / (1.0f + expf(-gate * a.swiglu_alpha));
    detail::quantize_block_split_int8((up + 1.0f) * glu, lane,
                                      act_q + (pair * (I / 32) + blockIdx.x) * kSplitInt8BlockBytes,
                                      act_scale + pair * (I / 32) + blockIdx.x);
  }
}

// down's routes, out of line: inlined, the top-k's registers left down_kernel a spill in its main loop.
__device__ __noinline__ void down_routes(const float* logits, int E, int k, int lane, detail::RouteScratch& r) {
  detail::warp_routes(logits, E, k, lane, r);
}

// One CTA per 16 output rows of a token: warp w takes (expert slot j, part s of I) tasks w,
// w + 16, ...; the CTA adds the k weighted results to the residual in slot order.
__global__ void __launch_bounds__(kDownWarps * 32, 2)
    down_kernel(MoeDecodeArgs a, const int8_t* __restrict__ act_q, const float* __restrict__ act_scale,
                float* __restrict__ residual) {
  extern __shared__ __align__(16) uint8_t staged[];
  __shared__ float part[kRouterMaxTopK][kDownSplits][kTileRows];
  __shared__ detail::RouteScratch routes;
  DAY0_TRACE_SCOPE(trace::down);
  const int H = a.hidden, I = a.inter, k = a.top_k, nb = I / 32;
  const int64_t t = blockIdx.y;
  const int h0 = blockIdx.x * kTileRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // Before the wait: the routes (final before gate_up released this launch: it waits for the
  // router first) and each warp's first task's first round of loads, out while gate_up finishes.
  if (warp == 0) {
    if (a.logits != nullptr) {
      down_routes(a.logits + t * a.experts, a.experts, k, lane, routes);
    } else if (lane < k) {
      routes.id[lane] = a.ids[t * k + lane];
      routes.weight[lane] = a.weights[t * k + lane];
    }
  }
  __syncthreads();
  const auto first_row = [&](int task) { return static_cast<int64_t>(routes.id[task / kDownSplits]) * H + h0; };
  TileRound<kUnroll> rd;
  if (warp < kDownSplits * k) {
    const TilePart p(a.down_blocks, a.down_scales, first_row(warp), nb, warp % kDownSplits, kDownSplits, lane);
    rd.load(p.rows, p.scales, nb, p.q0, p.q1, lane & 3);
  }
  // The epilogue's residual rows and the routes' biases, copied into shared memory in the
  // background (no registers held, nothing waits on them until the end).
  __shared__ float residual_in[kTileRows], bias_in[kRouterMaxTopK][kTileRows];
  if (threadIdx.x < kTileRows) {
    const int r = threadIdx.x;
    detail::cp_async4(&residual_in[r], residual + t * H + h0 + r);
    for (int j = 0; j < k; ++j)
      detail::cp_async4(&bias_in[j][r], a.down_bias + static_cast<int64_t>(routes.id[j]) * H + h0 + r);
  }
  detail::pdl_wait();
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  const float* sx =
      stage_split_int8(act_q + t * k * nb * kSplitInt8BlockBytes, act_scale + t * k * nb, k, nb, staged, [] {});
  const int padded = group_count(nb) * kGroupBlocks;
  const uint8_t* zero = staged + zero_offset(k, nb);
  const int g = lane >> 2;
  for (int task = warp; task < kDownSplits * k; task += kDownWarps) {
    const int j = task / kDownSplits, split = task % kDownSplits;
    float dots[2];
    tile_part_dot(TilePart(a.down_blocks, a.down_scales, first_row(task), nb, split, kDownSplits, lane), nb,
                  staged + j * nb * kStagedBlock, zero, sx + j * padded, lane, rd, task == warp, dots);
    if ((lane & 3) == 0) {
      part[j][split][g] = dots[0];
      part[j][split][g + 8] = dots[1];
    }
  }
  __syncthreads();
  if (threadIdx.x < kTileRows) {
    detail::cp_async_wait_all();  // this thread's own copies
    const int r = threadIdx.x;
    float total = 0.0f;
    for (int j = 0; j < k; ++j) {
      float d = 0.0f;
#pragma unroll
      for (int s = 0; s < kDownSplits; ++s) d += part[j][s][r];
      total += routes.weight[j] * (d + bias_in[j][r]);
    }
    residual[t * H + h0 + r] = residual_in[r] + total;
  }
}

__global__ void __launch_bounds__(kWarps * 32)
    quantize_kernel(const float* __restrict__ x, int64_t blocks, int8_t* __restrict__ q, float* __restrict__ scale) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (b >= blocks) return;
  const int lane = threadIdx.x & 31;
  detail::quantize_block_split_int8(x[b * 32 + lane], lane, q + b * kSplitInt8BlockBytes, scale + b);
}

// Raises a kernel's dynamic shared memory limit when `bytes` needs it (static and dynamic
// together past the default 48 KB; the hardware allows about 227 KB).
cudaError_t set_smem(const void* kernel, size_t bytes) {
  if (bytes <= 36 * 1024) return cudaSuccess;  // the kernels' static shared memory is at most 12 KB
  if (bytes > 227 * 1024) return cudaErrorInvalidValue;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

bool valid(const MoeDecodeArgs& a) {
  const bool routes = a.logits != nullptr ? a.experts >= a.top_k && a.experts <= kDecodeRouteMaxExperts &&
                                                (a.ids == nullptr) == (a.weights == nullptr)
                                          : a.ids != nullptr && a.weights != nullptr;
  return a.T >= 0 && a.T <= 65535 && a.hidden > 0 && a.inter > 0 && a.hidden % 32 == 0 && a.inter % 32 == 0 &&
         a.top_k > 0 && a.top_k <= kRouterMaxTopK && routes && a.gate_up_blocks != nullptr &&
         a.gate_up_scales != nullptr && a.gate_up_bias != nullptr && a.down_blocks != nullptr &&
         a.down_scales != nullptr && a.down_bias != nullptr;
}

}  // namespace

cudaError_t quantize_split_int8(const float* x, int64_t rows, int64_t K, int8_t* q, float* scale, cudaStream_t stream) {
  if (rows < 0 || K <= 0 || K % 32 != 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (x == nullptr || q == nullptr || scale == nullptr) return cudaErrorInvalidValue;
  const int64_t blocks = rows * (K / 32);
  quantize_kernel<<<static_cast<unsigned>((blocks + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(x, blocks, q,
                                                                                                     scale);
  return cudaGetLastError();
}

cudaError_t moe_decode_gate_up(const MoeDecodeArgs& a, const int8_t* x_q, const float* x_scale, int8_t* act_q,
                               float* act_scale, cudaStream_t stream) {
  if (!valid(a) || x_q == nullptr || x_scale == nullptr || act_q == nullptr || act_scale == nullptr)
    return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(a.inter / 32), static_cast<unsigned>(a.T * a.top_k));
  const size_t smem = staged_bytes(1, a.hidden / 32);
  if (const cudaError_t e = set_smem(reinterpret_cast<const void*>(gate_up_kernel), smem); e != cudaSuccess) return e;
  return detail::launch_pdl(gate_up_kernel, grid, dim3(kWarps * 32), smem, stream, a, x_q, x_scale, act_q, act_scale);
}

cudaError_t moe_decode_down(const MoeDecodeArgs& a, const int8_t* act_q, const float* act_scale, float* residual,
                            cudaStream_t stream) {
  if (!valid(a) || act_q == nullptr || act_scale == nullptr || residual == nullptr) return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  if (a.hidden % kTileRows != 0) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(a.hidden / kTileRows), static_cast<unsigned>(a.T));
  const size_t smem = staged_bytes(a.top_k, a.inter / 32);
  if (const cudaError_t e = set_smem(reinterpret_cast<const void*>(down_kernel), smem); e != cudaSuccess) return e;
  return detail::launch_pdl(down_kernel, grid, dim3(kDownWarps * 32), smem, stream, a, act_q, act_scale, residual);
}

DAY0_TRACE_SETTER(trace_set_mxfp4)

}  // namespace day0::kernels
