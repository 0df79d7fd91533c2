#pragma once
// Typed, shape-checked views of checkpoint tensors for the model files. Every view points into
// the memory map; nothing is copied. A tensor that is missing, or whose dtype or shape differs
// from what config.json implies, is an error naming it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "day0/status.h"
#include "io/checkpoint.h"

namespace day0::models {

// The weight bytes one decode step reads on the CPU (the roofline's numerator): every tensor of
// the text model except the embedding table (one row per token) and the vision tower, routed
// experts' tensors at top_k / experts of their size, and the embedding once more when it is
// also the (tied) lm_head.
std::uint64_t decode_weight_bytes(const io::Checkpoint& checkpoint, std::int64_t experts, std::int64_t top_k,
                                  bool tied_embedding);

class WeightSource {
 public:
  explicit WeightSource(std::shared_ptr<const io::Checkpoint> checkpoint) : checkpoint_(std::move(checkpoint)) {}

  // A [rows, cols] float tensor (bf16, f16 or f32).
  Result<cpu::Matrix> matrix(const std::string& name, std::int64_t rows, std::int64_t cols) const;
  // A [n] float tensor, as a 1 x n matrix.
  Result<cpu::Matrix> vector(const std::string& name, std::int64_t n) const;
  // A float tensor of exactly `shape` viewed as [shape[0], product of the rest] (convolution
  // kernels applied as linear layers over flattened patches).
  Result<cpu::Matrix> flattened(const std::string& name, const std::vector<std::int64_t>& shape) const;
  // Slices of a [count, rows, cols] (or [count, cols] when rows == 0) float tensor.
  Result<std::vector<cpu::Matrix>> stacked(const std::string& name, std::int64_t count, std::int64_t rows,
                                           std::int64_t cols) const;
  // Slices of MXFP4 `<name>_blocks` [count, rows, cols/32, 16] + `<name>_scales` [count, rows, cols/32].
  Result<std::vector<cpu::Mxfp4Matrix>> stacked_mxfp4(const std::string& name, std::int64_t count, std::int64_t rows,
                                                      std::int64_t cols) const;

 private:
  Result<io::TensorRef> find(const std::string& name, const std::vector<std::uint64_t>& shape,
                             bool float_dtype) const;

  std::shared_ptr<const io::Checkpoint> checkpoint_;
};

}  // namespace day0::models
