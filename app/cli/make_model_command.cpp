// day0-cli make-model: a random-weight checkpoint with the exact shapes of a configuration.
#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/model_tools.h"

namespace day0::cli {
namespace {

int run_make_model(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help", "random", "mxfp4-experts"}, {"config", "out", "seed", "layers"}, &problem);
  if (!args || args->flag("help") || !args->option("config") || !args->option("out") || !args->flag("random")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli make-model: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli make-model --config CONFIG.json --random --out DIR [--seed S] [--layers N]\n"
                 "                          [--mxfp4-experts]\n"
                 "  Writes a checkpoint with random weights and the exact tensor shapes of the configuration\n"
                 "  (e.g. gpt-oss-20b), in the family's released layout, for benchmarks. --layers N keeps the\n"
                 "  first N decoder layers (the per-layer schedules cut to match). --mxfp4-experts stores\n"
                 "  the routed experts as MXFP4 (as a quantized release would) where the config lists bf16.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  RandomCheckpointOptions options;
  if (const auto seed = args->option("seed")) {
    const auto v = parse_integer(*seed);
    if (!v || *v < 0) {
      std::fprintf(stderr, "day0-cli make-model: --seed must be a non-negative integer\n");
      return 2;
    }
    options.seed = static_cast<std::uint64_t>(*v);
  }
  if (const auto layers = args->option("layers")) {
    const auto v = parse_integer(*layers);
    if (!v || *v < 1) {
      std::fprintf(stderr, "day0-cli make-model: --layers must be a positive integer\n");
      return 2;
    }
    options.layers = *v;
  }
  options.mxfp4_experts = args->flag("mxfp4-experts");
  int last_percent = -1;
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    const int percent = total ? static_cast<int>(100 * done / total) : 100;
    if (percent != last_percent) std::fprintf(stderr, "\rwriting %3d%%", last_percent = percent);
  };
  const Status s = write_random_checkpoint(*args->option("config"), *args->option("out"), options);
  std::fprintf(stderr, "\n");
  if (!s.is_ok()) {
    std::fprintf(stderr, "day0-cli make-model: %s\n", plain_message(s.message()).c_str());
    return 1;
  }
  std::printf("wrote %s\n", args->option("out")->c_str());
  return 0;
}

const Registration kRegistration{"make-model", &run_make_model, "write a random-weight checkpoint of a given shape"};

}  // namespace
}  // namespace day0::cli
