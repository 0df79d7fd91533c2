#include "mxfp4_fp8.h"

#include <cuda_runtime.h>

namespace day0::kernels {

namespace {

constexpr int kThreads = 256;
// Enough CTAs to fill any current GPU (an H200 holds 132 SMs x 8 CTAs of 256 threads = 1056);
// larger inputs loop in the grid-stride loop instead of launching more CTAs.
constexpr int64_t kMaxGridBlocks = 4096;

// The E4M3 byte of each E2M1 magnitude (code & 7), as a byte table for __byte_perm:
//   magnitude  0     1     2     3     4     5     6     7
//   value      0     0.5   1     1.5   2     3     4     6
//   E4M3       0x00  0x30  0x38  0x3C  0x40  0x44  0x48  0x4C
// (E4M3 bias 7: 0.5 = exponent 6, mantissa 0 -> 0x30; 6 = 1.5 * 2^2 -> exponent 9, mantissa 4.)
// The sign moves from bit 3 of the code to bit 7 of the byte.
constexpr uint32_t kE4m3MagnitudeLow = 0x3C383000u;   // magnitudes 0..3, little-endian
constexpr uint32_t kE4m3MagnitudeHigh = 0x4C484440u;  // magnitudes 4..7

// Four E2M1 codes, element k in bits [4k, 4k+4) of `codes` (bits 16..31 ignored), -> four E4M3
// bytes, element k in byte k.
__device__ __forceinline__ uint32_t e2m1x4_to_e4m3x4(uint32_t codes) {
  // __byte_perm's selector nibble k picks output byte k from the 8 table bytes; a magnitude is
  // exactly such an index.
  const uint32_t magnitude = __byte_perm(kE4m3MagnitudeLow, kE4m3MagnitudeHigh, codes & 0x7777u);
  // Sign bits sit at 3, 7, 11, 15 and belong at 7, 15, 23, 31: spread the two code bytes to
  // bytes 0 and 2 ([b0, 0, b1, 0]), then shift each nibble's bit 3 up by 4 (low nibble) or 8.
  const uint32_t spread = __byte_perm(codes, 0u, 0x4140u);
  const uint32_t sign = ((spread << 4) & 0x00800080u) | ((spread << 8) & 0x80008000u);
  return magnitude | sign;
}

// The shared loop of both kernels. Thread t of a CTA converts MXFP4 block first + t: a 16-byte
// load gives its 32 codes, and `convert(b, packed, vectors)` turns them into kVectors 16-byte
// output vectors (2 for E4M3, 4 for bf16). The CTA's output is one contiguous range, so the
// vectors go through shared memory and are stored in thread order: each warp store then covers
// 512 contiguous bytes instead of 32 pieces kVectors * 16 bytes apart. Measured on an H200 with
// 2^25 blocks: direct strided stores reached 2.9 TB/s (E4M3) and 1.8 TB/s (bf16), staged ones
// 3.9 and 3.7 TB/s, against 4.3 TB/s for a device-to-device copy.
// The grid-stride loop advances whole CTAs so every thread reaches both barriers.
template <int kVectors, typename Convert>
__device__ __forceinline__ void convert_blocks(const uint4* __restrict__ blocks, int64_t n_blocks,
                                               uint4* __restrict__ out, Convert convert) {
  static_assert(kVectors == 2 || kVectors == 4);
  __shared__ uint4 stage[kThreads * kVectors];
  // A quarter-warp's 16-byte accesses are conflict-free when they hit 8 distinct slots mod 8.
  // Writes go to 8 threads' slot kVectors * t + v and the read-out to 8 consecutive slots;
  // XOR-ing the low bits with bits 3.. of the index makes both patterns distinct mod 8.
  const auto slot = [](int index) { return index ^ ((index >> 3) & (kVectors - 1)); };
  const int tid = static_cast<int>(threadIdx.x);
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads; first < n_blocks;
       first += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t b = first + tid;
    if (b < n_blocks) {
      uint4 vectors[kVectors];
      convert(b, __ldg(&blocks[b]), vectors);
#pragma unroll
      for (int v = 0; v < kVectors; ++v) stage[slot(kVectors * tid + v)] = vectors[v];
    }
    __syncthreads();
    const int64_t left = n_blocks - first;
    const int count = kVectors * static_cast<int>(left < kThreads ? left : kThreads);
    for (int i = tid; i < count; i += kThreads) out[kVectors * first + i] = stage[slot(i)];
    __syncthreads();
  }
}

// blocks [n_blocks] x 16 bytes -> fp8_out [2 * n_blocks] x 16 bytes, block_exponent_out
// [n_blocks].
__global__ void __launch_bounds__(kThreads)
    mxfp4_to_fp8_e4m3_kernel(const uint4* __restrict__ blocks, const uint8_t* __restrict__ scales, int64_t n_blocks,
                             uint4* __restrict__ fp8_out, int16_t* __restrict__ block_exponent_out) {
  convert_blocks<2>(blocks, n_blocks, fp8_out, [&](int64_t b, const uint4& packed, uint4* out) {
    // Little-endian: packed.x holds block bytes 0..3, i.e. elements 0..7, low nibble first.
    out[0] = make_uint4(e2m1x4_to_e4m3x4(packed.x), e2m1x4_to_e4m3x4(packed.x >> 16), e2m1x4_to_e4m3x4(packed.y),
                        e2m1x4_to_e4m3x4(packed.y >> 16));
    out[1] = make_uint4(e2m1x4_to_e4m3x4(packed.z), e2m1x4_to_e4m3x4(packed.z >> 16), e2m1x4_to_e4m3x4(packed.w),
                        e2m1x4_to_e4m3x4(packed.w >> 16));
    block_exponent_out[b] = static_cast<int16_t>(static_cast<int>(scales[b]) - 127);
  });
}

// The bf16 magnitude bits of E2M1 magnitude m (0..7) times 2^(scale - 127), scale 0..254, from
// the bit fields (the same construction as day0::formats::e2m1_scaled_to_bf16).
__device__ __forceinline__ uint32_t scaled_bf16_magnitude(int m, int scale) {
  if (m == 0) return 0;
  // |e2m1| = (1 + mantissa/2) * 2^k, k = m/2 - 1; m = 1 is 2^-1 with mantissa 0.
  const int mantissa = m >= 2 ? (m & 1) : 0;
  const int biased = (m >> 1) - 1 + scale;  // bf16 biased exponent of the product
  if (biased >= 0xFF) return 0x7F80u;       // past float's range: inf
  if (biased >= 1) return static_cast<uint32_t>((biased << 7) | (mantissa << 6));
  // Subnormal (biased is 0 or -1): the value in units of 2^-133.
  return static_cast<uint32_t>((2 + mantissa) << (biased + 5));
}

// Two bf16 words for four E2M1 codes (element k in bits [4k, 4k+4) of `codes`, bits 16..31
// ignored): out[0] holds elements 0 and 1, out[1] elements 2 and 3, each little-endian. The
// tables hold the low and high bytes of the 8 magnitudes' bf16 values under this block's scale.
__device__ __forceinline__ uint2 e2m1x4_to_bf16x4(uint32_t codes, uint32_t low0, uint32_t low1, uint32_t high0,
                                                  uint32_t high1, uint32_t sign_mask) {
  const uint32_t index = codes & 0x7777u;
  const uint32_t low = __byte_perm(low0, low1, index);     // [L0, L1, L2, L3]
  const uint32_t high = __byte_perm(high0, high1, index);  // [H0, H1, H2, H3]
  // Sign bits 3 and 7 go to bits 15 and 31 of the first word, bits 11 and 15 to the second's.
  const uint32_t sign01 = ((codes << 12) & 0x00008000u) | ((codes << 24) & 0x80000000u);
  const uint32_t sign23 = ((codes << 4) & 0x00008000u) | ((codes << 16) & 0x80000000u);
  uint2 out;
  out.x = __byte_perm(low, high, 0x5140u) | (sign01 & sign_mask);  // [L0, H0, L1, H1]
  out.y = __byte_perm(low, high, 0x7362u) | (sign23 & sign_mask);  // [L2, H2, L3, H3]
  return out;
}

// blocks [n_blocks] x 16 bytes -> bf16_out [4 * n_blocks] x 16 bytes.
__global__ void __launch_bounds__(kThreads)
    mxfp4_to_bf16_kernel(const uint4* __restrict__ blocks, const uint8_t* __restrict__ scales, int64_t n_blocks,
                         uint4* __restrict__ bf16_out) {
  convert_blocks<4>(blocks, n_blocks, bf16_out, [&](int64_t b, const uint4& packed, uint4* out) {
    const int scale = scales[b];
    // A NaN scale makes every element the positive quiet NaN 0x7FC0, as on the CPU.
    const bool nan_scale = scale == 0xFF;
    const uint32_t sign_mask = nan_scale ? 0u : 0x80008000u;
    uint32_t low0 = 0;
    uint32_t low1 = 0;
    uint32_t high0 = 0;
    uint32_t high1 = 0;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t value = nan_scale ? 0x7FC0u : scaled_bf16_magnitude(m, scale);
      const int shift = 8 * (m & 3);
      if (m < 4) {
        low0 |= (value & 0xFFu) << shift;
        high0 |= (value >> 8) << shift;
      } else {
        low1 |= (value & 0xFFu) << shift;
        high1 |= (value >> 8) << shift;
      }
    }
    const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      // words[i] holds elements 8i..8i+7, which fill output vector i.
      const uint2 a = e2m1x4_to_bf16x4(words[i], low0, low1, high0, high1, sign_mask);
      const uint2 c = e2m1x4_to_bf16x4(words[i] >> 16, low0, low1, high0, high1, sign_mask);
      out[i] = make_uint4(a.x, a.y, c.x, c.y);
    }
  });
}

