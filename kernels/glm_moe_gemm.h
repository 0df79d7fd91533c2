#pragma once
// glm5_next's routed MXFP4 experts for many tokens at once (prefill) on the tensor cores, through
// the shared expert workspace: the same result as glm_moe_experts (glm_moe.h), computed as
//   1. the (token, slot) pairs grouped by expert (moe_build_routes),
//   2. each routed expert's gate/up converted into the workspace (E4M3 values with one block
//      exponent per 32, exactly the MXFP4 weights; mxfp4_expert_table_to_fp8_e4m3),
//   3. the grouped GEMM (moe_gemm) on fp32 activations carried as hi + lo bf16 parts, the clamped
//      SwiGLU in its epilogue (gate rows then up rows, silu(min(gate, L)) * clamp(up, -L, L)),
//      the activations written again as hi + lo parts,
//   4. down converted into the workspace and the second grouped GEMM, each row times its routing
//      weight,
//   5. the combine in slot order j = 0..top_k-1, added to `out` (which starts at 0 unless
//      accumulate).
// The sums run on the tensor cores in fp32 with the activations split in two bf16 parts, so they
// agree with the CPU's fp32 sums to about 1e-5 relative (not bit for bit), and are deterministic:
// no float atomics, every row's sums in a fixed order.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "glm_moe.h"

namespace day0::kernels {

// Bytes of device scratch glm_moe_experts_gemm needs: routes, the gathered hi/lo activations,
// the SwiGLU outputs, the expert outputs of up to 1,024 tokens (larger T goes in such chunks),
// and the workspace for min(E, 1,024 * top_k) experts' gate/up at one byte per weight. 0 for
// invalid sizes.
size_t glm_moe_gemm_scratch_bytes(int64_t T, int top_k, int E, int64_t H, int64_t I);

// out[t] (+)= sum over j of weights[t, j] * expert_{ids[t, j]}(x[t]). table.mxfp4 must be set;
// H % 32 == 0, I % 32 == 0; ids in [0, E) (the router's); x, out [T, H] fp32, 16-byte aligned;
// scratch 256-byte aligned, glm_moe_gemm_scratch_bytes(...) bytes. CUDA-graph capturable.
cudaError_t glm_moe_experts_gemm(const GlmExpertTable& table, const float* x, int64_t T, int64_t H, int64_t I, int E,
                                 int top_k, const int32_t* ids, const float* weights, float limit, bool accumulate,
                                 float* out, void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace day0::kernels
