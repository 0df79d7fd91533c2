#include <fmt/format.h>

#include "day0/devices.h"
#include "day0/log.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/architecture.h"
#include "models/loaded_model.h"

namespace day0::models {

Result<std::unique_ptr<LoadedModel>> load_model(const std::filesystem::path& dir, ThreadPool& pool,
                                                const LoadOptions& options, LoadPlan* plan) {
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
    } else {
      auto loaded = arch->load_cuda(config, shared, pool, options);
      if (loaded) return loaded;
      DAY0_LOG_WARN("--device {}: {}; running on the CPU", options.device, loaded.status().message());
    }
  }
  DAY0_ASSIGN_OR_RETURN(auto loaded, arch->load(config, shared, pool, options));
  limits::PlanRequest request;
  for (const auto& shard : shared->shards()) request.weight_bytes += shard.header().data_bytes;
  request.model_context = loaded->max_context();
  request.context = options.max_context;
  request.limit = options.memory_limit_bytes;
  auto granted = limits::plan_memory(*loaded, request);
  if (!granted) return error(granted.status().code(), dir.string() + ": " + granted.status().message());
  DAY0_LOG_INFO("memory plan for {}: {} needed ({} weights, {} state for {} tokens, {} workspace), {} available",
                dir.string(), limits::format_bytes(granted->total()), limits::format_bytes(granted->weights),
                limits::format_bytes(granted->state), granted->context, limits::format_bytes(granted->workspace),
                limits::format_bytes(granted->available));
  if (plan != nullptr) *plan = {granted->context, granted->total(), granted->available};
  return loaded;
}

}  // namespace day0::models
