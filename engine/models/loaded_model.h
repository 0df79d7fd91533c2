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

class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  virtual std::int64_t vocab_size() const = 0;
  virtual std::int64_t hidden_size() const = 0;
  virtual std::int64_t max_context() const = 0;
  virtual std::unique_ptr<SessionState> new_state() const = 0;

  // Feeds `tokens` at positions state.length() ... and writes the logits of the last
  // `logit_rows` of them to `logits` ([logit_rows, vocab_size]).
  virtual Status forward(SessionState& state, std::span<const std::int32_t> tokens, std::int64_t logit_rows,
                         float* logits, ForwardTrace* trace) = 0;
};

struct LoadOptions {
  std::int64_t kv_page_tokens = 256;
};

Result<std::unique_ptr<LoadedModel>> load_model(const std::filesystem::path& dir, ThreadPool& pool,
                                                const LoadOptions& options = {});

}  // namespace day0::models
