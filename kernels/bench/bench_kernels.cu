// day0-kernel-bench: times each kernel family on the GPU (device events, warm-up, median of
// repeated runs over buffers rotated to defeat the L2) and reports achieved bandwidth against
// a device-to-device copy measured in the same run; then the decode kernels at gpt-oss-20b
// shapes (each against the bytes it must read). Correctness is the tests' job
// (tests/kernels); this program only measures. Output: a table, then one JSON line.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "attention.h"
#include "gemv_bf16.h"
#include "moe_routing.h"
#include "mxfp4_fp8.h"
#include "mxfp4_gemv.h"
#include "sampling.h"

namespace {

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "day0-kernel-bench: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

constexpr int kSets = 4;  // rotated input/output sets, each larger than the L2
constexpr int kRepeats = 50;

template <typename Launch>
double median_ms(Launch launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) launch(i % kSets);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int i = 0; i < kRepeats; ++i) {
    CHECK(cudaEventRecord(a));
    launch(i % kSets);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Uniform integers in [lo, hi] (xorshift: the expert tensors hold over a billion values).
template <typename T>
T* device_random(size_t n, std::mt19937& rng, int lo, int hi) {
  std::vector<T> h(n);
  uint64_t x = rng() | (uint64_t{rng()} << 32) | 1;
  const uint64_t span = static_cast<uint64_t>(hi - lo + 1);
  for (auto& v : h) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = static_cast<T>(lo + static_cast<int>((x >> 20) % span));
  }
  T* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(T)));
  CHECK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

float* device_floats(size_t n, std::mt19937& rng, float sd) {
  std::vector<float> h(n);
  std::normal_distribution<float> d(0.0f, sd);
  for (auto& v : h) v = d(rng);
  float* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(float)));
  CHECK(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  return p;
}

// Per-launch time of a small kernel as the decode graph runs it: 40 launches (sets rotated)
// captured in one graph, its replays timed with events (median of 20), divided by 40. Timing
// single launches would add the host's launch latency to kernels of a few microseconds.
template <typename Launch>
double graph_ms(Launch launch) {
  constexpr int kPerGraph = 40;
  if (std::getenv("DAY0_BENCH_ONCE") != nullptr) {  // one plain launch each, for a profiler
    launch(0, nullptr);
    CHECK(cudaDeviceSynchronize());
    return 1.0;
  }
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kPerGraph; ++i) launch(i % kSets, s);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(ge, s));
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    CHECK(cudaEventRecord(a, s));
    CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  CHECK(cudaGraphExecDestroy(ge));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  CHECK(cudaStreamDestroy(s));
  return times[times.size() / 2] / kPerGraph;
}

void row(const char* name, double ms, double bytes, double copy_gbs) {
  const double gbs = bytes / (ms * 1e6);
  std::printf("%-30s %10.4f %10.0f %9.0f%%\n", name, ms, gbs, 100.0 * gbs / copy_gbs);
}

