#include "hyper_connection.h"

#include <cmath>

#include "device_util.cuh"

namespace day0::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kTileTokens = 8;   // tokens per collapse CTA
constexpr int kChunk = 1024;     // values of a token's flattened streams staged per step
constexpr int kRowsPerWarp = 4;  // fn rows a warp takes per pass
constexpr int kPassRows = kWarps * kRowsPerWarp;
constexpr int kSegments = 4;  // 4-value segments whose fn words a lane loads before using any
constexpr int kMaxMix = (2 + kHcMaxStreams) * kHcMaxStreams;
constexpr int kTargetCtas = 128;  // below this many token tiles, fn's columns are split
constexpr int kMaxSplits = 32;    // CTAs per token tile at most
static_assert(kRowsPerWarp * kTileTokens == 32, "one accumulator per (row, token) of a pass per lane");
static_assert(kChunk == 4 * kThreads, "staging: one float4 per thread and token");

struct CollapseArgs {
  const float* streams;
  int64_t T;
  int m;  // hc
  int64_t H;
  const uint16_t* fn;
  const float* base;
  const float* scale;
  int iters;
  float rms_eps, hc_eps;
  float* input;
  float* post;
  float* comb;
  int chunks;  // ceil(hc * H / kChunk)
  int splits;  // CTAs over fn's columns per token tile (gridDim.y)
};

__host__ __device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// One step of warp_transpose_sum: lanes whose bit kOff is clear keep v[0..kOff) and give away
// v[kOff..2kOff), the others the reverse; each adds its partner's half to the half it keeps.
template <int kOff>
__device__ __forceinline__ void transpose_step(float (&v)[32], int lane) {
  const bool upper = (lane & kOff) != 0;
#pragma unroll
  for (int i = 0; i < kOff; ++i) {
    const float send = upper ? v[i] : v[i + kOff];
    const float keep = upper ? v[i + kOff] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, kOff);
  }
}

// Each lane holds v[0..32); afterwards lane l returns the sum over the warp's lanes of v[l]
// (31 shuffles instead of 32 * 5).
__device__ __forceinline__ float warp_transpose_sum(float (&v)[32], int lane) {
  transpose_step<16>(v, lane);
  transpose_step<8>(v, lane);
  transpose_step<4>(v, lane);
  transpose_step<2>(v, lane);
  transpose_step<1>(v, lane);
  return v[0];
}

// Four bf16 of fn from `p` (the row's values k.. of which `left` remain), zero past the row.
__device__ __forceinline__ uint2 load_fn4(const uint16_t* p, bool vec, int64_t left) {
  if (vec) return __ldg(reinterpret_cast<const uint2*>(p));
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = i < left ? __ldg(p + i) : 0u;
  return make_uint2(w[0] | (w[1] << 16), w[2] | (w[3] << 16));
}

// comb for M streams by one warp (every lane calls it): lane i < M holds row i in registers
// (other lanes work on a copy of row 0 and write nothing). Sums run in index order and quotients
// are IEEE divisions, as the CPU computes them; a column sum gathers the rows by shuffles.
template <int M>
__device__ __forceinline__ void comb_rows(const CollapseArgs& a, const float* mix, int stride, float inv, int64_t t,
                                          int lane) {
  const int i = lane < M ? lane : 0;
  const float s2 = a.scale[2], eps = a.hc_eps;
  float r[M];
#pragma unroll
  for (int j = 0; j < M; ++j) r[j] = mix[(2 * M + i * M + j) * stride] * inv * s2 + a.base[2 * M + i * M + j];
  float top = -INFINITY;
#pragma unroll
  for (int j = 0; j < M; ++j) top = fmaxf(top, r[j]);
  float z = 0.0f;
#pragma unroll
  for (int j = 0; j < M; ++j) {
    r[j] = expf(r[j] - top);
    z += r[j];
  }
#pragma unroll
  for (int j = 0; j < M; ++j) r[j] = r[j] / z + eps;
  for (int it = 0; it < a.iters; ++it) {
    if (it > 0) {  // rows, then columns; the first round is columns alone
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < M; ++j) sum += r[j];
      const float d = sum + eps;
#pragma unroll
      for (int j = 0; j < M; ++j) r[j] /= d;
    }
    float col[M];
#pragma unroll
    for (int j = 0; j < M; ++j) col[j] = 0.0f;
#pragma unroll
    for (int k = 0; k < M; ++k)
#pragma unroll
      for (int j = 0; j < M; ++j) col[j] += __shfl_sync(0xffffffffu, r[j], k);
#pragma unroll
    for (int j = 0; j < M; ++j) r[j] /= col[j] + eps;
  }
  if (lane < M) {
    float* out = a.comb + (t * M + lane) * M;
#pragma unroll
    for (int j = 0; j < M; ++j) out[j] = r[j];
  }
}

