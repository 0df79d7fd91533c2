#pragma once
// bf16 GEMMs through cuBLASLt (tensor cores, fp32 accumulation and output) for the dense
// projections of prefill: y[T, N] (+)= x[T, K] . W[N, K]^T, both operands K-major as the
// checkpoints store them. Heuristic choices are cached per shape.
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_support.h"
#include "day0/status.h"

struct cublasLtContext;

namespace day0::cuda {

// The device workspace one LtGemm holds (activations in the ledger).
inline constexpr std::size_t kLtGemmWorkspaceBytes = 32u << 20;

class LtGemm {
 public:
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm();
  static Result<std::unique_ptr<LtGemm>> create(MemoryLedger* ledger);

  // W: [N, K] bf16; x: [T, K] bf16; y: [T, N] fp32, overwritten or (accumulate) added to.
  Status linear(const std::uint16_t* W, const std::uint16_t* x, float* y, std::int64_t T, std::int64_t N,
                std::int64_t K, bool accumulate, cudaStream_t stream);

 private:
  LtGemm() = default;
  struct Plan;
  Result<Plan*> plan(std::int64_t T, std::int64_t N, std::int64_t K, bool accumulate);

  const void* api_ = nullptr;  // the entry points, loaded at run time (cublaslt_gemm.cpp)
  cublasLtContext* handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>, std::unique_ptr<Plan>> plans_;
};

}  // namespace day0::cuda
