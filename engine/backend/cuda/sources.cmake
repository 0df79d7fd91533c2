# The CUDA backend (only in builds with DAY0_CUDA): handles and memory accounting, cuBLASLt
# GEMMs, and the models that run on a GPU.
target_sources(day0_engine PRIVATE
  backend/cuda/cuda_support.cpp
  backend/cuda/cublaslt_gemm.cpp
  backend/cuda/device_model.cpp
  backend/cuda/glm5_next_cuda.cpp
  backend/cuda/glm5_next_session.cpp
  backend/cuda/gpt_oss_cuda.cpp
  backend/cuda/weight_upload.cpp
)
# cuBLASLt is opened at run time (dlopen), so machines without the CUDA toolkit still start.
target_include_directories(day0_engine PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(day0_engine PRIVATE ${CMAKE_DL_LIBS})
