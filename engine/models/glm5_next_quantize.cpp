// quantize_experts: a glm5_next checkpoint with bf16 per-expert tensors -> the same checkpoint
// with stacked MXFP4 experts (layout in day0/quantize_experts.h and models/glm5_next.cpp).
// Shards keep their names; each layer's stacked experts go to the shard that held its expert 0.
#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_ops.h"
#include "day0/quantize_experts.h"
#include "formats/mxfp4.h"
#include "io/checkpoint.h"
#include "io/json_util.h"
#include "io/model_config.h"
#include "models/glm5_next_config.h"

namespace day0 {
namespace {

namespace fs = std::filesystem;
using u64 = std::uint64_t;

// One layer's experts: refs[e][0..2] = gate_proj, up_proj, down_proj of expert e.
struct ExpertGroup {
  std::string prefix;  // "model.language_model.layers.N.mlp.experts"
  std::string shard;   // where the stacked tensors go
  std::vector<std::array<const io::TensorRef*, 3>> refs;
};

// A tensor of an output shard: copied bytes, or one of a group's four MXFP4 tensors.
struct OutTensor {
  std::string name;
  DType dtype;
  std::vector<u64> shape;
  u64 bytes = 0;
  const io::TensorRef* copy = nullptr;
  const ExpertGroup* group = nullptr;
  bool gate_up = false, scales = false;
};

// Quantizes one projection (gate_up or down) of every expert, row by row, and writes its blocks,
// or its scales when `scales_only` (each is computed twice rather than held in memory).
Status quantize_projection(const ExpertGroup& g, bool gate_up, std::int64_t I, std::int64_t H, std::ofstream& out,
                           bool scales_only) {
  const std::int64_t cols = gate_up ? H : I;
  std::vector<float> row(static_cast<std::size_t>(cols));
  std::vector<std::uint8_t> blocks(static_cast<std::size_t>(cols / 2)), scales(static_cast<std::size_t>(cols / 32));
  for (std::size_t e = 0; e < g.refs.size(); ++e) {
    const std::vector<int> parts = gate_up ? std::vector<int>{0, 1} : std::vector<int>{2};
    for (const int part : parts) {
      const io::TensorRef& ref = *g.refs[e][static_cast<std::size_t>(part)];
      const cpu::Matrix m{ref.info->dtype, ref.file->data(*ref.info).data(),
                          static_cast<std::int64_t>(ref.info->shape[0]), static_cast<std::int64_t>(ref.info->shape[1])};
      for (std::int64_t r = 0; r < m.rows; ++r) {
        cpu::decode_row(m, r, row.data());
        const Status st = formats::mxfp4_quantize(row.data(), row.size(), blocks.data(), scales.data());
        if (!st.is_ok())
          return error(ErrorCode::corrupt_data,
                       "tensor " + ref.info->name + " row " + std::to_string(r) + ": " + st.message());
        if (scales_only)
          out.write(reinterpret_cast<const char*>(scales.data()), static_cast<std::streamsize>(scales.size()));
        else
          out.write(reinterpret_cast<const char*>(blocks.data()), static_cast<std::streamsize>(blocks.size()));
      }
    }
  }
  return Status::ok();
}

Status write_shard(const fs::path& path, const std::vector<OutTensor>& tensors,
                   const std::map<std::string, std::string>& metadata, std::int64_t I, std::int64_t H,
                   QuantizeExpertsReport& report, const QuantizeExpertsOptions& options, u64 total) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  u64 offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {
        {"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return error(ErrorCode::io_error, "cannot create " + path.string());
  const u64 n = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& t : tensors) {
    if (t.copy != nullptr) {
      const auto bytes = t.copy->file->data(*t.copy->info);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    } else {
      DAY0_RETURN_IF_ERROR(quantize_projection(*t.group, t.gate_up, I, H, out, t.scales));
    }
    report.bytes_out += t.bytes;
    if (options.progress) options.progress(report.bytes_out, total);
    if (!out) return error(ErrorCode::io_error, "cannot write " + path.string() + " (disk full?)");
  }
  out.close();
  if (!out) return error(ErrorCode::io_error, "cannot write " + path.string() + " (disk full?)");
  return Status::ok();
}

}  // namespace

Result<QuantizeExpertsReport> quantize_experts(const fs::path& in_dir, const fs::path& out_dir,
                                               const QuantizeExpertsOptions& options) {
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(in_dir));
  if (config.model_type() != "glm5_next")
    return error(ErrorCode::unsupported, config.origin() + " has model_type \"" + config.model_type() +
                                             "\"; quantize-experts writes glm5_next checkpoints only");
  if (config.json().contains("quantization_config"))
    return error(ErrorCode::invalid_argument, config.origin() +
                                                  " already has a quantization_config: its experts are "
                                                  "quantized");
  DAY0_ASSIGN_OR_RETURN(const models::Glm5Config s, models::read_glm5_config(config));
  if (s.hidden % 32 != 0 || s.moe_inter % 32 != 0)
    return error(ErrorCode::unsupported, "MXFP4 needs hidden_size (" + std::to_string(s.hidden) +
                                             ") and moe_intermediate_size (" + std::to_string(s.moe_inter) +
                                             ") to be multiples of 32");
  std::error_code ec;
  if (fs::exists(out_dir, ec)) {
    if (fs::equivalent(in_dir, out_dir, ec))
      return error(ErrorCode::invalid_argument, "the output folder is the input folder");
    if (!fs::is_directory(out_dir) || !fs::is_empty(out_dir, ec))
      return error(ErrorCode::invalid_argument, out_dir.string() + " exists and is not an empty folder");
  }
  DAY0_ASSIGN_OR_RETURN(const std::unique_ptr<io::Checkpoint> ckpt, io::Checkpoint::open(in_dir));

