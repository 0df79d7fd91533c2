#pragma once
// The decode step's routes taken inside the expert GEMVs: one warp turns a token's router logits
// into its top-k experts and their softmax weights, so the router kernel only writes logits and
// no launch waits on a separate top-k (mxfp4_gemv.h, MoeDecodeArgs::logits).
#include <cmath>
#include <cstdint>

#include "device_util.cuh"
#include "moe_routing.h"

namespace day0::kernels::detail {

// Shared memory of warp_routes(): the logits, then the k routes (id, weight), highest first.
struct RouteScratch {
  float logits[kDecodeRouteMaxExperts];
  float value[kRouterMaxTopK];
  int32_t id[kRouterMaxTopK];
  float weight[kRouterMaxTopK];
};

// One warp (all 32 lanes): the top-k of the E logits (global memory, E <= kDecodeRouteMaxExperts,
// 1 <= k <= min(E, kRouterMaxTopK)) in router_topk()'s order (highest first, equal logits keep the
// lower id first) with the softmax over the k selected, into r.id / r.weight[0..k). Each logit's
// rank is the number of logits before it in that order, so the ranks are a permutation and rank j
// is route j. A NaN logit ranks as -inf (behind every number, ties by id); selected logits equal
// to an infinite top one share its weight (no NaN weights). Ends with the warp synchronised on r.
__device__ __forceinline__ void warp_routes(const float* logits, int E, int k, int lane, RouteScratch& r) {
#pragma unroll 4
  for (int e = lane; e < E; e += 32) {
    const float v = logits[e];
    r.logits[e] = v == v ? v : -INFINITY;
  }
  __syncwarp();
  for (int e = lane; e < E; e += 32) {
    const float v = r.logits[e];
    int rank = 0;
#pragma unroll 8
    for (int o = 0; o < E; ++o) {
      const float u = r.logits[o];  // the same address for every lane: a broadcast
      rank += u > v || (u == v && o < e);
    }
    if (rank < k) {
      r.id[rank] = e;
      r.value[rank] = v;
    }
  }
  __syncwarp();
  float w = 0.0f;
  if (lane < k) {
    const float d = r.value[lane] - r.value[0];  // NaN only for two equal infinities
    w = d == d ? expf(d) : 1.0f;
  }
  const float z = warp_sum(w);
  if (lane < k) r.weight[lane] = w / z;
  __syncwarp();
}

}  // namespace day0::kernels::detail
