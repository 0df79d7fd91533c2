#include "moe_gemm.h"

#include "device_util.cuh"
#include "tensor_core.cuh"

namespace day0::kernels {
namespace {

constexpr int BM = kMoeGemmTileRows, BN = 128, BK = 32;
constexpr int kLds = BK + 8;   // 80-byte rows: ldmatrix and 16-byte stores hit distinct banks
constexpr int kThreads = 128;  // 4 warps, 2 x 2, each 32 rows x 64 columns

// One E4M3 byte -> float (normal and subnormal; the workspace holds E2M1 values only).
__device__ __forceinline__ float e4m3_to_float(uint32_t b) {
  const uint32_t e = (b >> 3) & 15u, m = b & 7u;
  const float magnitude =
      e == 0 ? static_cast<float>(m) * 0.001953125f : __uint_as_float(((e + 120u) << 23) | (m << 20));
  return (b & 0x80u) ? -magnitude : magnitude;
}

// The same for the common case, in integer arithmetic: an E4M3 byte holding an E2M1 value (zero
// or normal) times 2^exponent, as bf16 bits, for exponents that keep every such value normal
// (-120 <= exponent <= 119).
__device__ __forceinline__ uint32_t e2m1_e4m3_scaled_bf16(uint32_t b, int exponent) {
  const uint32_t magnitude = b & 0x7Fu;
  if (magnitude == 0) return 0;
  return ((b & 0x80u) << 8) | (((magnitude >> 3) + 120u + exponent) << 7) | ((b & 7u) << 4);
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// kSplit: the activations come as hi + lo bf16 parts (x_lo); a separate instance, so the single-
// part kernel keeps its shared memory and occupancy.
template <bool kSplit>
__global__ void __launch_bounds__(kThreads) moe_gemm_kernel(MoeGemmArgs a) {
  __shared__ alignas(16) uint16_t As[2][BM][kLds];
  __shared__ alignas(16) uint16_t Bs[2][BN][kLds];
  // The activations' low parts, when given (x_lo): a second A tile that meets the same B tile.
  __shared__ alignas(16) uint16_t As_lo[2][kSplit ? BM : 1][kLds];
  const int tile = blockIdx.x;
  if (tile >= *a.tile_count) return;
  const int slot = a.tile_slot[tile];
  const int64_t row_begin = a.slot_offsets[slot] + a.tile_row[tile];
  const int64_t row_end = a.slot_offsets[slot + 1];
  const int n0 = blockIdx.y * BN;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int warp_m = warp >> 1, warp_n = warp & 1;
  const int64_t K = a.K;
  const bool fp8 = a.w_fp8 != nullptr;
  constexpr bool split = kSplit;

  uint4 a_reg[2], a_lo_reg[2];
  uint4 b_reg[4];
  int b_exponent = 0;
  const int n_load = n0 + tid;
  // gate_up_halves: column 2i is gate row i, column 2i + 1 is up row N/2 + i.
  const int src_row = a.gate_up_halves ? ((n_load & 1) ? a.N / 2 + (n_load >> 1) : (n_load >> 1)) : n_load;
  const int64_t w_row = static_cast<int64_t>(slot) * a.N + src_row;

  const auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int c = tid + i * kThreads, row = c >> 2, kc = (c & 3) * 8;
      const int64_t r = row_begin + row;
      a_reg[i] = r < row_end ? *reinterpret_cast<const uint4*>(a.x + r * K + k0 + kc) : make_uint4(0, 0, 0, 0);
      if constexpr (split)
        a_lo_reg[i] =
            r < row_end ? *reinterpret_cast<const uint4*>(a.x_lo + r * K + k0 + kc) : make_uint4(0, 0, 0, 0);
    }
    if (n_load < a.N) {
      if (fp8) {
        const uint4* src = reinterpret_cast<const uint4*>(a.w_fp8 + w_row * K + k0);
        b_reg[0] = src[0];
        b_reg[1] = src[1];
        b_exponent = a.w_exponent[w_row * (K / 32) + k0 / 32];
      } else {
        const uint4* src = reinterpret_cast<const uint4*>(a.w_bf16 + w_row * K + k0);
#pragma unroll
        for (int i = 0; i < 4; ++i) b_reg[i] = src[i];
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) b_reg[i] = make_uint4(0, 0, 0, 0);
      b_exponent = 0;
    }
  };
  const auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int c = tid + i * kThreads, row = c >> 2, kc = (c & 3) * 8;
      *reinterpret_cast<uint4*>(&As[buf][row][kc]) = a_reg[i];
      if constexpr (split) *reinterpret_cast<uint4*>(&As_lo[buf][row][kc]) = a_lo_reg[i];
    }
    uint4* dst = reinterpret_cast<uint4*>(&Bs[buf][tid][0]);
    if (fp8 && n_load < a.N && b_exponent >= -120 && b_exponent <= 119) {
      const uint32_t words[8] = {b_reg[0].x, b_reg[0].y, b_reg[0].z, b_reg[0].w,
                                 b_reg[1].x, b_reg[1].y, b_reg[1].z, b_reg[1].w};
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        uint32_t out[4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t w = words[2 * v + h];
          out[2 * h] = e2m1_e4m3_scaled_bf16(w & 0xFFu, b_exponent) |
                       (e2m1_e4m3_scaled_bf16((w >> 8) & 0xFFu, b_exponent) << 16);
          out[2 * h + 1] =
              e2m1_e4m3_scaled_bf16((w >> 16) & 0xFFu, b_exponent) | (e2m1_e4m3_scaled_bf16(w >> 24, b_exponent) << 16);
        }
        dst[v] = make_uint4(out[0], out[1], out[2], out[3]);
      }
    } else if (fp8 && n_load < a.N) {
      const float scale = detail::exp2_int(b_exponent);
      const uint32_t words[8] = {b_reg[0].x, b_reg[0].y, b_reg[0].z, b_reg[0].w,
                                 b_reg[1].x, b_reg[1].y, b_reg[1].z, b_reg[1].w};
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        uint32_t out[4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t w = words[2 * v + h];
          out[2 * h] = pack_bf16x2(e4m3_to_float(w & 0xFFu) * scale, e4m3_to_float((w >> 8) & 0xFFu) * scale);
          out[2 * h + 1] = pack_bf16x2(e4m3_to_float((w >> 16) & 0xFFu) * scale, e4m3_to_float(w >> 24) * scale);
        }
        dst[v] = make_uint4(out[0], out[1], out[2], out[3]);
      }
    } else {
#pragma unroll
      for (int v = 0; v < 4; ++v) dst[v] = b_reg[v];
    }
  };

  float acc[2][8][4] = {};
  load(0);
  store(0);
  __syncthreads();
  const int k_tiles = a.K / BK;
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < k_tiles) load((kt + 1) * BK);
#pragma unroll
    for (int ks = 0; ks < BK; ks += 16) {
      uint32_t af[2][4], af_lo[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        detail::ldsm_x4(af[mi], &As[buf][warp_m * 32 + mi * 16 + (lane & 15)][ks + (lane >> 4) * 8]);
        if constexpr (split) detail::ldsm_x4(af_lo[mi], &As_lo[buf][warp_m * 32 + mi * 16 + (lane & 15)][ks + (lane >> 4) * 8]);
      }
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        uint32_t bf[4];
        detail::ldsm_x4(bf,
                        &Bs[buf][warp_n * 64 + nj * 16 + (lane & 7) + ((lane >> 4) << 3)][ks + ((lane >> 3) & 1) * 8]);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          detail::mma_bf16_16816(acc[mi][2 * nj], af[mi], bf[0], bf[1]);
          detail::mma_bf16_16816(acc[mi][2 * nj + 1], af[mi], bf[2], bf[3]);
          if constexpr (split) {
            detail::mma_bf16_16816(acc[mi][2 * nj], af_lo[mi], bf[0], bf[1]);
            detail::mma_bf16_16816(acc[mi][2 * nj + 1], af_lo[mi], bf[2], bf[3]);
          }
        }
      }
    }
    if (kt + 1 < k_tiles) store(buf ^ 1);
    __syncthreads();
  }

  const float* bias = a.bias != nullptr ? a.bias + static_cast<int64_t>(a.active_experts[slot]) * a.N : nullptr;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t r = row_begin + warp_m * 32 + mi * 16 + (lane >> 2) + half * 8;
      if (r >= row_end) continue;
      const float w = a.epilogue == MoeEpilogue::weighted ? a.pair_weights[a.sorted_pair[r]] : 0.0f;
