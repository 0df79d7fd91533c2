#pragma once
// What the CPU kernels sustain on this machine on given weights, measured now with the pool's
// threads: y = x W^T for T tokens over each matrix in turn, after one untimed pass (first touch,
// page faults), in weight bytes per second. The planner's inputs (limits/model_plan.cpp): run on
// a model's own mapped tensors they include what the memory map costs.
#include <cstdint>
#include <span>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"

namespace day0::cpu {

// Bytes of the matrices' weights read per second, about `seconds` of calls.
double linear_rate(ThreadPool& pool, std::span<const Matrix> matrices, std::int64_t tokens, double seconds = 0.25);
double linear_rate(ThreadPool& pool, std::span<const Mxfp4Matrix> matrices, std::int64_t tokens,
                   double seconds = 0.25);

std::uint64_t weight_bytes(const Matrix& m);
std::uint64_t weight_bytes(const Mxfp4Matrix& m);

}  // namespace day0::cpu
