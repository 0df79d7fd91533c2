#pragma once
// The router's top-k as one warp takes it: a token's logits into its top-k experts and their
// softmax weights. router_topk() runs it per token; the decode expert GEMVs run it themselves, so
// the decode router kernel only writes logits and no launch waits on a separate top-k
// (mxfp4_gemv.h, MoeDecodeArgs::logits).
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

// The ranks of warp_routes(): each lane's logits e = lane, lane + 32, ... against all E, where
// value_at(o) is logit o with NaN as -inf; rank j < k goes to r.id / r.value[j].
template <typename ValueAt>
__device__ __forceinline__ void rank_routes(int E, int k, int lane, ValueAt value_at, RouteScratch& r) {
  for (int e = lane; e < E; e += 32) {
    const float v = value_at(e);
    int rank = 0;
#pragma unroll 8
    for (int o = 0; o < E; ++o) {
      const float u = value_at(o);  // the same address for every lane: a broadcast
      rank += u > v || (u == v && o < e);
    }
    if (rank < k) {
      r.id[rank] = e;
      r.value[rank] = v;
    }
  }
}

// One warp (all 32 lanes): the top-k of the E logits (global memory, 1 <= k <= min(E,
// kRouterMaxTopK)) in router_topk()'s order (highest first, equal logits keep the lower id first)
// with the softmax over the k selected, into r.id / r.weight[0..k). Each logit's rank is the
// number of logits before it in that order, so the ranks are a permutation and rank j is route j.
// A NaN logit ranks as -inf (behind every number, ties by id); selected logits equal to an
// infinite top one share its weight (no NaN weights). Up to kDecodeRouteMaxExperts logits are
// staged in r first; more are read where they are, E times each. Ends with the warp synchronised
// on r.
__device__ __forceinline__ void warp_routes(const float* logits, int E, int k, int lane, RouteScratch& r) {
  if (E <= kDecodeRouteMaxExperts) {
#pragma unroll 4
    for (int e = lane; e < E; e += 32) {
      const float v = logits[e];
      r.logits[e] = v == v ? v : -INFINITY;
    }
    __syncwarp();
    rank_routes(E, k, lane, [&](int o) { return r.logits[o]; }, r);
  } else {
    rank_routes(
        E, k, lane,
        [&](int o) {
          const float v = logits[o];
          return v == v ? v : -INFINITY;
        },
        r);
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
