#pragma once
// Token selection on the GPU, so a decode step need not copy the logits to the host.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// out[0] = arg max of logits[0..n); equal values pick the lowest index (as torch.argmax and
// the CPU sampler). NaN never wins.
cudaError_t argmax(const float* logits, int64_t n, int32_t* out, cudaStream_t stream);

// The same choice over many CTAs, for rows as long as a vocabulary: each CTA reduces a slice of
// the row, the last CTA to finish reduces the CTAs' results (one launch; a single CTA scanning
// 200K logits waits on ~50 rounds of loads). Scratch: values and indices of kArgmaxMaxCtas entries
// each; done: one counter, zero before the first call (each call leaves it zero).
inline constexpr int kArgmaxMaxCtas = 1024;
struct ArgmaxScratch {
  float* values = nullptr;
  int32_t* indices = nullptr;
  unsigned* done = nullptr;
};
// The end of a decode step, done by argmax_wide()'s last CTA after out[0] when given (so the
// step's graph needs no copies around it): the pick also goes to host_picks[positions[0] & 1]
// (pinned host memory mapped into the device; the host reads it once the step is done), and the
// step's positions {p, p + 1} advance to {p + 1, p + 2} for the next step.
struct StepEnd {
  int32_t* host_picks = nullptr;
  int32_t* positions = nullptr;
};
cudaError_t argmax_wide(const float* logits, int64_t n, const ArgmaxScratch& scratch, int32_t* out, cudaStream_t stream,
                        const StepEnd& step_end = StepEnd{});

// Temperature sampling by the Gumbel-max trick: out[0] = arg max of logits[i] / temperature +
// g_i, g_i = -log(-log(u_i)) with u_i uniform in (0, 1) from a counter-based hash of
// (seed, step, i); *step is a device counter incremented after each draw, so a captured graph
// draws a fresh token each replay. temperature > 0.
cudaError_t sample_temperature(const float* logits, int64_t n, float temperature, uint64_t seed, int32_t* step,
                               int32_t* out, cudaStream_t stream);

}  // namespace day0::kernels
