#include "token_sampler.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

#include "device_util.cuh"
#include "step_end.cuh"

namespace day0::kernels {

// The running state of one selection, in the workspace. A kept prefix of the ordered tokens is
// (tau, keep_ties): every token whose key is above tau, and the keep_ties lowest ids among those
// whose key equals tau; cut is then the id below which tokens at tau are kept.
struct SamplerSelection {
  float max;                // the largest logit after the penalties
  float sum;                // sum over the tokens of exp((l - max) / T)
  int32_t best;             // the arg max (lowest id among equals)
  uint32_t prefix;          // the key bits decided so far by the running radix select
  int32_t remaining_count;  // top-k: tokens still to take inside the prefix's bucket
  float remaining_mass;     // top-p: mass still to take inside the prefix's bucket
  float mass_above;         // mass of the tokens above the prefix's bucket
  uint32_t tau;
  int32_t keep_ties;
  int32_t ties;  // tokens at tau
  int32_t cut;   // INT_MAX: every token at tau is kept; -1: not resolved yet
};

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 8;
constexpr int kMaxCtas = 1024;
constexpr int kBuckets = 2048;

using detail::end_step;
using detail::splitmix64;

// A float's bits as an unsigned key that orders as the floats do (-0 and +0 alike).
__device__ __forceinline__ uint32_t ordered_key(float l) {
  const uint32_t u = __float_as_uint(l == 0.0f ? 0.0f : l);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Keeps (best value, lowest index among equals); NaN never wins.
__device__ __forceinline__ void consider(float v, int32_t i, float& best, int32_t& best_i) {
  if (v == v && (best_i < 0 || v > best || (v == best && i < best_i))) {
    best = v;
    best_i = i;
  }
}

// Merges (max, sum of exp((l - max) * inv_t)) pairs; a max of -inf carries no mass.
__device__ __forceinline__ void merge_softmax(float& m, float& s, float om, float os, float inv_t) {
  if (om == -INFINITY) return;
  if (m == -INFINITY) {
    m = om;
    s = os;
  } else if (om > m) {
    s = s * expf((m - om) * inv_t) + os;
    m = om;
  } else {
    s += os * expf((om - m) * inv_t);
  }
}

// Block-wide best and softmax pair into thread 0 (other threads: partial values).
__device__ void block_reduce(float& best, int32_t& best_i, float& m, float& s, float inv_t) {
  __shared__ float bv[kThreads / 32], mv[kThreads / 32], sv[kThreads / 32];
  __shared__ int32_t bi[kThreads / 32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, best, offset);
    const int32_t oi = __shfl_xor_sync(0xffffffffu, best_i, offset);
    const float om = __shfl_xor_sync(0xffffffffu, m, offset);
    const float os = __shfl_xor_sync(0xffffffffu, s, offset);
    if (oi >= 0) consider(ov, oi, best, best_i);
    merge_softmax(m, s, om, os, inv_t);
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();
  if (lane == 0) {
    bv[warp] = best;
    bi[warp] = best_i;
    mv[warp] = m;
    sv[warp] = s;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / 32; ++w) {
    if (bi[w] >= 0) consider(bv[w], bi[w], best, best_i);
    merge_softmax(m, s, mv[w], sv[w], inv_t);
  }
}

// True in every thread of the CTA that finished last (its predecessors' writes then visible).
__device__ bool finish_cta(unsigned* done) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last) __threadfence();
  return last;
}

