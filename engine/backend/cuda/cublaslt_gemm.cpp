#include "backend/cuda/cublaslt_gemm.h"

#include <dlfcn.h>

#include <cublasLt.h>

#include <mutex>

namespace day0::cuda {
namespace {

// cuBLASLt is loaded at run time: a build with the CUDA backend must start (and use the CPU) on
// machines that have a driver but no CUDA toolkit, where libcublasLt is absent.
struct LtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

const LtApi* lt_api(std::string* problem) {
  static std::once_flag once;
  static LtApi api;
  static std::string failure;
  std::call_once(once, [] {
    void* lib = nullptr;
    for (const char* name : {"libcublasLt.so.13", "libcublasLt.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib == nullptr) {
      const char* why = dlerror();
      failure = std::string("cuBLASLt (libcublasLt.so.13, part of the CUDA 13 toolkit) could not be loaded: ") +
                (why != nullptr ? why : "not found");
      return;
    }
    const auto bind = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (fn == nullptr && failure.empty()) failure = std::string("libcublasLt has no ") + symbol;
    };
    bind(api.create, "cublasLtCreate");
    bind(api.destroy, "cublasLtDestroy");
    bind(api.desc_create, "cublasLtMatmulDescCreate");
    bind(api.desc_destroy, "cublasLtMatmulDescDestroy");
    bind(api.desc_set, "cublasLtMatmulDescSetAttribute");
    bind(api.layout_create, "cublasLtMatrixLayoutCreate");
    bind(api.layout_destroy, "cublasLtMatrixLayoutDestroy");
    bind(api.pref_create, "cublasLtMatmulPreferenceCreate");
    bind(api.pref_destroy, "cublasLtMatmulPreferenceDestroy");
    bind(api.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    bind(api.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(api.matmul, "cublasLtMatmul");
  });
  if (!failure.empty()) {
    *problem = failure;
    return nullptr;
  }
  return &api;
}

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
  const LtApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (a != nullptr) api->layout_destroy(a);
    if (b != nullptr) api->layout_destroy(b);
    if (c != nullptr) api->layout_destroy(c);
    if (desc != nullptr) api->desc_destroy(desc);
  }
};

LtGemm::~LtGemm() {
  plans_.clear();
  if (handle_ != nullptr) static_cast<const LtApi*>(api_)->destroy(handle_);
}

Result<std::unique_ptr<LtGemm>> LtGemm::create(MemoryLedger* ledger) {
  std::string problem;
  const LtApi* api = lt_api(&problem);
  if (api == nullptr) return error(ErrorCode::unsupported, problem);
  std::unique_ptr<LtGemm> gemm(new LtGemm());
  gemm->api_ = api;
  DAY0_LT_RETURN_IF_ERROR(api->create(&gemm->handle_), "creating the cuBLASLt handle");
  DAY0_ASSIGN_OR_RETURN(gemm->workspace_, DeviceBuffer::allocate(kLtGemmWorkspaceBytes, MemoryCategory::activations,
                                                                 ledger, "the cuBLASLt workspace"));
  return gemm;
}

Result<LtGemm::Plan*> LtGemm::plan(std::int64_t T, std::int64_t N, std::int64_t K, bool accumulate) {
  const auto key = std::make_tuple(T, N, K, accumulate);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  const auto* api = static_cast<const LtApi*>(api_);
  auto p = std::make_unique<Plan>();
  p->api = api;
  const std::string what = "planning a bf16 GEMM [" + std::to_string(T) + " x " + std::to_string(K) + "] x [" +
                           std::to_string(K) + " x " + std::to_string(N) + "]";
  DAY0_LT_RETURN_IF_ERROR(api->desc_create(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), what);
  // Column-major view: y^T [N, T] = W [N, K] (stored as a K x N column-major matrix, transposed)
  // . x^T [K, T] (x stored as a K x T column-major matrix).
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  DAY0_LT_RETURN_IF_ERROR(api->desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), what);
  DAY0_LT_RETURN_IF_ERROR(api->desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)), what);
  DAY0_LT_RETURN_IF_ERROR(
      api->layout_create(&p->a, CUDA_R_16BF, static_cast<std::uint64_t>(K), static_cast<std::uint64_t>(N), K), what);
  DAY0_LT_RETURN_IF_ERROR(
      api->layout_create(&p->b, CUDA_R_16BF, static_cast<std::uint64_t>(K), static_cast<std::uint64_t>(T), K), what);
  DAY0_LT_RETURN_IF_ERROR(
      api->layout_create(&p->c, CUDA_R_32F, static_cast<std::uint64_t>(N), static_cast<std::uint64_t>(T), N), what);
  cublasLtMatmulPreference_t preference = nullptr;
  DAY0_LT_RETURN_IF_ERROR(api->pref_create(&preference), what);
  const std::uint64_t workspace = kLtGemmWorkspaceBytes;
  api->pref_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s = api->heuristic(handle_, p->desc, p->a, p->b, p->c, p->c, preference, 1, &result, &found);
  api->pref_destroy(preference);
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
  DAY0_LT_RETURN_IF_ERROR(
      static_cast<const LtApi*>(api_)->matmul(handle_, p->desc, &alpha, W, p->a, x, p->b, &beta, y, p->c, y, p->c,
                                              &p->algo, workspace_.get(), kLtGemmWorkspaceBytes, stream),
      "running a bf16 GEMM");
  return Status::ok();
}

}  // namespace day0::cuda
