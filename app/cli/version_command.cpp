#include <cstdio>

#include "cli/commands.h"
#include "day0/devices.h"
#include "day0/version.h"

namespace day0::cli {
namespace {

int run_version(const std::vector<std::string>&) {
  const BuildInfo build = build_info();
  std::printf("day0-cli %s (%s build, CUDA %s)\n", build.version.c_str(), build.build_type.c_str(),
              build.cuda ? ("on, sm " + build.cuda_architectures).c_str() : "off");
  for (const auto& line : describe_devices(discover_devices())) std::printf("  %s\n", line.c_str());
  return 0;
}

const Registration kRegistration{"version", &run_version, "print the version, build and devices found"};

}  // namespace
}  // namespace day0::cli