// The routed experts of one MoE layer into the shared workspace: CTA row blockIdx.y is slot s;
// slots at or past *active_count exit at once (the grid is sized for the most experts a layer
// can route to; the count is known only on the device).
// Expert e's blocks start at blocks + e * per_expert, or at blocks_of[e] when a table is given
// (scales likewise).
__global__ void __launch_bounds__(kThreads)
    mxfp4_experts_to_fp8_kernel(const uint4* __restrict__ blocks, const uint8_t* __restrict__ scales,
                                const uint8_t* const* __restrict__ blocks_of, const uint8_t* const* __restrict__ scales_of,
                                int64_t per_expert, const int32_t* __restrict__ active_experts,
                                const int32_t* __restrict__ active_count, uint4* __restrict__ fp8_out,
                                int16_t* __restrict__ block_exponent_out) {
  const int slot = static_cast<int>(blockIdx.y);
  if (slot >= *active_count) return;
  const int64_t e = active_experts[slot];
  const uint4* src = blocks_of != nullptr ? reinterpret_cast<const uint4*>(blocks_of[e]) : blocks + e * per_expert;
  const uint8_t* src_scales = scales_of != nullptr ? scales_of[e] : scales + e * per_expert;
  int16_t* exponents = block_exponent_out + slot * per_expert;
  convert_blocks<2>(src, per_expert, fp8_out + 2 * slot * per_expert, [&](int64_t b, const uint4& packed, uint4* out) {
    out[0] = make_uint4(e2m1x4_to_e4m3x4(packed.x), e2m1x4_to_e4m3x4(packed.x >> 16), e2m1x4_to_e4m3x4(packed.y),
                        e2m1x4_to_e4m3x4(packed.y >> 16));
    out[1] = make_uint4(e2m1x4_to_e4m3x4(packed.z), e2m1x4_to_e4m3x4(packed.z >> 16), e2m1x4_to_e4m3x4(packed.w),
                        e2m1x4_to_e4m3x4(packed.w >> 16));
    exponents[b] = static_cast<int16_t>(static_cast<int>(src_scales[b]) - 127);
  });
}

