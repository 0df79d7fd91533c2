#include <cstdlib>

#include <fmt/format.h>

#include "day0/devices.h"
#include "day0/log.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/architecture.h"
#include "models/loaded_model.h"
#include "models/streamed_experts.h"

namespace day0::models {
namespace {

std::uint64_t tensor_bytes(const io::Checkpoint& checkpoint) {
  std::uint64_t total = 0;
  for (const auto& shard : checkpoint.shards()) total += shard.header().data_bytes;
  return total;
}

// The GPU program's footprint (weights as the device holds them, workspaces, caches for the
// context) against the chosen GPU's free memory, before anything is uploaded; the context is
// bounded to what fits. An unknown GPU index is left to the load to report.
Result<limits::MemoryPlan> gpu_plan(const Architecture& arch, const io::ModelConfig& config,
                                    const io::Checkpoint& checkpoint, const DeviceReport& devices,
                                    const LoadOptions& options) {
  const int index = options.device.size() > 5 ? std::atoi(options.device.c_str() + 5) : 0;
  for (const auto& gpu : devices.gpus) {
    if (gpu.index != index) continue;
    if (arch.device_footprint == nullptr) {
      DAY0_RETURN_IF_ERROR(limits::check_device_memory(tensor_bytes(checkpoint), gpu.free_memory, options.device));
      break;
    }
    DAY0_ASSIGN_OR_RETURN(const limits::DeviceFootprint footprint,
                          arch.device_footprint(config, gpu.fp8 && !options.bf16_workspace));
    return limits::plan_device_memory(footprint, gpu.free_memory, options.max_context, options.device);
  }
  limits::MemoryPlan unplanned;
  unplanned.context = options.max_context;
  return unplanned;
}

}  // namespace

Result<std::unique_ptr<LoadedModel>> load_model(const std::filesystem::path& dir, ThreadPool& pool,
                                                const LoadOptions& options, LoadPlan* plan) {
  // ModelConfig::load also takes a config file's path; a model is always a folder.
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return error(std::filesystem::exists(dir, ec) ? ErrorCode::invalid_argument : ErrorCode::not_found,
                 dir.string() + (std::filesystem::exists(dir, ec) ? " is not a folder" : " does not exist") +
                     ": give the model folder (config.json and the .safetensors files)");
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
  const Architecture* arch = find_architecture(config.model_type());
  if (arch == nullptr)
    return error(ErrorCode::unsupported, "Day0 cannot run model_type \"" + config.model_type() + "\"");
  if (arch->load == nullptr)
    return error(ErrorCode::unsupported, std::string(arch->family) + " can be inspected, but this version of Day0 "
                                                                     "cannot generate text with it yet");
  const bool cuda = options.device == "cuda" || options.device.rfind("cuda:", 0) == 0;
  if (!cuda && options.device != "cpu")
    return error(ErrorCode::invalid_argument, "unknown device \"" + options.device + "\"; use cpu or cuda");
  DAY0_ASSIGN_OR_RETURN(std::unique_ptr<io::Checkpoint> checkpoint, io::Checkpoint::open(dir));
  for (const auto& warning : checkpoint->warnings()) DAY0_LOG_WARN("{}: {}", dir.string(), warning);
  std::shared_ptr<const io::Checkpoint> shared(std::move(checkpoint));
  if (cuda) {
    const DeviceReport devices = discover_devices();
    if (arch->load_cuda == nullptr) {
      DAY0_LOG_WARN("--device {}: {} has no GPU path in this build; running on the CPU", options.device, arch->family);
    } else if (devices.gpus.empty()) {
      DAY0_LOG_WARN("--device {}: {}; running on the CPU", options.device, devices.gpu_problem);
    } else if (auto granted = gpu_plan(*arch, config, *shared, devices, options); !granted) {
      DAY0_LOG_WARN("--device {}: {}; running on the CPU", options.device, granted.status().message());
    } else {
      LoadOptions planned = options;
      planned.max_context = granted->context;
      auto loaded = arch->load_cuda(config, shared, pool, planned);
      if (loaded) {
        if (granted->available > 0) {
          DAY0_LOG_INFO(
              "GPU memory plan for {} on {}: {} needed ({} weights, {} caches for {} tokens, {} workspace), "
              "{} free",
              dir.string(), options.device, limits::format_bytes(granted->total()),
              limits::format_bytes(granted->weights), limits::format_bytes(granted->state), granted->context,
              limits::format_bytes(granted->workspace),
              limits::format_bytes(granted->available + limits::kDeviceReserve));
          if (plan != nullptr) *plan = {granted->context, granted->total(), granted->available};
        }
        return loaded;
      }
      DAY0_LOG_WARN("--device {}: {}; running on the CPU", options.device, loaded.status().message());
    }
  }
  // Routed experts, for a plan that may stream them: their bytes, and one token's worth.
  DAY0_ASSIGN_OR_RETURN(const auto manifest, arch->expected_tensors(config));
  const std::uint64_t expert_bytes = routed_expert_bytes(*shared, manifest);
  std::uint64_t min_cache = 0;
  if (expert_bytes > 0) {
    DAY0_ASSIGN_OR_RETURN(const MoeLayout moe, arch->moe_layout(config));
    min_cache = expert_cache_for_tokens(expert_bytes, moe);
  }
  const std::uint64_t weight_bytes = tensor_bytes(*shared);
  DAY0_ASSIGN_OR_RETURN(const std::uint64_t limit, limits::resolve_memory_limit(options.memory_limit_bytes));
  LoadOptions cpu_options = options;
  // Weights alone over the limit: the plan will stream the experts, so binding leaves their bytes
  // alone (the cache checks each expert as it reads it).
  cpu_options.experts_streamed = expert_bytes > 0 && (options.expert_cache_bytes > 0 || weight_bytes > limit);
  DAY0_ASSIGN_OR_RETURN(auto loaded, arch->load(config, shared, pool, cpu_options));
  limits::PlanRequest request;
  request.weight_bytes = weight_bytes;
  request.model_context = loaded->max_context();
  request.context = options.max_context;
  request.limit = limit;
  request.expert_bytes = expert_bytes;
  request.expert_cache = options.expert_cache_bytes;
  request.min_expert_cache = min_cache;
  auto granted = limits::plan_memory(*loaded, request);
  if (!granted) return error(granted.status().code(), dir.string() + ": " + granted.status().message());
  if (granted->streamed) {
    const Status streaming = loaded->stream_experts(
        {.cache_bytes = granted->expert_cache, .direct = options.direct_expert_reads, .readers = 4});
    if (!streaming.is_ok()) return error(streaming.code(), dir.string() + ": " + streaming.message());
    DAY0_LOG_INFO(
        "memory plan for {}: {} needed ({} weights besides the experts, {} state for {} tokens, {} workspace, {} "
        "expert cache for {} of experts read from disk as needed), {} available",
        dir.string(), limits::format_bytes(granted->total()), limits::format_bytes(granted->weights),
        limits::format_bytes(granted->state), granted->context, limits::format_bytes(granted->workspace),
        limits::format_bytes(granted->expert_cache), limits::format_bytes(expert_bytes),
        limits::format_bytes(granted->available));
  } else {
    DAY0_LOG_INFO("memory plan for {}: {} needed ({} weights, {} state for {} tokens, {} workspace), {} available",
                  dir.string(), limits::format_bytes(granted->total()), limits::format_bytes(granted->weights),
                  limits::format_bytes(granted->state), granted->context, limits::format_bytes(granted->workspace),
                  limits::format_bytes(granted->available));
  }
  if (plan != nullptr) *plan = {granted->context, granted->total(), granted->available};
  return loaded;
}

}  // namespace day0::models
