#pragma once
// RMSNorm, as engine/backend/cpu computes it: y[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight,
// in fp32, written as bf16 (the tensor-core GEMMs' input) and/or fp32 (the decode GEMVs').
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// x: [T, D] fp32; weight: [D] bf16; out_bf16 [T, D] and out_f32 [T, D] may each be null (not
// both).
cudaError_t rms_norm(const float* x, int64_t T, int64_t D, const uint16_t* weight, float eps, uint16_t* out_bf16,
                     float* out_f32, cudaStream_t stream);

}  // namespace day0::kernels
