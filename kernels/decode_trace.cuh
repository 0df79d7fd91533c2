#pragma once
// Development timeline of the decode kernels (built only with -DDAY0_DECODE_TRACE): each CTA of
// a traced kernel records the global timer when it starts, when its wait for the previous kernel
// returns and when it ends; per launch the earliest and latest of each go into a device buffer
// that decode_trace_dump() prints as a timeline. Without the definition the macros are empty.
#include <cstdint>

#ifdef DAY0_DECODE_TRACE
#include <cuda_runtime.h>
namespace day0::kernels::trace {
constexpr int kKinds = 11, kLaunches = 32768;
// `other`: launches of a traced kernel outside the decode step (prefill uses the plain GEMV),
// kept apart because their grids differ (a launch's slot is its CTA count / grid size).
enum Kind { embed, qkv, attention, combine, o_proj, router, gate_up, down, lm_head, argmax, other };
// Minima are kept as the maximum of ~t so that a zeroed buffer starts empty.
struct Slot {
  unsigned long long start_first, start_last, wait_first, wait_last, end_first, end_last;
};
static __device__ Slot* g_slots;          // [kKinds][kLaunches], one copy per translation unit
static __device__ unsigned* g_counters;  // [kKinds]

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
struct Scope {
  Slot* slot = nullptr;
  __device__ __forceinline__ explicit Scope(int kind) {
    __shared__ unsigned index;
    const unsigned long long t = now();
    if (g_slots == nullptr) return;
    if (threadIdx.x == 0) {
      const unsigned ctas = gridDim.x * gridDim.y * gridDim.z;
      index = atomicAdd(&g_counters[kind], 1u) / ctas;
    }
    __syncthreads();
    if (index >= kLaunches) return;
    slot = g_slots + kind * kLaunches + index;
    if (threadIdx.x == 0) {
      atomicMax(&slot->start_first, ~t);
      atomicMax(&slot->start_last, t);
    }
  }
  __device__ __forceinline__ void waited() const {
    if (slot == nullptr || threadIdx.x != 0) return;
    const unsigned long long t = now();
    atomicMax(&slot->wait_first, ~t);
    atomicMax(&slot->wait_last, t);
  }
  __device__ __forceinline__ ~Scope() {
    if (slot == nullptr || threadIdx.x != 0) return;
    const unsigned long long t = now();
    atomicMax(&slot->end_first, ~t);
    atomicMax(&slot->end_last, t);
  }
};
}  // namespace day0::kernels::trace
#define DAY0_TRACE_SCOPE(kind) const ::day0::kernels::trace::Scope day0_trace_scope(kind)
#define DAY0_TRACE_WAITED() day0_trace_scope.waited()
#define DAY0_TRACE_SETTER(name)                                                                     \
  void name(void* slots, void* counters) {                                                          \
    cudaMemcpyToSymbol(::day0::kernels::trace::g_slots, &slots, sizeof slots);                       \
    cudaMemcpyToSymbol(::day0::kernels::trace::g_counters, &counters, sizeof counters);              \
  }
#else
#define DAY0_TRACE_SCOPE(kind)
#define DAY0_TRACE_WAITED()
#define DAY0_TRACE_SETTER(name)
#endif
