#pragma once
// The GLM-5.3-Flash vision tower (transformers' Glm5NextVisionModel) on the CPU, fp32:
//   x      = patch_embed(pixel_values)             Conv3d as a linear over flattened patches [N, D]
//   for each block:                                 attention within each image only
//     x += proj(attn(rope2d(qk_norm(qkv(rms_norm1(x))))))
//     x += down(silu(min(gate, L)) * clamp(up, -L, L))   over rms_norm2(x), with biases
//   x      = post_layernorm(x)                       RMSNorm
//   y      = downsample(x)                           Conv2d merge x merge over each merge block
//                                                    (its merge^2 consecutive patches)  [N/merge^2, O]
//   out    = down(silu(min(gate(h), L)) * clamp(up(h), -L, L)),  h = gelu(layer_norm(proj(y)))
// 2D RoPE: head dim d; d/4 frequencies theta^(-2i/(d/2)); the first d/4 angles use the patch's row,
// the next d/4 its column; halves-rotation over the whole head.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "day0/status.h"
#include "io/model_config.h"
#include "models/loaded_model.h"
#include "models/weights.h"
#include "vision/glm5_vision_preprocess.h"

namespace day0::vision {

struct VisionTowerConfig {
  std::int64_t depth = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate = 0;
  std::int64_t out_hidden = 0;
  std::int64_t projection_intermediate = 0;
  std::int64_t in_channels = 3;
  std::int64_t patch_size = 14;
  std::int64_t temporal_patch_size = 2;
  std::int64_t merge_size = 2;
  double rms_norm_eps = 1e-5;
  double swiglu_limit = 0.0;
  double rope_theta = 10000.0;
  bool attention_bias = true;
  std::int64_t patch_dim() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
};

Result<VisionTowerConfig> parse_vision_config(const io::ModelConfig& config);

// Row and column of each patch in the processor's block-major order, for grid_t frames of
// grid_h x grid_w patches: [patches, 2].
std::vector<std::int64_t> patch_positions(std::int64_t grid_t, std::int64_t grid_h, std::int64_t grid_w,
                                          std::int64_t merge);

class VisionTower {
 public:
  // Binds `model.visual.*` (the prefix is the checkpoint's, without the trailing dot).
  static Result<std::unique_ptr<VisionTower>> load(const VisionTowerConfig& config, const models::WeightSource& w,
                                                   const std::string& prefix, ThreadPool& pool);
  const VisionTowerConfig& config() const { return c_; }

  // The image's features in the text model's hidden size: [patches / merge^2, out_hidden].
  // trace (optional): "vision.patch_embed", "vision.block.<i>", "vision.post_norm",
  // "vision.downsample", "vision.merger".
  Result<std::vector<float>> encode(const VisionInput& input, models::ForwardTrace* trace) const;

 private:
  struct Block {
    cpu::Matrix norm1, norm2, qkv_w, qkv_b, proj_w, proj_b, q_norm, k_norm;
    cpu::Matrix gate_w, gate_b, up_w, up_b, down_w, down_b;
  };
  VisionTower(const VisionTowerConfig& c, ThreadPool& pool) : c_(c), pool_(pool) {}
  void attention(const float* qkv, std::int64_t n, float* out) const;

  VisionTowerConfig c_;
  ThreadPool& pool_;
  cpu::Matrix patch_w_, patch_b_, post_norm_, down_w_, down_b_;
  cpu::Matrix m_proj_, m_norm_w_, m_norm_b_, m_gate_, m_up_, m_down_;
  std::vector<Block> blocks_;
  std::vector<float> inv_freq_;
};

}  // namespace day0::vision
