#include "models/weights.h"

#include <fmt/format.h>

namespace day0::models {
namespace {

std::string shape_text(const std::vector<std::uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

bool is_float(DType d) { return d == DType::bf16 || d == DType::f16 || d == DType::f32; }

}  // namespace

Result<io::TensorRef> WeightSource::find(const std::string& name, const std::vector<std::uint64_t>& shape,
                                         bool float_dtype) const {
  const auto ref = checkpoint_->find(name);
  if (!ref) return error(ErrorCode::not_found, "the checkpoint has no tensor " + name);
  const io::TensorInfo& t = *ref->info;
  if (t.shape != shape)
    return error(ErrorCode::corrupt_data, "tensor " + name + " has shape " + shape_text(t.shape) +
                                              " but config.json implies " + shape_text(shape));
  if (float_dtype ? !is_float(t.dtype) : t.dtype != DType::u8)
    return error(ErrorCode::unsupported, "tensor " + name + " is stored as " + std::string(dtype_name(t.dtype)) +
                                             (float_dtype ? "; expected BF16, F16 or F32" : "; expected U8"));
  return *ref;
}

Result<cpu::Matrix> WeightSource::matrix(const std::string& name, std::int64_t rows, std::int64_t cols) const {
  DAY0_ASSIGN_OR_RETURN(const io::TensorRef ref,
                        find(name, {static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols)}, true));
  return cpu::Matrix{ref.info->dtype, ref.file->data(*ref.info).data(), rows, cols};
}

Result<cpu::Matrix> WeightSource::vector(const std::string& name, std::int64_t n) const {
  DAY0_ASSIGN_OR_RETURN(const io::TensorRef ref, find(name, {static_cast<std::uint64_t>(n)}, true));
  return cpu::Matrix{ref.info->dtype, ref.file->data(*ref.info).data(), 1, n};
}

Result<cpu::Matrix> WeightSource::flattened(const std::string& name, const std::vector<std::int64_t>& shape) const {
  if (shape.empty()) return error(ErrorCode::invalid_argument, "tensor " + name + ": no shape given");
  std::vector<std::uint64_t> dims;
  std::int64_t cols = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims.push_back(static_cast<std::uint64_t>(shape[i]));
    if (i > 0) cols *= shape[i];
  }
  DAY0_ASSIGN_OR_RETURN(const io::TensorRef ref, find(name, dims, true));
  return cpu::Matrix{ref.info->dtype, ref.file->data(*ref.info).data(), shape.front(), cols};
}

Result<std::vector<cpu::Matrix>> WeightSource::stacked(const std::string& name, std::int64_t count,
                                                       std::int64_t rows, std::int64_t cols) const {
  std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(count)};
  if (rows > 0) shape.push_back(static_cast<std::uint64_t>(rows));
  shape.push_back(static_cast<std::uint64_t>(cols));
  DAY0_ASSIGN_OR_RETURN(const io::TensorRef ref, find(name, shape, true));
  const std::int64_t r = std::max<std::int64_t>(rows, 1);
  const std::size_t stride = static_cast<std::size_t>(r * cols) * static_cast<std::size_t>(dtype_bits(ref.info->dtype) / 8);
  std::vector<cpu::Matrix> out;
  for (std::int64_t i = 0; i < count; ++i)
    out.push_back({ref.info->dtype, ref.file->data(*ref.info).data() + static_cast<std::size_t>(i) * stride, r, cols});
  return out;
}

Result<std::vector<cpu::Mxfp4Matrix>> WeightSource::stacked_mxfp4(const std::string& name, std::int64_t count,
                                                                  std::int64_t rows, std::int64_t cols) const {
  if (cols % 32 != 0)
    return error(ErrorCode::corrupt_data, "tensor " + name + ": MXFP4 rows must hold a multiple of 32 values");
  const auto c = static_cast<std::uint64_t>(count), r = static_cast<std::uint64_t>(rows),
             b = static_cast<std::uint64_t>(cols / 32);
  DAY0_ASSIGN_OR_RETURN(const io::TensorRef blocks, find(name + "_blocks", {c, r, b, 16}, false));
  DAY0_ASSIGN_OR_RETURN(const io::TensorRef scales, find(name + "_scales", {c, r, b}, false));
  std::vector<cpu::Mxfp4Matrix> out;
  const std::uint8_t* block_data = blocks.file->data(*blocks.info).data();
  const std::uint8_t* scale_data = scales.file->data(*scales.info).data();
  for (std::uint64_t i = 0; i < c; ++i)
    out.push_back({block_data + i * r * b * 16, scale_data + i * r * b, rows, cols});
  return out;
}

std::uint64_t decode_weight_bytes(const io::Checkpoint& checkpoint, std::int64_t experts, std::int64_t top_k,
                                  bool tied_embedding) {
  double bytes = 0;
  for (const auto& [name, ref] : checkpoint.tensors()) {
    const auto n = static_cast<double>(ref.info->nbytes());
    if (name.find("visual.") != std::string::npos || name.find("vision") != std::string::npos) continue;
    if (name.find("embed_tokens") != std::string::npos) {
      if (tied_embedding) bytes += n;
      continue;
    }
    const bool routed = name.find(".experts.") != std::string::npos && name.find("shared_experts") == std::string::npos;
    bytes += routed && experts > 0 ? n * static_cast<double>(top_k) / static_cast<double>(experts) : n;
  }
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace day0::models
