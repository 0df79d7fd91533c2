#include "hub/pull_plan.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <numeric>
#include <thread>

#include "day0/devices.h"
#include "day0/paths.h"
#include "hub/downloader.h"

namespace day0::hub {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxConfigBytes = 8u << 20;
constexpr std::size_t kMaxIndexBytes = 64u << 20;
constexpr const char* kIndex = "model.safetensors.index.json";
// Memory the process keeps besides the model (the engine's plan reserves the same).
constexpr std::uint64_t kProcessReserve = 512ull << 20;

// A temporary folder removed with its contents when it goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "day0-pull-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// The host's memory read bandwidth in bytes/s: every core summing its share of a 128 MiB buffer,
// best of three. Measured once per process (about a tenth of a second).
double host_read_bandwidth() {
  static double measured = [] {
    const std::size_t words = (128u << 20) / sizeof(std::uint64_t);
    std::vector<std::uint64_t> buffer(words, 1);
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    double best = 0;
    for (int round = 0; round < 3; ++round) {
      std::vector<std::uint64_t> sums(threads);
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          const std::size_t begin = words * t / threads, end = words * (t + 1) / threads;
          sums[t] = std::accumulate(buffer.begin() + begin, buffer.begin() + end, std::uint64_t{0});
        });
      for (auto& p : pool) p.join();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (std::accumulate(sums.begin(), sums.end(), std::uint64_t{0}) == words && s > 0)
        best = std::max(best, static_cast<double>(words * sizeof(std::uint64_t)) / s);
    }
    return best;
  }();
  return measured;
}

// GPU memory bandwidth measured on the project's GPU machine (docs/perf-notes.md); others unknown.
double gpu_read_bandwidth(const std::string& name) {
  if (name.find("H200") != std::string::npos) return 4.32e12;
  return 0;
}

// Memory as the engine's plan words it: "21.5 GiB", "414.7 MiB".
std::string gib(std::uint64_t bytes) {
  char text[32];
  if (bytes >= (1ull << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / double(1ull << 30));
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / double(1ull << 20));
  return text;
}

// "580", "12", "0.4"
std::string format_rate(double tokens_per_second) {
  char text[32];
  std::snprintf(text, sizeof text, tokens_per_second >= 10 ? "%.0f" : "%.1f", tokens_per_second);
  return text;
}