__global__ void __launch_bounds__(kThreads)
    mxfp4_experts_to_bf16_kernel(const uint4* __restrict__ blocks, const uint8_t* __restrict__ scales,
                                 int64_t per_expert, const int32_t* __restrict__ active_experts,
                                 const int32_t* __restrict__ active_count, uint4* __restrict__ bf16_out) {
  const int slot = static_cast<int>(blockIdx.y);
  if (slot >= *active_count) return;
  const int64_t e = active_experts[slot];
  const uint8_t* src_scales = scales + e * per_expert;
  convert_blocks<4>(blocks + e * per_expert, per_expert, bf16_out + 4 * slot * per_expert,
                    [&](int64_t b, const uint4& packed, uint4* out) {
                      const int scale = src_scales[b];
                      const bool nan_scale = scale == 0xFF;
                      const uint32_t sign_mask = nan_scale ? 0u : 0x80008000u;
                      uint32_t low0 = 0, low1 = 0, high0 = 0, high1 = 0;
#pragma unroll
                      for (int m = 0; m < 8; ++m) {
                        const uint32_t value = nan_scale ? 0x7FC0u : scaled_bf16_magnitude(m, scale);
                        const int shift = 8 * (m & 3);
                        if (m < 4) {
                          low0 |= (value & 0xFFu) << shift;
                          high0 |= (value >> 8) << shift;
                        } else {
                          low1 |= (value & 0xFFu) << shift;
                          high1 |= (value >> 8) << shift;
                        }
                      }
                      const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
                      for (int i = 0; i < 4; ++i) {
                        const uint2 a = e2m1x4_to_bf16x4(words[i], low0, low1, high0, high1, sign_mask);
                        const uint2 c = e2m1x4_to_bf16x4(words[i] >> 16, low0, low1, high0, high1, sign_mask);
                        out[i] = make_uint4(a.x, a.y, c.x, c.y);
                      }
                    });
}

bool aligned_16(const void* pointer) { return (reinterpret_cast<uintptr_t>(pointer) & 15u) == 0; }

unsigned grid_size(int64_t n_blocks) {
  const int64_t ctas = (n_blocks + kThreads - 1) / kThreads;
  return static_cast<unsigned>(ctas < kMaxGridBlocks ? ctas : kMaxGridBlocks);
}

}  // namespace

