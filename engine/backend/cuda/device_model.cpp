#include "backend/cuda/device_model.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "day0/log.h"
#include "sampling.h"

namespace day0::cuda {
namespace {

namespace k = day0::kernels;

#define DAY0_K(expr, what) DAY0_CUDA_RETURN_IF_ERROR(expr, what)

// Feeds of up to this many tokens (a follow-up turn) run as decode steps, one token each: a
// prefill pass converts every routed expert of every layer into the workspace, which costs more
// than a few decode steps (docs/perf-notes.md, "Short feeds"). DAY0_SHORT_FEED_TOKENS overrides
// it for measuring the crossover.
std::int64_t short_feed_tokens() {
  static const std::int64_t n = [] {
    const char* v = std::getenv("DAY0_SHORT_FEED_TOKENS");
    return v != nullptr ? std::max<std::int64_t>(1, std::atoll(v)) : std::int64_t{24};
  }();
  return n;
}

}  // namespace

std::int64_t DeviceSession::truncate(std::int64_t tokens) {
  length_ = std::clamp<std::int64_t>(tokens, 0, length_);
  return length_;
}

DeviceModel::~DeviceModel() {
  drain();
  prefill_timer_.report("prefill");
  decode_timer_.report("decode");
}

void DeviceModel::drain() {
  if (ahead_.queued() && stream_.get() != nullptr) cudaStreamSynchronize(stream_.get());
  ahead_.drop();
}

std::vector<std::pair<std::string, std::uint64_t>> DeviceModel::memory_report() const {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (int c = 0; c < kMemoryCategories; ++c)
    out.emplace_back(memory_category_name(static_cast<MemoryCategory>(c)),
                     ledger_->bytes(static_cast<MemoryCategory>(c)));
  out.emplace_back("peak_total", ledger_->peak());
  return out;
}

Status DeviceModel::open_device() {
  DAY0_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "selecting GPU " + std::to_string(device_));
  DAY0_ASSIGN_OR_RETURN(stream_, Stream::create());
  return Status::ok();
}

std::uint64_t DeviceModel::step_buffer_bytes(std::int64_t vocab, std::int64_t chunk) {
  const auto v = static_cast<std::uint64_t>(vocab), c = static_cast<std::uint64_t>(chunk);
  return static_cast<std::uint64_t>(kLogitRowsPerPass) * v * 4 + c * 4 + 8 + 2 * k::kArgmaxMaxCtas * 4 + 4 +
         k::sampler_workspace_bytes(vocab);
}

Status DeviceModel::allocate_step_buffers() {
  const auto A = MemoryCategory::activations;
  const std::size_t C = static_cast<std::size_t>(chunk_);
  DAY0_RETURN_IF_ERROR(alloc(static_cast<std::size_t>(kLogitRowsPerPass * vocab_) * 4, &logits_, A, "logits"));
  DAY0_RETURN_IF_ERROR(alloc(C * 4, &tokens_dev_, A, "token ids"));
  DAY0_RETURN_IF_ERROR(alloc(8, &pos_dev_, A, "the position"));
  DAY0_RETURN_IF_ERROR(alloc(k::kArgmaxMaxCtas * 4, &argmax_values_, A, "token selection"));
  DAY0_RETURN_IF_ERROR(alloc(k::kArgmaxMaxCtas * 4, &argmax_indices_, A, "token selection"));
  DAY0_RETURN_IF_ERROR(alloc(4, &argmax_done_, A, "token selection"));
  DAY0_CUDA_RETURN_IF_ERROR(cudaMemset(argmax_done_.get(), 0, 4), "clearing the token selection counter");
  const std::size_t sampler_bytes = k::sampler_workspace_bytes(vocab_);
  DAY0_RETURN_IF_ERROR(alloc(sampler_bytes, &sampler_memory_, A, "token sampling"));
  DAY0_CUDA_RETURN_IF_ERROR(cudaMemset(sampler_memory_.get(), 0, sampler_bytes), "clearing the token sampler");
  sampler_ = k::sampler_workspace(sampler_memory_.get(), vocab_);
  DAY0_ASSIGN_OR_RETURN(
      host_sampler_,
      PinnedBuffer::allocate(sizeof(k::SamplerConfig) + static_cast<std::size_t>(vocab_), "token sampling settings"));
  DAY0_ASSIGN_OR_RETURN(host_tokens_, PinnedBuffer::allocate(C * 4, "token ids"));
  DAY0_ASSIGN_OR_RETURN(host_pos_, PinnedBuffer::allocate(16, "positions"));
  DAY0_ASSIGN_OR_RETURN(host_pick_, PinnedBuffer::allocate(8, "the picked token", true));
  for (Event& e : step_done_) {
    DAY0_ASSIGN_OR_RETURN(e, Event::create(cudaEventDisableTiming));
  }
  DAY0_ASSIGN_OR_RETURN(host_logits_,
                        PinnedBuffer::allocate(static_cast<std::size_t>(kLogitRowsPerPass * vocab_) * 4, "logits"));
  return Status::ok();
}

