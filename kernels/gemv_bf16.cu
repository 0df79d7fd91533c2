#include "gemv_bf16.h"

#include <algorithm>

#include "decode_trace.cuh"
#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kRows = 2;       // rows per warp task: one input load serves both
constexpr int kUnroll = 4;     // 16-byte loads per lane per row in flight
constexpr int kCtasPerSm = 8;  // grid cap: more CTAs would only stage the input again

// Eight bf16 weights (one 16-byte word) dotted with eight fp32 inputs.
__device__ __forceinline__ float dot8(const uint4& w, const float* x) {
  const float4 x0 = *reinterpret_cast<const float4*>(x);
  const float4 x1 = *reinterpret_cast<const float4*>(x + 4);
  float acc = __uint_as_float(w.x << 16) * x0.x + __uint_as_float(w.x & 0xffff0000u) * x0.y;
  acc += __uint_as_float(w.y << 16) * x0.z + __uint_as_float(w.y & 0xffff0000u) * x0.w;
  acc += __uint_as_float(w.z << 16) * x1.x + __uint_as_float(w.z & 0xffff0000u) * x1.y;
  acc += __uint_as_float(w.w << 16) * x1.z + __uint_as_float(w.w & 0xffff0000u) * x1.w;
  return acc;
}

// kRope: the rows are a fused q | k | v projection and the epilogue is rope_qkv(): a task is
// the pair of rows (i, i + d/2) of one head, rotated for q and k heads, stored as bf16 into
// rope.q_out and the KV cache (y unused).
// Registers: 64 (4 CTAs per SM) for the others; the q/k/v kernel's 76 leave room for at most 3
// of its CTAs per SM. Its CTAs launch while down's 16-warp CTAs drain; at 64 registers an SM
// freed early could take 4 of them, and its CTAs ended 3.8 us apart against 2.6 at 76 registers
// (decode +1.2%: docs/perf-notes.md, decode v11).
template <bool kNorm, bool kRope>
__global__ void __launch_bounds__(kWarps * 32, kRope ? 3 : 4)
    gemv_kernel(const uint4* __restrict__ W, const float* __restrict__ bias, const float* __restrict__ x,
                const uint16_t* __restrict__ norm, float eps, int64_t N, int64_t K, bool accumulate,
                float* __restrict__ y, RopeQkvArgs rope) {
  DAY0_TRACE_SCOPE(kRope ? trace::qkv : kNorm ? trace::lm_head : gridDim.y == 1 ? trace::o_proj : trace::other);
  extern __shared__ float xs[];
  __shared__ float scratch[32];
  const int64_t t = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t chunks = K / 8;
  const int half = rope.head_dim / 2;
  const int64_t tasks = kRope ? N / 2 : (N + kRows - 1) / kRows;
  // The rows of a task: (n0, n0 + 1), or the RoPE pair (i, i + d/2) of a head.
  const auto task_rows = [&](int64_t task, int64_t& n0, int64_t& n1) {
    if constexpr (kRope) {
      n0 = task / half * rope.head_dim + task % half;
      n1 = n0 + half;
    } else {
      n0 = task * kRows;
      n1 = min(n0 + 1, N - 1);
    }
  };
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarps;
  // One round of a lane's weight loads: kUnroll 16-byte words of each row from chunk c0 on.
  uint4 w[kRows][kUnroll];
  const auto load_round = [&](const uint4* const(&rows)[kRows], int64_t c0) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        w[r][u] = c0 + 32 * u < chunks ? __ldg(rows[r] + c0 + 32 * u) : make_uint4(0, 0, 0, 0);
  };
  // What a task's epilogue reads besides its dot products: lane 0 of a RoPE task the two rows'
  // biases and the pair's rotation at the token's position (cos, sin; identity for v heads), lane
  // r < kRows of another the bias of row n0 + r plus y's value when accumulating.
  struct EpilogueInputs {
    float lo = 0.0f, hi = 0.0f, cs = 1.0f, sn = 0.0f;
  };
  const auto epilogue_inputs = [&](int64_t task, int64_t n0, int64_t n1) {
    EpilogueInputs in;
    if constexpr (kRope) {
      if (lane != 0) return in;
      const int head = static_cast<int>(task / half), i = static_cast<int>(task % half);
      in.lo = bias[n0];
      in.hi = bias[n1];
      if (head < rope.heads + rope.kv_heads) {
        const int64_t pos = static_cast<int64_t>(*rope.position) + t;
        sincosf(static_cast<float>(pos) * rope.inv_freq[i], &in.sn, &in.cs);
        in.cs *= rope.attention_factor;
        in.sn *= rope.attention_factor;
      }
    } else if (lane < kRows && n0 + lane < N) {
      const int64_t n = n0 + lane;
      if (bias != nullptr) in.lo = bias[n];
      if (accumulate) in.lo += y[t * N + n];
    }
    return in;
  };
  // The first task's first round of weights and its epilogue inputs (kept in shared memory, not
  // in registers through the dot products) are loaded before waiting for the kernel that writes
  // the input: neither depends on it (the position and y are written earlier; gemv_bf16.h).
  // (Bulk L2 prefetches of the rest of the rows, tried here and in the other decode GEMVs, made
  // every one of them slower: docs/perf-notes.md, decode v10.)
  __shared__ EpilogueInputs first_in[kWarps][kRows];
  if (first < tasks) {
    int64_t n0, n1;
    task_rows(first, n0, n1);
    const uint4* rows[kRows] = {W + n0 * chunks, W + n1 * chunks};
    load_round(rows, lane);
    if (lane < kRows) first_in[warp][lane] = epilogue_inputs(first, n0, n1);
  }
  detail::NormRound<> norm_round;  // the RMSNorm weights' first round, also before the wait
  if constexpr (kNorm) norm_round.load(norm, static_cast<int>(K));
  detail::pdl_wait();
  DAY0_TRACE_WAITED();
  detail::pdl_release();
  detail::stage_row(x + t * K, static_cast<int>(K), kNorm ? norm : nullptr, eps, xs, scratch,
                    kNorm ? &norm_round : nullptr);
  for (int64_t task = first; task < tasks; task += stride) {
    int64_t n0, n1;
    task_rows(task, n0, n1);
    const uint4* rows[kRows] = {W + n0 * chunks, W + n1 * chunks};
    float acc[kRows] = {};
    for (int64_t c0 = lane; c0 < chunks; c0 += 32 * kUnroll) {
      if (task != first || c0 != lane) load_round(rows, c0);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t c = c0 + 32 * u;
        if (c >= chunks) break;
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] += dot8(w[r][u], xs + c * 8);
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = detail::warp_sum(acc[r]);
    if (lane >= kRows) continue;
    const EpilogueInputs in = task == first ? first_in[warp][lane] : epilogue_inputs(task, n0, n1);
    if constexpr (kRope) {
      if (lane != 0) continue;
      const int head = static_cast<int>(task / half), i = static_cast<int>(task % half), d = rope.head_dim;
      const float lo = acc[0] + in.lo, hi = acc[1] + in.hi;
      const int64_t pos = static_cast<int64_t>(*rope.position) + t;
      const int64_t kv_dim = static_cast<int64_t>(rope.kv_heads) * d;
      if (head < rope.heads + rope.kv_heads) {
        uint16_t* out = head < rope.heads ? rope.q_out + (t * rope.heads + head) * d
                                          : rope.k_cache + pos * kv_dim + (head - rope.heads) * d;
        out[i] = detail::float_to_bf16_bits(lo * in.cs - hi * in.sn);
        out[i + half] = detail::float_to_bf16_bits(hi * in.cs + lo * in.sn);
      } else {
        uint16_t* out = rope.v_cache + pos * kv_dim + (head - rope.heads - rope.kv_heads) * d;
        out[i] = detail::float_to_bf16_bits(lo);
        out[i + half] = detail::float_to_bf16_bits(hi);
      }
      continue;
    }
    if (n0 + lane < N) y[t * N + n0 + lane] = (lane == 0 ? acc[0] : acc[1]) + in.lo;
  }
}