#pragma unroll
      for (int ni = 0; ni < 8; ++ni) {
        const int col = n0 + warp_n * 64 + ni * 8 + (lane & 3) * 2;
        if (col >= a.N) continue;
        const float v0 = acc[mi][ni][2 * half] + (bias != nullptr ? bias[col] : 0.0f);
        const float v1 = acc[mi][ni][2 * half + 1] + (bias != nullptr ? bias[col + 1] : 0.0f);
        if (a.epilogue == MoeEpilogue::swiglu) {
          const float gate = fminf(v0, a.swiglu_limit);
          const float up = fminf(fmaxf(v1, -a.swiglu_limit), a.swiglu_limit);
          const float glu = gate / (1.0f + expf(-gate * a.swiglu_alpha));
          const float act = (up + a.swiglu_up_offset) * glu;
          const uint16_t hi = detail::float_to_bf16_bits(act);
          a.act_out[r * (a.N / 2) + col / 2] = hi;
          if (a.act_lo_out != nullptr)
            a.act_lo_out[r * (a.N / 2) + col / 2] = detail::float_to_bf16_bits(act - __uint_as_float(uint32_t{hi} << 16));
        } else {
          *reinterpret_cast<float2*>(a.y_out + r * a.N + col) = make_float2(v0 * w, v1 * w);
        }
      }
    }
  }
}

}  // namespace

