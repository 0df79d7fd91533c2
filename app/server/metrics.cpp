#include "server/metrics.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace day0::server {
namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(const std::string& name, const std::string& help, std::string* out) const {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += counts_.back();
  *out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  *out += name + "_sum " + number(sum_) + "\n";
  *out += name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : ttft_seconds_({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      tokens_per_second_({1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}) {}

void Metrics::http_response(int status) {
  std::lock_guard lock(mutex_);
  ++responses_[status];
}

void Metrics::generation_queued() {
  std::lock_guard lock(mutex_);
  ++queued_;
}

void Metrics::generation_started() {
  std::lock_guard lock(mutex_);
  --queued_;
  ++running_;
}

void Metrics::generation_finished(const std::string& finish_reason, bool started, std::int64_t prompt_tokens,
                                  std::int64_t completion_tokens, double ttft_ms, double tokens_per_second) {
  std::lock_guard lock(mutex_);
  if (started)
    --running_;
  else
    --queued_;
  ++finished_[finish_reason];
  prompt_tokens_ += static_cast<std::uint64_t>(std::max<std::int64_t>(0, prompt_tokens));
  completion_tokens_ += static_cast<std::uint64_t>(std::max<std::int64_t>(0, completion_tokens));
  if (completion_tokens > 0) {
    ttft_seconds_.observe(ttft_ms / 1000.0);
    if (tokens_per_second > 0) tokens_per_second_.observe(tokens_per_second);
  }
}

std::int64_t Metrics::in_flight() const {
  std::lock_guard lock(mutex_);
  return queued_ + running_;
}

std::uint64_t Metrics::finished_count(const std::string& finish_reason) const {
  std::lock_guard lock(mutex_);
  const auto it = finished_.find(finish_reason);
  return it == finished_.end() ? 0 : it->second;
}

std::string Metrics::render(const std::vector<std::pair<std::string, std::uint64_t>>& device_memory) const {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP day0_http_responses_total HTTP responses by status code.\n# TYPE day0_http_responses_total counter\n";
  for (const auto& [status, n] : responses_)
    out += "day0_http_responses_total{code=\"" + std::to_string(status) + "\"} " + std::to_string(n) + "\n";
  out +=
      "# HELP day0_chat_completions_total Finished chat completions by finish reason.\n"
      "# TYPE day0_chat_completions_total counter\n";
  for (const char* reason : {"stop", "length", "cancelled", "error"}) {
    const auto it = finished_.find(reason);
    out += std::string("day0_chat_completions_total{finish_reason=\"") + reason + "\"} " +
           std::to_string(it == finished_.end() ? 0 : it->second) + "\n";
  }
  out +=
      "# HELP day0_queue_length Generations waiting for their first token (queued on the engine thread or "
      "prefilling).\n# TYPE day0_queue_length gauge\nday0_queue_length " +
      std::to_string(queued_) + "\n";
  out +=
      "# HELP day0_generations_running Generations producing tokens.\n# TYPE day0_generations_running gauge\n"
      "day0_generations_running " +
      std::to_string(running_) + "\n";
  out +=
      "# HELP day0_prompt_tokens_total Prompt tokens of finished generations.\n"
      "# TYPE day0_prompt_tokens_total counter\nday0_prompt_tokens_total " +
      std::to_string(prompt_tokens_) + "\n";
  out +=
      "# HELP day0_completion_tokens_total Generated tokens.\n# TYPE day0_completion_tokens_total counter\n"
      "day0_completion_tokens_total " +
      std::to_string(completion_tokens_) + "\n";
  ttft_seconds_.render("day0_time_to_first_token_seconds", "Time from submission to the first generated token.", &out);
  tokens_per_second_.render("day0_decode_tokens_per_second", "Decode speed of each generation.", &out);
  out +=
      "# HELP day0_resident_memory_bytes Resident memory of the server process.\n"
      "# TYPE day0_resident_memory_bytes gauge\nday0_resident_memory_bytes " +
      std::to_string(resident_memory_bytes()) + "\n";
  if (!device_memory.empty()) {
    out +=
        "# HELP day0_device_memory_bytes Device memory the model holds, by category.\n"
        "# TYPE day0_device_memory_bytes gauge\n";
    for (const auto& [category, bytes] : device_memory)
      out += "day0_device_memory_bytes{category=\"" + category + "\"} " + std::to_string(bytes) + "\n";
  }
  return out;
}

std::uint64_t resident_memory_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace day0::server
