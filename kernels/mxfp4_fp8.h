#pragma once
// MXFP4 expert weights -> FP8 E4M3 (the online conversion) and -> bf16, on the GPU.
//
// Input layout, as in gpt-oss checkpoints: `blocks` [n_blocks][16] bytes, each block 32 E2M1
// codes packed two per byte, low nibble first (element 2i in the low nibble of byte i); `scales`
// [n_blocks] E8M0 bytes, value 2^(scale - 127). Element j of block b is
// e2m1(code) * 2^(scales[b] - 127).
//
// All pointers are device pointers. `blocks`, `fp8_out` and `bf16_out` must be 16-byte aligned
// (each thread moves whole blocks with 16-byte vector loads and stores); cudaMalloc's pointers
// are. A null or misaligned pointer, or a negative n_blocks, returns cudaErrorInvalidValue
// without a launch; n_blocks == 0 launches nothing and returns cudaSuccess (null pointers are
// fine then). Otherwise the kernel is queued
// on `stream` and the result of cudaGetLastError() after the launch is returned.
//
// The results are bit-identical to day0::formats::mxfp4_to_fp8_e4m3 and
// day0::formats::mxfp4_dequantize_bf16 (engine/formats/mxfp4.h) for every valid scale byte.
// The kernels do not validate scales: checkpoints are validated when loaded. A block whose scale
// is 0xFF (NaN) gets block exponent 128, outside the valid range [-127, 127], from the FP8
// kernel, and bf16 NaN (0x7FC0) for every element from the bf16 kernel.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// fp8_out [n_blocks * 32]: the E4M3 byte of each element's unscaled E2M1 value (exact).
// block_exponent_out [n_blocks]: scales[b] - 127. Then
// e4m3(fp8_out[i]) * 2^block_exponent_out[i / 32] is element i's MXFP4 value exactly.
cudaError_t mxfp4_to_fp8_e4m3(const uint8_t* blocks, const uint8_t* scales, int64_t n_blocks, uint8_t* fp8_out,
                              int16_t* block_exponent_out, cudaStream_t stream);

// bf16_out [n_blocks * 32] bf16 bit patterns of e2m1(code) * 2^(scale - 127), with the scale
// folded in. Exact (bf16 shares float's exponent range and E2M1 has one mantissa bit), bf16
// subnormals included, except that the largest scales overflow to +-inf: 254 with |e2m1| >= 2,
// 253 with |e2m1| >= 4. Computed in integer arithmetic, so flush-to-zero settings do not matter.
cudaError_t mxfp4_to_bf16(const uint8_t* blocks, const uint8_t* scales, int64_t n_blocks, uint16_t* bf16_out,
                          cudaStream_t stream);

// The online conversion of one MoE layer's routed experts into the shared per-GPU workspace.
// `blocks` [E, rows, cols/32, 16] and `scales` [E, rows, cols/32] hold every expert of the
// layer (blocks_per_expert = rows * cols / 32); slot s < *active_count (a device scalar) gets
// expert active_experts[s]: fp8_out [slots, rows, cols] E4M3 with block_exponent_out
// [slots, rows, cols/32] kept separate (as mxfp4_to_fp8_e4m3), or bf16_out [slots, rows, cols]
// with the scale folded in (GPUs without FP8). The grid covers max_slots slots (<= 65535).
cudaError_t mxfp4_experts_to_fp8_e4m3(const uint8_t* blocks, const uint8_t* scales, int64_t blocks_per_expert,
                                      const int32_t* active_experts, const int32_t* active_count, int max_slots,
                                      uint8_t* fp8_out, int16_t* block_exponent_out, cudaStream_t stream);
// The same through a table of per-expert device pointers (a cache slot may stand in for a resident
// expert): expert e's blocks at blocks_of[e] (16-byte aligned), its scales at scales_of[e].
cudaError_t mxfp4_expert_table_to_fp8_e4m3(const uint8_t* const* blocks_of, const uint8_t* const* scales_of,
                                           int64_t blocks_per_expert, const int32_t* active_experts,
                                           const int32_t* active_count, int max_slots, uint8_t* fp8_out,
                                           int16_t* block_exponent_out, cudaStream_t stream);
cudaError_t mxfp4_experts_to_bf16(const uint8_t* blocks, const uint8_t* scales, int64_t blocks_per_expert,
                                  const int32_t* active_experts, const int32_t* active_count, int max_slots,
                                  uint16_t* bf16_out, cudaStream_t stream);

}  // namespace day0::kernels
