#pragma once
// The DSA k-pool indexer of glm5_next's sparse-attention layers (blocks::indexer_select): which
// cached positions each query attends. Three steps, each reading the position of the first new
// token from device memory (so one captured graph serves every decode step):
//   indexer_append  new tokens' keys (LayerNorm) and gates into the per-token caches;
//   indexer_pool    the pools those tokens complete: softmax-over-the-pool weighted keys;
//   indexer_select  pool scores per query and an exact top-k over them, written as token
//                   positions (best pools first, then the incomplete tail, then -1).
// All arithmetic fp32; the selection is exact and deterministic for the scores computed (ties:
// the lower pool index first, as the CPU's comparator orders them).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace day0::kernels {

// Most pools one query may keep (topk / kpool, clamped to the pools the cache can hold).
inline constexpr int64_t kIndexerMaxChosen = 8192;

// Keys and gates of T new tokens into rows position .. position + T - 1 of the caches:
// keys[row] = LayerNorm(key_raw[t]) (eps 1e-6, weight ln_w, bias ln_b), gates[row] = gate_raw[t].
// key_raw, gate_raw: [T, d] fp32; ln_w, ln_b: [d] fp32; keys, gates: [capacity, d] fp32.
cudaError_t indexer_append(const float* key_raw, const float* gate_raw, int64_t T, int d, const float* ln_w,
                           const float* ln_b, const int32_t* position, float* keys, float* gates, cudaStream_t stream);

// The pools completed by the T tokens at position ..: every pool p with
// position <= p * kpool + kpool - 1 < position + T gets, per channel c,
//   pooled[p][c] = sum_i softmax_i(gates[p * kpool + i][c] + ape[i][c]) * keys[p * kpool + i][c].
// keys, gates: [capacity, d]; ape: [kpool, d]; pooled: [capacity / kpool, d] fp32.
cudaError_t indexer_pool(const float* keys, const float* gates, const float* ape, int64_t T, int d, int kpool,
                         const int32_t* position, float* pooled, cudaStream_t stream);

// Scratch bytes indexer_select needs (a score row and a histogram per query of a chunk; queries
// beyond a chunk are handled chunk by chunk).
size_t indexer_select_scratch_bytes(int64_t T, int64_t capacity, int kpool);

// Selection of T queries: q [T, heads, d] (the wq_b output), w [T, heads] (the weights_proj
// output, unscaled), pooled [capacity / kpool, d]. Query t at p = *position + t sees
// visible = (p + 1) / kpool pools and scores pool j with
//   score_j = sum_h w[h] * heads^-0.5 * relu(q_h . pooled_j * d^-0.5),
// keeps its min(topk / kpool, visible) best (equal scores: lower index first) and writes row t of
// selection [T, width]: the kept pools' tokens best first (pool j: j * kpool .. j * kpool +
// kpool - 1), then the tail visible * kpool .. p, then -1 up to width.
// Requirements (else cudaErrorInvalidValue): heads > 0, d a multiple of 4 in [4, 256], kpool > 0,
// topk >= 0, capacity > 0, width >= min(topk, capacity) + kpool - 1, min(topk / kpool,
// capacity / kpool) <= kIndexerMaxChosen, 16-byte aligned q and pooled, scratch of
// indexer_select_scratch_bytes(T, capacity, kpool) bytes, 16-byte aligned.
cudaError_t indexer_select(const float* q, const float* w, const float* pooled, int64_t T, int heads, int d, int kpool,
                           int64_t topk, const int32_t* position, int64_t capacity, int32_t* selection, int64_t width,
                           void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace day0::kernels