  // Collect each MoE layer's per-expert tensors.
  const std::regex expert_re(
      R"(^(model\.language_model\.layers\.(\d+)\.mlp\.experts)\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$)");
  std::map<std::string, ExpertGroup> groups;
  std::map<std::string, const ExpertGroup*> group_of_tensor;
  for (const auto& [name, ref] : ckpt->tensors()) {
    std::smatch m;
    if (!std::regex_match(name, m, expert_re)) continue;
    const std::int64_t layer = std::stoll(m[2].str());
    const std::int64_t e = std::stoll(m[3].str());
    if (layer >= s.layers || !s.is_moe(layer) || e >= s.experts)
      return error(ErrorCode::corrupt_data, "tensor " + name + " is an expert that config.json does not have");
    ExpertGroup& g = groups[m[1].str()];
    g.prefix = m[1].str();
    g.refs.resize(static_cast<std::size_t>(s.experts), {nullptr, nullptr, nullptr});
    const int part = m[4].str() == "gate_proj" ? 0 : m[4].str() == "up_proj" ? 1 : 2;
    const std::vector<u64> want = part < 2
                                      ? std::vector<u64>{static_cast<u64>(s.moe_inter), static_cast<u64>(s.hidden)}
                                      : std::vector<u64>{static_cast<u64>(s.hidden), static_cast<u64>(s.moe_inter)};
    if (ref.info->shape != want)
      return error(ErrorCode::corrupt_data, "tensor " + name + " does not have the shape config.json implies");
    if (ref.info->dtype != DType::bf16 && ref.info->dtype != DType::f16 && ref.info->dtype != DType::f32)
      return error(ErrorCode::unsupported, "tensor " + name + " is stored as " +
                                               std::string(dtype_name(ref.info->dtype)) +
                                               "; expected BF16, F16 or F32");
    g.refs[static_cast<std::size_t>(e)][static_cast<std::size_t>(part)] = &ref;
    if (e == 0 && part == 0) g.shard = ref.file->path().filename().string();
  }
  std::int64_t moe_layers = 0;
  for (std::int64_t l = 0; l < s.layers; ++l) moe_layers += s.is_moe(l) ? 1 : 0;
  if (static_cast<std::int64_t>(groups.size()) != moe_layers)
    return error(ErrorCode::corrupt_data, "config.json has " + std::to_string(moe_layers) +
                                              " MoE layers but the checkpoint holds "
                                              "per-expert tensors for " +
                                              std::to_string(groups.size()));
  for (auto& [prefix, g] : groups) {
    for (std::size_t e = 0; e < g.refs.size(); ++e)
      for (int part = 0; part < 3; ++part)
        if (g.refs[e][static_cast<std::size_t>(part)] == nullptr)
          return error(ErrorCode::not_found, "the checkpoint has no tensor " + prefix + "." + std::to_string(e) + "." +
                                                 (part == 0   ? "gate_proj"
                                                  : part == 1 ? "up_proj"
                                                              : "down_proj") +
                                                 ".weight");
    for (const auto& refs : g.refs)
      for (const auto* r : refs) group_of_tensor[r->info->name] = &g;
  }

