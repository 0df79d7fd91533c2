#pragma once
// Grouped GEMM of one MoE layer over the shared expert workspace: for every active expert slot
// s, Y[rows of s] = X[rows of s] . W_s^T + bias_e, where W_s [N, K] is the expert's matrix as
// the online conversion wrote it: FP8 E4M3 values with one int16 block exponent per 32 along K
// (value = e4m3 * 2^exponent, exactly the MXFP4 weight), or bf16 (GPUs without FP8). The block
// exponent is applied while a tile is staged for the tensor cores (bf16 mma.sync, fp32
// accumulation), so no value leaves its exact range. Rows come grouped by expert
// (moe_build_routes); tiles of kMoeGemmTileRows rows of one slot are the CTAs' work list.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

inline constexpr int kMoeGemmTileRows = 64;

enum class MoeEpilogue {
  // gpt-oss's activation on interleaved gate/up columns (2i gate, 2i + 1 up): gate clamped above
  // at `limit`, up to [-limit, limit], act[r, i] = (up + 1) * gate * sigmoid(alpha * gate),
  // written as bf16 [rows, N / 2].
  swiglu,
  // y[r, n] = (acc + bias) * pair_weights[sorted_pair[r]], fp32 [rows, N].
  weighted,
};

struct MoeGemmArgs {
  const uint16_t* x = nullptr;          // [rows, K] bf16, grouped by expert
  int N = 0, K = 0;                     // K % 32 == 0, N % 2 == 0
  const uint8_t* w_fp8 = nullptr;       // [slots, N, K] E4M3 ...
  const int16_t* w_exponent = nullptr;  // ... with [slots, N, K / 32] block exponents; or
  const uint16_t* w_bf16 = nullptr;     // [slots, N, K] bf16
  const float* bias = nullptr;          // [E, N] fp32, indexed by the slot's expert
  const int32_t* active_experts = nullptr;
  const int32_t* slot_offsets = nullptr;
  const int32_t* tile_slot = nullptr;
  const int32_t* tile_row = nullptr;
  const int32_t* tile_count = nullptr;
  int64_t max_tiles = 0;  // grid size along tiles (moe_max_tiles)
  MoeEpilogue epilogue = MoeEpilogue::swiglu;
  float swiglu_limit = 7.0f, swiglu_alpha = 1.702f;
  uint16_t* act_out = nullptr;           // swiglu
  float* y_out = nullptr;                // weighted
  const int32_t* sorted_pair = nullptr;  // weighted
  const float* pair_weights = nullptr;   // weighted: [T * k]
};

cudaError_t moe_grouped_gemm(const MoeGemmArgs& args, cudaStream_t stream);

}  // namespace day0::kernels
