#pragma once
// glm5_next's (GLM-5.3-Flash's) MoE on the GPU, exactly as engine/blocks/moe.h computes it: the
// grouped sigmoid router with its correction bias, the clamped SwiGLU, and the routed experts
// (bf16 per-expert tensors or MXFP4) with a deterministic combine. fp32 activations and sums;
// weights are read in their stored format. All pointers are device pointers; launchers queue on
// `stream` (no allocation, no synchronisation: CUDA-graph capturable) and return
// cudaGetLastError() after the launch, or cudaErrorInvalidValue for bad arguments.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

inline constexpr int kGlmMaxExperts = 2048;
inline constexpr int kGlmMaxTopK = 32;
inline constexpr int kGlmMaxGroups = 32;

// Grouped sigmoid routing as blocks::route: s = sigmoid(logits), c = s + bias; a group's score
// is the sum of its two best c; the topk_group best groups stay and the top_k best c among their
// experts are chosen (equal values: the lower index first, for groups and experts). ids [T,
// top_k] ascending by expert id; weights [T, top_k] in the same order: s, divided by (sum of
// the chosen s + 1e-20) when norm_topk_prob, times routed_scaling. logits [T, E] fp32 (the
// router's output), bias [E] fp32 (e_score_correction_bias). One warp per token.
// E <= kGlmMaxExperts; n_group <= kGlmMaxGroups divides E with at least 2 experts per group;
// 1 <= topk_group <= n_group; 1 <= top_k <= min(kGlmMaxTopK, topk_group * E / n_group).
// The sigmoid is computed to float precision (through double), so ids match the CPU's except
// where two candidates' c differ by about an ulp.
cudaError_t grouped_sigmoid_topk(const float* logits, const float* bias, int64_t T, int E, int top_k, int n_group,
                                 int topk_group, bool norm_topk_prob, float routed_scaling, int32_t* ids,
                                 float* weights, cudaStream_t stream);

// out[t, i] = silu(min(gate[t, i], L)) * clamp(up[t, i], -L, L), L = limit; gate_up [T, 2I]
// holds the gate columns then the up columns -> out [T, I].
cudaError_t clamped_swiglu(const float* gate_up, int64_t T, int64_t I, float limit, float* out, cudaStream_t stream);

// The routed experts, one device pointer per expert (so a cache slot can stand in for a resident
// expert); the arrays themselves live in device memory, E entries each. Only the members of the
// selected format are read, and only the entries of experts that some id names.
struct GlmExpertTable {
  bool mxfp4 = false;
  // bf16, 16-byte aligned: gate[e] [I, H], up[e] [I, H], down[e] [H, I].
  const uint16_t* const* gate = nullptr;
  const uint16_t* const* up = nullptr;
  const uint16_t* const* down = nullptr;
  // MXFP4 (formats/mxfp4.h), 16-byte aligned blocks: gate_up_blocks[e] [2I, H/32, 16] (gate rows
  // first, then up), gate_up_scales[e] [2I, H/32] (E8M0), down_blocks[e] [H, I/32, 16],
  // down_scales[e] [H, I/32].
  const uint8_t* const* gate_up_blocks = nullptr;
  const uint8_t* const* gate_up_scales = nullptr;
  const uint8_t* const* down_blocks = nullptr;
  const uint8_t* const* down_scales = nullptr;
};

// Bytes of device scratch glm_moe_experts needs for these sizes (0 for invalid ones). It holds
// the intermediate activations and expert outputs of up to 1,024 tokens at a time (larger T is
// processed in such chunks) and the grouping of their (token, slot) pairs by expert.
size_t glm_moe_scratch_bytes(int64_t T, int top_k, int E, int64_t H, int64_t I);

// out[t] (+)= sum over j of weights[t, j] * expert_{ids[t, j]}(x[t]), the sum taken in slot
// order j = 0..top_k-1 (the CPU's order when ids ascend) and added to out only when accumulate;
// expert e(x) = down_e(clamped_swiglu(gate_e x, up_e x)) with L = limit. x, out: [T, H] fp32,
// 16-byte aligned; ids, weights: [T, top_k]; an id outside [0, E) contributes nothing.
// MXFP4 needs H % 32 == I % 32 == 0, bf16 H % 8 == I % 8 == 0. scratch: 256-byte aligned,
// glm_moe_scratch_bytes(T, top_k, E, H, I) bytes.
//
// Few pairs per expert (decode): one CTA column per (token, slot) pair, each pair's gate/up rows
// then its down rows spread over many CTAs. More (prefill): the pairs are grouped by expert with
// a stable counting sort, and a CTA takes a block of an expert's weight rows and up to 4 or 16 of
// its pairs, reading each weight once for all of them. Either way every pair's sums are taken in
// an order that does not depend on the other pairs or on scheduling, and nothing uses float
// atomics: the result is deterministic.
cudaError_t glm_moe_experts(const GlmExpertTable& table, const float* x, int64_t T, int64_t H, int64_t I, int E,
                            int top_k, const int32_t* ids, const float* weights, float limit, bool accumulate,
                            float* out, void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace day0::kernels
