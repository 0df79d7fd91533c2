#pragma once
// The GPU executor's model: what every architecture's GPU program shares, written once. It owns
// the device context (stream, memory ledger), the token and position slots the steps read, the
// logits rows, token picking on the device (arg max, or the sampler of kernels/token_sampler.h),
// the decode graphs (captured per session and sampling mode, replayed every step), the step run
// ahead, and forward()'s pass loop (prefill passes, short feeds as decode steps, logits out).
// A program (models' GPU files, e.g. gpt_oss_cuda.cpp) supplies its weights, its session state
// and three things: a prefill pass, the decode step's launches up to the logits, and the logits
// of a prefill pass's rows.
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_support.h"
#include "backend/cuda/phase_timer.h"
#include "backend/cuda/run_ahead.h"
#include "day0/status.h"
#include "models/loaded_model.h"
#include "token_sampler.h"

namespace day0::cuda {

// Rows of logits one pass computes and copies at most (the logits buffer holds this many).
inline constexpr std::int64_t kLogitRowsPerPass = 64;

// A conversation's state on the GPU: the positions fed, a never-reused id (a step run ahead
// belongs to exactly one session), and the decode graphs captured for its current buffers. The
// program's subclass holds the caches.
class DeviceSession : public models::SessionState {
 public:
  std::uint64_t id() const { return id_; }
  std::int64_t length() const override { return length_; }
  std::int64_t truncate(std::int64_t tokens) override;
  // Positions the caches hold now; reserve() grows them to at least `positions` and must drop
  // graphs_ when the buffers move.
  virtual std::int64_t capacity() const = 0;
  virtual Status reserve(std::int64_t positions, cudaStream_t stream) = 0;
  // Whether a decode step run past the session's length leaves nothing the session reads later
  // (true for caches written at the step's own position). A program whose sessions update
  // state in place (recurrent state) answers false unless it can undo the step, and then its
  // sessions decode without running ahead (backend/cuda/run_ahead.h).
  virtual bool can_discard_ahead_step() const { return true; }

  std::int64_t length_ = 0;
  // The decode step's graph for each way of picking its token (kernels::SamplerMode, 0 = arg
  // max); an empty GraphExec once capture failed.
  std::map<unsigned, GraphExec> graphs_;

 private:
  static inline std::atomic<std::uint64_t> next_id_{1};
  const std::uint64_t id_ = next_id_.fetch_add(1);
};

class DeviceModel : public models::LoadedModel {
 public:
  ~DeviceModel() override;

  std::int64_t vocab_size() const override { return vocab_; }
  std::int64_t max_context() const override { return max_positions_; }
  std::string device_name() const override { return "cuda:" + std::to_string(device_); }
  std::vector<std::pair<std::string, std::uint64_t>> memory_report() const override;
  std::int64_t prefill_chunk() const override { return chunk_; }
  Status forward(models::SessionState& base, std::span<const std::int32_t> tokens, std::int64_t logit_rows,
                 float* logits, models::ForwardTrace* trace) override {
    return run(base, tokens, logit_rows, logits, trace);
  }
  bool picks_on_device() const override { return true; }
  // Bytes of the buffers the steps share (allocate_step_buffers()), for the memory plan.
  static std::uint64_t step_buffer_bytes(std::int64_t vocab, std::int64_t chunk);
  Status begin_picking(const Sampling& sampling, std::span<const std::int32_t> seen) override;
  Result<std::int32_t> forward_pick(models::SessionState& base, std::span<const std::int32_t> tokens) override {
    DAY0_RETURN_IF_ERROR(run(base, tokens, 1, nullptr, nullptr, true));
    return last_pick_;
  }

 protected:
  DeviceModel(int device, std::int64_t vocab, std::int64_t max_positions, std::int64_t chunk, std::string what)
      : device_(device), vocab_(vocab), max_positions_(max_positions), chunk_(chunk), what_(std::move(what)) {}

  // The device and its stream, before the program places anything.
  Status open_device();
  // The buffers the steps share (token and position slots, logits rows, pickers, pinned
  // staging), once the program's own are in place.
  Status allocate_step_buffers();
  // Lets a step queued ahead finish: a program's destructor calls it before its buffers go.
  void drain();
  Status alloc(std::size_t bytes, DeviceBuffer* out, MemoryCategory category, const std::string& what) {
    DAY0_ASSIGN_OR_RETURN(*out, DeviceBuffer::allocate(bytes, category, ledger_.get(), what));
    return Status::ok();
  }

  // forward() over input embeddings [T, hidden_size()] on the host (images joined with text):
  // prefill passes whose first activations are these rows (pass_embeddings_) instead of the
  // embedding table's. No decode graph, no run-ahead: a step queued ahead is finished first.
  Status run_embeddings(models::SessionState& base, const float* embeddings, std::int64_t T, std::int64_t logit_rows,
                        float* logits, models::ForwardTrace* trace);

  // Appends `n` values at `device` (fp32, or int32 with ints) to trace->tensors[name], waiting
  // for the stream: for traced prefill passes only.
  Status trace_copy(models::ForwardTrace* trace, const std::string& name, const void* device, std::size_t n, bool ints);

