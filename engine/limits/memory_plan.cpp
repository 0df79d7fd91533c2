#include "limits/memory_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "models/loaded_model.h"

namespace day0::limits {

std::optional<std::uint64_t> available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

Result<std::optional<std::uint64_t>> memory_limit_from_environment() {
  const char* text = std::getenv("DAY0_MEMORY_LIMIT_BYTES");
  if (text == nullptr || *text == '\0') return std::optional<std::uint64_t>();
  const std::string value(text);
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
  int shift = 0;
  if (digits + 1 == value.size()) {
    switch (std::toupper(static_cast<unsigned char>(value.back()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        shift = -1;
    }
  } else if (digits != value.size()) {
    shift = -1;
  }
  if (digits == 0 || digits > 15 || shift < 0)
    return error(ErrorCode::invalid_argument,
                 "DAY0_MEMORY_LIMIT_BYTES must be a byte count such as 8589934592 or "
                 "8G, got \"" +
                     value + "\"");
  return std::optional<std::uint64_t>(std::stoull(value.substr(0, digits)) << shift);
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} bytes", bytes);
}

Status check_device_memory(std::uint64_t weight_bytes, std::uint64_t free_bytes, const std::string& device) {
  if (weight_bytes <= free_bytes) return Status::ok();
  return error(ErrorCode::out_of_memory, fmt::format("the weights alone need {} of GPU memory; {} has {} free",
                                                     format_bytes(weight_bytes), device, format_bytes(free_bytes)));
}

namespace {

// Activations of one prefill step: the residual and its norms, attention and MLP inputs and
// outputs, a few times the hidden size per token, plus the logits row and its sampling copy.
std::uint64_t workspace_bytes(const models::LoadedModel& model) {
  const auto chunk = static_cast<std::uint64_t>(std::max<std::int64_t>(1, model.prefill_chunk()));
  const auto hidden = static_cast<std::uint64_t>(model.hidden_size());
  const auto vocab = static_cast<std::uint64_t>(model.vocab_size());
  return chunk * hidden * 64 * sizeof(float) + 4 * vocab * sizeof(float);
}

Status refuse(const MemoryPlan& plan, std::uint64_t limit, const std::string& why) {
  return error(ErrorCode::out_of_memory,
               fmt::format("this model needs {} of memory{}; {} is available (weights {}, session state {}, "
                           "workspace {}). Close other programs, choose a smaller model{}",
                           format_bytes(plan.total()), why, format_bytes(limit), format_bytes(plan.weights),
                           format_bytes(plan.state), format_bytes(plan.workspace),
                           plan.context > kMinimumContext ? " or a shorter context" : ""));
}

}  // namespace

namespace {

// The context for a plan whose weights and workspace are set: `requested` if it fits (refused if
// not), else the model's whole context if it fits, else the longest that does (whole pages of
// 256 positions), never below the minimum.
Result<MemoryPlan> plan_context(MemoryPlan plan, const std::function<std::uint64_t(std::int64_t)>& state_bytes,
                                std::int64_t model_context, std::int64_t requested, const std::string& where) {
  model_context = std::max<std::int64_t>(1, model_context);
  if (requested < 0)
    return error(ErrorCode::invalid_argument, fmt::format("the context size must be positive, got {}", requested));
  if (requested > model_context)
    return error(ErrorCode::invalid_argument, fmt::format("a context of {} tokens was asked for; this model holds at "
                                                          "most {} (max_position_embeddings)",
                                                          requested, model_context));
  const std::uint64_t limit = plan.available;
  const auto with_context = [&](std::int64_t context) {
    MemoryPlan p = plan;
    p.context = context;
    p.state = state_bytes(context);
    return p;
  };
  if (requested > 0) {
    plan = with_context(requested);
    if (plan.total() > limit)
      return refuse(plan, limit, fmt::format("{} for a context of {} tokens", where, plan.context));
    return plan;
  }
  const std::int64_t floor = std::min(model_context, kMinimumContext);
  plan = with_context(floor);
  if (plan.total() > limit) return refuse(plan, limit, where);
  std::int64_t lo = floor, hi = model_context;
  if (with_context(hi).total() <= limit) return with_context(hi);
  while (hi - lo > 256) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (with_context(mid).total() <= limit)
      lo = mid;
    else
      hi = mid;
  }
  return with_context(lo / 256 * 256 >= floor ? lo / 256 * 256 : lo);
}

}  // namespace

Result<std::uint64_t> resolve_memory_limit(std::uint64_t requested) {
  if (requested > 0) return requested;
  DAY0_ASSIGN_OR_RETURN(const auto from_env, memory_limit_from_environment());
  if (from_env) return *from_env;
  if (const auto available = available_memory()) return *available > kProcessReserve ? *available - kProcessReserve : 0;
  return ~std::uint64_t{0};  // no /proc: nothing to check against
}

Result<MemoryPlan> plan_memory(const models::LoadedModel& model, const PlanRequest& request) {
  DAY0_ASSIGN_OR_RETURN(const std::uint64_t limit, resolve_memory_limit(request.limit));
  MemoryPlan plan;
  plan.weights = request.weight_bytes;
  plan.workspace = workspace_bytes(model);
  plan.available = limit;
  const auto state = [&](std::int64_t context) { return model.state_bytes(context); };
  const bool can_stream = request.expert_bytes > 0 && request.expert_bytes <= request.weight_bytes;
  if (request.expert_cache > 0) {
    if (!can_stream) return error(ErrorCode::invalid_argument, "an expert cache was asked for, but this model has no routed experts");
    if (request.expert_cache < request.min_expert_cache)
      return error(ErrorCode::invalid_argument,
                   fmt::format("an expert cache of {} is too small for this model: one token's experts need {}",
                               format_bytes(request.expert_cache), format_bytes(request.min_expert_cache)));
    plan.weights = request.weight_bytes - request.expert_bytes;
    plan.streamed = true;
    plan.expert_cache = std::min(request.expert_cache, request.expert_bytes + request.min_expert_cache);
    return plan_context(plan, state, request.model_context, request.context, " with that expert cache");
  }
  auto whole = plan_context(plan, state, request.model_context, request.context, "");
  if (whole || !can_stream || whole.status().code() != ErrorCode::out_of_memory) return whole;
  // Streamed: the context asked for, else the longest whose session state takes at most an eighth
  // of the room the other weights leave (never below the minimum), and the rest for the cache.
  MemoryPlan streamed = plan;
  streamed.weights = request.weight_bytes - request.expert_bytes;
  streamed.streamed = true;
  const std::int64_t model_context = std::max<std::int64_t>(1, request.model_context);
  const std::int64_t floor = std::min(model_context, kMinimumContext);
  if (request.context > 0) {
    streamed.context = request.context;
  } else {
    const std::uint64_t base = streamed.weights + streamed.workspace;
    const std::uint64_t share = limit > base ? (limit - base) / kStreamedStateShare : 0;
    std::int64_t lo = floor, hi = model_context;
    if (state(hi) <= share) {
      lo = hi;
    } else {
      while (hi - lo > 256) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (state(mid) <= share)
          lo = mid;
        else
          hi = mid;
      }
      if (lo > floor) lo = std::max(floor, lo / 256 * 256);
    }
    streamed.context = lo;
  }
  streamed.state = state(streamed.context);
  const std::uint64_t fixed = streamed.weights + streamed.state + streamed.workspace;
  const std::uint64_t room = limit > fixed ? limit - fixed : 0;
  if (room < request.min_expert_cache) {
    streamed.expert_cache = request.min_expert_cache;
    return error(ErrorCode::out_of_memory,
                 fmt::format("this model needs {} of memory even with its experts read from disk as needed; {} is "
                             "available (weights other than the experts {}, session state {} for {} tokens, "
                             "workspace {}, the smallest expert cache {}). Close other programs or choose a smaller "
                             "model",
                             format_bytes(streamed.total()), format_bytes(limit), format_bytes(streamed.weights),
                             format_bytes(streamed.state), streamed.context, format_bytes(streamed.workspace),
                             format_bytes(streamed.expert_cache)));
  }
  streamed.expert_cache = std::min(room, request.expert_bytes);
  return streamed;
}

Result<MemoryPlan> plan_device_memory(const DeviceFootprint& footprint, std::uint64_t free_bytes, std::int64_t context,
                                      const std::string& device) {
  MemoryPlan plan;
  plan.weights = footprint.weights;
  plan.workspace = footprint.workspace;
  plan.available = free_bytes > kDeviceReserve ? free_bytes - kDeviceReserve : 0;
  const auto state = [&](std::int64_t n) { return footprint.state_bytes ? footprint.state_bytes(n) : 0; };
  return plan_context(plan, state, footprint.max_context, context, " on " + device);
}

}  // namespace day0::limits
