#pragma once
// Test helpers for the KDA block: a random KDA layer written as an F32 safetensors checkpoint
// (bound through the engine's own loader), and an fp64 implementation of the layer written
// from the math, which shares no code with engine/blocks/kda*.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blocks/kda.h"
#include "io/checkpoint.h"
#include "models/weights.h"

namespace day0::test {

inline const std::string kKdaPrefix = "model.language_model.layers.0.self_attn";

// Ranges of the gate parameters. log a = lower_bound * sigmoid(exp(A_log) g) (or the softplus
// form) with g = f_b(f_a(x)) + dt_bias: large dt_bias and A_log make the strongest gates.
struct KdaGates {
  float dt_lo = -6.0f, dt_hi = -3.0f;
  float a_log_lo = -0.5f, a_log_hi = 0.5f;
};

struct KdaShape {
  std::int64_t hidden = 48, heads = 3, head_dim = 24, conv_kernel = 4;
  std::optional<float> lower_bound = -5.0f;
};

// One tensor as the test knows it: name (without the prefix), shape, values.
struct HostTensor {
  std::vector<std::uint64_t> shape;
  std::vector<float> values;
};

struct KdaFixture {
  blocks::KdaConfig config;
  std::map<std::string, HostTensor> tensors;  // "q_proj.weight" -> ...
  std::shared_ptr<const io::Checkpoint> checkpoint;
  std::unique_ptr<models::WeightSource> weights;
  blocks::KdaLayer layer;
};

// Random weights (matrices scaled by 1/sqrt(fan_in)), written to `dir` and bound. `edit` may
// change the tensor list before writing (drop one, change a shape) to make a broken checkpoint.
std::map<std::string, HostTensor> random_kda_tensors(const KdaShape& shape, const KdaGates& gates, std::uint32_t seed);
void write_kda_checkpoint(const std::filesystem::path& dir, const std::map<std::string, HostTensor>& tensors);
blocks::KdaConfig kda_config(const KdaShape& shape);
// Empty string on success, else the error message (open or bind). The _from form binds what
// `dir` already holds.
std::string make_kda_fixture_from(const std::filesystem::path& dir, const KdaShape& shape, KdaFixture& out);
std::string make_kda_fixture(const std::filesystem::path& dir, const KdaShape& shape, const KdaGates& gates,
                             std::uint32_t seed, KdaFixture& out);

std::vector<float> random_input(std::int64_t T, std::int64_t hidden, std::uint32_t seed, float scale = 1.0f);

// The layer over T tokens from a zero state, in fp64: out [T, hidden]; the final recurrent state
// [heads, d, d] when `state` is given.
std::vector<double> kda_reference(const KdaShape& shape, const std::map<std::string, HostTensor>& tensors,
                                  const std::vector<float>& x, std::int64_t T, std::vector<double>* state = nullptr);

// ||a - b|| / ||b||.
template <typename A, typename B>
double rel_l2(const std::vector<A>& a, const std::vector<B>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  if (a.size() != b.size()) return 1e30;
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace day0::test
