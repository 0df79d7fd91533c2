// inspect: what a model folder holds, from its tensors when the weights are there, from its
// configuration when only config.json and the index are.
#include "day0/model_info.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "models/expert_locations.h"
#include "io/json_util.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/architecture.h"

namespace day0 {
namespace {

using models::TensorRole;

struct TensorEntry {
  std::string name;
  std::optional<DType> dtype;  // unknown in plan mode for tensors the architecture does not list
  std::vector<std::uint64_t> shape;
  std::uint64_t numel = 0;
  std::uint64_t bytes = 0;
  bool known_shape = true;
};

constexpr std::size_t kMaxListedWarnings = 20;

void add_warning(ModelInfo& info, std::size_t& suppressed, std::string text) {
  if (info.warnings.size() < kMaxListedWarnings) {
    info.warnings.push_back(std::move(text));
  } else {
    ++suppressed;
  }
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  return "[" + fmt::format("{}", fmt::join(shape, ", ")) + "]";
}

std::string expert_format_from_dtypes(const std::map<std::string, std::uint64_t>& dtypes, bool has_blocks) {
  if (has_blocks) return "MXFP4";
  if (dtypes.empty()) return "none";
  const auto top = std::max_element(dtypes.begin(), dtypes.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top->first == "F8_E4M3") return "FP8 E4M3";
  if (top->first == "F8_E5M2") return "FP8 E5M2";
  return top->first;
}

std::string expert_format_from_config(const io::ModelConfig& config) {
  if (const auto q = config.root().optional_child("quantization_config")) {
    const auto method = q->get_string_or("quant_method", "");
    if (method && method.value() == "mxfp4") return "MXFP4";
    if (method && method.value() == "fp8") return "FP8 E4M3";
    if (method && !method.value().empty()) return method.value();
  }
  for (const auto& view : {config.text(), config.root()}) {
    for (const char* key : {"dtype", "torch_dtype"}) {
      const auto dtype = view.get_string_or(key, "");
      if (dtype && dtype.value() == "bfloat16") return "BF16";
      if (dtype && dtype.value() == "float16") return "F16";
      if (dtype && dtype.value() == "float32") return "F32";
    }
  }
  return "BF16";
}

}  // namespace

Result<ModelInfo> inspect_model(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return error(ErrorCode::not_found, dir.string() + " is not a folder");
  if (!std::filesystem::exists(dir / "config.json", ec))
    return error(ErrorCode::not_found, dir.string() + " holds no config.json: it is not a Hugging Face model folder");

  ModelInfo info;
  info.dir = dir;
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
  info.model_type = config.model_type();
  if (const auto* archs = config.json().contains("architectures") ? &config.json()["architectures"] : nullptr;
      archs && archs->is_array() && !archs->empty() && (*archs)[0].is_string())
    info.architecture = (*archs)[0].get<std::string>();

  const models::Architecture* arch = models::find_architecture(info.model_type);
  std::vector<models::ExpectedTensor> expected;
  if (arch != nullptr) {
    info.family = std::string(arch->family);
    info.supported = true;
    info.support_note = std::string(arch->note);
    DAY0_ASSIGN_OR_RETURN(const models::MoeLayout layout, arch->moe_layout(config));
    info.layers = layout.layers;
    info.moe_layers = layout.moe_layers;
    info.routed_experts = layout.routed_experts;
    info.experts_per_token = layout.experts_per_token;
    info.shared_experts = layout.shared_experts;
    DAY0_ASSIGN_OR_RETURN(expected, arch->expected_tensors(config));
  } else {
    std::string known;
    for (const auto* a : models::architectures()) known += (known.empty() ? "" : ", ") + std::string(a->model_type);
    info.support_note = "Day0 does not implement model_type \"" + info.model_type + "\" (supported: " + known + ")";
  }
  info.has_vision = config.vision().has_value();
  info.demo = std::filesystem::exists(dir / "day0-demo.json", ec);
  if (info.demo) {
    // The demo's own card says what it is (trained or random); a card without a note still marks it.
    info.support_note = "Day0 demo model";
    const auto card = io::read_json_file(dir / "day0-demo.json", 1 << 20);
    if (card.is_ok() && card->is_object() && card->contains("note") && (*card)["note"].is_string())
      info.support_note = (*card)["note"].get<std::string>();
  }
  std::map<std::string, const models::ExpectedTensor*, std::less<>> expected_by_name;
  for (const auto& t : expected) expected_by_name[t.name] = &t;

  // Which tensors are there: from the shards when all are present, otherwise from the index
  // or the architecture's expected list (a folder prepared for download).
  std::vector<TensorEntry> entries;
  std::size_t suppressed = 0;
  const auto index_path = dir / io::kIndexFileName;
  std::optional<io::CheckpointIndex> index;
  if (std::filesystem::exists(index_path, ec)) {
    DAY0_ASSIGN_OR_RETURN(index, io::read_checkpoint_index(index_path));
    info.n_shards = index->shards.size();
    for (const auto& shard : index->shards)
      if (std::filesystem::exists(dir / shard, ec)) ++info.shards_present;
  }
  bool any_safetensors = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".safetensors") any_safetensors = true;

