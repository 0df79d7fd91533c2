#pragma once
// CUDA device discovery for the CUDA backend. Every CUDA error becomes a message, never an
// abort: on a machine whose driver is missing or too old the engine falls back to the CPU.
#include <string>
#include <vector>

#include "day0/devices.h"

namespace day0::cuda {

// Fills `gpus`, or returns false with `problem` set ("CUDA driver version is insufficient for
// CUDA runtime version: ...").
bool list_devices(std::vector<GpuInfo>* gpus, std::string* problem);

}  // namespace day0::cuda