// Penalties (in place), then per CTA the arg max and the softmax pair; the last CTA merges them,
// starts the selection and, when greedy, picks.
__global__ void __launch_bounds__(kThreads)
    stats_kernel(float* __restrict__ logits, int64_t n, int64_t chunk, unsigned mode, SamplerWorkspace ws,
                 const int32_t* fed, int32_t* out, StepEnd step_end) {
  detail::pdl_wait();
  detail::pdl_release();
  const SamplerConfig cfg = *ws.config;
  const bool draw = mode & kSampleDraw, penalties = mode & kSamplePenalties;
  const float inv_t = draw ? cfg.inv_temperature : 1.0f;
  const int64_t fed_token = fed != nullptr ? *fed : -1;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * chunk, end = min(n, begin + chunk);
  float best = -INFINITY, m = -INFINITY, s = 0.0f;
  int32_t best_i = -1;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float raw = logits[i];
    float l = raw;
    if (l != l) l = -INFINITY;
    if (l == INFINITY) l = FLT_MAX;
    if (penalties && (ws.seen[i] || i == fed_token)) {
      if (cfg.repetition_penalty != 1.0f) l = l > 0.0f ? l / cfg.repetition_penalty : l * cfg.repetition_penalty;
      l -= cfg.presence_penalty;
    }
    if (!(l == raw)) logits[i] = l;
    consider(l, static_cast<int32_t>(i), best, best_i);
    if (l != -INFINITY) merge_softmax(m, s, l, 1.0f, inv_t);
  }
  block_reduce(best, best_i, m, s, inv_t);
  if (threadIdx.x == 0) {
    ws.cta_max[blockIdx.x] = m;
    ws.cta_sum[blockIdx.x] = s;
    ws.cta_count[blockIdx.x] = static_cast<uint32_t>(best_i);
    ws.cta_best[blockIdx.x] = __float_as_int(best);
  }
  if (!finish_cta(ws.done)) return;
  best = -INFINITY, m = -INFINITY, s = 0.0f;
  best_i = -1;
  for (int c = threadIdx.x; c < static_cast<int>(gridDim.x); c += kThreads) {
    const auto i = static_cast<int32_t>(__ldcg(ws.cta_count + c));
    if (i >= 0) consider(__int_as_float(__ldcg(ws.cta_best + c)), i, best, best_i);
    merge_softmax(m, s, __ldcg(ws.cta_max + c), __ldcg(ws.cta_sum + c), inv_t);
  }
  block_reduce(best, best_i, m, s, inv_t);
  if (threadIdx.x != 0) return;
  SamplerSelection& sel = *ws.selection;
  sel.max = m;
  sel.sum = s;
  sel.best = best_i;
  sel.prefix = 0;
  sel.remaining_count = cfg.top_k;
  sel.remaining_mass = cfg.top_p * s;
  sel.mass_above = 0.0f;
  sel.tau = 0;
  sel.keep_ties = INT_MAX;
  sel.ties = 0;
  sel.cut = INT_MAX;
  if (penalties && fed_token >= 0 && fed_token < n) ws.seen[fed_token] = 1;
  *ws.done = 0;
  if (!draw) end_step(best_i < 0 ? 0 : best_i, out, step_end);
}