// One token's coefficients by one warp, from its dots mix[r * stride] = fn[r] . streams[t]
// (before the RMS factor) and the sum of squares of streams[t]: pre -> pre_out (shared, m
// values), post and comb -> global. Every lane calls it.
__device__ __forceinline__ void token_coefficients(const CollapseArgs& a, const float* mix, int stride, float sumsq,
                                                   int64_t t, float* pre_out, int lane) {
  const int m = a.m;
  const float inv = 1.0f / sqrtf(sumsq / static_cast<float>(static_cast<int64_t>(m) * a.H) + a.rms_eps);
  if (lane < m) {
    pre_out[lane] = sigmoid(mix[lane * stride] * inv * a.scale[0] + a.base[lane]) + a.hc_eps;
    a.post[t * m + lane] = 2.0f * sigmoid(mix[(m + lane) * stride] * inv * a.scale[1] + a.base[m + lane]);
  }
  switch (m) {
    case 1:
      comb_rows<1>(a, mix, stride, inv, t, lane);
      break;
    case 2:
      comb_rows<2>(a, mix, stride, inv, t, lane);
      break;
    case 3:
      comb_rows<3>(a, mix, stride, inv, t, lane);
      break;
    case 4:
      comb_rows<4>(a, mix, stride, inv, t, lane);
      break;
    case 5:
      comb_rows<5>(a, mix, stride, inv, t, lane);
      break;
    case 6:
      comb_rows<6>(a, mix, stride, inv, t, lane);
      break;
    case 7:
      comb_rows<7>(a, mix, stride, inv, t, lane);
      break;
    default:
      comb_rows<8>(a, mix, stride, inv, t, lane);
      break;
  }
  __syncwarp();  // pre_out is complete
}

// input[t] = sum_i pre[i] * streams[t, i] by threads tid, tid + n, ... of the CTA.
__device__ __forceinline__ void input_row(const CollapseArgs& a, int64_t t, const float* pre, int tid, int n) {
  const int m = a.m;
  const int64_t H = a.H;
  const float* x = a.streams + t * m * H;
  float* out = a.input + t * H;
  if ((H & 3) == 0 && aligned16(a.streams) && aligned16(a.input)) {
    for (int64_t q = tid; q < H / 4; q += n) {
      float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int i = 0; i < m; ++i) {
        const float p = pre[i];
        const float4 v = __ldg(reinterpret_cast<const float4*>(x + i * H) + q);
        acc.x += p * v.x;
        acc.y += p * v.y;
        acc.z += p * v.z;
        acc.w += p * v.w;
      }
      reinterpret_cast<float4*>(out)[q] = acc;
    }
  } else {
    for (int64_t k = tid; k < H; k += n) {
      float acc = 0.0f;
      for (int i = 0; i < m; ++i) acc += pre[i] * x[i * H + k];
      out[k] = acc;
    }
  }
}

