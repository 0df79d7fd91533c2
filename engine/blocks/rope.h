#pragma once
// Rotary position embeddings as Hugging Face configures them (`rope_parameters`, or the older
// `rope_scaling` + `rope_theta`): the inverse frequencies and the attention factor that scales
// cos and sin. Types: default, linear, yarn.
#include <cstdint>
#include <vector>

#include "day0/status.h"
#include "io/model_config.h"

namespace day0::blocks {

struct Rope {
  std::vector<float> inv_freq;  // [dim / 2]
  float attention_factor = 1.0f;

  // cos, sin: [n, dim / 2] for positions first .. first + n - 1, each multiplied by
  // attention_factor (as transformers does).
  void tables(std::int64_t first, std::int64_t n, float* cos, float* sin) const;
};

// `dim` is the rotated part of a head (head_dim x partial_rotary_factor).
Result<Rope> make_rope(const io::ConfigView& config, std::int64_t dim, std::int64_t max_position_embeddings);

}  // namespace day0::blocks
