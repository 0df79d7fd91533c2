// day0-cli bench: prefill and decode speed of a model, one JSON line plus a readable table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/devices.h"
#include "day0/engine.h"

namespace day0::cli {
namespace {

// kB values of /proc/self/status fields (VmRSS, VmHWM), in bytes.
std::uint64_t proc_status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(line.find(':') + 1)) * 1024;
  }
  return 0;
}

int run_bench(const std::vector<std::string>& argv) {
  std::string problem;
  std::set<std::string> options{"model",  "prompt-tokens", "gen-tokens", "threads",
                                "device", "hbm-gbps",      "warmup",     "follow-up-tokens"};
  options.insert(sampling_option_names().begin(), sampling_option_names().end());
  options.insert(model_option_names().begin(), model_option_names().end());
  std::set<std::string> flags{"help"};
  flags.insert(model_flag_names().begin(), model_flag_names().end());
  const auto args = Args::parse(argv, flags, options, &problem);
  if (!args || args->flag("help") || !args->option("model")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli bench: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli bench [--model] DIR [--prompt-tokens 512] [--gen-tokens 64] [--threads N]\n"
                 "                      [--device cpu|cuda] [--hbm-gbps 4320] [--warmup 1]\n"
                 "                      [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed S]\n"
                 "                      [--repetition-penalty R] [--presence-penalty P] [--follow-up-tokens N]\n"
                 "                      [--expert-cache SIZE] [--direct-io]\n"
                 "  Prefills a random prompt and decodes it (greedily unless --temperature is given, with\n"
                 "  the sampling options as the app and generate take them); prints time to first token, prefill and\n"
                 "  decode tokens/s, inter-token latency p50/p99 and memory (on a GPU: its split and the\n"
                 "  decode roofline, the bytes one step reads over --hbm-gbps; on the CPU: the weight bytes\n"
                 "  one step reads per second against the memory read bandwidth measured after the run, with\n"
                 "  as many threads), as a table and one JSON line.\n"
                 "  --warmup runs first, unmeasured, that many requests of the same shape (2 new tokens) in\n"
                 "  their own sessions, so one-time start-up (GPU code loading, GEMM plans) is not timed.\n"
                 "  --follow-up-tokens N then sends a second turn in the same session (the conversation so\n"
                 "  far plus N new tokens) and reports its time to first token.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  const auto integer = [&](const char* name, std::int64_t fallback, std::int64_t lo,
                           std::int64_t hi) -> std::optional<std::int64_t> {
    const auto text = args->option(name);
    if (!text) return fallback;
    const auto v = parse_integer(*text);
    if (!v || *v < lo || *v > hi) {
      std::fprintf(stderr, "day0-cli bench: --%s must be between %lld and %lld\n", name, static_cast<long long>(lo),
                   static_cast<long long>(hi));
      return std::nullopt;
    }
    return v;
  };
  const auto prompt_tokens = integer("prompt-tokens", 512, 1, 1 << 20);
  const auto gen_tokens = integer("gen-tokens", 64, 1, 1 << 20);
  const auto threads = integer("threads", 0, 0, 4096);
  const auto hbm_gbps = integer("hbm-gbps", 4320, 1, 1 << 20);
  const auto warmup = integer("warmup", 1, 0, 100);
  const auto follow_up = integer("follow-up-tokens", 0, 0, 1 << 16);
  if (!prompt_tokens || !gen_tokens || !threads || !hbm_gbps || !warmup || !follow_up) return 2;
  Request request;
  if (!read_sampling_options(*args, "bench", &request.sampling)) return 2;

  const std::string device = args->option("device").value_or("cpu");
  const auto load_start = std::chrono::steady_clock::now();
  int exit_code = 0;
  auto opened = open_model(*args, "bench", &exit_code);
  if (!opened) return exit_code;
  auto& engine = opened->engine;
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const ModelSummary summary = describe(*opened->model);
  std::uint64_t x = 88172645463325252ull;
  for (std::int64_t i = 0; i < *prompt_tokens; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    request.context.push_back(static_cast<std::int32_t>(x % static_cast<std::uint64_t>(summary.vocab_size)));
  }
  request.stop.max_new_tokens = *gen_tokens;
  request.stop.stop_at_eos = false;
  for (std::int64_t i = 0; i < *warmup; ++i) {
    Request warm = request;
    warm.stop.max_new_tokens = 2;
    engine->submit(engine->new_session(opened->model), warm, [](const Event&) {})->wait();
  }
  std::vector<double> stamps;
  std::vector<std::int32_t> generated;
  Event last;
  const auto session = engine->new_session(opened->model);
  // Streamed experts: what the prompt and then the decoding read (snapshots before, at the first
  // token, and after).
  const ExpertStreaming experts_before = describe(*opened->model).experts;
  ExpertStreaming experts_at_first = experts_before;
  auto handle = engine->submit(session, request, [&](const Event& e) {
    if (e.kind == Event::Kind::token) {
      if (stamps.empty()) experts_at_first = describe(*opened->model).experts;
      stamps.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count());
      generated.push_back(e.token);
    } else {
      last = e;
    }
  });
  handle->wait();
  if (last.kind == Event::Kind::error) {
    std::fprintf(stderr, "day0-cli bench: %s\n", plain_message(last.status.message()).c_str());
    return 1;
  }
  // A follow-up turn: the conversation so far and N new tokens, in the same session.
  Event follow;
  if (*follow_up > 0) {
    Request next = request;
    next.context.insert(next.context.end(), generated.begin(), generated.end());
    for (std::int64_t i = 0; i < *follow_up; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      next.context.push_back(static_cast<std::int32_t>(x % static_cast<std::uint64_t>(summary.vocab_size)));
    }
    next.stop.max_new_tokens = 2;
    engine
        ->submit(session, next,
                 [&](const Event& e) {
                   if (e.kind != Event::Kind::token) follow = e;
                 })
        ->wait();
    if (follow.kind == Event::Kind::error) {
      std::fprintf(stderr, "day0-cli bench: the follow-up turn: %s\n", follow.status.message().c_str());
      return 1;
    }
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < stamps.size(); ++i) gaps.push_back(stamps[i] - stamps[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  const auto pct = [&](double p) {
    return gaps.empty() ? 0.0 : gaps[std::min(gaps.size() - 1, static_cast<std::size_t>(p * gaps.size()))];
  };
  const GenerationStats& s = last.stats;
  const ModelSummary after = describe(*opened->model);
  // Roofline: a decode step must read decode_bytes_per_token from memory at least once. On the
  // CPU that memory's read bandwidth is measured here, with the same threads.
  const bool on_cpu = after.device == "cpu";
  const double cpu_gbps = on_cpu ? measure_cpu_read_gbps(static_cast<int>(*threads)) : 0.0;
  const double roofline_gbps = on_cpu ? cpu_gbps : static_cast<double>(*hbm_gbps);
  const double roofline_tokens_per_s =
      after.decode_bytes_per_token > 0 ? roofline_gbps * 1e9 / static_cast<double>(after.decode_bytes_per_token) : 0.0;
  const double weight_gbps = static_cast<double>(after.decode_bytes_per_token) * s.decode_tokens_per_second / 1e9;
  nlohmann::json memory = nlohmann::json::object();
  for (const auto& [name, bytes] : after.device_memory) memory[name] = bytes;
  nlohmann::json j = {
      {"model", *args->option("model")},
      {"model_type", summary.model_type},
      {"device", device},
      {"ran_on", after.device},
      {"threads", *threads},
      {"prompt_tokens", *prompt_tokens},
      {"warmup_requests", *warmup},
      {"sampling",
       {{"temperature", request.sampling.temperature},
        {"top_k", request.sampling.top_k},
        {"top_p", request.sampling.top_p},
        {"min_p", request.sampling.min_p},
        {"repetition_penalty", request.sampling.repetition_penalty},
        {"presence_penalty", request.sampling.presence_penalty},
        {"seed", request.sampling.seed}}},
      {"generated_tokens", s.generated_tokens},
      {"load_s", load_s},
      {"ttft_ms", s.time_to_first_token_ms},
      {"prefill_tokens_per_s", s.prefill_tokens_per_second},
      {"decode_tokens_per_s", s.decode_tokens_per_second},
      {"itl_p50_ms", pct(0.5)},
      {"itl_p99_ms", pct(0.99)},
      {"rss_bytes", proc_status_bytes("VmRSS")},
      {"peak_rss_bytes", proc_status_bytes("VmHWM")},
      {"device_memory_bytes", memory},
      {"decode_bytes_per_token", after.decode_bytes_per_token},
      {"hbm_gbps", *hbm_gbps},
      {"roofline_tokens_per_s", roofline_tokens_per_s},
      {"roofline_fraction", roofline_tokens_per_s > 0 ? s.decode_tokens_per_second / roofline_tokens_per_s : 0.0}};
  const auto experts_delta = [](const ExpertStreaming& a, const ExpertStreaming& b) {
    const double lookups = static_cast<double>(b.lookups - a.lookups);
    const double seconds = b.read_seconds - a.read_seconds;
    return nlohmann::json{{"lookups", b.lookups - a.lookups},
                          {"hits", b.hits - a.hits},
                          {"misses", b.misses - a.misses},
                          {"hit_rate", lookups > 0 ? static_cast<double>(b.hits - a.hits) / lookups : 0.0},
                          {"bytes_read", b.bytes_read - a.bytes_read},
                          {"read_s", seconds},
                          {"read_gbps", seconds > 0 ? static_cast<double>(b.bytes_read - a.bytes_read) / seconds / 1e9 : 0.0}};
  };
  if (after.experts.streamed) {
    j["experts"] = {{"streamed", true},
                    {"direct", after.experts.direct},
                    {"cache_bytes", after.experts.cache_bytes},
                    {"expert_bytes", after.experts.expert_bytes},
                    {"prefill", experts_delta(experts_before, experts_at_first)},
                    {"decode", experts_delta(experts_at_first, after.experts)}};
  }
  if (on_cpu) {
    j["cpu_kernels"] = cpu_kernel_description();
    j["cpu_read_gbps"] = cpu_gbps;
    j["weight_gbps"] = weight_gbps;
  }
  if (*follow_up > 0) {
    j["follow_up_tokens"] = *follow_up;
    j["follow_up_prefilled_tokens"] = follow.stats.prefilled_tokens;
    j["follow_up_ttft_ms"] = follow.stats.time_to_first_token_ms;
  }
  std::printf("model %s (%s) on %s\n", args->option("model")->c_str(), summary.model_type.c_str(),
              after.device.c_str());
  std::printf("  prompt %lld tokens, generated %lld, %s\n", static_cast<long long>(*prompt_tokens),
              static_cast<long long>(s.generated_tokens), request.sampling.temperature > 0 ? "sampled" : "greedy");
  std::printf("  load %.2f s, time to first token %.1f ms\n", load_s, s.time_to_first_token_ms);
  std::printf("  prefill %.1f tok/s, decode %.2f tok/s, inter-token p50 %.1f ms p99 %.1f ms\n",
              s.prefill_tokens_per_second, s.decode_tokens_per_second, pct(0.5), pct(0.99));
  if (*follow_up > 0)
    std::printf("  follow-up turn: %lld new tokens (%lld fed), time to first token %.2f ms\n",
                static_cast<long long>(*follow_up), static_cast<long long>(follow.stats.prefilled_tokens),
                follow.stats.time_to_first_token_ms);
  if (after.experts.streamed) {
    std::printf("  experts streamed%s: cache %.2f GiB of %.2f GiB (%.0f%%)\n", after.experts.direct ? " (O_DIRECT)" : "",
                after.experts.cache_bytes / 1073741824.0, after.experts.expert_bytes / 1073741824.0,
                100.0 * static_cast<double>(after.experts.cache_bytes) / static_cast<double>(after.experts.expert_bytes));
    for (const char* phase : {"prefill", "decode"}) {
      const auto& d = j["experts"][phase];
      std::printf("    %-7s hit rate %.3f (%llu of %llu), read %.2f GB in %.2f s (%.2f GB/s)\n", phase,
                  d["hit_rate"].get<double>(), static_cast<unsigned long long>(d["hits"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(d["lookups"].get<std::uint64_t>()),
                  d["bytes_read"].get<std::uint64_t>() / 1e9, d["read_s"].get<double>(), d["read_gbps"].get<double>());
    }
  }
  std::printf("  resident %.2f GiB (peak %.2f GiB; mapped weights count when touched)\n",
              proc_status_bytes("VmRSS") / 1073741824.0, proc_status_bytes("VmHWM") / 1073741824.0);
  if (!after.device_memory.empty()) {
    std::printf("  GPU memory:");
    for (const auto& [name, bytes] : after.device_memory)
      std::printf(" %s %.2f GiB", name.c_str(), bytes / 1073741824.0);
    std::printf("\n  decode reads %.2f GB per token: roofline %.0f tok/s at %lld GB/s, measured %.1f%% of it\n",
                after.decode_bytes_per_token / 1e9, roofline_tokens_per_s, static_cast<long long>(*hbm_gbps),
                roofline_tokens_per_s > 0 ? 100.0 * s.decode_tokens_per_second / roofline_tokens_per_s : 0.0);
  }
  if (on_cpu && after.decode_bytes_per_token > 0)
    std::printf("  CPU kernels %s; decode reads %.2f GB of weights per token: %.1f GB/s, %.0f%% of the %.1f GB/s\n"
                "  this CPU reads (roofline %.2f tok/s)\n",
                cpu_kernel_description().c_str(), after.decode_bytes_per_token / 1e9, weight_gbps,
                cpu_gbps > 0 ? 100.0 * weight_gbps / cpu_gbps : 0.0, cpu_gbps, roofline_tokens_per_s);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

const Registration kRegistration{"bench", &run_bench, "measure prefill and decode speed"};

}  // namespace
}  // namespace day0::cli