cudaError_t DeviceModel::pick_token(cudaStream_t s, bool end_of_step, unsigned mode) {
  k::StepEnd step_end;
  if (end_of_step) {
    step_end.host_picks = host_pick_.device_as<std::int32_t>();
    step_end.positions = pos_dev_.as<std::int32_t>();
  }
  auto* token = tokens_dev_.as<std::int32_t>();
  if (mode != 0)
    return k::sample_token(logits_.as<float>(), vocab_, mode, sampler_, end_of_step ? token : nullptr, token, s,
                           step_end);
  k::ArgmaxScratch scratch;
  scratch.values = argmax_values_.as<float>();
  scratch.indices = argmax_indices_.as<std::int32_t>();
  scratch.done = argmax_done_.as<unsigned>();
  return k::argmax_wide(logits_.as<float>(), vocab_, scratch, token, s, step_end);
}

Status DeviceModel::record_decode(DeviceSession& st, unsigned mode) {
  cudaStream_t s = stream_.get();
  DAY0_RETURN_IF_ERROR(record_step(st));
  DAY0_K(pick_token(s, true, mode), "picking a token");
  decode_timer_.mark(s, PhaseTimer::lm_head);
  return Status::ok();
}

Status DeviceModel::begin_picking(const Sampling& sampling, std::span<const std::int32_t> seen) {
  DAY0_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "selecting GPU " + std::to_string(device_));
  cudaStream_t s = stream_.get();
  // A step queued ahead picked under the previous settings (and counted its token as seen): it
  // runs to its end and is not used.
  if (ahead_.queued()) {
    ahead_.drop();
    DAY0_K(cudaStreamSynchronize(s), "finishing the decode step run ahead");
  }
  pick_mode_ = k::sampler_mode(sampling.temperature, sampling.top_k, sampling.top_p, sampling.min_p,
                               sampling.repetition_penalty, sampling.presence_penalty, vocab_);
  if (pick_mode_ == 0) return Status::ok();
  const k::SamplerConfig config =
      k::sampler_config(sampling.temperature, sampling.top_k, sampling.top_p, sampling.min_p,
                        sampling.repetition_penalty, sampling.presence_penalty, sampling.seed);
  auto* staging = host_sampler_.as<std::uint8_t>();
  std::memcpy(staging, &config, sizeof(config));
  DAY0_K(cudaMemcpyAsync(sampler_.config, staging, sizeof(config), cudaMemcpyHostToDevice, s),
         "copying the sampling settings");
  if (pick_mode_ & k::kSamplePenalties) {
    std::uint8_t* mask = staging + sizeof(config);
    std::memset(mask, 0, static_cast<std::size_t>(vocab_));
    for (const std::int32_t t : seen)
      if (t >= 0 && t < vocab_) mask[t] = 1;
    DAY0_K(cudaMemcpyAsync(sampler_.seen, mask, static_cast<std::size_t>(vocab_), cudaMemcpyHostToDevice, s),
           "copying the tokens seen");
  }
  // The staging buffer is written again by the next call: let these copies finish first.
  DAY0_K(cudaStreamSynchronize(s), "copying the sampling settings");
  return Status::ok();
}

