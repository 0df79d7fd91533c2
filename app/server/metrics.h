#pragma once
// What the server counts, rendered in the Prometheus text format (version 0.0.4) for /metrics.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace day0::server {

// A cumulative histogram: counts[i] observations <= bounds[i], plus +Inf, sum and count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  void render(const std::string& name, const std::string& help, std::string* out) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  void http_response(int status);
  // A generation waits from submit() until its first event (queue and prefill), then runs.
  void generation_queued();
  void generation_started();
  // `finish_reason` is stop, length, cancelled or error. `started` says whether
  // generation_started() was called for it.
  void generation_finished(const std::string& finish_reason, bool started, std::int64_t prompt_tokens,
                           std::int64_t completion_tokens, double ttft_ms, double tokens_per_second);

  // Generations queued or running (for the server's queue limit).
  std::int64_t in_flight() const;
  std::uint64_t finished_count(const std::string& finish_reason) const;

  // `device_memory` is the model's device memory by category (empty on the CPU).
  std::string render(const std::vector<std::pair<std::string, std::uint64_t>>& device_memory) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, std::uint64_t> responses_;
  std::map<std::string, std::uint64_t> finished_;
  std::int64_t queued_ = 0;
  std::int64_t running_ = 0;
  std::uint64_t prompt_tokens_ = 0;
  std::uint64_t completion_tokens_ = 0;
  Histogram ttft_seconds_;
  Histogram tokens_per_second_;
};

// The process's resident set size in bytes (from /proc/self/statm), 0 when unreadable.
std::uint64_t resident_memory_bytes();

}  // namespace day0::server