cudaError_t moe_grouped_gemm(const MoeGemmArgs& a, cudaStream_t stream) {
  if (a.N <= 0 || a.K <= 0 || a.K % 32 != 0 || a.N % 2 != 0 || a.max_tiles <= 0 || a.x == nullptr ||
      a.active_experts == nullptr || a.slot_offsets == nullptr || a.tile_slot == nullptr ||
      a.tile_row == nullptr || a.tile_count == nullptr || !detail::aligned16(a.x))
    return cudaErrorInvalidValue;
  if ((a.w_fp8 == nullptr) == (a.w_bf16 == nullptr)) return cudaErrorInvalidValue;
  if (a.x_lo != nullptr && !detail::aligned16(a.x_lo)) return cudaErrorInvalidValue;
  if (a.w_fp8 != nullptr && (a.w_exponent == nullptr || !detail::aligned16(a.w_fp8))) return cudaErrorInvalidValue;
  if (a.w_bf16 != nullptr && !detail::aligned16(a.w_bf16)) return cudaErrorInvalidValue;
  if (a.epilogue == MoeEpilogue::swiglu && a.act_out == nullptr) return cudaErrorInvalidValue;
  if (a.epilogue == MoeEpilogue::weighted &&
      (a.y_out == nullptr || a.sorted_pair == nullptr || a.pair_weights == nullptr || (a.N & 1) != 0))
    return cudaErrorInvalidValue;
  if (a.max_tiles > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(a.max_tiles), static_cast<unsigned>((a.N + BN - 1) / BN));
  if (a.x_lo != nullptr)
    moe_gemm_kernel<true><<<grid, kThreads, 0, stream>>>(a);
  else
    moe_gemm_kernel<false><<<grid, kThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace day0::kernels