// grid (ceil(T / kTileTokens), splits). A CTA takes kTileTokens tokens and the chunks
// [y * chunks / splits, (y + 1) * chunks / splits) of their flattened streams: it stages each
// chunk in shared memory, and its warps take fn's rows (row r: warp r % 8) over the chunk, each
// fn word used for all the tile's tokens. With one split it then finishes the tokens itself
// (coefficients, input); with several it leaves its partial sums in the tokens' input rows,
// [split][sum of squares, mix_0 .. mix_{n-1}], for finish_kernel.
__global__ void __launch_bounds__(kThreads) mix_kernel(const CollapseArgs a) {
  __shared__ __align__(16) float xs[kTileTokens][kChunk];
  __shared__ float acc[kMaxMix * kTileTokens];  // acc[r * kTileTokens + n]
  __shared__ float sq[kWarps][kTileTokens];
  __shared__ float pre[kTileTokens][kHcMaxStreams];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m = a.m, mix_n = (2 + m) * m;
  const int64_t K = static_cast<int64_t>(m) * a.H;
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kTileTokens;
  const int split = blockIdx.y;
  const bool xvec = (K & 3) == 0 && aligned16(a.streams);
  const bool wvec = (K & 3) == 0 && (reinterpret_cast<uintptr_t>(a.fn) & 7u) == 0;
  for (int i = threadIdx.x; i < mix_n * kTileTokens; i += kThreads) acc[i] = 0.0f;
  float ss[kTileTokens];
#pragma unroll
  for (int n = 0; n < kTileTokens; ++n) ss[n] = 0.0f;

  const int c_begin = static_cast<int>(static_cast<int64_t>(split) * a.chunks / a.splits);
  const int c_end = static_cast<int>(static_cast<int64_t>(split + 1) * a.chunks / a.splits);
  for (int c = c_begin; c < c_end; ++c) {
    const int64_t k0 = static_cast<int64_t>(c) * kChunk;
    const int len = static_cast<int>(K - k0 < kChunk ? K - k0 : kChunk);
    __syncthreads();  // the previous chunk's readers are done
    {
      const int j = 4 * threadIdx.x;
      float4 v[kTileTokens];
#pragma unroll
      for (int n = 0; n < kTileTokens; ++n) {
        v[n] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const int64_t t = t0 + n;
        if (t < a.T && j < len) {
          const float* src = a.streams + t * K + k0 + j;
          if (xvec) {
            v[n] = __ldg(reinterpret_cast<const float4*>(src));
          } else {
            v[n].x = src[0];
            if (j + 1 < len) v[n].y = src[1];
            if (j + 2 < len) v[n].z = src[2];
            if (j + 3 < len) v[n].w = src[3];
          }
        }
      }
#pragma unroll
      for (int n = 0; n < kTileTokens; ++n) {
        ss[n] += v[n].x * v[n].x + v[n].y * v[n].y + v[n].z * v[n].z + v[n].w * v[n].w;
        *reinterpret_cast<float4*>(&xs[n][j]) = v[n];
      }
    }
    __syncthreads();
    for (int base = 0; base < mix_n; base += kPassRows) {
      float d[32];  // d[i * kTileTokens + n]: row base + warp + kWarps * i, token n
#pragma unroll
      for (int i = 0; i < 32; ++i) d[i] = 0.0f;
      for (int seg0 = lane; seg0 * 4 < len; seg0 += 32 * kSegments) {
        uint2 w[kSegments][kRowsPerWarp];
#pragma unroll
        for (int u = 0; u < kSegments; ++u) {
          const int k = (seg0 + 32 * u) * 4;
#pragma unroll
          for (int i = 0; i < kRowsPerWarp; ++i) {
            const int r = base + warp + kWarps * i;
            w[u][i] = k < len && r < mix_n ? load_fn4(a.fn + r * K + k0 + k, wvec, K - k0 - k) : make_uint2(0u, 0u);
          }
        }
#pragma unroll
        for (int u = 0; u < kSegments; ++u) {
          const int k = (seg0 + 32 * u) * 4;
          if (k >= len) break;
          float4 x[kTileTokens];
#pragma unroll
          for (int n = 0; n < kTileTokens; ++n) x[n] = *reinterpret_cast<const float4*>(&xs[n][k]);
#pragma unroll
          for (int i = 0; i < kRowsPerWarp; ++i) {
            const float f0 = __uint_as_float(w[u][i].x << 16), f1 = __uint_as_float(w[u][i].x & 0xffff0000u);
            const float f2 = __uint_as_float(w[u][i].y << 16), f3 = __uint_as_float(w[u][i].y & 0xffff0000u);
#pragma unroll
            for (int n = 0; n < kTileTokens; ++n) {
              float s = d[i * kTileTokens + n];
              s = fmaf(f0, x[n].x, s);
              s = fmaf(f1, x[n].y, s);
              s = fmaf(f2, x[n].z, s);
              s = fmaf(f3, x[n].w, s);
              d[i * kTileTokens + n] = s;
            }
          }
        }
      }
      const float v = warp_transpose_sum(d, lane);
      const int r = base + warp + kWarps * (lane / kTileTokens);
      if (r < mix_n) acc[r * kTileTokens + lane % kTileTokens] += v;  // one owner per entry
    }
  }
#pragma unroll
  for (int n = 0; n < kTileTokens; ++n) {
    const float v = detail::warp_sum(ss[n]);
    if (lane == 0) sq[warp][n] = v;
  }
  __syncthreads();

  if (a.splits == 1) {
    const int64_t t = t0 + warp;  // warp n finishes token n of the tile
    if (t < a.T) {
      float sumsq = 0.0f;
      for (int w = 0; w < kWarps; ++w) sumsq += sq[w][warp];
      token_coefficients(a, acc + warp, kTileTokens, sumsq, t, pre[warp], lane);
    }
    __syncthreads();
    for (int n = 0; n < kTileTokens && t0 + n < a.T; ++n) input_row(a, t0 + n, pre[n], threadIdx.x, kThreads);
  } else {
    const int width = mix_n + 1;
    for (int idx = threadIdx.x; idx < kTileTokens * width; idx += kThreads) {
      const int n = idx / width, r = idx % width;
      const int64_t t = t0 + n;
      if (t >= a.T) continue;
      float v;
      if (r == 0) {
        v = 0.0f;
        for (int w = 0; w < kWarps; ++w) v += sq[w][n];
      } else {
        v = acc[(r - 1) * kTileTokens + n];
      }
      a.input[t * a.H + static_cast<int64_t>(split) * width + r] = v;
    }
  }
}

