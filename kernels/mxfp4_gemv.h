#pragma once
// The decode MoE: fused GEMVs that read the experts' MXFP4 blocks directly (0.53 bytes per
// weight, no dequantised copy), one launch for gate_up + activation and one for down + routing
// weights + residual add. Layouts as in gpt-oss checkpoints, all experts of one layer:
// gate_up blocks [E, 2I, H/32, 16], scales [E, 2I, H/32]; down blocks [E, H, I/32, 16],
// scales [E, H, I/32]; biases fp32 [E, 2I] and [E, H]. H % 32 == I % 32 == 0.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

struct MoeDecodeArgs {
  int64_t T = 0;
  int hidden = 0, inter = 0, top_k = 0;
  const int32_t* ids = nullptr;    // [T, k] experts
  const float* weights = nullptr;  // [T, k] routing weights
  const uint8_t* gate_up_blocks = nullptr;
  const uint8_t* gate_up_scales = nullptr;
  const float* gate_up_bias = nullptr;
  const uint8_t* down_blocks = nullptr;
  const uint8_t* down_scales = nullptr;
  const float* down_bias = nullptr;
  float swiglu_limit = 7.0f, swiglu_alpha = 1.702f;
};

// act [T, k, I] fp32 = activation(x[t] . gate_up_e^T + bias_e) for e = ids[t, j]; x: [T, H] fp32.
cudaError_t moe_decode_gate_up(const MoeDecodeArgs& args, const float* x, float* act, cudaStream_t stream);
// residual[t] += sum_j weights[t, j] * (act[t, j] . down_e^T + down_bias_e), j in order.
cudaError_t moe_decode_down(const MoeDecodeArgs& args, const float* act, float* residual, cudaStream_t stream);

}  // namespace day0::kernels
