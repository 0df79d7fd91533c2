#pragma once
// Bounds on what a request may ask, checked by the engine for every caller (CLI, app, server),
// so an impossible setting is refused with a message instead of producing garbage or a hang.
#include <cstdint>

#include "day0/engine.h"
#include "day0/status.h"

namespace day0::limits {

inline constexpr std::int64_t kMaxNewTokens = 1ll << 30;  // above: certainly a mistake
inline constexpr float kMaxTemperature = 100.0f;
inline constexpr float kMaxRepetitionPenalty = 100.0f;
inline constexpr float kMaxPresencePenalty = 100.0f;
inline constexpr std::size_t kMaxStopStrings = 64;
inline constexpr std::size_t kMaxStopStringBytes = 4096;

// Checks sampling and stop rules, and that every context id is inside the vocabulary.
Status validate_request(const Request& request, std::int64_t vocab_size);

}  // namespace day0::limits
