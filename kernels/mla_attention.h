#pragma once
// Absorbed multi-head latent attention (MLA) over the bf16 latent cache, as blocks::mla_attend
// computes it after its q = q_b_proj(q_resid) line. Per query token t (at position
// p = *position + t) and head h:
//   q_abs = W_kh^T q_h                                   [R]  (W_kh: the head's nope key rows of kv_b)
//   s_j   = (q_abs . latent[j]) * scaling                over the attended positions j
//   ctx   = sum_j softmax_j(s_j) latent[j]               [R]
//   out   = W_vh ctx                                     [v_dim]  (W_vh: the head's value rows of kv_b)
// The attended positions are 0 .. p (dense causal, selection null) or the selection row's
// entries j with 0 <= j <= p (each entry counted once per occurrence; none attended: out = 0).
//
// Four kernels: q_abs for all tokens and heads into the scratch; flash-decoding over the
// positions, split into ranges processed in parallel (one CTA serves 16 heads of one query for
// its range, so each latent row it stages is read once for all of them; each split leaves its
// running max, sum and unnormalised ctx); a merge of the splits into the normalised ctx; W_v.
// fp32 throughout. The position is read from device memory and the grids depend only on T,
// heads, v_dim, R, width and capacity, so one captured graph serves every decode step.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

inline constexpr int kMlaMaxLatent = 512;  // R (kv_lora) at most this, and a multiple of 8

struct MlaAttendArgs {
  const float* q = nullptr;          // [T, heads, nope] fp32, the q_b_proj output
  const uint16_t* kv_b = nullptr;    // [heads * (nope + v_dim), R] bf16: per head nope key rows, then v_dim value rows
  const uint16_t* latent = nullptr;  // [capacity, R] bf16 cache; rows 0 .. position + T - 1 valid
  const int32_t* selection = nullptr;  // [T, width] positions (-1 = none; entries > the query's position ignored),
                                       // or null: dense causal
  int64_t width = 0;                   // selection row length (ignored when selection is null)
  int64_t T = 0;                       // query tokens
  const int32_t* position = nullptr;   // device scalar: the position of the first query token
  int64_t capacity = 0;                // positions the latent cache holds
  int heads = 0, nope = 0, v_dim = 0, R = 0;
  float scaling = 1.0f;      // applied to q_abs . latent (1 / sqrt(nope))
  float* out = nullptr;      // [T, heads * v_dim] fp32
  float* scratch = nullptr;  // mla_attend_scratch_floats(T, heads, R, capacity) floats, 16-byte aligned
  int64_t scratch_floats = 0;
};

// Scratch floats mla_attend needs for these sizes (q_abs and the per-split partials).
size_t mla_attend_scratch_floats(int64_t T, int heads, int R, int64_t capacity);

// out = the attention above. Requirements (else cudaErrorInvalidValue, nothing launched): T >= 0,
// heads in [1, 65535], nope, v_dim > 0, R a multiple of 8 in [8, kMlaMaxLatent], capacity > 0,
// kv_b, latent and scratch 16-byte aligned, scratch_floats >= mla_attend_scratch_floats(...),
// width > 0 with a selection. Positions beyond capacity - 1 are never read.
cudaError_t mla_attend(const MlaAttendArgs& a, cudaStream_t stream);

}  // namespace day0::kernels