void plan_fit(PullPlan& plan, const fs::path& config_dir) {
  const ModelInfo& info = *plan.info;
  plan.bytes_per_token = decode_bytes_per_token(info);
  if (!info.supported) {
    plan.fit = Fit::no;
    plan.fit_text = "Day0 does not run this architecture";
    return;
  }
  const DeviceReport devices = discover_devices();
  const GpuInfo* best = nullptr;
  for (const auto& g : devices.gpus)
    if (best == nullptr || g.free_memory > best->free_memory) best = &g;
  std::string gpu_note;
  if (best != nullptr) {
    const auto fit = plan_gpu_fit(config_dir, best->free_memory, best->fp8);
    if (fit) {
      plan.fit = Fit::resident_gpu;
      plan.fit_text = "resident on cuda:" + std::to_string(best->index) + " (" + best->name + "): " + gib(fit->needed) +
                      " of " + gib(best->free_memory) + " free, context " + std::to_string(fit->context) + " tokens";
      const double bandwidth = gpu_read_bandwidth(best->name);
      if (bandwidth > 0 && plan.bytes_per_token > 0) {
        plan.tokens_per_second = bandwidth / static_cast<double>(plan.bytes_per_token);
        plan.speed_text = "decode at most ~" + format_rate(plan.tokens_per_second) + " tokens/s on " + best->name +
                          " (" + format_size(double(plan.bytes_per_token)) + " read per token at " +
                          format_size(bandwidth) + "/s)";
      } else {
        plan.speed_text = "decode reads " + format_size(double(plan.bytes_per_token)) +
                          " per token; the memory "
                          "bandwidth of " +
                          best->name + " is not known to Day0";
      }
      return;
    }
    gpu_note = "; not on " + best->name + ": " + fit.status().message();
  }
  const std::uint64_t available = available_memory_bytes();
  const std::uint64_t usable = available > kProcessReserve ? available - kProcessReserve : 0;
  if (plan.weight_bytes == 0 || available == 0) {
    plan.fit = Fit::unknown;
    plan.fit_text = "size or free memory unknown" + gpu_note;
    return;
  }
  if (plan.weight_bytes > usable) {
    plan.fit = Fit::no;
    plan.fit_text = "does not fit: the weights need " + gib(plan.weight_bytes) + ", " + gib(usable) +
                    " of memory is available (Day0 does not stream experts from disk yet)" + gpu_note;
    return;
  }
  plan.fit = Fit::resident_cpu;
  plan.fit_text = "resident in memory on the CPU: weights " + gib(plan.weight_bytes) + " of " + gib(usable) +
                  " available" + gpu_note;
  const double bandwidth = host_read_bandwidth();
  if (bandwidth > 0 && plan.bytes_per_token > 0) {
    plan.tokens_per_second = bandwidth / static_cast<double>(plan.bytes_per_token);
    plan.speed_text = "decode at most ~" + format_rate(plan.tokens_per_second) + " tokens/s on the CPU (" +
                      format_size(double(plan.bytes_per_token)) + " read per token at " + format_size(bandwidth) +
                      "/s measured; the CPU path computes in fp32 and stays below that)";
  }
}

}  // namespace

