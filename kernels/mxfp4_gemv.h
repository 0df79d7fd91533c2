#pragma once
// The decode MoE: fused GEMVs that read the experts' MXFP4 blocks directly (0.53 bytes per
// weight, no dequantised copy), one launch for gate_up + activation and one for down + routing
// weights + residual add. Layouts as in gpt-oss checkpoints, all experts of one layer:
// gate_up blocks [E, 2I, H/32, 16], scales [E, 2I, H/32]; down blocks [E, H, I/32, 16],
// scales [E, H, I/32]; biases fp32 [E, 2I] and [E, H]. H % 32 == I % 32 == 0.
//
// The inputs are split int8 vectors (below) so the inner loop is int8 tensor-core MMAs over
// byte-permute-decoded E2M1 codes: 16-row tiles, exact int32 sums per 32-value block, the two
// block scales applied in fp32. Decoding 4-bit codes to floats costs more instructions than the
// memory system leaves time for at HBM speed.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// A split int8 vector: each 32-value block b of an fp32 row is x ~ scale[b] * (hi + lo / 254),
// hi = round(x / scale), lo = round((x / scale - hi) * 254), scale = max|x| / 127 over the
// block (0 for an all-zero block). The error is at most max|x| / 64,516 per value, close to
// fp32 for a dot product. q: [rows, K/32, 64] int8 (32 hi then 32 lo per block); scale:
// [rows, K/32] fp32.
inline constexpr int kSplitInt8BlockBytes = 64;

// x: [rows, K] fp32, K % 32 == 0.
cudaError_t quantize_split_int8(const float* x, int64_t rows, int64_t K, int8_t* q, float* scale, cudaStream_t stream);

// The routes come either from the router's logits (logits set: each launch takes the top-k of
// its token's logits itself, as router_topk() orders and weighs them, E = experts <=
// kDecodeRouteMaxExperts; ids / weights, if set, receive them from gate_up for inspection) or
// from ids / weights given (logits null).
struct MoeDecodeArgs {
  int64_t T = 0;
  int hidden = 0, inter = 0, top_k = 0;
  const float* logits = nullptr;  // [T, experts] router logits, or null
  int experts = 0;
  int32_t* ids = nullptr;    // [T, k] experts: input without logits, else an optional output
  float* weights = nullptr;  // [T, k] routing weights: likewise
  const uint8_t* gate_up_blocks = nullptr;
  const uint8_t* gate_up_scales = nullptr;
  const float* gate_up_bias = nullptr;
  const uint8_t* down_blocks = nullptr;
  const uint8_t* down_scales = nullptr;
  const float* down_bias = nullptr;
  float swiglu_limit = 7.0f, swiglu_alpha = 1.702f;
};

// act[t, j] = activation(x[t] . gate_up_e^T + bias_e) for e = route j of token t, as a split int8
// vector of I values. x: split int8 [T, H]; act_q / act_scale: split int8 [T * k, I].
cudaError_t moe_decode_gate_up(const MoeDecodeArgs& args, const int8_t* x_q, const float* x_scale, int8_t* act_q,
                               float* act_scale, cudaStream_t stream);
// residual[t] += sum_j weights[t, j] * (act[t, j] . down_e^T + down_bias_e), j in order. Under
// programmatic dependent launch it reads the routes and residual before waiting for the kernel
// launched just before it (gate_up), which must not write them.
cudaError_t moe_decode_down(const MoeDecodeArgs& args, const int8_t* act_q, const float* act_scale, float* residual,
                            cudaStream_t stream);

}  // namespace day0::kernels
