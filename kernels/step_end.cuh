#pragma once
// Device helpers the token-picking kernels share (sampling.cu, token_sampler.cu).
#include <cstdint>

#include "sampling.h"

namespace day0::kernels::detail {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Delivers a decode step's pick (one thread): out[0], and with step_end.positions the pick also
// to the mapped host slot positions[0] & 1 and the positions advanced by one.
__device__ __forceinline__ void end_step(int32_t pick, int32_t* out, const StepEnd& step_end) {
  *out = pick;
  if (step_end.positions == nullptr) return;
  const int32_t p = step_end.positions[0];
  if (step_end.host_picks != nullptr) {
    step_end.host_picks[p & 1] = pick;
    __threadfence_system();
  }
  step_end.positions[0] = p + 1;
  step_end.positions[1] = p + 2;
}

}  // namespace day0::kernels::detail