Status DeviceModel::queue_positions(std::int64_t pos) {
  std::int32_t* hp = host_pos_.as<std::int32_t>() + 2 * slot_of(pos);
  hp[0] = static_cast<std::int32_t>(pos);
  hp[1] = static_cast<std::int32_t>(pos + 1);
  device_pos_ = -1;
  DAY0_K(cudaMemcpyAsync(pos_dev_.get(), hp, 8, cudaMemcpyHostToDevice, stream_.get()), "copying positions");
  device_pos_ = pos;
  return Status::ok();
}

Status DeviceModel::queue_step(DeviceSession& st, std::int64_t pos) {
  cudaStream_t s = stream_.get();
  const int slot = slot_of(pos);
  // The step before this one in the stream left pos_dev_ at pos unless something else ran since.
  if (device_pos_ != pos) DAY0_RETURN_IF_ERROR(queue_positions(pos));
  device_pos_ = -1;
  DAY0_RETURN_IF_ERROR(st.graphs_.at(pick_mode_).launch(s));
  device_pos_ = pos + 1;
  DAY0_K(cudaEventRecord(step_done_[static_cast<std::size_t>(slot)].get(), s), "picking a token");
  return Status::ok();
}

Status DeviceModel::finish_pick_step(DeviceSession& st, std::int64_t pos) {
  // The step after this one reads the token this one leaves in tokens_dev_[0]; its cache row
  // (pos + 1) was reserved with this call's.
  const std::int64_t next = pos + 1;
  const bool run_ahead = next < max_positions_ && next < st.capacity() && st.can_discard_ahead_step();
  if (run_ahead) {
    ahead_.queue(st.id(), next);
    DAY0_RETURN_IF_ERROR(queue_step(st, next));
  }
  DAY0_K(cudaEventSynchronize(step_done_[static_cast<std::size_t>(slot_of(pos))].get()),
         "running " + what_ + " on the GPU");
  last_pick_ = host_pick_.as<std::int32_t>()[slot_of(pos)];
  st.length_ = next;
  // The step ahead overwrites the token slot; without it the pick stays there for the next call.
  ahead_.picked(st.id(), next, last_pick_, run_ahead);
  return Status::ok();
}

