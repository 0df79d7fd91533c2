#include "mxfp4_gemv.h"

#include "moe_routing.h"
#include "split_int8.cuh"

namespace day0::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kMinCtas = 3;  // register cap (85): three CTAs per multiprocessor, one wave at gpt-oss shapes
constexpr int kRows = 4;     // rows per warp pass: one input block load serves all of them
constexpr int kUnroll = 2;   // blocks per lane per row in flight (the rows are prefetched into the L2)
constexpr int kPasses = 32 / (2 * kWarps);  // gate_up: 2 units per pass, 32 units per CTA
constexpr int kDownRows = 8;                // output rows of one down CTA: 2 tasks of kRows per routed expert

// Split int8 blocks in shared memory: 64 bytes of values padded to 80 so that lanes reading
// consecutive blocks hit distinct banks, then the block scales.
constexpr int kStagedStride = 80;

// Stages `vectors` consecutive split int8 vectors of nb blocks (q, scale) into shared memory:
// values at [v * nb + b] * kStagedStride, scales after all values. All loads of a thread are in
// flight before its first store; ends with a barrier.
__device__ __forceinline__ void stage_split_int8(const int8_t* __restrict__ q, const float* __restrict__ scale,
                                                 int vectors, int nb, uint8_t* smem) {
  constexpr int kU = 4;
  const int n = vectors * nb * 4;  // 16-byte pieces
  float* scales = reinterpret_cast<float*>(smem + static_cast<size_t>(vectors) * nb * kStagedStride);
  for (int base = 0; base < n; base += blockDim.x * kU) {
    int4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      v[u] = i < n ? __ldg(reinterpret_cast<const int4*>(q) + i) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      if (i < n) *reinterpret_cast<int4*>(smem + (i >> 2) * kStagedStride + (i & 3) * 16) = v[u];
    }
  }
  const int blocks = vectors * nb;
  for (int base = 0; base < blocks; base += blockDim.x * kU) {
    float v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      v[u] = i < blocks ? __ldg(scale + i) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      if (i < blocks) scales[i] = v[u];
    }
  }
  __syncthreads();
}

