#pragma once
// glm5_next's GPU program state (backend/cuda/glm5_next_cuda.cpp): the shape the program and its
// sessions share, and a session's caches on the GPU with its KDA snapshots.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_support.h"
#include "backend/cuda/device_model.h"
#include "backend/cuda/glm5_next_cuda.h"
#include "day0/log.h"
#include "day0/status.h"
#include "dsa_indexer.h"
#include "io/model_config.h"
#include "mla_attention.h"
#include "models/glm5_next_config.h"

namespace day0::cuda::glm5 {

inline constexpr std::int64_t kGrain = 256;         // cache capacity grows in multiples of this many positions
inline constexpr std::size_t kPromptSnapshots = 4;  // KDA snapshots kept per session, as the CPU model keeps
inline constexpr std::size_t kStepSnapshots = 2;

// The shape the program and its sessions share, from the config and the binding's block configs.
struct Shape {
  models::Glm5Config c;
  std::int64_t mla_layers = 0, indexer_layers = 0, kda_layers = 0;
  // KDA (when any layer is one).
  std::int64_t kda_heads = 0, kda_d = 0, kda_conv = 0;
  bool has_lower_bound = false;
  float lower_bound = 0, kda_norm_eps = 1e-5f, l2_eps = 1e-6f;

  std::int64_t D() const { return kda_heads * kda_d; }
  // One KDA layer's state: the recurrent state [heads, d, d] and the convolution histories of q, k
  // and v [3, K-1, D], fp32.
  std::int64_t kda_floats() const {
    return kda_heads * kda_d * kda_d + 3 * std::max<std::int64_t>(kda_conv - 1, 0) * D();
  }
  std::int64_t width() const { return std::min(c.index_topk, c.max_positions) + c.kpool - 1; }
};

// Reads the config and checks what the GPU program needs beyond what the CPU model does.
Result<Shape> read_shape(const io::ModelConfig& config);

// Scratch a session of `capacity` positions needs for any pass of 1 .. kGlm5PrefillChunk tokens:
// the attention's (floats) and the indexer selection's (bytes). The kernels' needs are not
// monotonic in the tokens (fewer tokens split the positions over more CTAs), so every count is
// asked.
std::size_t attention_scratch_floats(const Shape& s, std::int64_t capacity);
std::size_t selection_scratch_bytes(const Shape& s, std::int64_t capacity);

// A session: the MLA latent caches [mla_layers, capacity, R] bf16, the indexer caches (keys and
// gates [indexer_layers, capacity, id], pooled keys [indexer_layers, capacity / kpool, id], fp32),
// the KDA state of every KDA layer, the scratch the attention and selection kernels need at
// this capacity, and KDA snapshots (the state cannot rewind: truncate() returns to the newest
// snapshot not past the position asked for, as the CPU model does).
class Glm5Session final : public DeviceSession {
 public:
  Glm5Session(const Shape& s, MemoryLedger* ledger, cudaStream_t stream) : s_(s), ledger_(ledger), stream_(stream) {}

  std::int64_t capacity() const override { return capacity_; }
  // The KDA state is updated in place: a step run ahead could not be undone.
  bool can_discard_ahead_step() const override { return s_.kda_layers == 0; }
  std::uint64_t bytes() const override {
    std::uint64_t n = latent_.bytes() + keys_.bytes() + gates_.bytes() + pooled_.bytes() + kda_.bytes() +
                      mla_scratch_.bytes() + select_scratch_.bytes();
    for (const auto* q : {&prompt_snaps_, &step_snaps_})
      for (const auto& snap : *q) n += snap.state.bytes();
    for (const auto& b : spare_) n += b.bytes();
    return n;
  }

