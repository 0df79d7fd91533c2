#include "glm_moe_gemm.h"

#include "elementwise.h"
#include "moe_gemm.h"
#include "moe_routing.h"
#include "mxfp4_fp8.h"

namespace day0::kernels {
namespace {

constexpr int64_t kChunkTokens = 1024;

// The scratch, carved in 256-byte pieces in this order.
struct Layout {
  int64_t pairs = 0, slots = 0, max_tiles = 0;
  size_t counts = 0, sorted = 0, row_of = 0, active = 0, offsets = 0, active_count = 0, tile_slot = 0, tile_row = 0,
         tile_count = 0, x_hi = 0, x_lo = 0, xs_hi = 0, xs_lo = 0, act_hi = 0, act_lo = 0, ys = 0, ws = 0, ws_exp = 0,
         total = 0;
};

Layout layout(int64_t T, int top_k, int E, int64_t H, int64_t I) {
  Layout l;
  const int64_t t = T < kChunkTokens ? T : kChunkTokens;
  l.pairs = t * top_k;
  l.slots = l.pairs < E ? l.pairs : E;
  l.max_tiles = moe_max_tiles(l.pairs, E, kMoeGemmTileRows);
  size_t at = 0;
  const auto take = [&at](size_t bytes) {
    const size_t here = at;
    at += (bytes + 255) / 256 * 256;
    return here;
  };
  l.counts = take(static_cast<size_t>(E) * 4);
  l.sorted = take(static_cast<size_t>(l.pairs) * 4);
  l.row_of = take(static_cast<size_t>(l.pairs) * 4);
  l.active = take(static_cast<size_t>(l.slots) * 4);
  l.offsets = take(static_cast<size_t>(l.slots + 1) * 4);
  l.active_count = take(4);
  l.tile_slot = take(static_cast<size_t>(l.max_tiles) * 4);
  l.tile_row = take(static_cast<size_t>(l.max_tiles) * 4);
  l.tile_count = take(4);
  l.x_hi = take(static_cast<size_t>(t * H) * 2);
  l.x_lo = take(static_cast<size_t>(t * H) * 2);
  l.xs_hi = take(static_cast<size_t>(l.pairs * H) * 2);
  l.xs_lo = take(static_cast<size_t>(l.pairs * H) * 2);
  l.act_hi = take(static_cast<size_t>(l.pairs * I) * 2);
  l.act_lo = take(static_cast<size_t>(l.pairs * I) * 2);
  l.ys = take(static_cast<size_t>(l.pairs * H) * 4);
  l.ws = take(static_cast<size_t>(l.slots * 2 * I * H));
  l.ws_exp = take(static_cast<size_t>(l.slots * 2 * I * H / 32) * 2);
  l.total = at;
  return l;
}

bool valid(int64_t T, int top_k, int E, int64_t H, int64_t I) {
  return T > 0 && top_k >= 1 && top_k <= kGlmMaxTopK && E >= top_k && E <= kGlmMaxExperts && H > 0 && I > 0 &&
         H % 32 == 0 && I % 32 == 0 && H <= (int64_t{1} << 20) && I <= (int64_t{1} << 20);
}

}  // namespace

size_t glm_moe_gemm_scratch_bytes(int64_t T, int top_k, int E, int64_t H, int64_t I) {
  if (!valid(T, top_k, E, H, I)) return 0;
  return layout(T, top_k, E, H, I).total;
}

cudaError_t glm_moe_experts_gemm(const GlmExpertTable& table, const float* x, int64_t T, int64_t H, int64_t I, int E,
                                 int top_k, const int32_t* ids, const float* weights, float limit, bool accumulate,
                                 float* out, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (!valid(T, top_k, E, H, I) || !table.mxfp4 || table.gate_up_blocks == nullptr ||
      table.gate_up_scales == nullptr || table.down_blocks == nullptr || table.down_scales == nullptr ||
      x == nullptr || ids == nullptr || weights == nullptr || out == nullptr || scratch == nullptr ||
      (reinterpret_cast<uintptr_t>(scratch) & 255u) != 0 || scratch_bytes < glm_moe_gemm_scratch_bytes(T, top_k, E, H, I))
    return cudaErrorInvalidValue;
  const Layout l = layout(T, top_k, E, H, I);
  auto* base = static_cast<unsigned char*>(scratch);
  const auto i32 = [base](size_t at) { return reinterpret_cast<int32_t*>(base + at); };
  const auto u16 = [base](size_t at) { return reinterpret_cast<uint16_t*>(base + at); };
  MoeRoutes r;
  r.counts = i32(l.counts);
  r.sorted_pair = i32(l.sorted);
  r.row_of_pair = i32(l.row_of);
  r.active_experts = i32(l.active);
  r.slot_offsets = i32(l.offsets);
  r.active_count = i32(l.active_count);
  r.tile_slot = i32(l.tile_slot);
  r.tile_row = i32(l.tile_row);
  r.tile_count = i32(l.tile_count);
  auto* ws = reinterpret_cast<uint8_t*>(base + l.ws);
  auto* ws_exp = reinterpret_cast<int16_t*>(base + l.ws_exp);
  if (!accumulate) {
    const cudaError_t e = cudaMemsetAsync(out, 0, static_cast<size_t>(T * H) * sizeof(float), stream);
    if (e != cudaSuccess) return e;
  }
  for (int64_t t0 = 0; t0 < T; t0 += kChunkTokens) {
    const int64_t n = T - t0 < kChunkTokens ? T - t0 : kChunkTokens;
    const int32_t* chunk_ids = ids + t0 * top_k;
    const float* chunk_weights = weights + t0 * top_k;
    const int slots = static_cast<int>(n * top_k < E ? n * top_k : E);
    cudaError_t e = moe_build_routes(chunk_ids, n, top_k, E, kMoeGemmTileRows, r, stream);
    if (e == cudaSuccess) e = split_bf16(x + t0 * H, n * H, u16(l.x_hi), u16(l.x_lo), stream);
    if (e == cudaSuccess) e = moe_gather_rows(u16(l.x_hi), r.sorted_pair, n, top_k, H, u16(l.xs_hi), stream);
    if (e == cudaSuccess) e = moe_gather_rows(u16(l.x_lo), r.sorted_pair, n, top_k, H, u16(l.xs_lo), stream);
    if (e != cudaSuccess) return e;
    MoeGemmArgs g;
    g.active_experts = r.active_experts;
    g.slot_offsets = r.slot_offsets;
    g.tile_slot = r.tile_slot;
    g.tile_row = r.tile_row;
    g.tile_count = r.tile_count;
    g.max_tiles = moe_max_tiles(n * top_k, E, kMoeGemmTileRows);
    g.w_fp8 = ws;
    g.w_exponent = ws_exp;
    // gate/up: [2I, H] per expert, gate rows first.
    e = mxfp4_expert_table_to_fp8_e4m3(table.gate_up_blocks, table.gate_up_scales, 2 * I * H / 32, r.active_experts,
                                       r.active_count, slots, ws, ws_exp, stream);
    if (e != cudaSuccess) return e;
    g.x = u16(l.xs_hi);
    g.x_lo = u16(l.xs_lo);
    g.N = static_cast<int>(2 * I);
    g.K = static_cast<int>(H);
    g.gate_up_halves = true;
    g.epilogue = MoeEpilogue::swiglu;
    g.swiglu_limit = limit;
    g.swiglu_alpha = 1.0f;
    g.swiglu_up_offset = 0.0f;
    g.act_out = u16(l.act_hi);
    g.act_lo_out = u16(l.act_lo);
    e = moe_grouped_gemm(g, stream);
    if (e != cudaSuccess) return e;
    // down: [H, I] per expert, each row times its pair's routing weight.
    e = mxfp4_expert_table_to_fp8_e4m3(table.down_blocks, table.down_scales, H * I / 32, r.active_experts,
                                       r.active_count, slots, ws, ws_exp, stream);
    if (e != cudaSuccess) return e;
    g.x = u16(l.act_hi);
    g.x_lo = u16(l.act_lo);
    g.N = static_cast<int>(H);
    g.K = static_cast<int>(I);
    g.gate_up_halves = false;
    g.epilogue = MoeEpilogue::weighted;
    g.y_out = reinterpret_cast<float*>(base + l.ys);
    g.sorted_pair = r.sorted_pair;
    g.pair_weights = chunk_weights;
    e = moe_grouped_gemm(g, stream);
    if (e == cudaSuccess)
      e = moe_combine(reinterpret_cast<float*>(base + l.ys), r.row_of_pair, n, top_k, H, out + t0 * H, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace day0::kernels
