#include "backend/cuda/cuda_devices.h"

#include <cuda_runtime_api.h>

namespace day0::cuda {

bool list_devices(std::vector<GpuInfo>* gpus, std::string* problem) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    *problem = std::string("CUDA is unavailable: ") + cudaGetErrorString(status) +
               " (check the NVIDIA driver; Day0 needs a driver for CUDA 13)";
    cudaGetLastError();  // clear the sticky error so later calls report their own
    return false;
  }
  if (count == 0) {
    *problem = "no NVIDIA GPU was found";
    return false;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if ((status = cudaGetDeviceProperties(&prop, i)) != cudaSuccess) {
      *problem = "cannot query GPU " + std::to_string(i) + ": " + cudaGetErrorString(status);
      return false;
    }
    GpuInfo gpu;
    gpu.index = i;
    gpu.name = prop.name;
    gpu.compute_major = prop.major;
    gpu.compute_minor = prop.minor;
    gpu.multiprocessors = prop.multiProcessorCount;
    gpu.total_memory = prop.totalGlobalMem;
    gpu.fp8 = prop.major * 10 + prop.minor >= 89;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      gpu.free_memory = free_bytes;
    gpus->push_back(gpu);
  }
  return true;
}

}  // namespace day0::cuda