  Status reserve(std::int64_t positions, cudaStream_t stream) override {
    if (kda_.get() == nullptr && s_.kda_layers > 0) {
      const auto bytes = static_cast<std::size_t>(s_.kda_layers * s_.kda_floats()) * 4;
      DAY0_ASSIGN_OR_RETURN(kda_, DeviceBuffer::allocate(bytes, MemoryCategory::kv_cache, ledger_, "the KDA state"));
      DAY0_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(kda_.get(), 0, bytes, stream), "clearing the KDA state");
    }
    if (positions <= capacity_) return Status::ok();
    const std::int64_t max = s_.c.max_positions;
    std::int64_t cap = std::max({positions, 2 * capacity_, kGrain});
    if (2 * cap > max) cap = max;  // past half the context, the whole of it (the plan counts 1.5 contexts)
    cap = std::min((cap + kGrain - 1) / kGrain * kGrain, std::max(max, positions));
    const auto& c = s_.c;
    // Every new buffer first: a failure leaves the session as it was.
    struct Grown {
      DeviceBuffer* buf;
      DeviceBuffer next;
      std::int64_t layers, rows_old, rows_new;
      std::size_t row_bytes;
    };
    std::vector<Grown> grown;
    const auto grow = [&](DeviceBuffer& buf, std::int64_t layers, std::int64_t rows_old, std::int64_t rows_new,
                          std::size_t row_bytes, const char* what) -> Status {
      if (layers == 0) return Status::ok();
      const std::size_t bytes = row_bytes * static_cast<std::size_t>(rows_new * layers);
      DAY0_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(bytes, MemoryCategory::kv_cache, ledger_, what));
      grown.push_back({&buf, std::move(b), layers, rows_old, rows_new, row_bytes});
      return Status::ok();
    };
    const std::size_t id4 = static_cast<std::size_t>(c.index_dim) * 4;
    DAY0_RETURN_IF_ERROR(
        grow(latent_, s_.mla_layers, capacity_, cap, static_cast<std::size_t>(c.kv_lora) * 2, "the MLA latent cache"));
    DAY0_RETURN_IF_ERROR(grow(keys_, s_.indexer_layers, capacity_, cap, id4, "the indexer keys"));
    DAY0_RETURN_IF_ERROR(grow(gates_, s_.indexer_layers, capacity_, cap, id4, "the indexer gates"));
    DAY0_RETURN_IF_ERROR(grow(pooled_, s_.indexer_layers, capacity_ > 0 ? capacity_ / c.kpool + 1 : 0,
                              cap / c.kpool + 1, id4, "the indexer's pooled keys"));
    // Scratch for a prefill pass or a decode step at this capacity.
    DeviceBuffer mla_scratch, select_scratch;
    std::size_t select_bytes = 0;
    if (s_.mla_layers > 0) {
      DAY0_ASSIGN_OR_RETURN(mla_scratch,
                            DeviceBuffer::allocate(std::max<std::size_t>(attention_scratch_floats(s_, cap), 1) * 4,
                                                   MemoryCategory::activations, ledger_, "attention partials"));
    }
    if (s_.indexer_layers > 0) {
      select_bytes = selection_scratch_bytes(s_, cap);
      DAY0_ASSIGN_OR_RETURN(select_scratch,
                            DeviceBuffer::allocate(std::max<std::size_t>(select_bytes, 16), MemoryCategory::activations,
                                                   ledger_, "the indexer's selection scratch"));
    }
    // Then the rows held so far into the new buffers (per layer: rows_old of rows_new).
    for (const Grown& g : grown) {
      if (g.rows_old == 0 || g.buf->get() == nullptr) continue;
      const std::size_t used = g.row_bytes * static_cast<std::size_t>(g.rows_old);
      DAY0_CUDA_RETURN_IF_ERROR(
          cudaMemcpy2DAsync(g.next.get(), g.row_bytes * static_cast<std::size_t>(g.rows_new), g.buf->get(), used, used,
                            static_cast<std::size_t>(g.layers), cudaMemcpyDeviceToDevice, stream),
          "growing the session caches");
    }
    DAY0_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "growing the session caches");
    for (Grown& g : grown) *g.buf = std::move(g.next);
    mla_scratch_ = std::move(mla_scratch);
    select_scratch_ = std::move(select_scratch);
    select_bytes_ = select_bytes;
    capacity_ = cap;
    graphs_.clear();
    return Status::ok();
  }

  std::int64_t truncate(std::int64_t tokens) override {
    tokens = std::clamp<std::int64_t>(tokens, 0, length_);
    if (tokens == length_ || s_.kda_layers == 0 || kda_.get() == nullptr) return DeviceSession::truncate(tokens);
    for (auto* q : {&prompt_snaps_, &step_snaps_})
      while (!q->empty() && q->back().length > tokens) {
        spare_.push_back(std::move(q->back().state));
        q->pop_back();
      }
    const Snapshot* best = nullptr;
    for (auto* q : {&prompt_snaps_, &step_snaps_})
      if (!q->empty() && (best == nullptr || q->back().length > best->length)) best = &q->back();
    cudaError_t e = cudaStreamSynchronize(stream_);
    if (best == nullptr) {
      tokens = 0;
      if (e == cudaSuccess) e = cudaMemsetAsync(kda_.get(), 0, kda_.bytes(), stream_);
    } else {
      tokens = best->length;
      if (e == cudaSuccess)
        e = cudaMemcpyAsync(kda_.get(), best->state.get(), kda_.bytes(), cudaMemcpyDeviceToDevice, stream_);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) {
      // The state is unknown: start the conversation over.
      DAY0_LOG_WARN("restoring the KDA state failed ({}); the session starts over", cudaGetErrorString(e));
      cudaMemset(kda_.get(), 0, kda_.bytes());
      prompt_snaps_.clear();
      step_snaps_.clear();
      tokens = 0;
    }
    return DeviceSession::truncate(tokens);
  }

  // A copy of the KDA state at the current length (after a prompt, or a decode step).
  Status snapshot(bool prompt) {
    if (s_.kda_layers == 0 || kda_.get() == nullptr) return Status::ok();
    auto& q = prompt ? prompt_snaps_ : step_snaps_;
    const std::size_t limit = prompt ? kPromptSnapshots : kStepSnapshots;
    Snapshot snap{length_, {}};
    if (q.size() >= limit) {
      snap.state = std::move(q.front().state);
      q.pop_front();
    } else if (!spare_.empty()) {
      snap.state = std::move(spare_.back());
      spare_.pop_back();
    } else {
      DAY0_ASSIGN_OR_RETURN(snap.state,
                            DeviceBuffer::allocate(kda_.bytes(), MemoryCategory::kv_cache, ledger_, "KDA snapshots"));
    }
    DAY0_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(snap.state.get(), kda_.get(), kda_.bytes(), cudaMemcpyDeviceToDevice, stream_),
        "copying the KDA state");
    q.push_back(std::move(snap));
    return Status::ok();
  }

  std::uint16_t* latent(std::int64_t slot) const {
    return latent_.as<std::uint16_t>() + slot * capacity_ * s_.c.kv_lora;
  }
  float* keys(std::int64_t slot) const { return keys_.as<float>() + slot * capacity_ * s_.c.index_dim; }
  float* gates(std::int64_t slot) const { return gates_.as<float>() + slot * capacity_ * s_.c.index_dim; }
  float* pooled(std::int64_t slot) const {
    return pooled_.as<float>() + slot * (capacity_ / s_.c.kpool + 1) * s_.c.index_dim;
  }
  float* kda_state(std::int64_t slot) const { return kda_.as<float>() + slot * s_.kda_floats(); }
  float* mla_scratch() const { return mla_scratch_.as<float>(); }
  std::size_t mla_scratch_floats() const { return mla_scratch_.bytes() / 4; }
  void* select_scratch() const { return select_scratch_.get(); }
  std::size_t select_scratch_bytes() const { return select_bytes_; }

 private:
  struct Snapshot {
    std::int64_t length = 0;
    DeviceBuffer state;
  };
  const Shape s_;
  MemoryLedger* ledger_;
  cudaStream_t stream_;
  std::int64_t capacity_ = 0;
  DeviceBuffer latent_, keys_, gates_, pooled_, kda_, mla_scratch_, select_scratch_;
  std::size_t select_bytes_ = 0;
  std::deque<Snapshot> prompt_snaps_, step_snaps_;  // oldest first
  std::vector<DeviceBuffer> spare_;                 // snapshot buffers to reuse
};

}  // namespace day0::cuda::glm5
