#include "blocks/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace day0::blocks {

void Rope::tables(std::int64_t first, std::int64_t n, float* cos, float* sin) const {
  const std::size_t half = inv_freq.size();
  for (std::int64_t t = 0; t < n; ++t) {
    // transformers forms position x inv_freq in float32, then cos/sin in float32.
    const float position = static_cast<float>(first + t);
    for (std::size_t i = 0; i < half; ++i) {
      const float angle = position * inv_freq[i];
      cos[static_cast<std::size_t>(t) * half + i] = std::cos(angle) * attention_factor;
      sin[static_cast<std::size_t>(t) * half + i] = std::sin(angle) * attention_factor;
    }
  }
}

namespace {

// YaRN (https://arxiv.org/abs/2309.00071) as transformers computes it.
Result<Rope> yarn(const io::ConfigView& p, double base, std::int64_t dim, std::int64_t max_positions) {
  Rope rope;
  DAY0_ASSIGN_OR_RETURN(const std::int64_t original, p.get_int("original_max_position_embeddings", {1, 1ll << 40}));
  double factor = 0;
  if (p.has("factor")) {
    DAY0_ASSIGN_OR_RETURN(factor, p.get_float("factor"));
  } else {
    factor = static_cast<double>(max_positions) / static_cast<double>(original);
  }
  if (!(factor > 0)) return error(ErrorCode::corrupt_data, p.field_name("factor") + " must be positive");
  const auto get_mscale = [](double scale, double mscale) {
    return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
  };
  double attention_factor = 0;
  if (p.has("attention_factor")) {
    DAY0_ASSIGN_OR_RETURN(attention_factor, p.get_float("attention_factor"));
  } else {
    DAY0_ASSIGN_OR_RETURN(const double mscale, p.get_float_or("mscale", 0));
    DAY0_ASSIGN_OR_RETURN(const double mscale_all_dim, p.get_float_or("mscale_all_dim", 0));
    attention_factor = (mscale != 0 && mscale_all_dim != 0) ? get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
                                                            : get_mscale(factor, 1.0);
  }
  DAY0_ASSIGN_OR_RETURN(double beta_fast, p.get_float_or("beta_fast", 32));
  DAY0_ASSIGN_OR_RETURN(double beta_slow, p.get_float_or("beta_slow", 1));
  if (beta_fast == 0) beta_fast = 32;  // transformers: `get(...) or default`
  if (beta_slow == 0) beta_slow = 1;
  DAY0_ASSIGN_OR_RETURN(const bool truncate, p.get_bool_or("truncate", true));

  const double d = static_cast<double>(dim);
  const auto correction_dim = [&](double rotations) {
    return (d * std::log(static_cast<double>(original) / (rotations * 2 * std::numbers::pi))) / (2 * std::log(base));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, d - 1);
  if (low == high) high += 0.001;

  const std::int64_t half = dim / 2;
  rope.inv_freq.resize(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    // transformers computes these in float32.
    const float pos_freq = std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(dim));
    const float extrapolation = 1.0f / pos_freq;
    const float interpolation = 1.0f / (static_cast<float>(factor) * pos_freq);
    const float ramp = std::clamp(static_cast<float>((static_cast<double>(i) - low) / (high - low)), 0.0f, 1.0f);
    const float extrapolation_factor = 1.0f - ramp;
    rope.inv_freq[static_cast<std::size_t>(i)] =
        interpolation * (1.0f - extrapolation_factor) + extrapolation * extrapolation_factor;
  }
  rope.attention_factor = static_cast<float>(attention_factor);
  return rope;
}

}  // namespace

Result<Rope> make_rope(const io::ConfigView& config, std::int64_t dim, std::int64_t max_positions) {
  if (dim <= 0 || dim % 2 != 0) return error(ErrorCode::corrupt_data, "the rotary dimension must be positive and even");
  // transformers 5 writes `rope_parameters` (with rope_theta inside); older configs carry
  // `rope_scaling` plus a top-level `rope_theta`.
  std::optional<io::ConfigView> params = config.optional_child("rope_parameters");
  if (!params) params = config.optional_child("rope_scaling");
  double base = 10000.0;
  std::string type = "default";
  if (params) {
    DAY0_ASSIGN_OR_RETURN(type, params->get_string_or("rope_type", "default"));
    if (type == "default" && params->has("type")) {
      DAY0_ASSIGN_OR_RETURN(type, params->get_string("type"));
    }
  }
  if (params && params->has("rope_theta")) {
    DAY0_ASSIGN_OR_RETURN(base, params->get_float("rope_theta"));
  } else {
    DAY0_ASSIGN_OR_RETURN(base, config.get_float_or("rope_theta", 10000.0));
  }
  if (!(base > 1.0)) return error(ErrorCode::corrupt_data, config.field_name("rope_theta") + " must be above 1");

  if (type == "yarn") return yarn(*params, base, dim, max_positions);

  Rope rope;
  float scale = 1.0f;
  if (type == "linear") {
    DAY0_ASSIGN_OR_RETURN(const double factor, params->get_float("factor"));
    if (!(factor > 0)) return error(ErrorCode::corrupt_data, params->field_name("factor") + " must be positive");
    scale = 1.0f / static_cast<float>(factor);
  } else if (type != "default") {
    return error(ErrorCode::unsupported, "RoPE type \"" + type + "\" is not supported (default, linear, yarn)");
  }
  rope.inv_freq.resize(static_cast<std::size_t>(dim / 2));
  for (std::int64_t i = 0; i < dim / 2; ++i)
    rope.inv_freq[static_cast<std::size_t>(i)] =
        scale / std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(dim));
  return rope;
}

}  // namespace day0::blocks