// One pass of the radix select: pass 0 buckets the keys' top 11 bits, pass 1 the next 11 of the
// keys in the chosen bucket, pass 2 the last 10. kind 0 selects by count (top-k), 1 by mass
// (top-p). The last CTA finds the bucket where the running total reaches the target, scanning
// from the highest key, and after pass 2 records the kept prefix.
__global__ void __launch_bounds__(kThreads)
    radix_kernel(const float* __restrict__ logits, int64_t n, int64_t chunk, int pass, int kind, SamplerWorkspace ws) {
  __shared__ uint32_t hc[kBuckets];
  __shared__ float hm[kBuckets];
  __shared__ uint32_t tc[kThreads];
  __shared__ float tm[kThreads];
  for (int b = threadIdx.x; b < kBuckets; b += kThreads) {
    hc[b] = 0;
    hm[b] = 0.0f;
  }
  detail::pdl_wait();
  detail::pdl_release();
  __syncthreads();
  const SamplerConfig& cfg = *ws.config;
  SamplerSelection& sel = *ws.selection;
  const float inv_t = cfg.inv_temperature, top = sel.max;
  const uint32_t prefix = sel.prefix;
  const int bits = pass == 2 ? 10 : 11;
  const int shift = pass == 0 ? 21 : pass == 1 ? 10 : 0;
  const int buckets = 1 << bits;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * chunk, end = min(n, begin + chunk);
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float l = logits[i];
    if (l != l) continue;
    const uint32_t key = ordered_key(l);
    if (pass > 0 && (key >> (shift + bits)) != prefix) continue;
    const uint32_t b = (key >> shift) & static_cast<uint32_t>(buckets - 1);
    atomicAdd(&hc[b], 1u);
    if (l != -INFINITY) atomicAdd(&hm[b], expf((l - top) * inv_t));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < buckets; b += kThreads)
    if (hc[b] != 0) {
      atomicAdd(ws.hist_count + b, hc[b]);
      atomicAdd(ws.hist_mass + b, hm[b]);
    }
  if (!finish_cta(ws.done)) return;
  // The last CTA: the summed histogram into shared memory (and the global one back to zero).
  for (int b = threadIdx.x; b < buckets; b += kThreads) {
    hc[b] = __ldcg(ws.hist_count + b);
    hm[b] = __ldcg(ws.hist_mass + b);
    ws.hist_count[b] = 0;
    ws.hist_mass[b] = 0.0f;
  }
  __syncthreads();
  // Thread t's buckets are [t * per, (t + 1) * per); totals per thread, then per lane of warp 0
  // (lane j: threads 8j .. 8j + 7).
  const int per = buckets / kThreads;
  uint32_t c_sum = 0;
  float m_sum = 0.0f;
  for (int j = per - 1; j >= 0; --j) {
    c_sum += hc[threadIdx.x * per + j];
    m_sum += hm[threadIdx.x * per + j];
  }
  tc[threadIdx.x] = c_sum;
  tm[threadIdx.x] = m_sum;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  const int lane = threadIdx.x;
  const int64_t want_count = sel.remaining_count;
  const float want_mass = sel.remaining_mass;
  uint32_t lc = 0;
  float lm = 0.0f;
  for (int t = 7; t >= 0; --t) {
    lc += tc[lane * 8 + t];
    lm += tm[lane * 8 + t];
  }
  // Inclusive totals from the highest lane down.
  uint32_t ic = lc;
  float im = lm;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const uint32_t oc = __shfl_down_sync(0xffffffffu, ic, offset);
    const float om = __shfl_down_sync(0xffffffffu, im, offset);
    if (lane + offset < 32) {
      ic += oc;
      im += om;
    }
  }
  const auto reaches = [&](uint32_t c, float m) {
    return kind == 0 ? static_cast<int64_t>(c) >= want_count : m >= want_mass;
  };
  const unsigned reached = __ballot_sync(0xffffffffu, lc != 0 && reaches(ic, im));
  const unsigned nonempty = __ballot_sync(0xffffffffu, lc != 0);
  // The lane where the running total from the top reaches the target (the highest such lane),
  // or, when none does (fewer tokens than top_k, or rounding short of top_p), the lowest lane
  // holding tokens, whose lowest bucket then ends the walk: everything is kept.
  const int chosen = reached != 0 ? 31 - __clz(reached) : nonempty != 0 ? __ffs(nonempty) - 1 : -1;
  if (lane != chosen && !(chosen < 0 && lane == 0)) return;
  // Walk the lane's buckets from the top: the first whose running total reaches the target, else
  // the lowest non-empty one.
  int bucket = -1;
  if (chosen >= 0) {
    uint32_t cum_c = ic - lc;
    float cum_m = im - lm;
    for (int b = (lane * 8 + 8) * per - 1; b >= lane * 8 * per; --b) {
      if (hc[b] == 0) continue;
      bucket = b;
      if (reaches(cum_c + hc[b], cum_m + hm[b])) break;
      cum_c += hc[b];
      cum_m += hm[b];
    }
  }
  if (bucket < 0) bucket = 0;  // no token in range (every logit NaN)
  // What lies above the chosen bucket.
  uint32_t before_c = ic - lc;
  float before_m = im - lm;
  for (int b = (lane * 8 + 8) * per - 1; b > bucket && chosen >= 0; --b) {
    before_c += hc[b];
    before_m += hm[b];
  }
  const uint32_t ties = hc[bucket];
  const float tie_mass = hm[bucket];
  sel.remaining_count = static_cast<int32_t>(
      want_count > static_cast<int64_t>(before_c) ? want_count - static_cast<int64_t>(before_c) : 0);
  sel.remaining_mass = want_mass - before_m;
  sel.mass_above += before_m;
  sel.prefix = pass == 0 ? static_cast<uint32_t>(bucket) : (prefix << bits) | static_cast<uint32_t>(bucket);
  if (pass != 2) {
    *ws.done = 0;
    return;
  }
  // pass 2 leaves one key: keep the tokens above it and some of those equal to it.
  const uint32_t tau = sel.prefix;
  const int32_t n_ties = static_cast<int32_t>(ties);
  const float q = ties > 0 ? tie_mass / static_cast<float>(ties) : 0.0f;
  if (kind == 0) {
    const int32_t keep = max(1, min(sel.remaining_count, n_ties));
    sel.tau = tau;
    sel.keep_ties = keep;
    sel.ties = n_ties;
    // top-p is taken over the probabilities of the top-k set.
    sel.remaining_mass = cfg.top_p * (sel.mass_above + q * static_cast<float>(keep));
  } else {
    int64_t need = q > 0.0f ? static_cast<int64_t>(ceilf(sel.remaining_mass / q)) : n_ties;
    need = need < 1 ? 1 : need > n_ties ? n_ties : need;
    const auto keep = static_cast<int32_t>(need);
    if (tau > sel.tau || (tau == sel.tau && keep < sel.keep_ties)) {
      sel.tau = tau;
      sel.keep_ties = keep;
      sel.ties = n_ties;
    }
  }
  sel.cut = sel.keep_ties >= sel.ties ? INT_MAX : -1;
  sel.prefix = 0;
  sel.mass_above = 0.0f;
  *ws.done = 0;
}

