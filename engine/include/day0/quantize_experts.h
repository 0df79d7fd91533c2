#pragma once
// Writing a glm5_next (GLM-5.3-Flash) checkpoint whose routed experts are MXFP4, from one whose
// experts are bf16 per-expert tensors as transformers saves them. Every other tensor and file is
// copied untouched; config.json gains quantization_config {quant_method: "mxfp4", ...}.
//
// Layout written, per MoE layer (prefix model.language_model.layers.N.mlp.experts.):
//   gate_up_proj_blocks [E, 2I, H/32, 16] u8, gate_up_proj_scales [E, 2I, H/32] u8 (E8M0)
//     rows [0, I) hold expert e's gate_proj.weight, rows [I, 2I) its up_proj.weight
//   down_proj_blocks [E, H, I/32, 16] u8, down_proj_scales [E, H, I/32] u8
// Two E2M1 codes per byte, the low nibble first; each block of 32 values of a row shares one
// scale. Quantization: the OCP MX rule with round-to-nearest-even (formats/mxfp4.h).
#include <cstdint>
#include <filesystem>
#include <functional>

#include "day0/status.h"

namespace day0 {

struct QuantizeExpertsOptions {
  // Called with tensor bytes written so far and their total.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

struct QuantizeExpertsReport {
  std::int64_t layers = 0;   // MoE layers whose experts were quantized
  std::int64_t experts = 0;  // experts quantized, all layers together
  std::uint64_t bytes_in = 0, bytes_out = 0;  // tensor data, headers not counted
};

// in_dir: a glm5_next folder with bf16 (or f16 / f32) experts; out_dir: a new or empty folder.
Result<QuantizeExpertsReport> quantize_experts(const std::filesystem::path& in_dir,
                                               const std::filesystem::path& out_dir,
                                               const QuantizeExpertsOptions& options = {});

}  // namespace day0
