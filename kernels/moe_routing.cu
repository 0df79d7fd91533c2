#include "moe_routing.h"

#include <algorithm>
#include <cmath>

#include "decode_routes.cuh"
#include "decode_trace.cuh"
#include "device_util.cuh"
#include "mxfp4_gemv.h"
#include "split_int8.cuh"

namespace day0::kernels {
namespace {

constexpr int kTopkWarps = 8;  // tokens per router_topk CTA, one per warp

__global__ void __launch_bounds__(kTopkWarps * 32)
    router_topk_kernel(const float* __restrict__ logits, int64_t T, int E, int k, int32_t* __restrict__ ids,
                       float* __restrict__ weights) {
  __shared__ detail::RouteScratch scratch[kTopkWarps];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kTopkWarps + warp;
  if (t >= T) return;  // the whole warp
  detail::RouteScratch& r = scratch[warp];
  detail::warp_routes(logits + t * E, E, k, lane, r);
  if (lane < k) {
    ids[t * k + lane] = r.id[lane];
    weights[t * k + lane] = r.weight[lane];
  }
}

constexpr int kRouterWarps = 4;  // router rows per CTA, one per warp

// The decode router over ceil(E / 4) CTAs per token: each stages RMSNorm(x[t]) in shared
// memory (fp32), quantises its share of the split int8 blocks and computes its router rows into
// `logits`.
__global__ void __launch_bounds__(kRouterWarps * 32)
    router_decode_kernel(const float* __restrict__ x, const uint16_t* __restrict__ norm, float eps,
                         const uint16_t* __restrict__ W, const float* __restrict__ bias, int H, int E,
                         int8_t* __restrict__ x_q, float* __restrict__ x_scale, float* __restrict__ logits) {
  DAY0_TRACE_SCOPE(trace::router);
  extern __shared__ float xs[];
  __shared__ float scratch[32];
  const int64_t t = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int e = blockIdx.x * kRouterWarps + warp;
  const int chunks = H / 8;
  const uint4* w = reinterpret_cast<const uint4*>(W) + static_cast<int64_t>(e) * chunks;
  // Twelve 16-byte loads per lane in flight (a row of up to 3,072 values in one round); the
  // first round and the bias are loaded before waiting for the kernel that writes x.
  constexpr int kU = 12;
  uint4 wv[kU];
  const auto load_round = [&](int c0) {
#pragma unroll
    for (int u = 0; u < kU; ++u) wv[u] = c0 + 32 * u < chunks ? __ldg(w + c0 + 32 * u) : make_uint4(0u, 0u, 0u, 0u);
  };
  float b = 0.0f;
  if (e < E) {
    load_round(lane);
    if (lane == 0) b = __ldg(bias + e);
  }
  detail::NormRound<8> norm_round;  // the RMSNorm weights' first round, also before the wait
  norm_round.load(norm, H);
  detail::pdl_wait();
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  detail::stage_row<8>(x + t * H, H, norm, eps, xs, scratch, &norm_round);
  const int nb = H / 32;
  for (int blk = blockIdx.x * kRouterWarps + warp; blk < nb; blk += gridDim.x * kRouterWarps)
    detail::quantize_block_split_int8(xs[blk * 32 + lane], lane, x_q + (t * nb + blk) * kSplitInt8BlockBytes,
                                      x_scale + t * nb + blk);
  if (e >= E) return;
  float acc = 0.0f;
  for (int c0 = lane; c0 < chunks; c0 += 32 * kU) {
    if (c0 != lane) load_round(c0);
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int c = c0 + 32 * u;
      if (c >= chunks) break;
      const uint4 v = wv[u];
      const float4 x0 = *reinterpret_cast<const float4*>(xs + 8 * c);
      const float4 x1 = *reinterpret_cast<const float4*>(xs + 8 * c + 4);
      acc += __uint_as_float(v.x << 16) * x0.x + __uint_as_float(v.x & 0xffff0000u) * x0.y;
      acc += __uint_as_float(v.y << 16) * x0.z + __uint_as_float(v.y & 0xffff0000u) * x0.w;
      acc += __uint_as_float(v.z << 16) * x1.x + __uint_as_float(v.z & 0xffff0000u) * x1.y;
      acc += __uint_as_float(v.w << 16) * x1.z + __uint_as_float(v.w & 0xffff0000u) * x1.w;
    }
  }
  acc = detail::warp_sum(acc);
  if (lane == 0) logits[t * E + e] = acc + b;
}

// One CTA: count pairs per expert, lay out slots and tiles (thread 0), then place each pair.
__global__ void __launch_bounds__(1024)
    build_routes_kernel(const int32_t* __restrict__ ids, int64_t pairs, int E, int tile_rows, MoeRoutes r) {
  for (int e = threadIdx.x; e < E; e += blockDim.x) r.counts[e] = 0;
  __syncthreads();
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) atomicAdd(&r.counts[ids[p]], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    int slots = 0, tiles = 0, offset = 0;
    for (int e = 0; e < E; ++e) {
      const int n = r.counts[e];
      r.counts[e] = offset;  // becomes the expert's placement cursor
      if (n == 0) continue;
      r.active_experts[slots] = e;
      r.slot_offsets[slots] = offset;
      for (int row = 0; row < n; row += tile_rows) {
        r.tile_slot[tiles] = slots;
        r.tile_row[tiles] = row;
        ++tiles;
      }
      ++slots;
      offset += n;
    }
    r.slot_offsets[slots] = offset;
    *r.active_count = slots;
    *r.tile_count = tiles;
  }
  __syncthreads();
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int row = atomicAdd(&r.counts[ids[p]], 1);
    r.sorted_pair[row] = static_cast<int32_t>(p);
    r.row_of_pair[p] = row;
  }
}

