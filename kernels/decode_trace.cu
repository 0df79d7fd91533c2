// Host side of decode_trace.cuh (development builds with -DDAY0_DECODE_TRACE).
#include "decode_trace.h"

#include "decode_trace.cuh"

#ifdef DAY0_DECODE_TRACE
#include <algorithm>
#include <cstdio>
#include <vector>

namespace day0::kernels {
void trace_set_gemv(void*, void*);
void trace_set_attention(void*, void*);
void trace_set_routing(void*, void*);
void trace_set_mxfp4(void*, void*);
void trace_set_sampling(void*, void*);
void trace_set_elementwise(void*, void*);

namespace {
void* g_slots = nullptr;
void* g_counters = nullptr;
}  // namespace

bool decode_trace_init() {
  const size_t bytes = sizeof(trace::Slot) * trace::kKinds * trace::kLaunches;
  if (cudaMalloc(&g_slots, bytes) != cudaSuccess || cudaMalloc(&g_counters, 4 * trace::kKinds) != cudaSuccess)
    return false;
  cudaMemset(g_slots, 0, bytes);
  cudaMemset(g_counters, 0, 4 * trace::kKinds);
  trace_set_gemv(g_slots, g_counters);
  trace_set_attention(g_slots, g_counters);
  trace_set_routing(g_slots, g_counters);
  trace_set_mxfp4(g_slots, g_counters);
  trace_set_sampling(g_slots, g_counters);
  trace_set_elementwise(g_slots, g_counters);
  return cudaDeviceSynchronize() == cudaSuccess;
}

void decode_trace_dump(int steps) {
  if (g_slots == nullptr) return;
  cudaDeviceSynchronize();
  std::vector<trace::Slot> slots(static_cast<size_t>(trace::kKinds) * trace::kLaunches);
  cudaMemcpy(slots.data(), g_slots, slots.size() * sizeof(trace::Slot), cudaMemcpyDeviceToHost);
  struct Row {
    unsigned long long s0, s1, w0, w1, e0, e1;
    int kind;
  };
  std::vector<Row> rows;
  for (int k = 0; k < trace::kKinds; ++k)
    for (int i = 0; i < trace::kLaunches; ++i) {
      const trace::Slot& s = slots[static_cast<size_t>(k) * trace::kLaunches + i];
      if (s.start_last == 0) continue;
      rows.push_back({~s.start_first, s.start_last, s.wait_last ? ~s.wait_first : 0, s.wait_last, ~s.end_first,
                      s.end_last, k});
    }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.s0 < b.s0; });
  std::vector<size_t> picks;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].kind == trace::argmax) picks.push_back(i);
  static const char* names[trace::kKinds] = {"embed",  "qkv",     "attention", "combine", "o_proj",
                                             "router", "gate_up", "down",      "lm_head", "argmax",    "other"};
  if (picks.size() < static_cast<size_t>(steps) + 2) {
    std::printf("trace: %zu picks recorded, too few\n", picks.size());
    return;
  }
  // Per kind over the last `steps` steps: launch-to-launch spacing and the phases of a launch.
  double sum[trace::kKinds][5] = {};
  int count[trace::kKinds] = {};
  for (size_t p = picks.size() - steps; p < picks.size(); ++p) {
    for (size_t i = picks[p - 1] + 1; i <= picks[p]; ++i) {
      const Row& r = rows[i];
      const Row& prev = rows[i - 1];
      sum[r.kind][0] += static_cast<double>(r.e1) - static_cast<double>(prev.e1);  // end to end
      sum[r.kind][1] += r.w0 ? static_cast<double>(r.w0) - static_cast<double>(prev.e1) : 0;  // prev end -> wait
      sum[r.kind][2] += static_cast<double>(r.e1) - static_cast<double>(r.w0 ? r.w0 : r.s0);  // wait -> end
      sum[r.kind][3] += static_cast<double>(r.s0) - static_cast<double>(prev.s0);  // start after prev start
      sum[r.kind][4] += static_cast<double>(r.e1) - static_cast<double>(r.e0);  // first to last CTA end
      ++count[r.kind];
    }
  }
  std::printf("trace: per kind over the last %d steps (us): end-to-end, prev end -> first wait return, "
              "first wait return -> last end, start after prev start, CTA end spread, launches\n",
              steps);
  double total = 0;
  for (int k = 0; k < trace::kKinds; ++k) {
    if (count[k] == 0) continue;
    total += sum[k][0];
    std::printf("trace %-9s %8.2f %8.2f %8.2f %8.2f %8.2f %6d\n", names[k], sum[k][0] / count[k] / 1e3,
                sum[k][1] / count[k] / 1e3, sum[k][2] / count[k] / 1e3, sum[k][3] / count[k] / 1e3,
                sum[k][4] / count[k] / 1e3, count[k] / steps);
  }
  std::printf("trace: step %.2f us\n", total / steps / 1e3);
  // One whole step, relative to the previous pick's end.
  const size_t a = picks[picks.size() - 2], b = picks.back();
  const unsigned long long t0 = rows[a].e1;
  std::printf("trace: one step (ns from the previous pick's end): kind start_first start_last wait_first "
              "wait_last end_first end_last\n");
  for (size_t i = a + 1; i <= b; ++i) {
    const Row& r = rows[i];
    const auto rel = [&](unsigned long long v) { return v ? static_cast<long long>(v - t0) : -1ll; };
    std::printf("trace %-9s %8lld %8lld %8lld %8lld %8lld %8lld\n", names[r.kind], rel(r.s0), rel(r.s1), rel(r.w0),
                rel(r.w1), rel(r.e0), rel(r.e1));
  }
}
}  // namespace day0::kernels
#else
namespace day0::kernels {
bool decode_trace_init() { return false; }
void decode_trace_dump(int) {}
}  // namespace day0::kernels
#endif