  // Plan every output shard: the same tensors in the same order, each group's four MXFP4
  // tensors where its expert 0's gate_proj was.
  const u64 E = static_cast<u64>(s.experts), I = static_cast<u64>(s.moe_inter), H = static_cast<u64>(s.hidden);
  std::map<std::string, std::vector<OutTensor>> shards;
  std::vector<std::string> shard_order;
  u64 total = 0;
  QuantizeExpertsReport report;
  for (const auto& file : ckpt->shards()) {
    const std::string shard = file.path().filename().string();
    shard_order.push_back(shard);
    auto& list = shards[shard];
    for (const auto& info : file.tensors()) {
      report.bytes_in += info.nbytes();
      const auto it = group_of_tensor.find(info.name);
      if (it == group_of_tensor.end()) {
        const auto ref = ckpt->tensors().find(info.name);
        if (ref == ckpt->tensors().end() || ref->second.file != &file) continue;  // listed elsewhere by the index
        list.push_back({info.name, info.dtype, info.shape, info.nbytes(), &ref->second, nullptr, false, false});
        continue;
      }
      const ExpertGroup& g = *it->second;
      if (g.refs[0][0]->info != &info) continue;
      list.push_back({g.prefix + ".gate_up_proj_blocks",
                      DType::u8,
                      {E, 2 * I, H / 32, 16},
                      E * 2 * I * H / 2,
                      nullptr,
                      &g,
                      true,
                      false});
      list.push_back({g.prefix + ".gate_up_proj_scales",
                      DType::u8,
                      {E, 2 * I, H / 32},
                      E * 2 * I * H / 32,
                      nullptr,
                      &g,
                      true,
                      true});
      list.push_back(
          {g.prefix + ".down_proj_blocks", DType::u8, {E, H, I / 32, 16}, E * H * I / 2, nullptr, &g, false, false});
      list.push_back(
          {g.prefix + ".down_proj_scales", DType::u8, {E, H, I / 32}, E * H * I / 32, nullptr, &g, false, true});
      report.layers += 1;
      report.experts += s.experts;
    }
    for (const auto& t : list) total += t.bytes;
  }

  fs::create_directories(out_dir, ec);
  if (ec) return error(ErrorCode::io_error, "cannot create " + out_dir.string() + ": " + ec.message());
  nlohmann::json weight_map = nlohmann::json::object();
  std::set<std::string> kept_modules;
  for (const auto& shard : shard_order) {
    const auto& list = shards[shard];
    std::map<std::string, std::string> metadata;
    for (const auto& f : ckpt->shards())
      if (f.path().filename() == shard) metadata = f.metadata();
    DAY0_RETURN_IF_ERROR(write_shard(out_dir / shard, list, metadata, s.moe_inter, s.hidden, report, options, total));
    for (const auto& t : list) {
      weight_map[t.name] = shard;
      if (t.group == nullptr) kept_modules.insert(t.name.substr(0, t.name.rfind('.')));
    }
  }

  // config.json with quantization_config; the index when there was one; every other file as is.
  nlohmann::json cfg = config.json();
  cfg["quantization_config"] = {
      {"quant_method", "mxfp4"},
      {"modules_to_not_convert", std::vector<std::string>(kept_modules.begin(), kept_modules.end())}};
  {
    std::ofstream out(out_dir / "config.json", std::ios::trunc);
    out << cfg.dump(2) << "\n";
    if (!out) return error(ErrorCode::io_error, "cannot write " + (out_dir / "config.json").string());
  }
  const bool indexed = fs::exists(in_dir / io::kIndexFileName);
  if (indexed) {
    nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
    std::ofstream out(out_dir / io::kIndexFileName, std::ios::trunc);
    out << index.dump(2) << "\n";
    if (!out) return error(ErrorCode::io_error, "cannot write the index in " + out_dir.string());
  }
  std::set<std::string> written(shard_order.begin(), shard_order.end());
  written.insert("config.json");
  written.insert(std::string(io::kIndexFileName));
  for (const auto& entry : fs::directory_iterator(in_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || written.count(name) != 0) continue;
    fs::copy_file(entry.path(), out_dir / name, fs::copy_options::overwrite_existing, ec);
    if (ec) return error(ErrorCode::io_error, "cannot copy " + entry.path().string() + ": " + ec.message());
  }
  return report;
}

}  // namespace day0
