// day0-cli plan: what loading a model on this machine's CPU will do (the memory plan the engine
// makes and follows: mapped or experts streamed, the expert cache, the context) and how fast it
// will run, predicted from the memory, disk and kernel rates measured now.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/model_tools.h"

namespace day0::cli {
namespace {

// "12.82 GiB", "96.0 MiB", "40.0 KiB".
std::string size_text(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  char text[32];
  if (b >= 1024.0 * 1024 * 1024)
    std::snprintf(text, sizeof text, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024)
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(text, sizeof text, "%.1f KiB", b / 1024.0);
  return text;
}

int run_plan(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args =
      Args::parse(argv, {"help", "json", "direct-io", "no-measure"},
                  {"model", "ram", "vram", "context", "expert-cache", "threads", "prompt-tokens"}, &problem);
  if (!args || args->flag("help") || !args->option("model")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli plan: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli plan [--model] DIR [--ram SIZE] [--vram SIZE] [--context N] [--expert-cache SIZE]\n"
                 "                     [--direct-io] [--threads N] [--prompt-tokens 512] [--no-measure] [--json]\n"
                 "  What loading the model on this machine's CPU does, as the engine plans it: the weights\n"
                 "  mapped, or (a model larger than memory) the routed experts read from disk through a cache\n"
                 "  of the memory left; the context; the bytes needed against those available (--ram SIZE:\n"
                 "  plan for that much memory instead, e.g. 64G). Then it measures this machine (memory read\n"
                 "  bandwidth, the CPU kernels, reading experts from disk with O_DIRECT: a few seconds) and\n"
                 "  predicts decode and prefill tokens/s (--no-measure skips that). The predictions leave out\n"
                 "  attention over the context: they hold for short contexts. With a GPU (or --vram SIZE: a GPU\n"
                 "  with that much memory), also what the GPU program would hold there and whether the model\n"
                 "  fits it (--device cuda loads it there when it does, on the CPU as planned otherwise).\n");
    return args && args->flag("help") ? 0 : 2;
  }
  PlanOptions options;
  options.direct = args->flag("direct-io");
  options.measure = !args->flag("no-measure");
  // --ram and --expert-cache: sizes such as 64G.
  const auto size_option = [&](const char* name, const char* example, std::uint64_t* out) {
    const auto text = args->option(name);
    if (!text) return true;
    const auto bytes = parse_byte_size(*text);
    if (!bytes) std::fprintf(stderr, "day0-cli plan: --%s must be a size such as %s\n", name, example);
    if (bytes) *out = *bytes;
    return bytes.has_value();
  };
  if (!size_option("ram", "64G", &options.memory_bytes) || !size_option("vram", "80G", &options.gpu_memory_bytes) ||
      !size_option("expert-cache", "24G or 512M", &options.expert_cache_bytes))
    return 2;
  const auto context = integer_option(*args, "plan", "context", 1, std::int64_t{1} << 40, 0);
  const auto threads = integer_option(*args, "plan", "threads", 0, 4096, 0);
  const auto prompt = integer_option(*args, "plan", "prompt-tokens", 1, 1 << 20, 512);
  if (!context || !threads || !prompt) return 2;
  options.context = *context;
  options.threads = static_cast<int>(*threads);
  options.prompt_tokens = *prompt;

