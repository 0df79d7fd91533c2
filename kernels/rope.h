#pragma once
// RoPE ("halves" pairing, YaRN frequencies and attention factor as blocks/rope.h computes them)
// applied to a fused q|k|v projection, with k and v stored into the KV cache.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

struct RopeQkvArgs {
  const float* qkv = nullptr;  // [T, (heads + 2 * kv_heads) * head_dim] fp32: q | k | v
  int64_t T = 0;
  int heads = 0, kv_heads = 0, head_dim = 0;  // head_dim even
  const float* inv_freq = nullptr;            // [head_dim / 2]
  float attention_factor = 1.0f;              // multiplies cos and sin
  const int32_t* position = nullptr;          // device scalar: position of token 0 (read at run time,
                                              // so a captured graph serves every decode step)
  uint16_t* q_out = nullptr;                  // [T, heads, head_dim] bf16, rotated
  uint16_t* k_cache = nullptr;                // [capacity, kv_heads, head_dim] bf16; rows position.. written
  uint16_t* v_cache = nullptr;                // same layout, not rotated
};

// For each pair i < d/2 of a head: angle = float(position) * inv_freq[i] (float32, as
// transformers), c = cos(angle) * factor, s = sin(angle) * factor;
// (a, b) = (x[i], x[i + d/2]) -> (a c - b s, b c + a s).
cudaError_t rope_qkv(const RopeQkvArgs& args, cudaStream_t stream);

}  // namespace day0::kernels