// Static shared memory of gemv_kernel, bounded from above: its reduction scratch and epilogue inputs.
constexpr size_t kStaticSmemBytes = 4096;

template <bool kNorm, bool kRope>
cudaError_t launch(const uint16_t* W, const float* bias, const float* x, const uint16_t* norm, float eps, int64_t T,
                   int64_t N, int64_t K, bool accumulate, float* y, const RopeQkvArgs& rope, cudaStream_t stream) {
  if (T < 0 || N <= 0 || K <= 0 || K % 8 != 0 || K > (1 << 24) || T > 65535) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (W == nullptr || x == nullptr || (y == nullptr && !kRope) || !detail::aligned16(W)) return cudaErrorInvalidValue;
  const size_t smem = sizeof(float) * static_cast<size_t>(K);
  // The kernel's static shared memory counts against the same 48 KiB default: opt in above it.
  if (smem + kStaticSmemBytes > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(gemv_kernel<kNorm, kRope>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  int device = 0, sms = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return e;
  const int64_t tasks = (N + kRows - 1) / kRows;
  const int64_t ctas = std::min<int64_t>((tasks + kWarps - 1) / kWarps, static_cast<int64_t>(sms) * kCtasPerSm);
  const dim3 grid(static_cast<unsigned>(ctas), static_cast<unsigned>(T));
  return detail::launch_pdl(gemv_kernel<kNorm, kRope>, grid, dim3(kWarps * 32), smem, stream,
                            reinterpret_cast<const uint4*>(W), bias, x, norm, eps, N, K, accumulate, y, rope);
}

}  // namespace

cudaError_t gemv_bf16(const uint16_t* W, const float* bias, const float* x, int64_t T, int64_t N, int64_t K,
                      bool accumulate, float* y, cudaStream_t stream) {
  return launch<false, false>(W, bias, x, nullptr, 0.0f, T, N, K, accumulate, y, RopeQkvArgs{}, stream);
}

cudaError_t gemv_bf16_rms_normed(const uint16_t* W, const float* bias, const float* x, const uint16_t* norm, float eps,
                                 int64_t T, int64_t N, int64_t K, float* y, cudaStream_t stream) {
  if (norm == nullptr) return cudaErrorInvalidValue;
  return launch<true, false>(W, bias, x, norm, eps, T, N, K, false, y, RopeQkvArgs{}, stream);
}

cudaError_t gemv_bf16_qkv_rope(const uint16_t* W, const float* bias, const float* x, const uint16_t* norm, float eps,
                               int64_t K, const RopeQkvArgs& r, cudaStream_t stream) {
  if (norm == nullptr || bias == nullptr || r.heads <= 0 || r.kv_heads <= 0 || r.head_dim <= 0 || r.head_dim % 2 != 0 ||
      r.inv_freq == nullptr || r.position == nullptr || r.q_out == nullptr || r.k_cache == nullptr ||
      r.v_cache == nullptr)
    return cudaErrorInvalidValue;
  const int64_t N = static_cast<int64_t>(r.heads + 2 * r.kv_heads) * r.head_dim;
  return launch<true, true>(W, bias, x, norm, eps, r.T, N, K, false, nullptr, r, stream);
}

DAY0_TRACE_SETTER(trace_set_gemv)

}  // namespace day0::kernels
