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
  // The clamped SwiGLU on gate/up column pairs (2i gate, 2i + 1 up: interleaved in the weight,
  // or gate rows then up rows with gate_up_halves): gate clamped above at `limit`, up to
  // [-limit, limit], act[r, i] = (up + up_offset) * gate * sigmoid(alpha * gate), written as bf16
  // [rows, N / 2] (and its rounding error as bf16 into act_lo_out when given). gpt-oss: alpha
  // 1.702, up_offset 1; glm5_next: alpha 1, up_offset 0 (silu(gate) * up).
  swiglu,
  // y[r, n] = (acc + bias) * pair_weights[sorted_pair[r]], fp32 [rows, N] (bias 0 when null).
  weighted,
};

struct MoeGemmArgs {
  const uint16_t* x = nullptr;          // [rows, K] bf16, grouped by expert
  // Optional: the activations' low parts [rows, K] bf16, so x + x_lo carries fp32 activations
  // (each weight tile meets both parts; twice the tensor-core work, the same weight traffic).
  const uint16_t* x_lo = nullptr;
  int N = 0, K = 0;                     // K % 32 == 0, N % 2 == 0
  const uint8_t* w_fp8 = nullptr;       // [slots, N, K] E4M3 ...
  const int16_t* w_exponent = nullptr;  // ... with [slots, N, K / 32] block exponents; or
  const uint16_t* w_bf16 = nullptr;     // [slots, N, K] bf16
  const float* bias = nullptr;          // [E, N] fp32, indexed by the slot's expert; or null
  // The weight's rows are gate rows [0, N/2) then up rows [N/2, N) (glm5_next), not interleaved:
  // the tile's column 2i reads row i and column 2i + 1 row N/2 + i.
  bool gate_up_halves = false;
  const int32_t* active_experts = nullptr;
  const int32_t* slot_offsets = nullptr;
  const int32_t* tile_slot = nullptr;
  const int32_t* tile_row = nullptr;
  const int32_t* tile_count = nullptr;
  int64_t max_tiles = 0;  // grid size along tiles (moe_max_tiles)
  MoeEpilogue epilogue = MoeEpilogue::swiglu;
  float swiglu_limit = 7.0f, swiglu_alpha = 1.702f, swiglu_up_offset = 1.0f;
  uint16_t* act_out = nullptr;           // swiglu
  uint16_t* act_lo_out = nullptr;        // swiglu, optional
  float* y_out = nullptr;                // weighted
  const int32_t* sorted_pair = nullptr;  // weighted
  const float* pair_weights = nullptr;   // weighted: [T * k]
};

cudaError_t moe_grouped_gemm(const MoeGemmArgs& args, cudaStream_t stream);

}  // namespace day0::kernels