// kRows rows of MXFP4 blocks (row r: `blocks[r]` [nb] x 16 bytes, `scales[r]` [nb]) dotted with
// one split int8 vector staged in shared memory (q: nb blocks kStagedStride apart, s [nb]). Lane l takes blocks l, l +
// 32, ...: one 16-byte load per block (a warp reads 512 contiguous bytes of a row), kRows x kUnroll loads in flight
// before the first use. Every lane gets the sums.
__device__ __forceinline__ void mxfp4_rows_dot(const uint4* const (&blocks)[kRows],
                                               const uint8_t* const (&scales)[kRows], const uint8_t* q, const float* s,
                                               int nb, int lane, float (&out)[kRows]) {
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  for (int b0 = lane; b0 < nb; b0 += 32 * kUnroll) {
    uint4 w[kRows][kUnroll];
    uint32_t sc[kRows][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int b = b0 + 32 * u;
      const bool in = b < nb;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        w[r][u] = in ? __ldg(blocks[r] + b) : make_uint4(0, 0, 0, 0);
        sc[r][u] = in ? __ldg(scales[r] + b) : 0u;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int b = b0 + 32 * u;
      if (b >= nb) break;
      const int4* xb = reinterpret_cast<const int4*>(q + b * kStagedStride);
      const int4 h0 = xb[0], h1 = xb[1], l0 = xb[2], l1 = xb[3];
      const float xs = s[b];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        acc[r] = fmaf(detail::mxfp4_split_int8_dot(w[r][u], h0, h1, l0, l1), xs * detail::e8m0_half(sc[r][u]), acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) out[r] = detail::warp_sum(acc[r]);
}

// One CTA per (32 units of I, routed pair): warp w computes units 8w .. 8w + 7 in kPasses
// passes of two (gate_up rows 16w .. 16w + 15 of the expert: gate, up, gate, up, ..., all
// prefetched into the L2 first), the CTA then writes the 32 activations as one split int8 block.
__global__ void __launch_bounds__(kWarps * 32, kMinCtas)
    gate_up_kernel(MoeDecodeArgs a, const int8_t* __restrict__ x_q, const float* __restrict__ x_scale,
                   int8_t* __restrict__ act_q, float* __restrict__ act_scale) {
  extern __shared__ __align__(16) uint8_t staged[];
  __shared__ float act[32];
  detail::pdl_wait();  // the routes and inputs come from the router
  detail::pdl_release();
  const int H = a.hidden, I = a.inter, nb = H / 32;
  const int64_t pair = blockIdx.y, t = pair / a.top_k;
  const int64_t e = a.ids[pair];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // The warp's rows (contiguous) start coming into the L2 while the input is staged.
  detail::prefetch_l2_warp(a.gate_up_blocks + (e * 2 * I + 2 * (blockIdx.x * 32 + warp * 2 * kPasses)) * nb * 16,
                           static_cast<int64_t>(kPasses * kRows) * nb * 16, lane);
  stage_split_int8(x_q + t * nb * kSplitInt8BlockBytes, x_scale + t * nb, 1, nb, staged);
  const uint8_t* q = staged;
  const float* s = reinterpret_cast<const float*>(staged + nb * kStagedStride);
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const int unit = blockIdx.x * 32 + warp * 2 * kPasses + pass * 2;  // units unit, unit + 1
    const int64_t row0 = e * 2 * I + 2 * unit;
    const uint4* blocks[kRows];
    const uint8_t* scales[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      blocks[r] = reinterpret_cast<const uint4*>(a.gate_up_blocks + (row0 + r) * nb * 16);
      scales[r] = a.gate_up_scales + (row0 + r) * nb;
    }
    float dots[kRows];
    mxfp4_rows_dot(blocks, scales, q, s, nb, lane, dots);
    if (lane < 2) {
      const int64_t gate_row = row0 + 2 * lane;
      const float g = lane == 0 ? dots[0] : dots[2], u = lane == 0 ? dots[1] : dots[3];
      const float gate = fminf(g + a.gate_up_bias[gate_row], a.swiglu_limit);
      const float up = fminf(fmaxf(u + a.gate_up_bias[gate_row + 1], -a.swiglu_limit), a.swiglu_limit);
      const float glu = gate / (1.0f + expf(-gate * a.swiglu_alpha));
      act[warp * 2 * kPasses + pass * 2 + lane] = (up + 1.0f) * glu;
    }
  }
  __syncthreads();
  if (warp == 0)
    detail::quantize_block_split_int8(act[lane], lane, act_q + (pair * (I / 32) + blockIdx.x) * kSplitInt8BlockBytes,
                                      act_scale + pair * (I / 32) + blockIdx.x);
}

// One CTA per kDownRows output rows of a token: warp w takes (expert slot j, quarter) tasks
// w, w + 8, ... (the later ones prefetched into the L2 first), the CTA adds the k weighted
// results to the residual in slot order.
__global__ void __launch_bounds__(kWarps * 32, kMinCtas)
    down_kernel(MoeDecodeArgs a, const int8_t* __restrict__ act_q, const float* __restrict__ act_scale,
                float* __restrict__ residual) {
  constexpr int kQuarters = kDownRows / kRows;
  extern __shared__ __align__(16) uint8_t staged[];
  __shared__ float part[kRouterMaxTopK][kDownRows];
  const int H = a.hidden, I = a.inter, k = a.top_k, nb = I / 32;
  const int64_t t = blockIdx.y;
  const int h0 = blockIdx.x * kDownRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const auto first_row = [&](int task) {
    return a.ids[t * k + task / kQuarters] * H + h0 + (task % kQuarters) * kRows;
  };
  // The routes were final before gate_up released this launch (it waits for the router first),
  // so the experts' rows can be fetched while gate_up finishes.
  for (int task = warp; task < kQuarters * k; task += kWarps)
    detail::prefetch_l2_warp(a.down_blocks + first_row(task) * nb * 16, static_cast<int64_t>(kRows) * nb * 16, lane);
  detail::pdl_wait();
  detail::pdl_release();
  stage_split_int8(act_q + t * k * nb * kSplitInt8BlockBytes, act_scale + t * k * nb, k, nb, staged);
  const float* staged_scales = reinterpret_cast<const float*>(staged + k * nb * kStagedStride);
  for (int task = warp; task < kQuarters * k; task += kWarps) {
    const int j = task / kQuarters, quarter = task % kQuarters;
    const int64_t pair = t * k + j;
    const int64_t row0 = first_row(task);
    const uint4* blocks[kRows];
    const uint8_t* scales[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      blocks[r] = reinterpret_cast<const uint4*>(a.down_blocks + (row0 + r) * nb * 16);
      scales[r] = a.down_scales + (row0 + r) * nb;
    }
    float dots[kRows];
    mxfp4_rows_dot(blocks, scales, staged + j * nb * kStagedStride, staged_scales + j * nb, nb, lane, dots);
    if (lane < kRows) {
      const float d = lane == 0 ? dots[0] : lane == 1 ? dots[1] : lane == 2 ? dots[2] : dots[3];
      part[j][quarter * kRows + lane] = a.weights[pair] * (d + a.down_bias[row0 + lane]);
    }
  }
  __syncthreads();
  if (threadIdx.x < kDownRows) {
    float total = 0.0f;
    for (int j = 0; j < k; ++j) total += part[j][threadIdx.x];
    residual[t * H + h0 + threadIdx.x] += total;
  }
}

__global__ void __launch_bounds__(kWarps * 32)
    quantize_kernel(const float* __restrict__ x, int64_t blocks, int8_t* __restrict__ q, float* __restrict__ scale) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (b >= blocks) return;
  const int lane = threadIdx.x & 31;
  detail::quantize_block_split_int8(x[b * 32 + lane], lane, q + b * kSplitInt8BlockBytes, scale + b);
}

