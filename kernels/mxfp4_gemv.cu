#include "mxfp4_gemv.h"

#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kWarps = 8;

// Four E2M1 codes (bits [4k, 4k + 4) of `codes`, bits 16..31 ignored) as bf16 pairs: elements
// 0, 1 in .x and 2, 3 in .y. __byte_perm looks the magnitudes up in byte tables held in
// registers (an ALU operation; a shared-memory table would make the loop load-bound).
__device__ __forceinline__ uint2 e2m1x4_to_bf16(uint32_t codes) {
  // bf16 of magnitudes 0..7 (0, 0.5, 1, 1.5, 2, 3, 4, 6): low bytes, then high bytes.
  constexpr uint32_t kLow0 = 0xC0800000u, kLow1 = 0xC0804000u, kHigh0 = 0x3F3F3F00u, kHigh1 = 0x40404040u;
  const uint32_t index = codes & 0x7777u;
  const uint32_t low = __byte_perm(kLow0, kLow1, index);
  const uint32_t high = __byte_perm(kHigh0, kHigh1, index);
  const uint32_t sign01 = ((codes << 12) & 0x00008000u) | ((codes << 24) & 0x80000000u);
  const uint32_t sign23 = ((codes << 4) & 0x00008000u) | ((codes << 16) & 0x80000000u);
  return make_uint2(__byte_perm(low, high, 0x5140u) | sign01, __byte_perm(low, high, 0x7362u) | sign23);
}

// Eight E2M1 codes (one 32-bit word, low nibble first) dotted with eight fp32 inputs.
__device__ __forceinline__ float dot8(uint32_t word, const float* x) {
  const float4 x0 = *reinterpret_cast<const float4*>(x);
  const float4 x1 = *reinterpret_cast<const float4*>(x + 4);
  const uint2 a = e2m1x4_to_bf16(word), b = e2m1x4_to_bf16(word >> 16);
  float p = __uint_as_float(a.x << 16) * x0.x;
  p = fmaf(__uint_as_float(a.x & 0xffff0000u), x0.y, p);
  p = fmaf(__uint_as_float(a.y << 16), x0.z, p);
  p = fmaf(__uint_as_float(a.y & 0xffff0000u), x0.w, p);
  p = fmaf(__uint_as_float(b.x << 16), x1.x, p);
  p = fmaf(__uint_as_float(b.x & 0xffff0000u), x1.y, p);
  p = fmaf(__uint_as_float(b.y << 16), x1.z, p);
  p = fmaf(__uint_as_float(b.y & 0xffff0000u), x1.w, p);
  return p;
}

// R rows of MXFP4 blocks dotted with R inputs at once. Lane l reads 4 bytes (8 codes, elements
// 8 * (l % 4) ..) of block l / 4 + 8 i: a warp covers 8 consecutive 16-byte blocks of a row per
// step (128 bytes, coalesced). Each round issues 4 steps x R rows of loads before using any, so a
// row of H/32 blocks takes ceil(H / 1024) rounds of memory latency. `x[r]` is row r's input in
// shared memory. Every lane gets the sums.
template <int R>
__device__ __forceinline__ void mxfp4_rows_dot(const uint8_t* const* blocks, const uint8_t* const* scales,
                                               const float* const* x, int n_blocks, int lane, float (&out)[R]) {
  const int sub = lane & 3;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int b = lane >> 2; b < n_blocks; b += 32) {
    uint32_t w[R][4];
    int sc[R][4];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const bool in = b + 8 * u < n_blocks;
        w[r][u] =
            in ? __ldg(reinterpret_cast<const uint32_t*>(blocks[r] + static_cast<int64_t>(b + 8 * u) * 16) + sub) : 0u;
        sc[r][u] = in ? __ldg(scales[r] + b + 8 * u) : 127;
      }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (b + 8 * u < n_blocks)
          acc[r] += dot8(w[r][u], x[r] + (b + 8 * u) * 32 + sub * 8) * detail::exp2_int(sc[r][u] - 127);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) out[r] = detail::warp_sum(acc[r]);
}

