#pragma once
// Grouped-query attention with a learned sink logit per head (softmax over the scores and the
// sink; the sink has no value), causal, optionally over a sliding window of the last `window`
// positions including the current one, reading K and V from a bf16 cache
// [capacity, kv_heads, head_dim]. Online (flash-style) softmax in fp32: no score matrix is
// stored. head_dim must be even and at most kAttentionMaxHeadDim.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

inline constexpr int kAttentionMaxHeadDim = 128;

struct AttentionArgs {
  int heads = 0, kv_heads = 0, head_dim = 0;
  int64_t window = 0;                 // 0: full attention
  float scale = 1.0f;                 // applied to q.k
  const float* sinks = nullptr;       // [heads] fp32
  const uint16_t* k_cache = nullptr;  // [capacity, kv_heads, head_dim] bf16
  const uint16_t* v_cache = nullptr;
};

// Prefill: queries t = 0..T-1 at positions pos0 + t, keys 0..pos0 + t already in the cache.
// q: [T, heads, head_dim] bf16; out: [T, heads, head_dim] bf16. head_dim 16, 32 or 64 runs
// on tensor cores (bf16 mma.sync, FlashAttention-2 tiling: 64 queries x 64 keys); other widths,
// or force_simple_prefill, on CUDA cores with one CTA per 8 queries of a head.
cudaError_t attention_prefill(const AttentionArgs& args, const uint16_t* q, int64_t T, int64_t pos0, uint16_t* out,
                              cudaStream_t stream, bool force_simple_prefill = false);

// Decode: one query (q: [heads, head_dim] bf16) at position *length - 1, the cache holding
// *length positions (a device scalar, so a captured graph serves every step). The keys are
// split into `splits` ranges processed in parallel, then combined. partial: device scratch of
// attention_decode_partial_floats(heads, head_dim, splits) floats. out: [heads, head_dim] fp32.
int64_t attention_decode_partial_floats(int heads, int head_dim, int splits);
cudaError_t attention_decode(const AttentionArgs& args, const uint16_t* q, const int32_t* length, int splits,
                             float* partial, float* out, cudaStream_t stream);

}  // namespace day0::kernels