// When the kept prefix ends inside a run of equal logits, the id of the first token of the run
// not kept (the keep_ties-th by id): each CTA counts the run's tokens in its range, the last
// finds the range and the token.
__global__ void __launch_bounds__(kThreads)
    tie_kernel(const float* __restrict__ logits, int64_t n, int64_t chunk, SamplerWorkspace ws) {
  __shared__ uint32_t warp_counts[kThreads / 32];
  detail::pdl_wait();
  detail::pdl_release();
  SamplerSelection& sel = *ws.selection;
  if (sel.cut != -1) return;  // every token at tau is kept (uniform over the grid)
  const uint32_t tau = sel.tau;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * chunk, end = min(n, begin + chunk);
  uint32_t count = 0;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float l = logits[i];
    count += l == l && ordered_key(l) == tau;
  }
  for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_xor_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31) == 0) warp_counts[threadIdx.x >> 5] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_counts[w];
    ws.cta_count[blockIdx.x] = total;
  }
  if (!finish_cta(ws.done)) return;
  if (threadIdx.x >= 32) return;
  __shared__ int64_t range;
  __shared__ int32_t rank;
  if (threadIdx.x == 0) {
    int64_t r = sel.keep_ties;
    range = -1;
    for (int c = 0; c < static_cast<int>(gridDim.x); ++c) {
      const auto k = static_cast<int64_t>(__ldcg(ws.cta_count + c));
      if (r < k) {
        range = c;
        break;
      }
      r -= k;
    }
    rank = static_cast<int32_t>(r);
  }
  __syncwarp();
  int32_t cut = INT_MAX;
  if (range >= 0) {
    int32_t r = rank;
    const int64_t lo = range * chunk, hi = min(n, lo + chunk);
    for (int64_t base = lo; base < hi; base += 32) {
      const int64_t i = base + threadIdx.x;
      bool eq = false;
      if (i < hi) {
        const float l = logits[i];
        eq = l == l && ordered_key(l) == tau;
      }
      const unsigned ballot = __ballot_sync(0xffffffffu, eq);
      const int pc = __popc(ballot);
      if (r < pc) {
        cut = static_cast<int32_t>(base + __fns(ballot, 0, r + 1));
        break;
      }
      r -= pc;
    }
  }
  if (threadIdx.x == 0) {
    sel.cut = cut;
    *ws.done = 0;
  }
}

