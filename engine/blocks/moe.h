#pragma once
// glm5_next's feed-forward blocks (DeepSeek-V3 style), on the CPU.
//
// Dense MLP (also the shared experts): down(silu(min(gate x, L)) * clamp(up x, -L, L)),
// L = swiglu_limit.
//
// MoE: router logits r = W x (fp32); scores s = sigmoid(r); choice c = s + e_score_correction_bias.
// Experts form n_group groups of E / n_group; a group's score is the sum of its two best c; the
// topk_group best groups stay, and the top_k best c among their experts are selected. The
// weights are s of the selected (not c), divided by their sum + 1e-20 when norm_topk_prob,
// times routed_scaling_factor. out = sum_selected w_e expert_e(x) + shared_experts(x).
//
// Experts come either as bf16 per-expert tensors (`experts.e.{gate,up,down}_proj.weight`) or
// as stacked MXFP4 (`experts.gate_up_proj_blocks/_scales` [E, 2I, H/32, 16] with gate rows
// first, then up; `experts.down_proj_blocks/_scales` [E, H, I/32, 16]).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "core/thread_pool.h"
#include "day0/status.h"
#include "models/weights.h"

namespace day0::blocks {

struct DenseMlp {
  cpu::Matrix gate, up;  // [I, H]
  cpu::Matrix down;      // [H, I]
  std::int64_t inter = 0;
};

// prefix: e.g. "model.language_model.layers.0.mlp." (gate_proj, up_proj, down_proj).
Result<DenseMlp> bind_dense_mlp(const models::WeightSource& weights, const std::string& prefix, std::int64_t hidden,
                                std::int64_t inter);

// x: [T, H] -> out: [T, H].
void dense_mlp_forward(ThreadPool& pool, const DenseMlp& mlp, float swiglu_limit, const float* x, std::int64_t T,
                       float* out);

struct MoeConfig {
  std::int64_t hidden = 0, experts = 0, top_k = 0, inter = 0, shared_inter = 0;  // shared_inter 0: none
  std::int64_t n_group = 1, topk_group = 1;
  bool norm_topk_prob = true;
  float routed_scaling = 1.0f;
  float swiglu_limit = 10.0f;
  bool mxfp4 = false;
};

// Experts read into a cache instead of through the memory map (models/streamed_experts.h):
// fetch(experts, fn) calls fn(i, bytes) with the bytes of experts[i] as its cache slot holds them,
// and `slot` says where each tensor starts there. The views are the resident ones with their
// pointers moved into the slot.
using ExpertBytesFn = std::function<Status(std::size_t, const std::uint8_t*)>;
using ExpertFetch = std::function<Status(std::span<const std::int32_t>, const ExpertBytesFn&)>;
struct ExpertSlotLayout {
  std::uint64_t gate_up_blocks = 0, gate_up_scales = 0, down_blocks = 0, down_scales = 0;  // MXFP4
  std::uint64_t gate = 0, up = 0, down = 0;                                                // bf16
};

struct MoeLayer {
  cpu::Matrix router;                                 // [E, H]
  cpu::Matrix score_bias;                             // [1, E] e_score_correction_bias
  std::vector<cpu::Matrix> gate, up, down;            // per expert, bf16 checkpoints
  std::vector<cpu::Mxfp4Matrix> gate_up_mx, down_mx;  // per expert, MXFP4 checkpoints
  bool has_shared = false;
  DenseMlp shared;
  ExpertFetch fetch;  // set: the experts are streamed
  ExpertSlotLayout slot;
};

// Binds the experts lazily: only their shapes are checked, not their bytes (the MXFP4 NaN scale
// check runs on each expert as it is read, check_expert_scales()).
struct BindOptions {
  bool check_expert_bytes = true;
};

// prefix: e.g. "model.language_model.layers.3.mlp.". MXFP4 scales of 0xFF (NaN) are an error.
Result<MoeLayer> bind_moe(const models::WeightSource& weights, const MoeConfig& config, const std::string& prefix,
                          const BindOptions& options = {});
// The NaN scale check of one MXFP4 expert as its cache slot holds it; `layer_prefix` names the
// tensors in the message.
Status check_expert_scales(const MoeConfig& config, const ExpertSlotLayout& slot, const std::uint8_t* bytes,
                           const std::string& layer_prefix, std::int64_t expert);

// The router alone: ids [T, top_k] ascending, weights [T, top_k] in the same order.
void route(ThreadPool& pool, const MoeConfig& config, const MoeLayer& layer, const float* x, std::int64_t T,
           std::int32_t* ids, float* weights);

// x: [T, H] -> out: [T, H]. ids/weights (nullable): [T, top_k] as route() gives them. Fails only
// when streamed experts cannot be read.
Status moe_forward(ThreadPool& pool, const MoeConfig& config, const MoeLayer& layer, const float* x, std::int64_t T,
                 float* out, std::vector<std::int32_t>* ids, std::vector<float>* weights);

}  // namespace day0::blocks
