#include "limits/request_limits.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace day0::limits {
namespace {

Status invalid(const std::string& message) { return error(ErrorCode::invalid_argument, message); }

}  // namespace

Status validate_request(const Request& request, std::int64_t vocab_size) {
  const Sampling& s = request.sampling;
  const StopRules& stop = request.stop;
  if (stop.max_new_tokens < 1 || stop.max_new_tokens > kMaxNewTokens)
    return invalid(fmt::format("max_new_tokens must be between 1 and {}, got {}", kMaxNewTokens, stop.max_new_tokens));
  if (!std::isfinite(s.temperature) || s.temperature < 0.0f || s.temperature > kMaxTemperature)
    return invalid(fmt::format("temperature must be between 0 and {}, got {}", kMaxTemperature, s.temperature));
  if (!(s.top_p > 0.0f && s.top_p <= 1.0f))
    return invalid(fmt::format("top_p must be greater than 0 and at most 1, got {}", s.top_p));
  if (s.top_k < 0) return invalid(fmt::format("top_k must be 0 (off) or positive, got {}", s.top_k));
  if (!(s.min_p >= 0.0f && s.min_p <= 1.0f))
    return invalid(fmt::format("min_p must be between 0 and 1, got {}", s.min_p));
  if (!(s.repetition_penalty > 0.0f && s.repetition_penalty <= kMaxRepetitionPenalty))
    return invalid(fmt::format("repetition_penalty must be greater than 0 and at most {}, got {}",
                               kMaxRepetitionPenalty, s.repetition_penalty));
  if (!(std::abs(s.presence_penalty) <= kMaxPresencePenalty))
    return invalid(
        fmt::format("presence_penalty must be between -{0} and {0}, got {1}", kMaxPresencePenalty, s.presence_penalty));
  if (stop.stop_strings.size() > kMaxStopStrings)
    return invalid(fmt::format("at most {} stop strings, got {}", kMaxStopStrings, stop.stop_strings.size()));
  for (const auto& text : stop.stop_strings)
    if (text.size() > kMaxStopStringBytes)
      return invalid(fmt::format("a stop string holds at most {} bytes, got {}", kMaxStopStringBytes, text.size()));
  for (std::size_t i = 0; i < request.context.size(); ++i) {
    const std::int32_t id = request.context[i];
    if (id < 0 || id >= vocab_size)
      return invalid(
          fmt::format("token id {} is outside the vocabulary (0..{}) at context position {}", id, vocab_size - 1, i));
  }
  return Status::ok();
}

}  // namespace day0::limits