  if ((index && info.shards_present == info.n_shards) || (!index && any_safetensors)) {
    DAY0_ASSIGN_OR_RETURN(const auto checkpoint, io::Checkpoint::open(dir));
    info.weights_present = true;
    info.count_source = "tensors";
    info.n_shards = checkpoint->shards().size();
    info.shards_present = info.n_shards;
    for (const auto& w : checkpoint->warnings()) add_warning(info, suppressed, w);
    for (const auto& [name, ref] : checkpoint->tensors()) {
      const io::TensorInfo& t = *ref.info;
      entries.push_back({name, t.dtype, t.shape, t.numel, t.nbytes(), true});
      info.tensor_bytes += t.nbytes();
    }
    for (const auto& e : entries) {
      const auto it = expected_by_name.find(e.name);
      if (it == expected_by_name.end()) {
        if (arch != nullptr) add_warning(info, suppressed, "tensor " + e.name + " is not part of " + info.family);
        continue;
      }
      if (it->second->shape != e.shape)
        add_warning(info, suppressed, "tensor " + e.name + " has shape " + shape_text(e.shape) +
                                          " but config.json implies " + shape_text(it->second->shape));
      // Float weights may be stored as BF16, F16 or F32 (the loader reads all three); other
      // tensors (MXFP4 blocks and scales) only as released.
      const auto is_float = [](DType d) { return d == DType::bf16 || d == DType::f16 || d == DType::f32; };
      const DType want = it->second->dtype;
      if (e.dtype && (is_float(want) ? !is_float(*e.dtype) : *e.dtype != want))
        add_warning(info, suppressed, "tensor " + e.name + " is stored as " + std::string(dtype_name(*e.dtype)) +
                                          "; Day0 reads it as " +
                                          (is_float(want) ? "BF16, F16 or F32" : std::string(dtype_name(want))));
    }
    for (const auto& t : expected)
      if (!checkpoint->find(t.name)) add_warning(info, suppressed, "tensor " + t.name + " is missing");
    if (info.supported && std::any_of(expected.begin(), expected.end(),
                                      [](const auto& t) { return t.role == models::TensorRole::routed_experts; })) {
      const auto experts = models::expert_locations(*checkpoint, expected);
      if (experts) {
        for (const auto& e : *experts) {
          info.bytes_per_expert = std::max(info.bytes_per_expert, e.bytes);
          info.expert_byte_ranges = std::max<std::uint64_t>(info.expert_byte_ranges, e.ranges.size());
        }
      } else {
        add_warning(info, suppressed, experts.status().message());
      }
    }
  } else {
    info.count_source = "config";
    if (index) {
      info.tensor_bytes = index->total_size.value_or(0);
      for (const auto& [name, shard] : index->weight_map) {
        const auto it = expected_by_name.find(name);
        if (it == expected_by_name.end()) {
          entries.push_back({name, std::nullopt, {}, 0, 0, false});
          continue;
        }
        std::uint64_t numel = 1;
        for (auto d : it->second->shape) numel *= d;
        entries.push_back({name, it->second->dtype, it->second->shape, numel, 0, true});
      }
      std::size_t unknown = 0;
      for (const auto& e : entries) unknown += e.known_shape ? 0 : 1;
      if (unknown > 0)
        add_warning(info, suppressed, std::to_string(unknown) + " tensor(s) in the index have no shape known from " +
                                          "config.json; they are not counted");
      for (const auto& t : expected)
        if (!index->weight_map.contains(t.name))
          add_warning(info, suppressed, "tensor " + t.name + " is missing from the index");
    } else if (arch != nullptr) {
      for (const auto& t : expected) {
        std::uint64_t numel = 1;
        for (auto d : t.shape) numel *= d;
        entries.push_back({t.name, t.dtype, t.shape, numel, 0, true});
      }
    } else {
      return error(ErrorCode::unsupported,
                   dir.string() + " has no weights and no index, and " + info.support_note + ": nothing to count");
    }
  }
  if (suppressed > 0) info.warnings.push_back("... and " + std::to_string(suppressed) + " more");
  info.n_tensors = entries.size();