__global__ void gather_rows_kernel(const uint16_t* __restrict__ h, const int32_t* __restrict__ sorted_pair, int k,
                                   int64_t H, uint16_t* __restrict__ rows) {
  const int64_t r = blockIdx.x;
  const uint16_t* src = h + static_cast<int64_t>(sorted_pair[r] / k) * H;
  uint16_t* dst = rows + r * H;
  if ((H & 7) == 0) {
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* o = reinterpret_cast<uint4*>(dst);
    for (int64_t i = threadIdx.x; i < H / 8; i += blockDim.x) o[i] = s[i];
  } else {
    for (int64_t i = threadIdx.x; i < H; i += blockDim.x) dst[i] = src[i];
  }
}

__global__ void combine_kernel(const float* __restrict__ y, const int32_t* __restrict__ row_of_pair, int k, int64_t H,
                               float* __restrict__ x) {
  const int64_t t = blockIdx.x;
  for (int64_t c = threadIdx.x; c < H; c += blockDim.x) {
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) sum += y[static_cast<int64_t>(row_of_pair[t * k + j]) * H + c];
    x[t * H + c] += sum;
  }
}

}  // namespace

cudaError_t router_topk(const float* logits, int64_t T, int E, int k, int32_t* ids, float* weights,
                        cudaStream_t stream) {
  if (T < 0 || E <= 0 || k < 1 || k > E || k > kRouterMaxTopK) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (logits == nullptr || ids == nullptr || weights == nullptr) return cudaErrorInvalidValue;
  router_topk_kernel<<<static_cast<unsigned>((T + kTopkWarps - 1) / kTopkWarps), kTopkWarps * 32, 0, stream>>>(
      logits, T, E, k, ids, weights);
  return cudaGetLastError();
}

cudaError_t router_decode(const float* x, const uint16_t* norm, float eps, const uint16_t* W, const float* bias,
                          int64_t T, int E, int H, int8_t* x_q, float* x_scale, float* logits, cudaStream_t stream) {
  if (T < 0 || T > 65535 || E <= 0 || H <= 0 || H % 32 != 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (x == nullptr || norm == nullptr || W == nullptr || bias == nullptr || x_q == nullptr || x_scale == nullptr ||
      logits == nullptr || !detail::aligned16(W))
    return cudaErrorInvalidValue;
  const size_t smem = sizeof(float) * static_cast<size_t>(H);
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(router_decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>((E + kRouterWarps - 1) / kRouterWarps), static_cast<unsigned>(T));
  return detail::launch_pdl(router_decode_kernel, grid, dim3(kRouterWarps * 32), smem, stream, x, norm, eps, W, bias, H,
                            E, x_q, x_scale, logits);
}

int64_t moe_max_tiles(int64_t pairs, int64_t experts, int tile_rows) {
  const int64_t slots = pairs < experts ? pairs : experts;
  return (pairs + tile_rows - 1) / tile_rows + slots;
}

cudaError_t moe_build_routes(const int32_t* ids, int64_t T, int k, int E, int tile_rows, const MoeRoutes& r,
                             cudaStream_t stream) {
  if (T <= 0 || k < 1 || E <= 0 || tile_rows <= 0 || ids == nullptr || r.counts == nullptr ||
      r.sorted_pair == nullptr || r.row_of_pair == nullptr || r.active_experts == nullptr ||
      r.slot_offsets == nullptr || r.active_count == nullptr || r.tile_slot == nullptr || r.tile_row == nullptr ||
      r.tile_count == nullptr)
    return cudaErrorInvalidValue;
  build_routes_kernel<<<1, 1024, 0, stream>>>(ids, T * k, E, tile_rows, r);
  return cudaGetLastError();
}

cudaError_t moe_gather_rows(const uint16_t* h, const int32_t* sorted_pair, int64_t T, int k, int64_t H, uint16_t* rows,
                            cudaStream_t stream) {
  if (T < 0 || k < 1 || H <= 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (h == nullptr || sorted_pair == nullptr || rows == nullptr) return cudaErrorInvalidValue;
  gather_rows_kernel<<<static_cast<unsigned>(T * k), 128, 0, stream>>>(h, sorted_pair, k, H, rows);
  return cudaGetLastError();
}

cudaError_t moe_combine(const float* y, const int32_t* row_of_pair, int64_t T, int k, int64_t H, float* x,
                        cudaStream_t stream) {
  if (T < 0 || k < 1 || H <= 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (y == nullptr || row_of_pair == nullptr || x == nullptr) return cudaErrorInvalidValue;
  combine_kernel<<<static_cast<unsigned>(T), 256, 0, stream>>>(y, row_of_pair, k, H, x);
  return cudaGetLastError();
}

DAY0_TRACE_SETTER(trace_set_routing)

}  // namespace day0::kernels
