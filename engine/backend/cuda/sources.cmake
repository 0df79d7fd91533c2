# The CUDA backend (only in builds with DAY0_CUDA): handles and memory accounting, cuBLASLt
# GEMMs, and the models that run on a GPU.
target_sources(day0_engine PRIVATE
  backend/cuda/cuda_support.cpp
  backend/cuda/cublaslt_gemm.cpp
  backend/cuda/gpt_oss_cuda.cpp
)
target_link_libraries(day0_engine PRIVATE CUDA::cublasLt)
