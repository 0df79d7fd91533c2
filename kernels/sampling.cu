#include "sampling.h"

#include <algorithm>
#include <cmath>

#include "decode_trace.cuh"
#include "device_util.cuh"
#include "step_end.cuh"

namespace day0::kernels {
namespace {

constexpr int kThreads = 1024;

using detail::splitmix64;

// Keeps (best value, lowest index among equals); NaN is skipped.
__device__ __forceinline__ void consider(float v, int64_t i, float& best, int64_t& best_i) {
  if (v == v && (best_i < 0 || v > best || (v == best && i < best_i))) {
    best = v;
    best_i = i;
  }
}

// The (value, index) best over the block into thread 0's best / best_i (other threads: partial).
template <int kThreads>
__device__ __forceinline__ void block_best(float& best, int64_t& best_i) {
  __shared__ float values[kThreads / 32];
  __shared__ int64_t indices[kThreads / 32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, best, offset);
    const int64_t oi = __shfl_xor_sync(0xffffffffu, best_i, offset);
    if (oi >= 0) consider(ov, oi, best, best_i);
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) {
    values[warp] = best;
    indices[warp] = best_i;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / 32; ++w)
    if (indices[w] >= 0) consider(values[w], indices[w], best, best_i);
}

__global__ void __launch_bounds__(kThreads) select_kernel(const float* __restrict__ logits, int64_t n, float inv_temp,
                                                          uint64_t seed, int32_t* step, int32_t* __restrict__ out) {
  const bool sample = step != nullptr;
  const uint64_t stream = sample ? splitmix64(seed ^ splitmix64(static_cast<uint64_t>(*step))) : 0;
  float best = -INFINITY;
  int64_t best_i = -1;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    float v = logits[i];
    if (sample) {
      // 53 random bits -> u in (0, 1).
      const double u = (static_cast<double>(splitmix64(stream + static_cast<uint64_t>(i)) >> 11) + 0.5) * 0x1p-53;
      v = v * inv_temp - static_cast<float>(log(-log(u)));
    }
    consider(v, i, best, best_i);
  }
  block_best<kThreads>(best, best_i);
  if (threadIdx.x != 0) return;
  if (best_i < 0) best_i = 0;
  *out = static_cast<int32_t>(best_i);
  if (sample) *step += 1;
}

constexpr int kWideThreads = 256, kWidePerThread = 8;  // a CTA covers 2,048 logits per round

__global__ void __launch_bounds__(kWideThreads)
    argmax_wide_kernel(const float* __restrict__ logits, int64_t n, ArgmaxScratch scratch, int32_t* __restrict__ out,
                       StepEnd step_end) {
  __shared__ bool last;
  DAY0_TRACE_SCOPE(trace::argmax);
  detail::pdl_wait();
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  float best = -INFINITY;
  int64_t best_i = -1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kWideThreads;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kWideThreads + threadIdx.x; base < n;
       base += stride * kWidePerThread) {
    float v[kWidePerThread];
#pragma unroll
    for (int u = 0; u < kWidePerThread; ++u) v[u] = base + u * stride < n ? logits[base + u * stride] : 0.0f;
#pragma unroll
    for (int u = 0; u < kWidePerThread; ++u)
      if (base + u * stride < n) consider(v[u], base + u * stride, best, best_i);
  }
  block_best<kWideThreads>(best, best_i);
  if (threadIdx.x == 0) {
    scratch.values[blockIdx.x] = best;
    scratch.indices[blockIdx.x] = static_cast<int32_t>(best_i);
    __threadfence();
    last = atomicAdd(scratch.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  best = -INFINITY;
  best_i = -1;
  for (int c = threadIdx.x; c < static_cast<int>(gridDim.x); c += kWideThreads) {
    const int32_t i = __ldcg(scratch.indices + c);
    if (i >= 0) consider(__ldcg(scratch.values + c), i, best, best_i);
  }
  block_best<kWideThreads>(best, best_i);
  if (threadIdx.x != 0) return;
  *scratch.done = 0;
  detail::end_step(static_cast<int32_t>(best_i < 0 ? 0 : best_i), out, step_end);
}

}  // namespace

cudaError_t argmax_wide(const float* logits, int64_t n, const ArgmaxScratch& scratch, int32_t* out, cudaStream_t stream,
                        const StepEnd& step_end) {
  if (n <= 0 || n > (int64_t{1} << 31) - 1 || logits == nullptr || out == nullptr || scratch.values == nullptr ||
      scratch.indices == nullptr || scratch.done == nullptr ||
      (step_end.host_picks != nullptr && step_end.positions == nullptr))
    return cudaErrorInvalidValue;
  const int64_t per_cta = int64_t{kWideThreads} * kWidePerThread;
  const int64_t ctas = std::min<int64_t>((n + per_cta - 1) / per_cta, kArgmaxMaxCtas);
  return detail::launch_pdl(argmax_wide_kernel, dim3(static_cast<unsigned>(ctas)), dim3(kWideThreads), 0, stream,
                            logits, n, scratch, out, step_end);
}

cudaError_t argmax(const float* logits, int64_t n, int32_t* out, cudaStream_t stream) {
  if (n <= 0 || logits == nullptr || out == nullptr) return cudaErrorInvalidValue;
  select_kernel<<<1, kThreads, 0, stream>>>(logits, n, 1.0f, 0, nullptr, out);
  return cudaGetLastError();
}

cudaError_t sample_temperature(const float* logits, int64_t n, float temperature, uint64_t seed, int32_t* step,
                               int32_t* out, cudaStream_t stream) {
  if (n <= 0 || logits == nullptr || out == nullptr || step == nullptr || !(temperature > 0.0f))
    return cudaErrorInvalidValue;
  select_kernel<<<1, kThreads, 0, stream>>>(logits, n, 1.0f / temperature, seed, step, out);
  return cudaGetLastError();
}

DAY0_TRACE_SETTER(trace_set_sampling)

}  // namespace day0::kernels