__global__ void __launch_bounds__(kWarps * 32)
    gate_up_kernel(MoeDecodeArgs a, const float* __restrict__ x, float* __restrict__ act) {
  extern __shared__ float smem[];
  float* xs = smem;
  const int H = a.hidden, I = a.inter;
  const int64_t pair = blockIdx.y, t = pair / a.top_k;
  const int64_t e = a.ids[pair];
  for (int c = threadIdx.x; c < H; c += blockDim.x) xs[c] = x[t * H + c];
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // Units i and i + 1 of the expert: gate_up rows 2i .. 2i + 3 (gate, up, gate, up).
  const int i = (blockIdx.x * kWarps + warp) * 2;
  if (i >= I) return;
  const int nb = H / 32;
  const int64_t row0 = e * 2 * I + 2 * i;
  const int64_t last = e * 2 * I + 2 * I - 1;
  const uint8_t* blocks[4];
  const uint8_t* scales[4];
  const float* const inputs[4] = {xs, xs, xs, xs};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int64_t row = min(row0 + r, last);  // i + 1 < I always (I is a multiple of 32)
    blocks[r] = a.gate_up_blocks + row * nb * 16;
    scales[r] = a.gate_up_scales + row * nb;
  }
  float dots[4];
  mxfp4_rows_dot<4>(blocks, scales, inputs, nb, lane, dots);
  if (lane != 0) return;
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const int64_t gate_row = row0 + 2 * u;
    const float gate = fminf(dots[2 * u] + a.gate_up_bias[gate_row], a.swiglu_limit);
    const float up = fminf(fmaxf(dots[2 * u + 1] + a.gate_up_bias[gate_row + 1], -a.swiglu_limit), a.swiglu_limit);
    const float glu = gate / (1.0f + expf(-gate * a.swiglu_alpha));
    act[pair * I + i + u] = (up + 1.0f) * glu;
  }
}

__global__ void __launch_bounds__(kWarps * 32)
    down_kernel(MoeDecodeArgs a, const float* __restrict__ act, float* __restrict__ residual) {
  extern __shared__ float smem[];
  float* as = smem;
  const int H = a.hidden, I = a.inter, k = a.top_k;
  const int64_t t = blockIdx.y;
  for (int c = threadIdx.x; c < k * I; c += blockDim.x) as[c] = act[t * k * I + c];
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int h = blockIdx.x * kWarps + warp;
  if (h >= H) return;
  const int nb = I / 32;
  float total = 0.0f;
  int j = 0;
  for (; j + 3 < k; j += 4) {
    const uint8_t* blocks[4];
    const uint8_t* scales[4];
    const float* inputs[4];
    int64_t rows[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      rows[r] = a.ids[t * k + j + r] * H + h;
      blocks[r] = a.down_blocks + rows[r] * nb * 16;
      scales[r] = a.down_scales + rows[r] * nb;
      inputs[r] = as + (j + r) * I;
    }
    float dots[4];
    mxfp4_rows_dot<4>(blocks, scales, inputs, nb, lane, dots);
#pragma unroll
    for (int r = 0; r < 4; ++r) total += a.weights[t * k + j + r] * (dots[r] + a.down_bias[rows[r]]);
  }
  for (; j < k; ++j) {
    const int64_t r0 = a.ids[t * k + j] * H + h;
    const uint8_t* const blocks[1] = {a.down_blocks + r0 * nb * 16};
    const uint8_t* const scales[1] = {a.down_scales + r0 * nb};
    const float* const inputs[1] = {as + j * I};
    float dots[1];
    mxfp4_rows_dot<1>(blocks, scales, inputs, nb, lane, dots);
    total += a.weights[t * k + j] * (dots[0] + a.down_bias[r0]);
  }
  if (lane == 0) residual[t * H + h] += total;
}

bool valid(const MoeDecodeArgs& a) {
  return a.T >= 0 && a.hidden > 0 && a.inter > 0 && a.hidden % 32 == 0 && a.inter % 32 == 0 && a.top_k > 0 &&
         a.ids != nullptr && a.weights != nullptr && a.gate_up_blocks != nullptr && a.gate_up_scales != nullptr &&
         a.gate_up_bias != nullptr && a.down_blocks != nullptr && a.down_scales != nullptr && a.down_bias != nullptr;
}

cudaError_t set_smem(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace

cudaError_t moe_decode_gate_up(const MoeDecodeArgs& a, const float* x, float* act, cudaStream_t stream) {
  if (!valid(a) || x == nullptr || act == nullptr) return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  const size_t smem = sizeof(float) * static_cast<size_t>(a.hidden);
  if (const cudaError_t e = set_smem(reinterpret_cast<const void*>(gate_up_kernel), smem); e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>((a.inter / 2 + kWarps - 1) / kWarps), static_cast<unsigned>(a.T * a.top_k));
  gate_up_kernel<<<grid, kWarps * 32, smem, stream>>>(a, x, act);
  return cudaGetLastError();
}

cudaError_t moe_decode_down(const MoeDecodeArgs& a, const float* act, float* residual, cudaStream_t stream) {
  if (!valid(a) || act == nullptr || residual == nullptr) return cudaErrorInvalidValue;
  if (a.T == 0) return cudaSuccess;
  const size_t smem = sizeof(float) * static_cast<size_t>(a.top_k) * a.inter;
  if (const cudaError_t e = set_smem(reinterpret_cast<const void*>(down_kernel), smem); e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>((a.hidden + kWarps - 1) / kWarps), static_cast<unsigned>(a.T));
  down_kernel<<<grid, kWarps * 32, smem, stream>>>(a, act, residual);
  return cudaGetLastError();
}

}  // namespace day0::kernels