cudaError_t mxfp4_to_fp8_e4m3(const uint8_t* blocks, const uint8_t* scales, int64_t n_blocks, uint8_t* fp8_out,
                              int16_t* block_exponent_out, cudaStream_t stream) {
  if (n_blocks < 0) return cudaErrorInvalidValue;
  if (n_blocks == 0) return cudaSuccess;
  if (scales == nullptr || block_exponent_out == nullptr || blocks == nullptr || fp8_out == nullptr ||
      !aligned_16(blocks) || !aligned_16(fp8_out)) {
    return cudaErrorInvalidValue;
  }
  mxfp4_to_fp8_e4m3_kernel<<<grid_size(n_blocks), kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(blocks), scales, n_blocks, reinterpret_cast<uint4*>(fp8_out), block_exponent_out);
  return cudaGetLastError();
}

cudaError_t mxfp4_to_bf16(const uint8_t* blocks, const uint8_t* scales, int64_t n_blocks, uint16_t* bf16_out,
                          cudaStream_t stream) {
  if (n_blocks < 0) return cudaErrorInvalidValue;
  if (n_blocks == 0) return cudaSuccess;
  if (scales == nullptr || blocks == nullptr || bf16_out == nullptr || !aligned_16(blocks) || !aligned_16(bf16_out)) {
    return cudaErrorInvalidValue;
  }
  mxfp4_to_bf16_kernel<<<grid_size(n_blocks), kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(blocks), scales,
                                                                     n_blocks, reinterpret_cast<uint4*>(bf16_out));
  return cudaGetLastError();
}

cudaError_t mxfp4_experts_to_fp8_e4m3(const uint8_t* blocks, const uint8_t* scales, int64_t blocks_per_expert,
                                      const int32_t* active_experts, const int32_t* active_count, int max_slots,
                                      uint8_t* fp8_out, int16_t* block_exponent_out, cudaStream_t stream) {
  if (blocks_per_expert <= 0 || max_slots <= 0 || max_slots > 65535 || blocks == nullptr || scales == nullptr ||
      active_experts == nullptr || active_count == nullptr || fp8_out == nullptr || block_exponent_out == nullptr ||
      !aligned_16(blocks) || !aligned_16(fp8_out))
    return cudaErrorInvalidValue;
  const dim3 grid(grid_size(blocks_per_expert), static_cast<unsigned>(max_slots));
  mxfp4_experts_to_fp8_kernel<<<grid, kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(blocks), scales, nullptr, nullptr, blocks_per_expert, active_experts, active_count,
      reinterpret_cast<uint4*>(fp8_out), block_exponent_out);
  return cudaGetLastError();
}

cudaError_t mxfp4_expert_table_to_fp8_e4m3(const uint8_t* const* blocks_of, const uint8_t* const* scales_of,
                                           int64_t blocks_per_expert, const int32_t* active_experts,
                                           const int32_t* active_count, int max_slots, uint8_t* fp8_out,
                                           int16_t* block_exponent_out, cudaStream_t stream) {
  if (blocks_per_expert <= 0 || max_slots <= 0 || max_slots > 65535 || blocks_of == nullptr || scales_of == nullptr ||
      active_experts == nullptr || active_count == nullptr || fp8_out == nullptr || block_exponent_out == nullptr ||
      !aligned_16(fp8_out))
    return cudaErrorInvalidValue;
  const dim3 grid(grid_size(blocks_per_expert), static_cast<unsigned>(max_slots));
  mxfp4_experts_to_fp8_kernel<<<grid, kThreads, 0, stream>>>(nullptr, nullptr, blocks_of, scales_of, blocks_per_expert,
                                                             active_experts, active_count,
                                                             reinterpret_cast<uint4*>(fp8_out), block_exponent_out);
  return cudaGetLastError();
}

cudaError_t mxfp4_experts_to_bf16(const uint8_t* blocks, const uint8_t* scales, int64_t blocks_per_expert,
                                  const int32_t* active_experts, const int32_t* active_count, int max_slots,
                                  uint16_t* bf16_out, cudaStream_t stream) {
  if (blocks_per_expert <= 0 || max_slots <= 0 || max_slots > 65535 || blocks == nullptr || scales == nullptr ||
      active_experts == nullptr || active_count == nullptr || bf16_out == nullptr || !aligned_16(blocks) ||
      !aligned_16(bf16_out))
    return cudaErrorInvalidValue;
  const dim3 grid(grid_size(blocks_per_expert), static_cast<unsigned>(max_slots));
  mxfp4_experts_to_bf16_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(blocks), scales,
                                                              blocks_per_expert, active_experts, active_count,
                                                              reinterpret_cast<uint4*>(bf16_out));
  return cudaGetLastError();
}

}  // namespace day0::kernels