// Raises a kernel's dynamic shared memory limit when `bytes` needs it (more than the default
// 48 KB; the hardware allows about 227 KB).
cudaError_t set_smem(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  if (bytes > 227 * 1024) return cudaErrorInvalidValue;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

bool valid(const MoeDecodeArgs& a) {
  return a.T >= 0 && a.T <= 65535 && a.hidden > 0 && a.inter > 0 && a.hidden % 32 == 0 && a.inter % 32 == 0 &&
         a.top_k > 0 && a.top_k <= kRouterMaxTopK && a.ids != nullptr && a.weights != nullptr &&
         a.gate_up_blocks != nullptr && a.gate_up_scales != nullptr && a.gate_up_bias != nullptr &&
         a.down_blocks != nullptr && a.down_scales != nullptr && a.down_bias != nullptr;
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
  const size_t smem = static_cast<size_t>(a.hidden / 32) * (kStagedStride + 4);
  if (const cudaError_t e = set_smem(reinterpret_cast<const void*>(gate_up_kernel), smem); e != cudaSuccess) return e;
  return detail::launch_pdl(gate_up_kernel, grid, dim3(kWarps * 32), smem, stream, a, x_q, x_scale, act_q, act_scale);
}

cudaError_t moe_decode_down(const MoeDecodeArgs& a, const int8_t* act_q, const float* act_scale, float* residual,
                            cudaStream_t stream) {
  if (!valid(a) || act_q == nullptr || act_scale == nullptr || residual == nullptr) return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  if (a.hidden % kDownRows != 0) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(a.hidden / kDownRows), static_cast<unsigned>(a.T));
  const size_t smem = static_cast<size_t>(a.top_k) * (a.inter / 32) * (kStagedStride + 4);
  if (const cudaError_t e = set_smem(reinterpret_cast<const void*>(down_kernel), smem); e != cudaSuccess) return e;
  return detail::launch_pdl(down_kernel, grid, dim3(kWarps * 32), smem, stream, a, act_q, act_scale, residual);
}

}  // namespace day0::kernels
