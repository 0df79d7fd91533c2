#include "backend/cuda/cublaslt_gemm.h"

#include <cublasLt.h>

namespace day0::cuda {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

Status lt_status(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return error(ErrorCode::device_error, what + ": cuBLASLt status " + std::to_string(static_cast<int>(s)));
}

#define DAY0_LT_RETURN_IF_ERROR(expr, what)                                                      \
  do {                                                                                           \
    if (const cublasStatus_t day0_lt_status_ = (expr); day0_lt_status_ != CUBLAS_STATUS_SUCCESS) \
      return lt_status(day0_lt_status_, what);                                                   \
  } while (0)

}  // namespace

struct LtGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (c != nullptr) cublasLtMatrixLayoutDestroy(c);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  }
};

LtGemm::~LtGemm() {
  plans_.clear();
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

Result<std::unique_ptr<LtGemm>> LtGemm::create(MemoryLedger* ledger) {
  std::unique_ptr<LtGemm> gemm(new LtGemm());
  DAY0_LT_RETURN_IF_ERROR(cublasLtCreate(&gemm->handle_), "creating the cuBLASLt handle");
  DAY0_ASSIGN_OR_RETURN(gemm->workspace_, DeviceBuffer::allocate(kWorkspaceBytes, MemoryCategory::activations, ledger,
                                                                 "the cuBLASLt workspace"));
  return gemm;
}

Result<LtGemm::Plan*> LtGemm::plan(std::int64_t T, std::int64_t N, std::int64_t K, bool accumulate) {
  const auto key = std::make_tuple(T, N, K, accumulate);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  auto p = std::make_unique<Plan>();
  const std::string what = "planning a bf16 GEMM [" + std::to_string(T) + " x " + std::to_string(K) + "] x [" +
                           std::to_string(K) + " x " + std::to_string(N) + "]";
  DAY0_LT_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), what);
  // Column-major view: y^T [N, T] = W [N, K] (stored as a K x N column-major matrix, transposed)
  // . x^T [K, T] (x stored as a K x T column-major matrix).
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  DAY0_LT_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), what);
  DAY0_LT_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)),
                          what);
  DAY0_LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, static_cast<std::uint64_t>(K), static_cast<std::uint64_t>(N), K),
      what);
  DAY0_LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, static_cast<std::uint64_t>(K), static_cast<std::uint64_t>(T), K),
      what);
  DAY0_LT_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, static_cast<std::uint64_t>(N), static_cast<std::uint64_t>(T), N),
      what);
  cublasLtMatmulPreference_t preference = nullptr;
  DAY0_LT_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&preference), what);
  const std::uint64_t workspace = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(handle_, p->desc, p->a, p->b, p->c, p->c, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  DAY0_LT_RETURN_IF_ERROR(s, what);
  if (found == 0) return error(ErrorCode::unsupported, what + ": cuBLASLt has no algorithm for it on this GPU");
  p->algo = result.algo;
  Plan* raw = p.get();
  plans_.emplace(key, std::move(p));
  return raw;
}

Status LtGemm::linear(const std::uint16_t* W, const std::uint16_t* x, float* y, std::int64_t T, std::int64_t N,
                      std::int64_t K, bool accumulate, cudaStream_t stream) {
  if (T == 0) return Status::ok();
  DAY0_ASSIGN_OR_RETURN(Plan * p, plan(T, N, K, accumulate));
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  DAY0_LT_RETURN_IF_ERROR(cublasLtMatmul(handle_, p->desc, &alpha, W, p->a, x, p->b, &beta, y, p->c, y, p->c, &p->algo,
                                         workspace_.get(), kWorkspaceBytes, stream),
                          "running a bf16 GEMM");
  return Status::ok();
}

}  // namespace day0::cuda