// One CTA per token after a split mix_kernel: the CTA loads the splits' partials at once, warp 0
// sums them in split order and computes the coefficients; then the whole CTA writes input[t]
// over the partials.
__global__ void __launch_bounds__(kThreads) finish_kernel(const CollapseArgs a) {
  __shared__ float parts[kMaxSplits * (kMaxMix + 1)];
  __shared__ float mix[kMaxMix + 1];  // [0]: sum of squares
  __shared__ float pre[kHcMaxStreams];
  const int64_t t = blockIdx.x;
  const int width = (2 + a.m) * a.m + 1;
  const float* part = a.input + t * a.H;
  for (int i = threadIdx.x; i < a.splits * width; i += kThreads) parts[i] = part[i];
  __syncthreads();  // the partials are read before any thread overwrites them
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    for (int r = lane; r < width; r += 32) {
      float v = 0.0f;
      for (int s = 0; s < a.splits; ++s) v += parts[s * width + r];
      mix[r] = v;
    }
    __syncwarp();
    token_coefficients(a, mix + 1, 1, mix[0], t, pre, lane);
  }
  __syncthreads();
  input_row(a, t, pre, threadIdx.x, kThreads);
}

constexpr int kRowThreads = 256;
constexpr int kRowSpan = 4 * kRowThreads;  // values of H per CTA