// The draw: arg max over the kept tokens of l / T + Gumbel noise.
__global__ void __launch_bounds__(kThreads)
    draw_kernel(const float* __restrict__ logits, int64_t n, int64_t chunk, unsigned mode, SamplerWorkspace ws,
                int32_t* out, StepEnd step_end) {
  detail::pdl_wait();
  detail::pdl_release();
  const SamplerConfig cfg = *ws.config;
  const SamplerSelection& sel = *ws.selection;
  const bool filtered = mode & (kSampleTopK | kSampleTopP), min_p = mode & kSampleMinP;
  const uint32_t tau = filtered ? sel.tau : 0;
  const int64_t cut = filtered ? sel.cut : INT_MAX;
  const float top = min_p ? sel.max : 0.0f;
  const float inv_t = cfg.inv_temperature;
  const uint64_t stream = splitmix64(cfg.seed ^ splitmix64(static_cast<uint64_t>(cfg.draws) + 1));
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * chunk, end = min(n, begin + chunk);
  float best = -INFINITY;
  int32_t best_i = -1;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float l = logits[i];
    if (l != l) continue;
    if (filtered) {
      const uint32_t key = ordered_key(l);
      if (key < tau || (key == tau && i >= cut)) continue;
    }
    if (min_p && !(expf((l - top) * inv_t) >= cfg.min_p)) continue;
    // 24 random bits -> u in (0, 1).
    const float u = (static_cast<float>(splitmix64(stream + static_cast<uint64_t>(i)) >> 40) + 0.5f) * 0x1p-24f;
    consider(l * inv_t - logf(-logf(u)), static_cast<int32_t>(i), best, best_i);
  }
  float m = -INFINITY, s = 0.0f;
  block_reduce(best, best_i, m, s, 1.0f);
  if (threadIdx.x == 0) {
    ws.cta_count[blockIdx.x] = static_cast<uint32_t>(best_i);
    ws.cta_best[blockIdx.x] = __float_as_int(best);
  }
  if (!finish_cta(ws.done)) return;
  best = -INFINITY;
  best_i = -1;
  for (int c = threadIdx.x; c < static_cast<int>(gridDim.x); c += kThreads) {
    const auto i = static_cast<int32_t>(__ldcg(ws.cta_count + c));
    if (i >= 0) consider(__int_as_float(__ldcg(ws.cta_best + c)), i, best, best_i);
  }
  block_reduce(best, best_i, m, s, 1.0f);
  if (threadIdx.x != 0) return;
  ws.config->draws = cfg.draws + 1;
  *ws.done = 0;
  end_step(best_i < 0 ? 0 : best_i, out, step_end);
}

std::size_t align_up(std::size_t x) { return (x + 255) / 256 * 256; }

// Tokens per CTA: 2,048 (8 per thread) up to kMaxCtas CTAs, more per CTA beyond.
int64_t chunk_for(int64_t n) {
  const int64_t base = int64_t{kThreads} * kPerThread;
  if (n <= base * kMaxCtas) return base;
  return (n + kMaxCtas - 1) / kMaxCtas;
}

}  // namespace

SamplerConfig sampler_config(float temperature, int top_k, float top_p, float min_p, float repetition_penalty,
                             float presence_penalty, uint64_t seed) {
  SamplerConfig c;
  c.inv_temperature = temperature > 0.0f ? 1.0f / temperature : 1.0f;
  c.top_k = top_k;
  c.top_p = top_p;
  c.min_p = min_p;
  c.repetition_penalty = repetition_penalty;
  c.presence_penalty = presence_penalty;
  c.seed = seed;
  c.draws = 0;
  return c;
}

