#pragma once
// The memory plan: before a model is accepted, the bytes it needs on the CPU are compared with
// what the machine can give, and the context is bounded so that a long conversation cannot run
// the process out of memory half way through.
//
// What is counted (CPU):
// - weights: the checkpoint's tensor bytes. They are memory-mapped, not copied, but every decode
//   step reads all dense weights and a rotating set of experts, so they must stay resident to run
//   at any useful speed;
// - the session state for the context: each architecture's caches per position (keys/values,
//   MLA latents, indexer keys) plus what does not grow (recurrent state and its snapshots);
// - workspaces: activations of one prefill step and the logits.
// Available: MemAvailable from /proc/meminfo less a reserve for the rest of the process, or the
// limit given by DAY0_MEMORY_LIMIT_BYTES / ModelOptions::memory_limit_bytes.
//
// A model with routed experts that does not fit whole streams them: its other weights stay
// mapped and its experts are read from disk into a cache of what is left once the session state
// for the context is counted (the context asked for, else the longest whose state takes at most
// an eighth of the room: a bigger cache serves more tokens from memory). A cache size can also
// be asked for, which streams regardless.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "day0/status.h"

namespace day0::models {
class LoadedModel;
}

namespace day0::limits {

// MemAvailable in bytes, or nullopt when /proc/meminfo cannot be read.
std::optional<std::uint64_t> available_memory();
// The limit set by DAY0_MEMORY_LIMIT_BYTES (a byte count, optionally with a K/M/G/T suffix of
// powers of 1024), nullopt when unset; an unparsable value is an error.
Result<std::optional<std::uint64_t>> memory_limit_from_environment();

struct MemoryPlan {
  std::uint64_t weights = 0;  // streamed: the weights other than the routed experts
  std::uint64_t state = 0;  // session state for `context` positions
  std::uint64_t workspace = 0;
  std::uint64_t available = 0;  // what the plan was checked against
  std::int64_t context = 0;     // positions a session may hold
  bool streamed = false;           // routed experts read from disk into the expert cache
  std::uint64_t expert_cache = 0;  // its size, with streamed
  std::uint64_t total() const { return weights + state + workspace + expert_cache; }
};

struct PlanRequest {
  std::uint64_t weight_bytes = 0;  // tensor bytes of the checkpoint
  std::int64_t model_context = 0;  // the model's own limit (max_position_embeddings)
  std::int64_t context = 0;        // asked for; 0: the model's, reduced to what memory allows
  std::uint64_t limit = 0;         // 0: MemAvailable less the reserve
  // Routed experts: their stored bytes (0: none, never streamed), the cache asked for (0: stream
  // only when the model does not fit whole), and the smallest cache that works (one token's
  // experts).
  std::uint64_t expert_bytes = 0;
  std::uint64_t expert_cache = 0;
  std::uint64_t min_expert_cache = 0;
};

// What the plan checks against: `requested` when non-zero, else DAY0_MEMORY_LIMIT_BYTES, else
// MemAvailable less the reserve (no limit when /proc cannot be read).
Result<std::uint64_t> resolve_memory_limit(std::uint64_t requested);

// Plans `model`: refuses (out_of_memory, "this model needs 61.2 GiB of memory; 22.8 GiB is
// available ...") when the weights with the smallest useful context do not fit, or when an
// explicit context does not fit; an explicit context above the model's is invalid_argument.
Result<MemoryPlan> plan_memory(const models::LoadedModel& model, const PlanRequest& request);

// The GPU check made before a model is uploaded: the checkpoint's tensor bytes (a lower bound of
// what the GPU backend holds: it keeps the stored bf16 and MXFP4 weights and adds its workspace
// and caches, accounted in engine/backend/cuda/) against the device's free memory. out_of_memory
// names both, so the caller can say why it runs on the CPU instead.
Status check_device_memory(std::uint64_t weight_bytes, std::uint64_t free_bytes, const std::string& device);

// What a GPU program will hold for a model, known from its config before anything is uploaded
// (the architecture's device_footprint): the weights as the device keeps them, its workspaces
// (expert workspace, activations of one prefill pass, logits, token picking), and a session's
// caches for a context, growth included (the peak while a cache moves to a larger buffer).
struct DeviceFootprint {
  std::uint64_t weights = 0;
  std::uint64_t workspace = 0;
  std::function<std::uint64_t(std::int64_t)> state_bytes;
  std::int64_t max_context = 0;  // the model's own limit
};
// Memory the device keeps for itself and the libraries (CUDA context, cuBLASLt workspace).
inline constexpr std::uint64_t kDeviceReserve = 768ull << 20;

// Plans a model on a device with `free_bytes` free: as plan_memory(), against free_bytes less
// kDeviceReserve; out_of_memory names the device and what does not fit.
Result<MemoryPlan> plan_device_memory(const DeviceFootprint& footprint, std::uint64_t free_bytes, std::int64_t context,
                                      const std::string& device);

// "61.2 GiB", "512.0 MiB".
std::string format_bytes(std::uint64_t bytes);

// Positions a context is never reduced below by the automatic plan (or the model's own limit
// when smaller): shorter than this, a chat is not useful.
inline constexpr std::int64_t kMinimumContext = 4096;
// A streamed plan's session state takes at most this fraction (1/n) of the memory the other
// weights leave; the expert cache gets the rest.
inline constexpr std::uint64_t kStreamedStateShare = 8;
// What the process needs besides the model when the plan uses MemAvailable.
inline constexpr std::uint64_t kProcessReserve = 512ull << 20;

}  // namespace day0::limits