  // ---- The program ------------------------------------------------------------------------
  // One prefill pass of T <= chunk tokens at positions pos..: the tokens are in tokens_dev_ and
  // pos, pos + T in pos_dev_. Leaves what pass_logits() reads.
  virtual Status prefill_pass(DeviceSession& st, std::int64_t T, std::int64_t pos, models::ForwardTrace* trace) = 0;
  // The decode step's launches for one token (tokens_dev_[0] at pos_dev_[0], pos_dev_[1] =
  // position + 1), capturable, ending with the logits in logits_ row 0.
  virtual Status record_step(DeviceSession& st) = 0;
  // Logits of rows first_row .. first_row + rows (rows <= kLogitRowsPerPass) of the last prefill
  // pass into logits_ rows 0 ...
  virtual Status pass_logits(std::int64_t first_row, std::int64_t rows) = 0;

  int device_ = 0;
  std::int64_t vocab_ = 0, max_positions_ = 0, chunk_ = 0;
  std::string what_;  // "gpt-oss", for messages
  std::unique_ptr<MemoryLedger> ledger_ = std::make_unique<MemoryLedger>();
  Stream stream_;
  DeviceBuffer tokens_dev_;  // [chunk] the pass's token ids; a decode step's token in [0]
  DeviceBuffer pos_dev_;     // [2]: the first position of the pass, and the length after it
  DeviceBuffer logits_;      // [kLogitRowsPerPass, vocab]
  // During run_embeddings' passes: the pass's input rows [T, hidden] on the GPU; else null.
  const float* pass_embeddings_ = nullptr;
  PhaseTimer prefill_timer_, decode_timer_;

 private:
  // forward(); with logits == nullptr the last row's logits stay on the GPU (logits_ row 0).
  // With pick, the token picked from the last row (pick_mode_) goes to tokens_dev_[0] (where
  // the next decode step reads its token) and last_pick_.
  Status run(models::SessionState& base, std::span<const std::int32_t> tokens, std::int64_t logit_rows, float* logits,
             models::ForwardTrace* trace, bool pick = false);
  // A feed of T rows at pos0 asking for logit_rows: something to feed, no more logit rows than
  // rows, and room in the context.
  Status check_feed(std::int64_t pos0, std::int64_t T, std::int64_t logit_rows) const;
    // record_step() and the token pick under `mode` at the step's end.
  Status record_decode(DeviceSession& st, unsigned mode);
  // A step at `pos` uses the pinned slot pos & 1 of host_pos_ and host_pick_ (and step_done_),
  // so the step queued ahead never writes what the step before it still reads.
  static int slot_of(std::int64_t pos) { return static_cast<int>(pos & 1); }
  // Writes pos, pos + 1 to the step's slot of host_pos_ and queues their copy to pos_dev_.
  Status queue_positions(std::int64_t pos);
  // Queues the decode step's graph at `pos` (its token in tokens_dev_[0]), with its positions
  // unless the step before left them there, and step_done_ recorded (slot_of(pos)); the graph
  // itself writes its pick to host_pick_[slot_of(pos)] and advances the positions.
  Status queue_step(DeviceSession& st, std::int64_t pos);
  // The rest of a picking decode step queued at `pos`: queue the step after it, wait for the pick.
  Status finish_pick_step(DeviceSession& st, std::int64_t pos);
  // tokens_dev_[0] = the token picked from logits_ row 0 under `mode` (0: arg max). end_of_step
  // (the decode step): also into host_pick_[slot_of(pos)], pos_dev_ advanced to the next step's
  // positions, and the fed token counted as seen by the penalties.
  cudaError_t pick_token(cudaStream_t s, bool end_of_step, unsigned mode);
  // Logits of rows first_row .. first_row + rows of the pass just run (a decode step: its one
  // row, already in logits_) into `out`, or left on the GPU when out is null.
  Status logits_rows(std::int64_t first_row, std::int64_t rows, bool decode, float* out);

  DeviceBuffer embeddings_dev_;  // [chunk, hidden] fp32, allocated by the first run_embeddings
  DeviceBuffer argmax_values_, argmax_indices_, argmax_done_;
  // The device sampler and the mode begin_picking() set.
  DeviceBuffer sampler_memory_;
  kernels::SamplerWorkspace sampler_;
  unsigned pick_mode_ = 0;
  PinnedBuffer host_sampler_;  // staging for the sampler's config and seen-token mask
  PinnedBuffer host_tokens_, host_pos_, host_pick_, host_logits_;
  std::int32_t last_pick_ = -1;     // what the last forward_pick() picked
  RunAhead ahead_;                  // the decode step queued ahead, and the pick in the token slot
  std::array<Event, 2> step_done_;  // per slot: that step's pick is in host_pick_[slot]
  // pos_dev_[0] once everything queued so far has run (a decode step advances it), -1 if unknown.
  std::int64_t device_pos_ = -1;
};

}  // namespace day0::cuda