  const auto plan = plan_model(*args->option("model"), options);
  if (!plan) {
    std::fprintf(stderr, "day0-cli plan: %s\n", plain_message(plan.status().message()).c_str());
    return 1;
  }
  const ModelPlan& p = *plan;
  nlohmann::json j = {{"model", *args->option("model")},
                      {"model_type", p.model_type},
                      {"weight_bytes", p.weight_bytes},
                      {"expert_bytes", p.expert_bytes},
                      {"experts", p.experts},
                      {"experts_per_token", p.experts_per_token},
                      {"decode_bytes_per_token", p.decode_bytes_per_token},
                      {"context", p.context},
                      {"planned_bytes", p.planned_bytes},
                      {"available_bytes", p.available_bytes},
                      {"streamed", p.streamed},
                      {"expert_cache_bytes", p.cache_bytes}};
  if (p.gpu.planned) {
    j["gpu"] = {{"device", p.gpu.device}, {"memory_bytes", p.gpu.memory_bytes}, {"fits", p.gpu.fits}};
    if (p.gpu.fits) {
      j["gpu"]["weight_bytes"] = p.gpu.weights;
      j["gpu"]["workspace_bytes"] = p.gpu.workspace;
      j["gpu"]["state_bytes"] = p.gpu.state;
      j["gpu"]["context"] = p.gpu.context;
    } else {
      j["gpu"]["reason"] = p.gpu.reason;
    }
  }
  if (p.measured) {
    j["measured"] = {{"threads", p.threads},
                     {"ram_gbps", p.ram_gbps},
                     {"disk_gbps", p.disk_gbps},
                     {"disk_direct", p.disk_direct},
                     {"dense_gemv_gbps", p.dense_gemv_gbps},
                     {"dense_gflops", p.dense_gflops},
                     {"expert_format", p.expert_format},
                     {"expert_gemv_gbps", p.expert_gemv_gbps},
                     {"expert_gflops", p.expert_gflops},
                     {"decode_step_s", p.decode_step_s}};
    j["predicted"] = {{"hit_rate", p.hit_rate},
                      {"decode_tokens_per_s", p.decode_tokens_per_s},
                      {"prefill_tokens_per_s", p.prefill_tokens_per_s},
                      {"prompt_tokens", *prompt}};
  }
  if (args->flag("json")) {
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("model %s (%s): %s of weights", args->option("model")->c_str(), p.model_type.c_str(),
              size_text(p.weight_bytes).c_str());
  if (p.expert_bytes > 0)
    std::printf(", %s of them routed experts (%lld, %lld of %lld per layer for each token)",
                size_text(p.expert_bytes).c_str(), static_cast<long long>(p.experts),
                static_cast<long long>(p.experts_per_token), static_cast<long long>(p.routed_per_layer));
  std::printf("\n");
  if (p.streamed) {
    std::printf(
        "plan: experts read from disk as tokens need them, through a cache of %s (%.0f%% of them);\n"
        "      the other weights mapped\n",
        size_text(p.cache_bytes).c_str(),
        100.0 * static_cast<double>(p.cache_bytes) / static_cast<double>(p.expert_bytes));
  } else {
    std::printf("plan: every weight mapped, held in memory\n");
  }
  std::printf("      context %lld tokens; %s needed of %s available\n", static_cast<long long>(p.context),
              size_text(p.planned_bytes).c_str(), size_text(p.available_bytes).c_str());
  if (p.gpu.planned && p.gpu.fits) {
    std::printf("GPU, %s: fits; the weights %s, workspaces %s, caches for %lld tokens %s\n", p.gpu.device.c_str(),
                size_text(p.gpu.weights).c_str(), size_text(p.gpu.workspace).c_str(),
                static_cast<long long>(p.gpu.context), size_text(p.gpu.state).c_str());
  } else if (p.gpu.planned) {
    std::printf("GPU, %s: %s; --device cuda runs it on the CPU as planned above\n", p.gpu.device.c_str(),
                plain_message(p.gpu.reason).c_str());
  }
  if (p.measured) {
    std::printf(
        "measured (%d threads): memory %.1f GB/s; experts from disk %.2f GB/s (%s);\n"
        "  the kernels on this model's weights, one token: dense %.1f GB/s, experts (%s%s) %.1f GB/s;\n"
        "  a prefill chunk: dense %.0f GFLOP/s, experts %.0f GFLOP/s\n",
        p.threads, p.ram_gbps, p.disk_gbps, p.disk_direct ? "O_DIRECT" : "page cache", p.dense_gemv_gbps,
        p.expert_format.c_str(), p.streamed ? ", in the cache's memory" : ", mapped", p.expert_gemv_gbps,
        p.dense_gflops, p.expert_gflops);
    if (p.decode_step_s > 0)
      std::printf("  a decode step of this model computes for %.1f ms (timed, reads left out)\n",
                  p.decode_step_s * 1e3);
    std::printf("predicted: decode %.2f tok/s", p.decode_tokens_per_s);
    if (p.streamed) std::printf(" (expert hit rate %.2f)", p.hit_rate);
    std::printf(", prefill %.1f tok/s (%lld-token prompt)\n", p.prefill_tokens_per_s, static_cast<long long>(*prompt));
  }
  return 0;
}

const Registration kRegistration{"plan", &run_plan,
                                 "what loading a model does on this machine, and how fast it will run"};

}  // namespace
}  // namespace day0::cli