unsigned sampler_mode(float temperature, int top_k, float top_p, float min_p, float repetition_penalty,
                      float presence_penalty, int64_t vocab) {
  unsigned mode = 0;
  if (repetition_penalty != 1.0f || presence_penalty != 0.0f) mode |= kSamplePenalties;
  if (!(temperature > 0.0f)) return mode;
  mode |= kSampleDraw;
  if (top_k > 0 && top_k < vocab) mode |= kSampleTopK;
  if (top_p < 1.0f) mode |= kSampleTopP;
  if (min_p > 0.0f) mode |= kSampleMinP;
  return mode;
}

std::size_t sampler_workspace_bytes(int64_t vocab) {
  return align_up(sizeof(SamplerConfig)) + align_up(sizeof(SamplerSelection)) + 4 * align_up(kMaxCtas * 4) +
         2 * align_up(kBuckets * 4) + align_up(4) + align_up(static_cast<std::size_t>(std::max<int64_t>(vocab, 1)));
}

SamplerWorkspace sampler_workspace(void* memory, int64_t vocab) {
  auto* p = static_cast<char*>(memory);
  const auto take = [&p](std::size_t bytes) {
    void* at = p;
    p += align_up(bytes);
    return at;
  };
  SamplerWorkspace ws;
  ws.config = static_cast<SamplerConfig*>(take(sizeof(SamplerConfig)));
  ws.selection = static_cast<SamplerSelection*>(take(sizeof(SamplerSelection)));
  ws.cta_max = static_cast<float*>(take(kMaxCtas * 4));
  ws.cta_sum = static_cast<float*>(take(kMaxCtas * 4));
  ws.cta_best = static_cast<int32_t*>(take(kMaxCtas * 4));
  ws.cta_count = static_cast<uint32_t*>(take(kMaxCtas * 4));
  ws.hist_count = static_cast<uint32_t*>(take(kBuckets * 4));
  ws.hist_mass = static_cast<float*>(take(kBuckets * 4));
  ws.done = static_cast<unsigned*>(take(4));
  ws.seen = static_cast<uint8_t*>(take(static_cast<std::size_t>(std::max<int64_t>(vocab, 1))));
  return ws;
}

cudaError_t sample_token(float* logits, int64_t n, unsigned mode, const SamplerWorkspace& ws, const int32_t* fed,
                         int32_t* out, cudaStream_t stream, const StepEnd& step_end) {
  if (n <= 0 || n > INT_MAX || logits == nullptr || out == nullptr || ws.config == nullptr || ws.done == nullptr ||
      (mode & ~31u) != 0 || ((mode & kSamplePenalties) && ws.seen == nullptr) ||
      ((mode & (kSampleTopK | kSampleTopP | kSampleMinP)) && !(mode & kSampleDraw)) ||
      (step_end.host_picks != nullptr && step_end.positions == nullptr))
    return cudaErrorInvalidValue;
  const int64_t chunk = chunk_for(n);
  const dim3 grid(static_cast<unsigned>((n + chunk - 1) / chunk)), block(kThreads);
  const bool draw = mode & kSampleDraw;
  if (!draw || (mode & (kSamplePenalties | kSampleTopK | kSampleTopP | kSampleMinP))) {
    if (const cudaError_t e =
            detail::launch_pdl(stats_kernel, grid, block, 0, stream, logits, n, chunk, mode, ws, fed, out, step_end);
        e != cudaSuccess || !draw)
      return e;
  }
  for (const int kind : {0, 1}) {
    if (!(mode & (kind == 0 ? kSampleTopK : kSampleTopP))) continue;
    for (int pass = 0; pass < 3; ++pass)
      if (const cudaError_t e = detail::launch_pdl(radix_kernel, grid, block, 0, stream,
                                                   static_cast<const float*>(logits), n, chunk, pass, kind, ws);
          e != cudaSuccess)
        return e;
  }
  if (mode & (kSampleTopK | kSampleTopP))
    if (const cudaError_t e =
            detail::launch_pdl(tie_kernel, grid, block, 0, stream, static_cast<const float*>(logits), n, chunk, ws);
        e != cudaSuccess)
      return e;
  return detail::launch_pdl(draw_kernel, grid, block, 0, stream, static_cast<const float*>(logits), n, chunk, mode, ws,
                            out, step_end);
}

}  // namespace day0::kernels