// The decode step's kernels at gpt-oss-20b shapes (H = I = 2880, 32 experts, top-4, 64 query
// and 8 KV heads of 64, vocab 201,088), random data, kSets weight sets rotated (each set is a
// different layer's worth of weights, so every run reads from HBM).
void bench_decode(double copy_gbs) {
  constexpr int H = 2880, I = 2880, E = 32, K = 4, QD = 4096, KVD = 512, V = 201088, kHeads = 64, kKv = 8, D = 64;
  std::mt19937 rng(7);
  const size_t gu_blocks = size_t(E) * 2 * I * H / 32, dn_blocks = size_t(E) * H * I / 32;
  struct Layer {
    uint8_t *gu_b, *gu_s, *dn_b, *dn_s;
    float *gu_bias, *dn_bias;
    uint16_t *wqkv, *wo, *router, *norm;
    float *bqkv, *bo, *router_bias;
  } L[kSets];
  for (auto& l : L) {
    l.gu_b = device_random<uint8_t>(gu_blocks * 16, rng, 0, 255);
    l.gu_s = device_random<uint8_t>(gu_blocks, rng, 118, 124);
    l.dn_b = device_random<uint8_t>(dn_blocks * 16, rng, 0, 255);
    l.dn_s = device_random<uint8_t>(dn_blocks, rng, 118, 124);
    l.gu_bias = device_floats(size_t(E) * 2 * I, rng, 0.1f);
    l.dn_bias = device_floats(size_t(E) * H, rng, 0.1f);
    l.wqkv = device_random<uint16_t>(size_t(QD + 2 * KVD) * H, rng, 0x3c00, 0x3d00);
    l.wo = device_random<uint16_t>(size_t(H) * QD, rng, 0x3c00, 0x3d00);
    l.router = device_random<uint16_t>(size_t(E) * H, rng, 0x3c00, 0x3d00);
    l.norm = device_random<uint16_t>(H, rng, 0x3f70, 0x3f90);
    l.bqkv = device_floats(QD + 2 * KVD, rng, 0.1f);
    l.bo = device_floats(H, rng, 0.1f);
    l.router_bias = device_floats(E, rng, 0.1f);
  }
  uint16_t* lm_head = device_random<uint16_t>(size_t(V) * H, rng, 0x3c00, 0x3d00);
  float* x = device_floats(H, rng, 1.0f);
  float* y = nullptr;
  CHECK(cudaMalloc(&y, size_t(V) * 4));
  float* attn = device_floats(QD, rng, 1.0f);
  int8_t *xq = nullptr, *actq = nullptr;
  float *xs = nullptr, *acts = nullptr, *wts = nullptr;
  int32_t* ids = nullptr;
  CHECK(cudaMalloc(&xq, H / 32 * 64));
  CHECK(cudaMalloc(&xs, H / 32 * 4));
  CHECK(cudaMalloc(&actq, K * I / 32 * 64));
  CHECK(cudaMalloc(&acts, K * I / 32 * 4));
  CHECK(cudaMalloc(&wts, K * 4));
  CHECK(cudaMalloc(&ids, K * 4));
  const int32_t h_ids[K] = {3, 17, 22, 30};
  const float h_w[K] = {0.4f, 0.3f, 0.2f, 0.1f};
  CHECK(cudaMemcpy(ids, h_ids, sizeof(h_ids), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(wts, h_w, sizeof(h_w), cudaMemcpyHostToDevice));
  CHECK(day0::kernels::quantize_split_int8(x, 1, H, xq, xs, 0));
  CHECK(day0::kernels::quantize_split_int8(attn, 1, K * I, actq, acts, 0));
  const auto moe = [&](int i) {
    day0::kernels::MoeDecodeArgs m;
    m.T = 1;
    m.hidden = H;
    m.inter = I;
    m.top_k = K;
    m.ids = ids;
    m.weights = wts;
    m.gate_up_blocks = L[i].gu_b;
    m.gate_up_scales = L[i].gu_s;
    m.gate_up_bias = L[i].gu_bias;
    m.down_blocks = L[i].dn_b;
    m.down_scales = L[i].dn_s;
    m.down_bias = L[i].dn_bias;
    return m;
  };
  const double gu_bytes = double(K) * 2 * I * H / 32 * 17, dn_bytes = double(K) * H * I / 32 * 17;
  std::printf("\ndecode kernels, gpt-oss-20b shapes (bytes each must read)\n");
  std::printf("%-30s %10s %10s %10s\n", "kernel", "ms", "GB/s", "of copy");
  row("moe_decode_gate_up (4 experts)", graph_ms([&](int i, cudaStream_t st) {
        CHECK(day0::kernels::moe_decode_gate_up(moe(i), xq, xs, actq, acts, st));
      }),
      gu_bytes, copy_gbs);
  row("moe_decode_down (4 experts)",
      graph_ms([&](int i, cudaStream_t st) { CHECK(day0::kernels::moe_decode_down(moe(i), actq, acts, y, st)); }),
      dn_bytes, copy_gbs);
  row("gate_up + down", graph_ms([&](int i, cudaStream_t st) {
        CHECK(day0::kernels::moe_decode_gate_up(moe(i), xq, xs, actq, acts, st));
        CHECK(day0::kernels::moe_decode_down(moe(i), actq, acts, y, st));
      }),
      gu_bytes + dn_bytes, copy_gbs);
  row("qkv gemv, normed (5120x2880)", graph_ms([&](int i, cudaStream_t st) {
        CHECK(
            day0::kernels::gemv_bf16_rms_normed(L[i].wqkv, L[i].bqkv, x, L[i].norm, 1e-5f, 1, QD + 2 * KVD, H, y, st));
      }),
      2.0 * (QD + 2 * KVD) * H, copy_gbs);
  row("o_proj gemv (2880x4096)", graph_ms([&](int i, cudaStream_t st) {
        CHECK(day0::kernels::gemv_bf16(L[i].wo, L[i].bo, attn, 1, H, QD, true, y, st));
      }),
      2.0 * H * QD, copy_gbs);
  float* router_logits = nullptr;
  CHECK(cudaMalloc(&router_logits, E * 4));
  row("router_decode (32x2880)", graph_ms([&](int i, cudaStream_t st) {
        CHECK(day0::kernels::router_decode(x, L[i].norm, 1e-5f, L[i].router, L[i].router_bias, 1, E, H, xq, xs,
                                           router_logits, st));
      }),
      2.0 * E * H, copy_gbs);
  row("lm_head gemv, normed", graph_ms([&](int, cudaStream_t st) {
        CHECK(day0::kernels::gemv_bf16_rms_normed(lm_head, nullptr, x, L[0].norm, 1e-5f, 1, V, H, y, st));
      }),
      2.0 * V * H, copy_gbs);
  {
    int32_t* pick = nullptr;
    float* values = nullptr;
    int32_t* indices = nullptr;
    unsigned* counter = nullptr;
    CHECK(cudaMalloc(&pick, 4));
    CHECK(cudaMalloc(&values, day0::kernels::kArgmaxMaxCtas * 4));
    CHECK(cudaMalloc(&indices, day0::kernels::kArgmaxMaxCtas * 4));
    CHECK(cudaMalloc(&counter, 4));
    CHECK(cudaMemset(counter, 0, 4));
    const day0::kernels::ArgmaxScratch scratch{values, indices, counter};
    row("argmax, one CTA (vocab)",
        graph_ms([&](int, cudaStream_t st) { CHECK(day0::kernels::argmax(y, V, pick, st)); }), 4.0 * V, copy_gbs);
    row("argmax_wide (vocab)",
        graph_ms([&](int, cudaStream_t st) { CHECK(day0::kernels::argmax_wide(y, V, scratch, pick, st)); }), 4.0 * V,
        copy_gbs);
    cudaFree(pick);
    cudaFree(values);
    cudaFree(indices);
    cudaFree(counter);
  }
  for (const int len : {512, 4096, 32768}) {
    uint16_t *kc = nullptr, *vc = nullptr, *q = nullptr;
    float *sinks = nullptr, *partial = nullptr, *out = nullptr;
    int32_t* dlen = nullptr;
    const size_t kv = size_t(len) * kKv * D;
    kc = device_random<uint16_t>(kv, rng, 0x3c00, 0x3d00);
    vc = device_random<uint16_t>(kv, rng, 0x3c00, 0x3d00);
    q = device_random<uint16_t>(size_t(kHeads) * D, rng, 0x3c00, 0x3d00);
    sinks = device_floats(kHeads, rng, 1.0f);
    CHECK(cudaMalloc(&partial, day0::kernels::attention_decode_partial_floats(kHeads, D, 32) * 4));
    CHECK(cudaMalloc(&out, kHeads * D * 4));
    CHECK(cudaMalloc(&dlen, 4));
    CHECK(cudaMemcpy(dlen, &len, 4, cudaMemcpyHostToDevice));
    day0::kernels::AttentionArgs a;
    a.heads = kHeads;
    a.kv_heads = kKv;
    a.head_dim = D;
    a.scale = 0.125f;
    a.sinks = sinks;
    a.k_cache = kc;
    a.v_cache = vc;
    char name[64];
    std::snprintf(name, sizeof(name), "attention_decode len %d", len);
    row(name, graph_ms([&](int, cudaStream_t st) {
          CHECK(day0::kernels::attention_decode(a, q, dlen, 32, partial, out, st));
        }),
        2.0 * 2.0 * double(kv), copy_gbs);
    cudaFree(kc);
    cudaFree(vc);
    cudaFree(q);
    cudaFree(sinks);
    cudaFree(partial);
    cudaFree(out);
    cudaFree(dlen);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Default: 4 Mi blocks = 128 Mi values (one gpt-oss-120b layer's 128 experts hold 37 Mi blocks).
  const long long n_blocks = argc > 1 ? std::atoll(argv[1]) : (4ll << 20);
  int device = 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDevice(&device));
  CHECK(cudaGetDeviceProperties(&prop, device));

  std::vector<uint8_t> blocks(static_cast<size_t>(n_blocks) * 16), scales(static_cast<size_t>(n_blocks));
  std::mt19937 rng(20261130);
  for (auto& b : blocks) b = static_cast<uint8_t>(rng());
  for (auto& s : scales) s = static_cast<uint8_t>(100 + rng() % 50);

  struct Set {
    uint8_t *blocks, *scales, *fp8;
    int16_t* exponent;
    uint16_t* bf16;
  } sets[kSets];
  for (auto& s : sets) {
    CHECK(cudaMalloc(&s.blocks, blocks.size()));
    CHECK(cudaMalloc(&s.scales, scales.size()));
    CHECK(cudaMalloc(&s.fp8, blocks.size() * 2));
    CHECK(cudaMalloc(&s.exponent, scales.size() * 2));
    CHECK(cudaMalloc(&s.bf16, blocks.size() * 4));
    CHECK(cudaMemcpy(s.blocks, blocks.data(), blocks.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(s.scales, scales.data(), scales.size(), cudaMemcpyHostToDevice));
  }

  const double n = static_cast<double>(n_blocks);
  const double copy_bytes = 2.0 * static_cast<double>(blocks.size() * 4);  // read + write
  const double copy_ms = graph_ms([&](int i, cudaStream_t st) {
    CHECK(cudaMemcpyAsync(sets[i].bf16, sets[(i + 1) % kSets].bf16, blocks.size() * 4, cudaMemcpyDeviceToDevice, st));
  });
  const double fp8_ms = graph_ms([&](int i, cudaStream_t st) {
    CHECK(
        day0::kernels::mxfp4_to_fp8_e4m3(sets[i].blocks, sets[i].scales, n_blocks, sets[i].fp8, sets[i].exponent, st));
  });
  const double bf16_ms = median_ms(
      [&](int i) { CHECK(day0::kernels::mxfp4_to_bf16(sets[i].blocks, sets[i].scales, n_blocks, sets[i].bf16, 0)); });
  // Bytes each conversion must move: 17 per block in; out 32 + 2 (FP8 + exponent) or 64 (bf16).
  const double fp8_gbs = n * 51.0 / (fp8_ms * 1e6), bf16_gbs = n * 81.0 / (bf16_ms * 1e6);
  const double copy_gbs = copy_bytes / (copy_ms * 1e6);
  std::printf("device: %s (sm_%d%d), %lld MXFP4 blocks (%.1f MiB in)\n", prop.name, prop.major, prop.minor, n_blocks,
              n * 17.0 / (1 << 20));
  std::printf("%-22s %10s %10s %10s\n", "kernel", "ms", "GB/s", "of copy");
  std::printf("%-22s %10.4f %10.0f %9.0f%%\n", "d2d copy (reference)", copy_ms, copy_gbs, 100.0);
  std::printf("%-22s %10.4f %10.0f %9.0f%%\n", "mxfp4_to_fp8_e4m3", fp8_ms, fp8_gbs, 100.0 * fp8_gbs / copy_gbs);
  std::printf("%-22s %10.4f %10.0f %9.0f%%\n", "mxfp4_to_bf16", bf16_ms, bf16_gbs, 100.0 * bf16_gbs / copy_gbs);
  std::printf(
      "{\"device\":\"%s\",\"blocks\":%lld,\"copy_gbs\":%.0f,\"mxfp4_to_fp8_ms\":%.4f,\"mxfp4_to_fp8_gbs\":%.0f,"
      "\"mxfp4_to_bf16_ms\":%.4f,\"mxfp4_to_bf16_gbs\":%.0f}\n",
      prop.name, n_blocks, copy_gbs, fp8_ms, fp8_gbs, bf16_ms, bf16_gbs);
  bench_decode(copy_gbs);
  for (auto& s : sets) {
    cudaFree(s.blocks);
    cudaFree(s.scales);
    cudaFree(s.fp8);
    cudaFree(s.exponent);
    cudaFree(s.bf16);
  }
  return 0;
}