// grid: T * ceil(H / kRowSpan) CTAs; each thread takes 4 values of one token's streams.
template <bool kVec>
__global__ void __launch_bounds__(kRowThreads)
    expand_kernel(const float* __restrict__ y, const float* __restrict__ post, const float* __restrict__ comb, int m,
                  int64_t H, int64_t spans, float* __restrict__ streams) {
  __shared__ float ps[kHcMaxStreams];
  __shared__ float cs[kHcMaxStreams * kHcMaxStreams];
  const int64_t t = blockIdx.x / spans, span = blockIdx.x % spans;
  if (threadIdx.x < m) ps[threadIdx.x] = post[t * m + threadIdx.x];
  if (threadIdx.x < m * m) cs[threadIdx.x] = comb[t * m * m + threadIdx.x];
  __syncthreads();
  float* s = streams + t * m * H;
  const float* yt = y + t * H;
  if (kVec) {
    const int64_t q = span * kRowThreads + threadIdx.x;
    if (4 * q >= H) return;
    const float4 yv = reinterpret_cast<const float4*>(yt)[q];
    float4 in[kHcMaxStreams];
#pragma unroll
    for (int j = 0; j < kHcMaxStreams; ++j)
      if (j < m) in[j] = reinterpret_cast<const float4*>(s + j * H)[q];
#pragma unroll
    for (int i = 0; i < kHcMaxStreams; ++i) {
      if (i >= m) break;
      const float p = ps[i];
      float4 o = make_float4(p * yv.x, p * yv.y, p * yv.z, p * yv.w);
#pragma unroll
      for (int j = 0; j < kHcMaxStreams; ++j) {
        if (j >= m) break;
        const float w = cs[j * m + i];
        o.x += w * in[j].x;
        o.y += w * in[j].y;
        o.z += w * in[j].z;
        o.w += w * in[j].w;
      }
      reinterpret_cast<float4*>(s + i * H)[q] = o;
    }
  } else {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int64_t k = span * kRowSpan + u * kRowThreads + threadIdx.x;
      if (k >= H) break;
      float in[kHcMaxStreams];
#pragma unroll
      for (int j = 0; j < kHcMaxStreams; ++j)
        if (j < m) in[j] = s[j * H + k];
#pragma unroll
      for (int i = 0; i < kHcMaxStreams; ++i) {
        if (i >= m) break;
        float o = ps[i] * yt[k];
#pragma unroll
        for (int j = 0; j < kHcMaxStreams; ++j) {
          if (j >= m) break;
          o += cs[j * m + i] * in[j];
        }
        s[i * H + k] = o;
      }
    }
  }
}

template <bool kVec>
__global__ void __launch_bounds__(kRowThreads)
    mean_kernel(const float* __restrict__ streams, int m, int64_t H, int64_t spans, float* __restrict__ out) {
  const int64_t t = blockIdx.x / spans, span = blockIdx.x % spans;
  const float* s = streams + t * m * H;
  const float count = static_cast<float>(m);
  if (kVec) {
    const int64_t q = span * kRowThreads + threadIdx.x;
    if (4 * q >= H) return;
    float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int i = 0; i < m; ++i) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(s + i * H) + q);
      o.x += v.x;
      o.y += v.y;
      o.z += v.z;
      o.w += v.w;
    }
    o.x /= count;
    o.y /= count;
    o.z /= count;
    o.w /= count;
    reinterpret_cast<float4*>(out + t * H)[q] = o;
  } else {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int64_t k = span * kRowSpan + u * kRowThreads + threadIdx.x;
      if (k >= H) break;
      float o = 0.0f;
      for (int i = 0; i < m; ++i) o += s[i * H + k];
      out[t * H + k] = o / count;
    }
  }
}

}  // namespace