std::string format_count(std::uint64_t n) {
  char text[32];
  const double v = static_cast<double>(n);
  if (n >= 1'000'000'000ull)
    std::snprintf(text, sizeof text, "%.1f B", v / 1e9);
  else if (n >= 1'000'000ull)
    std::snprintf(text, sizeof text, "%.1f M", v / 1e6);
  else if (n >= 1'000ull)
    std::snprintf(text, sizeof text, "%.1f K", v / 1e3);
  else
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(n));
  return text;
}

std::uint64_t decode_bytes_per_token(const ModelInfo& info) {
  const std::uint64_t experts = info.params_per_expert * static_cast<std::uint64_t>(std::max<std::int64_t>(
                                                             0, info.experts_per_token * info.moe_layers));
  const std::uint64_t rest = info.active_params_per_token > experts ? info.active_params_per_token - experts : 0;
  double expert_width = 2;
  if (info.expert_format == "MXFP4") expert_width = 17.0 / 32.0;  // 16 bytes of E2M1 + 1 scale per 32
  if (info.expert_format.rfind("FP8", 0) == 0) expert_width = 1;
  return static_cast<std::uint64_t>(static_cast<double>(experts) * expert_width) + rest * 2;
}

fs::path default_model_dir(const RepoRef& ref) { return user_data_dir() / "models" / ref.repo; }

Result<PullPlan> plan_pull(const HubClient& client, const RepoRef& ref, const fs::path& dir,
                           const std::vector<std::string>& include, RequestStopper* stopper) {
  PullPlan plan;
  plan.ref = ref;
  plan.dir = dir;
  DAY0_ASSIGN_OR_RETURN(const RepoListing listing, client.list_files(ref));
  plan.commit = listing.commit;
  plan.pinned = {ref.repo, listing.commit.empty() ? ref.revision : listing.commit};
  plan.selection = select_files(listing.files, include);
  if (plan.selection.files.empty())
    return error(ErrorCode::not_found, ref.text() + ": none of its " + std::to_string(listing.files.size()) +
                                           " files is part of a model folder" +
                                           (include.empty() ? "" : " or matches --include"));
  const auto listed = [&](const std::string& name) {
    return std::any_of(listing.files.begin(), listing.files.end(), [&](const RemoteFile& f) { return f.path == name; });
  };
  if (!listed("config.json"))
    return error(ErrorCode::not_found,
                 ref.text() + " holds no config.json: it is not a transformers model folder Day0 can open");
  for (const auto& f : plan.selection.files)
    if (f.path.ends_with(".safetensors")) plan.weight_bytes += f.size;

  TempDir temp;
  if (temp.path.empty()) return error(ErrorCode::io_error, "cannot create a temporary folder");
  for (const auto& [name, limit] :
       {std::pair{std::string("config.json"), kMaxConfigBytes}, std::pair{std::string(kIndex), kMaxIndexBytes}}) {
    if (!listed(name)) continue;
    DAY0_ASSIGN_OR_RETURN(const std::string body, client.fetch(plan.pinned, name, limit, stopper));
    std::ofstream out(temp.path / name, std::ios::binary);
    out << body;
    if (!out) return error(ErrorCode::io_error, "cannot write " + (temp.path / name).string());
  }
  auto info = inspect_model(temp.path);
  if (info) {
    info->dir = dir;
    plan.info = std::move(*info);
    if (plan.weight_bytes == 0) plan.weight_bytes = plan.info->tensor_bytes;
    plan_fit(plan, temp.path);
  } else {
    plan.inspect_problem = info.status().message();
    plan.fit_text = "unknown: " + plan.inspect_problem;
  }

  plan.download_bytes = bytes_to_download(plan.selection.files, dir);
  if (auto free = free_disk_bytes(dir)) plan.disk_free = *free;
  if (const Status room = check_disk_room(dir, plan.download_bytes); !room) plan.disk_problem = room.message();
  return plan;
}

std::string format_pull_plan(const PullPlan& plan) {
  std::string out;
  const auto line = [&](const char* label, const std::string& value) {
    char head[24];
    std::snprintf(head, sizeof head, "%-16s", label);
    out += head + value + "\n";
  };
  line("Repository", plan.ref.text() + (plan.commit.empty() ? "" : " (commit " + plan.commit.substr(0, 12) + ")"));
  if (plan.info) {
    const ModelInfo& i = *plan.info;
    line("Architecture", i.model_type + (i.architecture.empty() ? "" : " (" + i.architecture + ")") +
                             (i.supported ? ": " + i.family + ", Day0 runs it" : ": Day0 does not run it"));
    if (!i.supported) line("", i.support_note);
    line("Parameters",
         format_count(i.total_params) + " total, " + format_count(i.active_params_per_token) + " active per token");
    if (i.routed_experts > 0)
      line("Experts", std::to_string(i.routed_experts) + " routed x " + std::to_string(i.moe_layers) +
                          " MoE layers, top-" + std::to_string(i.experts_per_token) + ", " + i.expert_format);
    if (i.has_vision) line("Vision", "yes, " + format_count(i.vision_params) + " parameters");
  } else {
    line("Architecture", "unknown: " + plan.inspect_problem);
  }
  std::string files =
      format_size(double(plan.selection.bytes())) + " in " + std::to_string(plan.selection.files.size()) + " files";
  if (plan.download_bytes != plan.selection.bytes())
    files += ", " + format_size(double(plan.download_bytes)) + " still to fetch";
  if (!plan.selection.skipped.empty())
    files += " (" + std::to_string(plan.selection.skipped.size()) + " other files left out)";
  line("Download", files);
  line("Folder", plan.dir.string());
  line("Disk", plan.disk_problem.empty() ? format_size(double(plan.disk_free)) + " free: enough" : plan.disk_problem);
  line("Fits", plan.fit_text);
  if (!plan.speed_text.empty()) line("Speed", plan.speed_text);
  out += "\nFiles:\n";
  for (const auto& f : plan.selection.files) {
    char row[64];
    std::snprintf(row, sizeof row, "  %10s  ", format_size(double(f.size)).c_str());
    out += row + f.path + "\n";
  }
  return out;
}

}  // namespace day0::hub
