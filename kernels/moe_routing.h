#pragma once
// MoE routing on the GPU: the router's top-k with a softmax over the selected logits, the
// permutation that groups (token, slot) pairs by expert, the gather of each pair's input row,
// and the combine that adds each token's expert outputs back in slot order (deterministic).
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

inline constexpr int kRouterMaxTopK = 32;
// The most experts whose routes the decode expert GEMVs take from the logits themselves
// (MoeDecodeArgs::logits); a model with more runs router_topk() between the router and them.
inline constexpr int kDecodeRouteMaxExperts = 256;

// logits [T, E] fp32 -> ids [T, k] (highest first; equal logits keep the lower id first; a NaN
// logit counts as -inf) and weights [T, k] = softmax over the k selected logits, one warp per
// token (detail::warp_routes(), which the decode expert GEMVs run too). 1 <= k <= min(E,
// kRouterMaxTopK).
cudaError_t router_topk(const float* logits, int64_t T, int E, int k, int32_t* ids, float* weights,
                        cudaStream_t stream);

// The decode step's router in one launch: x' = RMSNorm(x[t]) * norm (fp32, as rms_norm()),
// logits [T, E] = W x' + bias (W: [E, H] bf16, 16-byte aligned; bias [E] fp32); also writes x'
// as a split int8 vector (mxfp4_gemv.h) for the expert GEMVs. x: [T, H] fp32, H % 32 == 0;
// x_q: [T, H / 32, 64] int8; x_scale: [T, H / 32]. ceil(E / 4) CTAs per token each take 4 rows.
// The top-k is taken by the expert GEMVs (MoeDecodeArgs::logits), or by router_topk().
cudaError_t router_decode(const float* x, const uint16_t* norm, float eps, const uint16_t* W, const float* bias,
                          int64_t T, int E, int H, int8_t* x_q, float* x_scale, float* logits, cudaStream_t stream);

// The pairs p = t * k + j grouped by expert (ascending expert id; order inside an expert is
// unspecified and does not change any result). Active experts (those with pairs) get slots
// 0..active-1 in ascending id order; slot s covers sorted rows [slot_offsets[s],
// slot_offsets[s + 1]). Tiles of `tile_rows` rows of one slot are listed for the grouped GEMM.
struct MoeRoutes {
  int32_t* counts = nullptr;          // [E] scratch
  int32_t* sorted_pair = nullptr;     // [T * k]: pair at sorted row r
  int32_t* row_of_pair = nullptr;     // [T * k]: sorted row of pair p
  int32_t* active_experts = nullptr;  // [min(E, T * k)]: expert of slot s
  int32_t* slot_offsets = nullptr;    // [min(E, T * k) + 1]
  int32_t* active_count = nullptr;    // [1]
  int32_t* tile_slot = nullptr;       // [moe_max_tiles(...)]
  int32_t* tile_row = nullptr;        // [moe_max_tiles(...)]: first row of the tile inside its slot
  int32_t* tile_count = nullptr;      // [1]
};
int64_t moe_max_tiles(int64_t pairs, int64_t experts, int tile_rows);
cudaError_t moe_build_routes(const int32_t* ids, int64_t T, int k, int E, int tile_rows, const MoeRoutes& routes,
                             cudaStream_t stream);

// rows [T * k, H] bf16: row r = h[sorted_pair[r] / k].  h: [T, H] bf16.
cudaError_t moe_gather_rows(const uint16_t* h, const int32_t* sorted_pair, int64_t T, int k, int64_t H, uint16_t* rows,
                            cudaStream_t stream);

// x[t, :] += sum over j = 0..k-1 of y[row_of_pair[t * k + j], :].  y: [T * k, H] fp32.
cudaError_t moe_combine(const float* y, const int32_t* row_of_pair, int64_t T, int k, int64_t H, float* x,
                        cudaStream_t stream);

}  // namespace day0::kernels