  // Group by role and count parameters.
  const bool mxfp4 = expert_format_from_config(config) == "MXFP4";
  std::map<TensorRole, TensorGroupInfo> groups;
  std::map<std::string, std::uint64_t> expert_dtypes;
  bool expert_blocks = false;
  bool has_lm_head = false;
  for (const auto& e : entries) {
    const auto known = expected_by_name.find(e.name);
    const TensorRole role = known != expected_by_name.end() ? known->second->role : models::classify_by_name(e.name);
    auto& g = groups[role];
    g.role = std::string(models::role_name(role));
    ++g.tensors;
    g.bytes += e.bytes;
    if (!e.known_shape) {
      ++g.dtypes["?"];
      continue;
    }
    const std::string dtype(dtype_name(*e.dtype));
    ++g.dtypes[dtype];
    const std::uint64_t params = models::stored_params(e.name, *e.dtype, e.numel, mxfp4);
    g.params += params;
    info.total_params += params;
    if (role == TensorRole::routed_experts && params > 0 && e.shape.size() >= 2) {
      ++expert_dtypes[dtype];
      if (mxfp4 && e.name.ends_with("_blocks")) expert_blocks = true;
    }
    if (role == TensorRole::lm_head) has_lm_head = true;
  }
  for (const auto& entry : groups) info.groups.push_back(entry.second);
  std::sort(info.groups.begin(), info.groups.end(),
            [](const TensorGroupInfo& a, const TensorGroupInfo& b) { return a.params > b.params; });

  const auto group_params = [&](TensorRole role) { return groups.contains(role) ? groups[role].params : 0; };
  const std::uint64_t routed = group_params(TensorRole::routed_experts);
  info.vision_params = group_params(TensorRole::vision);
  if (info.routed_experts > 0 && info.moe_layers > 0)
    info.params_per_expert = routed / static_cast<std::uint64_t>(info.routed_experts * info.moe_layers);
  // Active per token: everything a text token's forward pass reads. The embedding table is a
  // lookup (one row), unless it doubles as the output projection; the vision tower runs once per
  // image; multi-token-prediction layers are optional.
  std::uint64_t active = info.total_params - routed - info.vision_params - group_params(TensorRole::mtp);
  if (has_lm_head) active -= group_params(TensorRole::embedding);
  active += info.params_per_expert * static_cast<std::uint64_t>(info.experts_per_token * info.moe_layers);
  info.active_params_per_token = active;

  info.expert_format = info.weights_present ? expert_format_from_dtypes(expert_dtypes, expert_blocks)
                                            : (routed > 0 ? expert_format_from_config(config) : "none");
  if (arch != nullptr && arch->device_footprint != nullptr) {
    if (auto footprint = arch->device_footprint(config, true)) {
      info.gpu_weight_bytes = footprint->weights;
      info.gpu_workspace_bytes = footprint->workspace;
      info.max_context = footprint->max_context;
      info.gpu_context_cache_bytes = footprint->state_bytes ? footprint->state_bytes(footprint->max_context) : 0;
    } else {
      add_warning(info, suppressed, "no GPU plan: " + footprint.status().message());
    }
  }
  return info;
}

Result<GpuFit> plan_gpu_fit(const std::filesystem::path& dir, std::uint64_t free_bytes, bool fp8) {
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
  const models::Architecture* arch = models::find_architecture(config.model_type());
  if (arch == nullptr || arch->device_footprint == nullptr)
    return error(ErrorCode::unsupported, "this build of Day0 runs " + config.model_type() + " on the CPU only");
  DAY0_ASSIGN_OR_RETURN(const limits::DeviceFootprint footprint, arch->device_footprint(config, fp8));
  DAY0_ASSIGN_OR_RETURN(const limits::MemoryPlan plan, limits::plan_device_memory(footprint, free_bytes, 0, "the GPU"));
  return GpuFit{plan.context, plan.total()};
}

