// day0-cli generate: continue a prompt; with --ids the last line of stdout is the generated ids.
#include <cstdio>
#include <functional>
#include <set>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/image_args.h"
#include "cli/model_args.h"
#include "cli/prefill_status.h"
#include "day0/engine.h"
#include "day0/images.h"

namespace day0::cli {
namespace {

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli generate [--model] DIR --tokens LIST [--max-new-tokens N] [--temperature T]\n"
               "                         [--top-k K] [--top-p P] [--min-p P] [--seed S] [--stop TEXT] [--ids]\n"
               "                         [--image FILE]... [--device cpu] [--context N]\n"
               "                         [--expert-cache SIZE] [--direct-io]\n"
               "  Continues the prompt. Temperature 0 (the default) is greedy. With --ids the last line of\n"
               "  stdout is the generated token ids, comma-separated. With --image (PNG or JPEG, repeatable),\n"
               "  each occurrence of the model's image token in --tokens stands for the next image.\n");
  return help ? 0 : 2;
}

int run_generate(const std::vector<std::string>& argv_in) {
  std::string problem;
  std::vector<std::string> argv = argv_in;
  const std::vector<std::string> images = take_images(argv, &problem);
  if (!problem.empty()) {
    std::fprintf(stderr, "day0-cli generate: %s\n", problem.c_str());
    return usage(false);
  }
  std::set<std::string> options{"model", "tokens", "max-new-tokens", "device", "threads", "stop", "context"};
  options.insert(sampling_option_names().begin(), sampling_option_names().end());
  options.insert(model_option_names().begin(), model_option_names().end());
  std::set<std::string> flags{"help", "ids"};
  flags.insert(model_flag_names().begin(), model_flag_names().end());
  const auto args = Args::parse(argv, flags, options, &problem);
  if (!args) {
    std::fprintf(stderr, "day0-cli generate: %s\n", problem.c_str());
    return usage(false);
  }
  if (args->flag("help")) return usage(true);
  if (!args->option("model") || !args->option("tokens")) return usage(false);
  const auto tokens = parse_token_list(*args->option("tokens"), &problem);
  if (!tokens) {
    std::fprintf(stderr, "day0-cli generate: %s\n", problem.c_str());
    return 2;
  }
  Request request;
  request.context = *tokens;
  if (const auto stop = args->option("stop")) request.stop.stop_strings.push_back(*stop);
  struct NumberOption {
    const char* name;
    double min, max;
    std::function<void(double)> set;
  };
  if (!read_sampling_options(*args, "generate", &request.sampling)) return 2;
  const NumberOption numbers[] = {
      {"max-new-tokens", 0, 1 << 24, [&](double v) { request.stop.max_new_tokens = static_cast<std::int64_t>(v); }},
  };
  for (const auto& n : numbers) {
    const auto text = args->option(n.name);
    if (!text) continue;
    const auto v = parse_number(*text);
    if (!v || *v < n.min || *v > n.max) {
      std::fprintf(stderr, "day0-cli generate: --%s must be a number between %g and %g\n", n.name, n.min, n.max);
      return 2;
    }
    n.set(*v);
  }
  if (!images.empty()) {
    if (args->option("stop")) {
      std::fprintf(stderr, "day0-cli generate: --stop is not available with --image\n");
      return 2;
    }
    ImagePromptOptions options;
    if (const auto d = args->option("device")) options.device = *d;
    if (const auto t = args->option("threads")) {
      const auto n = parse_integer(*t);
      if (!n || *n < 0 || *n > 4096) {
        std::fprintf(stderr, "day0-cli generate: --threads must be between 0 and 4096\n");
        return 2;
      }
      options.threads = static_cast<int>(*n);
    }
    const std::vector<std::filesystem::path> paths(images.begin(), images.end());
    auto out = image_prompt_generate(*args->option("model"), *tokens, paths, request.sampling,
                                     request.stop.max_new_tokens, options);
    if (!out) {
      std::fprintf(stderr, "day0-cli generate: %s\n", plain_message(out.status().message()).c_str());
      return 1;
    }
    std::fprintf(stderr, "%zu prompt tokens with %zu image(s), %zu generated, stop: %s\n", out->expanded.size(),
                 images.size(), out->generated.size(), out->stopped_at_eos ? "eos" : "max_tokens");
    std::string ids;
    for (std::size_t i = 0; i < out->generated.size(); ++i) ids += (i ? "," : "") + std::to_string(out->generated[i]);
    std::printf("%s\n", ids.c_str());
    return 0;
  }
  int exit_code = 0;
  auto opened = open_model(*args, "generate", &exit_code);
  if (!opened) return exit_code;
  auto& engine = opened->engine;
  auto session = engine->new_session(opened->model);
  std::vector<std::int32_t> generated;
  Event last;
  PrefillStatus status;
  auto handle = engine->submit(session, request, [&](const Event& e) {
    if (e.kind == Event::Kind::progress) {
      status.update(e.prefill_done, e.prefill_total);
    } else if (e.kind == Event::Kind::token) {
      status.clear();
      generated.push_back(e.token);
    } else {
      status.clear();
      last = e;
    }
  });
  handle->wait();
  if (last.kind == Event::Kind::error) {
    std::fprintf(stderr, "day0-cli generate: %s\n", plain_message(last.status.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "%lld tokens, stop: %s, prefill %.1f tok/s, decode %.1f tok/s, first token %.1f ms\n",
               static_cast<long long>(last.stats.generated_tokens), done_reason_name(last.reason),
               last.stats.prefill_tokens_per_second, last.stats.decode_tokens_per_second,
               last.stats.time_to_first_token_ms);
  std::string ids;
  for (std::size_t i = 0; i < generated.size(); ++i) ids += (i ? "," : "") + std::to_string(generated[i]);
  std::printf("%s\n", ids.c_str());
  return 0;
}

const Registration kRegistration{"generate", &run_generate, "continue a prompt (greedy or sampled)"};

}  // namespace
}  // namespace day0::cli
