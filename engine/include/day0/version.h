#pragma once
#include <string>

namespace day0 {

struct BuildInfo {
  std::string version;             // "0.1.0"
  std::string build_type;          // "Release", "RelWithDebInfo", ...
  bool cuda = false;               // built with the CUDA backend
  std::string cuda_architectures;  // "80;86;89;90" when cuda
};

BuildInfo build_info();

}  // namespace day0