namespace {

std::string human_count(std::uint64_t n) {
  const double v = static_cast<double>(n);
  if (n >= 1'000'000'000ull) return fmt::format("{:.2f} B", v / 1e9);
  if (n >= 1'000'000ull) return fmt::format("{:.2f} M", v / 1e6);
  if (n >= 10'000ull) return fmt::format("{:.1f} K", v / 1e3);
  return std::to_string(n);
}

std::string human_bytes(std::uint64_t n) {
  const double v = static_cast<double>(n);
  if (n >= (1ull << 30)) return fmt::format("{:.2f} GiB", v / double(1ull << 30));
  if (n >= (1ull << 20)) return fmt::format("{:.2f} MiB", v / double(1ull << 20));
  if (n >= (1ull << 10)) return fmt::format("{:.1f} KiB", v / 1024.0);
  return fmt::format("{} B", n);
}

}  // namespace

std::string format_model_info(const ModelInfo& info) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("{:<16}{}\n", label, value);
  };
  line("Model folder", info.dir.string());
  line("Architecture", info.model_type + (info.architecture.empty() ? "" : " (" + info.architecture + ")"));
  line("Family", info.supported ? info.family + ": supported" : "not supported");
  line("", info.support_note);
  if (info.weights_present) {
    line("Weights", fmt::format("{} shard(s), {} tensors, {} (headers validated)", info.n_shards, info.n_tensors,
                                human_bytes(info.tensor_bytes)));
  } else {
    std::string text = info.n_shards > 0 ? fmt::format("not downloaded ({} of {} shard(s) present)",
                                                       info.shards_present, info.n_shards)
                                         : std::string("not present");
    if (info.tensor_bytes > 0) text += fmt::format(", {} to download", human_bytes(info.tensor_bytes));
    line("Weights", text + "; counts from config.json");
  }
  line("Parameters", fmt::format("{} total, {} active per token", human_count(info.total_params),
                                 human_count(info.active_params_per_token)));
  if (info.routed_experts > 0) {
    line("Experts", fmt::format("{} routed x {} MoE layers (of {}), top-{}, {} shared; {} per expert",
                                info.routed_experts, info.moe_layers, info.layers, info.experts_per_token,
                                info.shared_experts, human_count(info.params_per_expert)));
  } else if (info.layers > 0) {
    line("Layers", std::to_string(info.layers));
  }
  line("Expert format", info.expert_format);
  if (info.bytes_per_expert > 0)
    line("Expert bytes", fmt::format("{} per expert, in {} contiguous file ranges (one per expert tensor)",
                                     human_bytes(info.bytes_per_expert), info.expert_byte_ranges));
  if (info.gpu_weight_bytes > 0)
    line("GPU plan",
         fmt::format("weights {} + workspaces {}; caches for the whole {}-token context {}: {} in all",
                     human_bytes(info.gpu_weight_bytes), human_bytes(info.gpu_workspace_bytes), info.max_context,
                     human_bytes(info.gpu_context_cache_bytes),
                     human_bytes(info.gpu_weight_bytes + info.gpu_workspace_bytes + info.gpu_context_cache_bytes)));
  if (info.has_vision) line("Vision", "yes, " + human_count(info.vision_params) + " parameters");
  out += "\nTensors by role:\n";
  out += fmt::format("  {:<26}{:>8}{:>12}{:>13}  {}\n", "role", "tensors", "params", "bytes", "dtypes");
  for (const auto& g : info.groups) {
    std::string dtypes;
    for (const auto& [dtype, count] : g.dtypes) dtypes += fmt::format("{}{} x{}", dtypes.empty() ? "" : ", ", dtype, count);
    out += fmt::format("  {:<26}{:>8}{:>12}{:>13}  {}\n", g.role, g.tensors, human_count(g.params),
                       info.weights_present ? human_bytes(g.bytes) : "-", dtypes);
  }
  if (!info.warnings.empty()) {
    out += "\nWarnings:\n";
    for (const auto& w : info.warnings) out += "  - " + w + "\n";
  }
  return out;
}

std::string model_info_json(const ModelInfo& info) {
  nlohmann::json j;
  j["dir"] = info.dir.string();
  j["model_type"] = info.model_type;
  j["architecture"] = info.architecture;
  j["family"] = info.family;
  j["supported"] = info.supported;
  j["demo"] = info.demo;
  j["support_note"] = info.support_note;
  j["weights_present"] = info.weights_present;
  j["count_source"] = info.count_source;
  j["tensors"] = info.n_tensors;
  j["shards"] = info.n_shards;
  j["shards_present"] = info.shards_present;
  j["tensor_bytes"] = info.tensor_bytes;
  j["total_params"] = info.total_params;
  j["active_params_per_token"] = info.active_params_per_token;
  j["params_per_expert"] = info.params_per_expert;
  j["vision_params"] = info.vision_params;
  j["layers"] = info.layers;
  j["moe_layers"] = info.moe_layers;
  j["bytes_per_expert"] = info.bytes_per_expert;
  j["expert_byte_ranges"] = info.expert_byte_ranges;
  j["routed_experts"] = info.routed_experts;
  j["experts_per_token"] = info.experts_per_token;
  j["shared_experts"] = info.shared_experts;
  j["has_vision"] = info.has_vision;
  j["expert_format"] = info.expert_format;
  if (info.gpu_weight_bytes > 0)
    j["gpu_plan"] = {{"weight_bytes", info.gpu_weight_bytes},
                     {"workspace_bytes", info.gpu_workspace_bytes},
                     {"max_context", info.max_context},
                     {"context_cache_bytes", info.gpu_context_cache_bytes}};
  j["groups"] = nlohmann::json::array();
  for (const auto& g : info.groups)
    j["groups"].push_back({{"role", g.role}, {"tensors", g.tensors}, {"params", g.params}, {"bytes", g.bytes},
                           {"dtypes", g.dtypes}});
  j["warnings"] = info.warnings;
  return j.dump(2);
}

}  // namespace day0
