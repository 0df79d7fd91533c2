#pragma once
// The bookkeeping of decoding one step ahead. Once the step that picks token t at position p is
// queued, the step feeding t at p + 1 is queued behind it before the host waits for t, so the
// GPU goes on while the host takes t and comes back. A later call that is exactly that feed (one
// token, the same session, position and token) finds its step queued; any other call first lets
// it finish and then overwrites or ignores what it wrote (past the session's length).
//
// That is only safe for state a step writes at its own position (attention caches: a row past
// the length is never read). State a step updates in place (a linear-attention recurrent state)
// is changed for good by a step that is then not wanted, so sessions holding such state run
// ahead only when their program can undo the step (DeviceSession::can_discard_ahead_step()).
// No CUDA here: the executor (device_model.cpp) queues and waits.
#include <cstdint>
#include <optional>
#include <span>

namespace day0::cuda {

class RunAhead {
 public:
  // One token fed to a session at a position.
  struct Feed {
    std::uint64_t session = 0;
    std::int64_t position = -1;
    std::int32_t token = -1;
    bool is(std::uint64_t s, std::int64_t p, std::span<const std::int32_t> tokens) const {
      return token >= 0 && tokens.size() == 1 && session == s && position == p && token == tokens[0];
    }
  };

  // A step is queued and not yet taken.
  bool queued() const { return ahead_.has_value(); }
  // Before a step is queued ahead, with no token known yet: if anything fails after, the next
  // call still waits for whatever reached the stream.
  void queue(std::uint64_t session, std::int64_t position) { ahead_ = Feed{session, position, -1}; }
  // The queued step's token, once the step before it has picked it.
  void picked(std::uint64_t session, std::int64_t position, std::int32_t token, bool ahead) {
    (ahead ? ahead_ : on_device_) = Feed{session, position, token};
  }
  // Whether a call feeding `tokens` to `session` at `position` is the queued step (taken: no
  // longer queued). Any call ends the queued step's claim; the caller waits for the stream when
  // this returns false and queued() was true.
  bool take(std::uint64_t session, std::int64_t position, std::span<const std::int32_t> tokens) {
    if (!ahead_) return false;
    const Feed f = *ahead_;
    ahead_.reset();
    return f.is(session, position, tokens);
  }
  void drop() { ahead_.reset(); }
  // Whether the token of this feed is already in the device's token slot (the previous pick,
  // with no step queued after it): its step needs no copy. Ends that claim.
  bool token_on_device(std::uint64_t session, std::int64_t position, std::span<const std::int32_t> tokens) {
    const bool on = on_device_ && on_device_->is(session, position, tokens);
    on_device_.reset();
    return on;
  }

 private:
  std::optional<Feed> ahead_;      // the step queued ahead
  std::optional<Feed> on_device_;  // the pick in the token slot, no step queued after it
};

}  // namespace day0::cuda
