#include <array>

#include "models/architecture.h"

namespace day0::models {

extern const Architecture kGptOss;
extern const Architecture kGlm5Next;

namespace {
constexpr std::array<const Architecture*, 2> kArchitectures{&kGptOss, &kGlm5Next};
}  // namespace

std::span<const Architecture* const> architectures() { return kArchitectures; }

const Architecture* find_architecture(std::string_view model_type) {
  for (const auto* arch : kArchitectures)
    if (arch->model_type == model_type) return arch;
  return nullptr;
}

std::string_view role_name(TensorRole role) {
  switch (role) {
    case TensorRole::embedding: return "embedding";
    case TensorRole::attention: return "attention";
    case TensorRole::sparse_attention_indexer: return "sparse-attention indexer";
    case TensorRole::linear_attention: return "linear attention";
    case TensorRole::hyper_connection: return "hyper-connections";
    case TensorRole::norm: return "norms";
    case TensorRole::dense_mlp: return "dense MLP";
    case TensorRole::router: return "router";
    case TensorRole::routed_experts: return "routed experts";
    case TensorRole::shared_experts: return "shared experts";
    case TensorRole::lm_head: return "lm_head";
    case TensorRole::vision: return "vision";
    case TensorRole::mtp: return "multi-token prediction";
    case TensorRole::other: return "other";
  }
  return "other";
}

namespace {
bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

TensorRole classify_by_name(std::string_view n) {
  if (contains(n, "visual.") || contains(n, "vision_tower") || contains(n, "vision_model")) return TensorRole::vision;
  if (contains(n, "embed_tokens")) return TensorRole::embedding;
  if (contains(n, "lm_head")) return TensorRole::lm_head;
  if (contains(n, "mtp")) return TensorRole::mtp;
  if (contains(n, "shared_expert")) return TensorRole::shared_experts;
  if (contains(n, ".experts.")) return TensorRole::routed_experts;
  if (contains(n, ".router.") || contains(n, "mlp.gate.") || contains(n, "e_score_correction_bias"))
    return TensorRole::router;
  if (contains(n, "indexer")) return TensorRole::sparse_attention_indexer;
  if (contains(n, "linear_attn")) return TensorRole::linear_attention;
  if (contains(n, ".hc_") || contains(n, "hyper_connection")) return TensorRole::hyper_connection;
  if (contains(n, "norm") && (ends_with(n, ".weight") || ends_with(n, ".bias"))) {
    // Norms inside attention blocks (q/kv layernorms) belong to the attention.
    if (!contains(n, "attn")) return TensorRole::norm;
  }
  if (contains(n, "attn")) return TensorRole::attention;
  if (contains(n, ".mlp.")) return TensorRole::dense_mlp;
  return TensorRole::other;
}

Result<bool> mxfp4_experts(const io::ModelConfig& config, std::string_view family) {
  const auto q = config.root().optional_child("quantization_config");
  if (!q) return false;
  DAY0_ASSIGN_OR_RETURN(const std::string method, q->get_string_or("quant_method", ""));
  if (method == "mxfp4") return true;
  if (method.empty()) return false;
  return error(ErrorCode::unsupported, config.origin() + ": quantization method \"" + method +
                                           "\" is not supported for " + std::string(family) +
                                           " (MXFP4 experts or unquantized)");
}

std::uint64_t stored_params(std::string_view name, DType dtype, std::uint64_t numel, bool mxfp4_checkpoint) {
  if (mxfp4_checkpoint && dtype == DType::u8) {
    if (ends_with(name, "_blocks")) return numel * 2;
    if (ends_with(name, "_scales")) return 0;
  }
  if (dtype == DType::f8_e8m0) return 0;  // block scales of microscaled formats
  // Per-block dequantisation scales of FP8 checkpoints are metadata too.
  if (ends_with(name, "weight_scale_inv") || ends_with(name, "weight_scale")) return 0;
  return numel;
}

}  // namespace day0::models
