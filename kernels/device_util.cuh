#pragma once
// Device helpers shared by the kernel families: bf16 bit patterns (kernels take bf16 tensors as
// uint16_t so their headers need no CUDA half types), warp and block reductions, E2M1 values.
#include <cstdint>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace day0::kernels::detail {

__device__ __forceinline__ float bf16_bits_to_float(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

__device__ __forceinline__ uint16_t float_to_bf16_bits(float value) {
  const __nv_bfloat16 h = __float2bfloat16_rn(value);
  return *reinterpret_cast<const uint16_t*>(&h);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Sum over the block; every thread gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += scratch[w];
  return total;
}

// A thread's first round of stage_row()'s RMSNorm weights (kU words of 4 bf16), which a kernel
// may load before waiting for the previous kernel: weights do not depend on it.
template <int kU = 4>
struct NormRound {
  uint2 w[kU];
  // The round at word `base` of the n4 words (stage_row()'s rounds).
  __device__ __forceinline__ void load(const uint16_t* __restrict__ norm, int n4, int base) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      w[u] = i < n4 ? reinterpret_cast<const uint2*>(norm)[i] : make_uint2(0u, 0u);
    }
  }
  // The first round for a row of K values.
  __device__ __forceinline__ void load(const uint16_t* __restrict__ norm, int K) {
    const bool vec = norm != nullptr && (K & 3) == 0 && (reinterpret_cast<uintptr_t>(norm) & 7u) == 0;
    load(norm, vec ? K / 4 : 0, 0);
  }
};

// Stages the fp32 row x[0..K) into shared memory xs (all threads of the block; ends with a
// barrier), RMS-normed with the bf16 weights `norm` (x * inv * w as rms_norm() computes it) unless
// norm is null. Each thread issues kU 16-byte loads before using any, so a row of up to
// blockDim * 4 * kU values costs one memory latency rather than one per loop step. `scratch`:
// 32 floats of shared memory. `pre`, when given, holds the first round's norm weights (loaded
// by NormRound::load() for the same norm and K).
template <int kU = 4>
__device__ __forceinline__ void stage_row(const float* __restrict__ x, int K, const uint16_t* __restrict__ norm,
                                          float eps, float* xs, float* scratch,
                                          const NormRound<kU>* pre = nullptr) {
  const bool vec = (K & 3) == 0 && (reinterpret_cast<uintptr_t>(x) & 15u) == 0 &&
                   (norm == nullptr || (reinterpret_cast<uintptr_t>(norm) & 7u) == 0);
  const int n4 = vec ? K / 4 : 0;
  float sum = 0.0f;
  for (int base = 0; base < n4; base += blockDim.x * kU) {
    float4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      v[u] = i < n4 ? reinterpret_cast<const float4*>(x)[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      if (i >= n4) break;
      sum += v[u].x * v[u].x + v[u].y * v[u].y + v[u].z * v[u].z + v[u].w * v[u].w;
      reinterpret_cast<float4*>(xs)[i] = v[u];
    }
  }
  for (int c = 4 * n4 + threadIdx.x; c < K; c += blockDim.x) {
    const float v = x[c];
    sum += v * v;
    xs[c] = v;
  }
  if (norm == nullptr) {
    __syncthreads();
    return;
  }
  sum = block_sum(sum, scratch);  // its barriers also publish xs
  const float inv = 1.0f / sqrtf(sum / static_cast<float>(K) + eps);
  for (int base = 0; base < n4; base += blockDim.x * kU) {
    NormRound<kU> round;
    if (base == 0 && pre != nullptr)
      round = *pre;
    else
      round.load(norm, n4, base);
    const uint2* w = round.w;
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      if (i >= n4) break;
      float4 v = reinterpret_cast<float4*>(xs)[i];
      v.x = v.x * inv * __uint_as_float(w[u].x << 16);
      v.y = v.y * inv * __uint_as_float(w[u].x & 0xffff0000u);
      v.z = v.z * inv * __uint_as_float(w[u].y << 16);
      v.w = v.w * inv * __uint_as_float(w[u].y & 0xffff0000u);
      reinterpret_cast<float4*>(xs)[i] = v;
    }
  }
  for (int c = 4 * n4 + threadIdx.x; c < K; c += blockDim.x) xs[c] = xs[c] * inv * bf16_bits_to_float(norm[c]);
  __syncthreads();
}

// Copies `bytes` (a multiple of 16, both pointers 16-byte aligned) from global to shared memory
// with all of a thread's loads in flight before its stores; ends with a barrier.
template <int kU = 4>
__device__ __forceinline__ void stage_bytes(const void* __restrict__ src, int bytes, void* dst) {
  const int n = bytes / 16;
  for (int base = 0; base < n; base += blockDim.x * kU) {
    uint4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      v[u] = i < n ? reinterpret_cast<const uint4*>(src)[i] : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int i = base + threadIdx.x + u * blockDim.x;
      if (i < n) reinterpret_cast<uint4*>(dst)[i] = v[u];
    }
  }
  __syncthreads();
}

// E2M1 code (sign in bit 3) -> value, for tables in shared memory.
__host__ __device__ constexpr float e2m1_value(int code) {
  constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  return (code & 8) ? -kMagnitude[code & 7] : kMagnitude[code & 7];
}

// 2^e as a float for e in [-127, 127] (2^-127 is a float subnormal), exactly.
__device__ __forceinline__ float exp2_int(int e) {
  return e >= -126 ? __uint_as_float(static_cast<uint32_t>(e + 127) << 23) : __uint_as_float(1u << 22);
}

// Programmatic dependent launch (decode kernels launched with launch_pdl()): a kernel may start
// while the previous one in its stream finishes; pdl_wait() blocks until that one has completed
// and its writes are visible, so everything before it may only read what no earlier kernel of
// the step writes (weights). pdl_release() lets the next kernel start launching. Both are no-ops
// for a kernel launched without the attribute, and before sm_90 (no such launches there).
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A 4-byte global -> shared copy that holds no register while in flight (sm_80+), completed by
// cp_async_wait_all() in the issuing thread (then a barrier publishes it to the others).
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem))),
               "l"(gmem)
               : "memory");
#else
  *static_cast<float*>(smem) = *static_cast<const float*>(gmem);
#endif
}
__device__ __forceinline__ void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Launches `kernel` with programmatic stream serialisation on a created stream (the decode
// step's) of an sm_90 or newer device; plainly on the legacy default stream and on older devices.
template <typename... Params, typename... Args>
cudaError_t launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                       Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 0;
  if (stream != nullptr) {
    int device = 0, major = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    if (const cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
        e != cudaSuccess)
      return e;
    config.numAttrs = major >= 9 ? 1 : 0;
  }
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace day0::kernels::detail
