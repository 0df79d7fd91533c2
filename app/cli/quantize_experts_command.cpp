// day0-cli quantize-experts IN OUT: a glm5_next checkpoint with MXFP4 routed experts, written
// from one with bf16 per-expert tensors; every other tensor and file is copied untouched.
#include <cstdio>

#include "cli/commands.h"
#include "day0/quantize_experts.h"

namespace day0::cli {
namespace {

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli quantize-experts IN_DIR OUT_DIR\n"
               "  Writes OUT_DIR (new or empty): the glm5_next checkpoint IN_DIR with its routed experts\n"
               "  quantized to MXFP4 (stacked experts.gate_up_proj_blocks/_scales and\n"
               "  experts.down_proj_blocks/_scales per layer) and quantization_config in config.json.\n");
  return help ? 0 : 2;
}

int run_quantize_experts(const std::vector<std::string>& argv) {
  std::vector<std::string> positional;
  for (const auto& a : argv) {
    if (a == "--help" || a == "-h") return usage(true);
    if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "day0-cli quantize-experts: unknown option %s\n", a.c_str());
      return usage(false);
    }
    positional.push_back(a);
  }
  if (positional.size() != 2) return usage(false);
  QuantizeExpertsOptions options;
  int last_percent = -1;
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    const int percent = total ? static_cast<int>(100 * done / total) : 100;
    if (percent != last_percent) std::fprintf(stderr, "\rwriting %3d%%", last_percent = percent);
  };
  const auto report = quantize_experts(positional[0], positional[1], options);
  if (last_percent >= 0) std::fprintf(stderr, "\n");
  if (!report.is_ok()) {
    std::fprintf(stderr, "day0-cli quantize-experts: %s\n", plain_message(report.status().message()).c_str());
    return 1;
  }
  std::printf("quantized %lld experts in %lld layers; %llu bytes -> %llu bytes; wrote %s\n",
              static_cast<long long>(report->experts), static_cast<long long>(report->layers),
              static_cast<unsigned long long>(report->bytes_in), static_cast<unsigned long long>(report->bytes_out),
              positional[1].c_str());
  return 0;
}

const Registration kRegistration{"quantize-experts", &run_quantize_experts,
                                 "write a glm5_next checkpoint with MXFP4 experts from a bf16 one"};

}  // namespace
}  // namespace day0::cli
