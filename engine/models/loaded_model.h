#pragma once
// A model whose weights are loaded (memory-mapped) and ready to run, and the per-conversation
// state it keeps between calls. Weights are shared by every session; a session owns its state
// (KV cache, recurrent state), as whisper.cpp splits context and state.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "day0/engine.h"
#include "day0/status.h"

namespace day0::models {

class SessionState {
 public:
  virtual ~SessionState() = default;
  // Positions held (tokens already fed).
  virtual std::int64_t length() const = 0;
  // Forgets everything from position `tokens` on, so a conversation can branch or be replayed,
  // and returns the positions still held. Attention caches rewind to any position; recurrent
  // state (linear attention) only to a position it kept a snapshot of, so the result may be
  // smaller than `tokens` (0 at worst) and the caller feeds the rest again.
  virtual std::int64_t truncate(std::int64_t tokens) = 0;
  virtual std::uint64_t bytes() const = 0;
};

// Optional record of intermediate tensors, named as in the reference dumps
// (tools/reference/make_gpt_oss_fixtures.py): "hidden.embed", "hidden.<layer>",
// "hidden.final_norm", "attn.<layer>.out", "router.<layer>.topk", "router.<layer>.weights".
// Each holds [tokens, ...] row-major values for the tokens of one forward call.
struct ForwardTrace {
  std::map<std::string, std::vector<float>> tensors;
  void append(const std::string& name, const float* data, std::size_t n) {
    auto& v = tensors[name];
    v.insert(v.end(), data, data + n);
  }
};

// How a model streams its routed experts (models/streamed_experts.h).
struct ExpertStreamingOptions {
  std::uint64_t cache_bytes = 0;  // the cache's budget
  bool direct = false;            // O_DIRECT reads where the filesystem allows them
  std::size_t readers = 4;
};

class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  virtual std::int64_t vocab_size() const = 0;
  virtual std::int64_t hidden_size() const = 0;
  virtual std::int64_t max_context() const = 0;
  virtual std::unique_ptr<SessionState> new_state() const = 0;
  // Bytes one session's state holds at `tokens` positions (caches that grow with the context and
  // state that does not), for the memory plan checked before a model is accepted. 0 where the
  // state lives on a device that keeps its own accounts.
  virtual std::uint64_t state_bytes(std::int64_t /*tokens*/) const { return 0; }

  // Feeds `tokens` at positions state.length() ... and writes the logits of the last
  // `logit_rows` of them to `logits` ([logit_rows, vocab_size]).
  virtual Status forward(SessionState& state, std::span<const std::int32_t> tokens, std::int64_t logit_rows,
                         float* logits, ForwardTrace* trace) = 0;

  // Where it runs ("cpu", "cuda:0"), the device memory it holds by category (bytes), and the
  // bytes one decode step must read (the roofline's numerator); no device memory on the CPU.
  virtual std::string device_name() const { return "cpu"; }
  virtual std::vector<std::pair<std::string, std::uint64_t>> memory_report() const { return {}; }
  virtual std::uint64_t decode_bytes_per_token() const { return 0; }
  // Reads the routed experts from the checkpoint into a cache as tokens are routed to them,
  // instead of through the memory map (a model larger than memory); the other weights stay
  // mapped. Called once, after loading, before any forward. Unsupported where a model cannot.
  virtual Status stream_experts(const ExpertStreamingOptions& /*options*/) {
    return error(ErrorCode::unsupported, "this model cannot stream its experts");
  }
  virtual ExpertStreaming expert_streaming() const { return {}; }
  // Tokens the engine feeds per prefill call: cancellation is checked between calls, and a GPU
  // wants larger steps (each step converts every routed expert once per layer).
  virtual std::int64_t prefill_chunk() const { return 256; }
  // Token selection on the device (picks_on_device()): begin_picking() sets how the following
  // forward_pick() calls choose (the sampling settings, and the tokens seen so far, which the
  // penalties use; the draws start again, so the same seed and context give the same tokens);
  // forward_pick() feeds `tokens` as forward() does and returns the token chosen from the last
  // row's logits, which never leave the device. Models that cannot leave sampling to the
  // engine's CPU sampler.
  virtual bool picks_on_device() const { return false; }
  virtual Status begin_picking(const Sampling& /*sampling*/, std::span<const std::int32_t> /*seen*/) {
    return error(ErrorCode::unsupported, "this model does not pick tokens on its device");
  }
  virtual Result<std::int32_t> forward_pick(SessionState& /*state*/, std::span<const std::int32_t> /*tokens*/) {
    return error(ErrorCode::unsupported, "this model does not pick tokens on its device");
  }
};

struct LoadOptions {
  std::int64_t kv_page_tokens = 256;
  // "cpu", "cuda" or "cuda:N". Without a usable GPU (or a CUDA path for the family) "cuda" logs
  // why and loads on the CPU.
  std::string device = "cpu";
  // The GPU's expert workspace in bf16 even where FP8 is available (tests of the Ampere path).
  bool bf16_workspace = false;
  // The memory plan's inputs (ModelOptions::max_context, memory_limit_bytes): 0 = automatic.
  std::int64_t max_context = 0;
  std::uint64_t memory_limit_bytes = 0;
  // The routed experts will be streamed (stream_experts()): binding checks their shapes but not
  // their bytes, which the cache checks as it reads each expert.
  bool experts_streamed = false;
  // Streaming: ModelOptions::expert_cache_bytes and direct_expert_reads.
  std::uint64_t expert_cache_bytes = 0;
  bool direct_expert_reads = false;
};

// What the memory plan granted a model loaded on the CPU (limits/memory_plan.h).
struct LoadPlan {
  std::int64_t context = 0;  // positions a session may hold
  std::uint64_t needed = 0;
  std::uint64_t available = 0;
};

// Loads a model; on the CPU the memory plan is checked once the weights are mapped and bound
// (nothing large is allocated before it), and what it granted goes to `plan` when given.
Result<std::unique_ptr<LoadedModel>> load_model(const std::filesystem::path& dir, ThreadPool& pool,
                                                const LoadOptions& options = {}, LoadPlan* plan = nullptr);

}  // namespace day0::models