Status DeviceModel::run(models::SessionState& base, std::span<const std::int32_t> tokens, std::int64_t logit_rows,
                        float* logits, models::ForwardTrace* trace, bool pick) {
  auto& st = static_cast<DeviceSession&>(base);
  const auto T = static_cast<std::int64_t>(tokens.size());
  const std::int64_t pos0 = st.length();
  DAY0_RETURN_IF_ERROR(check_feed(pos0, T, logit_rows));
  for (const std::int32_t t : tokens)
    if (t < 0 || t >= vocab_)
      return error(ErrorCode::invalid_argument, "token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                                                    std::to_string(vocab_ - 1) + ")");
  DAY0_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "selecting GPU " + std::to_string(device_));
  cudaStream_t s = stream_.get();
  const bool pick_step = T == 1 && pick && logits == nullptr && trace == nullptr;
  const unsigned mode = pick ? pick_mode_ : 0;
  if (ahead_.queued()) {
    if (ahead_.take(st.id(), pos0, tokens) && pick_step) return finish_pick_step(st, pos0);
    DAY0_K(cudaStreamSynchronize(s), "finishing the decode step run ahead");
  }
  // One row more than this call needs: the picking step after it runs ahead in the same buffers.
  DAY0_RETURN_IF_ERROR(st.reserve(std::min(pos0 + T + 1, max_positions_), s));
  // The decode loop feeds back the token the previous step picked: it is on the GPU already.
  const bool token_on_device = ahead_.token_on_device(st.id(), pos0, tokens);
  const std::int64_t first_logit = T - logit_rows;
  // A short feed (and a logits request for its last row only) runs token by token on the
  // decode path.
  const bool step_by_step = T <= short_feed_tokens() && logit_rows <= 1 && trace == nullptr;
  for (std::int64_t done = 0; done < T;) {
    const std::int64_t n = step_by_step ? 1 : std::min(chunk_, T - done);
    const std::int64_t pos = pos0 + done;
    const bool last_pass = done + n == T;
    // The pinned staging buffers are free: every pass ends with a synchronisation.
    if (!token_on_device) {
      std::memcpy(host_tokens_.as<std::int32_t>(), tokens.data() + done, static_cast<std::size_t>(n) * 4);
      DAY0_K(cudaMemcpyAsync(tokens_dev_.get(), host_tokens_.as<std::int32_t>(), static_cast<std::size_t>(n) * 4,
                             cudaMemcpyHostToDevice, s),
             "copying token ids");
    }
    const bool decode = n == 1 && trace == nullptr;
    // Only the last token's step picks; the steps before it end with the plain arg max.
    const unsigned step_mode = last_pass ? mode : 0;
    if (decode && !st.graphs_.count(step_mode) && !decode_timer_.on()) {
      auto captured = GraphExec::capture(s, [&] { return record_decode(st, step_mode); });
      if (!captured) DAY0_LOG_WARN("decode runs without a CUDA graph: {}", captured.status().message());
      st.graphs_[step_mode] = captured ? std::move(*captured) : GraphExec();
    }
    const auto found = st.graphs_.find(step_mode);
    const GraphExec* graph = found != st.graphs_.end() && found->second.valid() ? &found->second : nullptr;
    if (pick_step && graph != nullptr) {
      DAY0_RETURN_IF_ERROR(queue_step(st, pos));
      return finish_pick_step(st, pos);
    }
    DAY0_RETURN_IF_ERROR(queue_positions(pos));
    if (decode) {
      device_pos_ = -1;
      if (graph != nullptr) {
        DAY0_RETURN_IF_ERROR(graph->launch(s));
      } else {
        DAY0_RETURN_IF_ERROR(record_decode(st, step_mode));
      }
      device_pos_ = pos + 1;  // the step advanced the positions
    } else {
      DAY0_RETURN_IF_ERROR(prefill_pass(st, n, pos, trace));
    }
    const std::int64_t lo = std::max(first_logit, done), hi = done + n;
    if (lo < hi)
      DAY0_RETURN_IF_ERROR(
          logits_rows(lo - done, hi - lo, decode, logits != nullptr ? logits + (lo - first_logit) * vocab_ : nullptr));
    if (pick && last_pass) {
      // A decode step picked its token inside the graph; a prefill pass's last row is in logits_ row 0.
      if (!decode) DAY0_K(pick_token(s, false, mode), "picking a token");
      DAY0_K(cudaMemcpyAsync(host_pick_.as<std::int32_t>(), tokens_dev_.get(), 4, cudaMemcpyDeviceToHost, s),
             "picking a token");
    }
    DAY0_K(cudaStreamSynchronize(s), "running " + what_ + " on the GPU");
    prefill_timer_.flush();
    decode_timer_.flush();
    done += n;
  }
  st.length_ = pos0 + T;
  if (pick) {
    last_pick_ = host_pick_.as<std::int32_t>()[0];
    ahead_.picked(st.id(), st.length_, last_pick_, false);
  }
  return Status::ok();
}

Status DeviceModel::check_feed(std::int64_t pos0, std::int64_t T, std::int64_t logit_rows) const {
  if (T == 0) return error(ErrorCode::invalid_argument, "nothing to feed: the token list is empty");
  if (logit_rows < 0 || logit_rows > T) return error(ErrorCode::invalid_argument, "more logit rows than tokens");
  if (pos0 + T > max_positions_)
    return error(ErrorCode::invalid_argument, "the context would hold " + std::to_string(pos0 + T) +
                                                  " tokens; this model allows " + std::to_string(max_positions_));
  return Status::ok();
}