cudaError_t hc_collapse(const float* streams, int64_t T, int hc, int64_t H, const uint16_t* fn, const float* base,
                        const float* scale, int sinkhorn_iters, float rms_eps, float hc_eps, float* input, float* post,
                        float* comb, cudaStream_t stream) {
  if (T < 0 || hc < 1 || hc > kHcMaxStreams || H <= 0 || sinkhorn_iters < 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (streams == nullptr || fn == nullptr || base == nullptr || scale == nullptr || input == nullptr ||
      post == nullptr || comb == nullptr)
    return cudaErrorInvalidValue;
  const int mix_n = (2 + hc) * hc;
  const int64_t K = hc * H;
  const int64_t chunks = (K + kChunk - 1) / kChunk;
  const int64_t tiles = (T + kTileTokens - 1) / kTileTokens;
  if (chunks > INT32_MAX || tiles > INT32_MAX) return cudaErrorInvalidValue;
  // Few tiles: split the columns so that about kTargetCtas CTAs read fn, as far as the chunks
  // go and the partial sums ((mix_n + 1) floats per split) fit in a token's input row.
  int64_t splits = 1;
  if (tiles < kTargetCtas) {
    splits = (kTargetCtas + tiles - 1) / tiles;
    if (splits > kMaxSplits) splits = kMaxSplits;
    if (splits > chunks) splits = chunks;
    if (splits > H / (mix_n + 1)) splits = H / (mix_n + 1);
    if (splits < 1) splits = 1;
  }
  // The first round of the CPU's loop normalises columns alone: iters 0 and 1 agree.
  CollapseArgs a{};
  a.streams = streams;
  a.T = T;
  a.m = hc;
  a.H = H;
  a.fn = fn;
  a.base = base;
  a.scale = scale;
  a.iters = sinkhorn_iters < 1 ? 1 : sinkhorn_iters;
  a.rms_eps = rms_eps;
  a.hc_eps = hc_eps;
  a.input = input;
  a.post = post;
  a.comb = comb;
  a.chunks = static_cast<int>(chunks);
  a.splits = static_cast<int>(splits);
  mix_kernel<<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(splits)), kThreads, 0, stream>>>(a);
  if (splits > 1) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    finish_kernel<<<static_cast<unsigned>(T), kThreads, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

cudaError_t hc_expand(const float* y, const float* post, const float* comb, int64_t T, int hc, int64_t H,
                      float* streams, cudaStream_t stream) {
  if (T < 0 || hc < 1 || hc > kHcMaxStreams || H <= 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (y == nullptr || post == nullptr || comb == nullptr || streams == nullptr) return cudaErrorInvalidValue;
  const int64_t spans = (H + kRowSpan - 1) / kRowSpan;
  if (T * spans > INT32_MAX) return cudaErrorInvalidValue;
  const unsigned grid = static_cast<unsigned>(T * spans);
  if ((H & 3) == 0 && aligned16(y) && aligned16(streams))
    expand_kernel<true><<<grid, kRowThreads, 0, stream>>>(y, post, comb, hc, H, spans, streams);
  else
    expand_kernel<false><<<grid, kRowThreads, 0, stream>>>(y, post, comb, hc, H, spans, streams);
  return cudaGetLastError();
}

cudaError_t hc_mean(const float* streams, int64_t T, int hc, int64_t H, float* out, cudaStream_t stream) {
  if (T < 0 || hc < 1 || H <= 0) return cudaErrorInvalidValue;
  if (T == 0) return cudaSuccess;
  if (streams == nullptr || out == nullptr) return cudaErrorInvalidValue;
  const int64_t spans = (H + kRowSpan - 1) / kRowSpan;
  if (T * spans > INT32_MAX) return cudaErrorInvalidValue;
  const unsigned grid = static_cast<unsigned>(T * spans);
  if ((H & 3) == 0 && aligned16(streams) && aligned16(out))
    mean_kernel<true><<<grid, kRowThreads, 0, stream>>>(streams, hc, H, spans, out);
  else
    mean_kernel<false><<<grid, kRowThreads, 0, stream>>>(streams, hc, H, spans, out);
  return cudaGetLastError();
}

}  // namespace day0::kernels
