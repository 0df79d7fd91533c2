#pragma once
// What the CPU kernels sustain on this machine, measured now with the pool's threads: one token
// through weight matrices larger than the caches (decoding: weight bytes per second, the lesser
// of what memory delivers and what the cores decode), and a block of tokens through one matrix
// (prefill: multiply-adds per second). The planner's inputs (limits/model_plan.cpp).
#include "core/thread_pool.h"

namespace day0::cpu {

struct KernelRates {
  double bf16_gemv_gbps = 0;   // bf16 weight bytes per second, 1 token
  double mxfp4_gemv_gbps = 0;  // MXFP4 blocks + scales bytes per second, 1 token
  double bf16_gflops = 0;      // 2 * multiply-adds per second, a block of tokens
  double mxfp4_gflops = 0;
};

// About a second. `prefill_tokens`: the block size of the prefill measurement.
KernelRates measure_kernel_rates(ThreadPool& pool, std::int64_t prefill_tokens = 128);

}  // namespace day0::cpu