Status DeviceModel::run_embeddings(models::SessionState& base, const float* embeddings, std::int64_t T,
                                   std::int64_t logit_rows, float* logits, models::ForwardTrace* trace) {
  auto& st = static_cast<DeviceSession&>(base);
  const std::int64_t pos0 = st.length(), H = hidden_size();
  if (T <= 0 || embeddings == nullptr) return error(ErrorCode::invalid_argument, "nothing to feed: no input rows");
  DAY0_RETURN_IF_ERROR(check_feed(pos0, T, logit_rows));
  DAY0_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "selecting GPU " + std::to_string(device_));
  cudaStream_t s = stream_.get();
  if (ahead_.queued()) {
    ahead_.drop();
    DAY0_K(cudaStreamSynchronize(s), "finishing the decode step run ahead");
  }
  if (embeddings_dev_.get() == nullptr)
    DAY0_RETURN_IF_ERROR(alloc(static_cast<std::size_t>(chunk_ * H) * 4, &embeddings_dev_, MemoryCategory::activations,
                               "input embeddings"));
  DAY0_RETURN_IF_ERROR(st.reserve(std::min(pos0 + T + 1, max_positions_), s));
  const std::int64_t first_logit = T - logit_rows;
  for (std::int64_t done = 0; done < T;) {
    const std::int64_t n = std::min(chunk_, T - done), pos = pos0 + done;
    DAY0_K(cudaMemcpyAsync(embeddings_dev_.get(), embeddings + done * H, static_cast<std::size_t>(n * H) * 4,
                           cudaMemcpyHostToDevice, s),
           "copying input embeddings");
    DAY0_RETURN_IF_ERROR(queue_positions(pos));
    pass_embeddings_ = embeddings_dev_.as<float>();
    const Status pass = prefill_pass(st, n, pos, trace);
    pass_embeddings_ = nullptr;
    DAY0_RETURN_IF_ERROR(pass);
    const std::int64_t lo = std::max(first_logit, done), hi = done + n;
    if (lo < hi)
      DAY0_RETURN_IF_ERROR(
          logits_rows(lo - done, hi - lo, false, logits != nullptr ? logits + (lo - first_logit) * vocab_ : nullptr));
    DAY0_K(cudaStreamSynchronize(s), "running " + what_ + " on the GPU");
    prefill_timer_.flush();
    done += n;
  }
  st.length_ = pos0 + T;
  return Status::ok();
}

Status DeviceModel::trace_copy(models::ForwardTrace* trace, const std::string& name, const void* device, std::size_t n,
                               bool ints) {
  std::vector<float> host(n);
  cudaStream_t s = stream_.get();
  if (ints) {
    std::vector<std::int32_t> ids(n);
    DAY0_K(cudaMemcpyAsync(ids.data(), device, n * 4, cudaMemcpyDeviceToHost, s), "copying " + name);
    DAY0_K(cudaStreamSynchronize(s), "copying " + name);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(ids[i]);
  } else {
    DAY0_K(cudaMemcpyAsync(host.data(), device, n * 4, cudaMemcpyDeviceToHost, s), "copying " + name);
    DAY0_K(cudaStreamSynchronize(s), "copying " + name);
  }
  trace->append(name, host.data(), n);
  return Status::ok();
}

// logits for normed rows first_row .. first_row + rows of the last pass, into `out`.
Status DeviceModel::logits_rows(std::int64_t first_row, std::int64_t rows, bool decode, float* out) {
  cudaStream_t s = stream_.get();
  for (std::int64_t done = 0; done < rows; done += kLogitRowsPerPass) {
    const std::int64_t n = std::min(kLogitRowsPerPass, rows - done);
    if (!decode) DAY0_RETURN_IF_ERROR(pass_logits(first_row + done, n));
    if (out == nullptr) continue;  // kept on the GPU (one row: forward_pick)
    const std::size_t bytes = static_cast<std::size_t>(n * vocab_) * 4;
    DAY0_K(cudaMemcpyAsync(host_logits_.as<float>(), logits_.get(), bytes, cudaMemcpyDeviceToHost, s),
           "copying logits");
    DAY0_K(cudaStreamSynchronize(s), "computing logits");
    std::memcpy(out + done * vocab_, host_logits_.as<float>(), bytes);
  }
  return Status::ok();
}

}  // namespace day0::cuda
