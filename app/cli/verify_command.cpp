// day0-cli verify: compares every traced layer of a model with a reference dump.
#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/verify.h"

namespace day0::cli {
namespace {

int run_verify(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help"}, {"model", "reference", "threshold", "threads", "device"}, &problem);
  if (!args || args->flag("help") || !args->option("model") || !args->option("reference")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli verify: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli verify [--model] DIR --reference DUMP.safetensors [--threshold 1e-3] [--device cpu]\n"
                 "  Runs the dump's input_ids through the model and prints, per traced tensor, the worst\n"
                 "  relative L2 error, the largest absolute difference and (router choices, greedy ids) the\n"
                 "  agreement. Exits 1 when anything is above the threshold. Make a dump of any checkpoint\n"
                 "  with tools/reference/make_gpt_oss_fixtures.py --model DIR --tokens ... --out DUMP.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  if (args->option("device").value_or("cpu") != "cpu") {
    std::fprintf(stderr, "day0-cli verify: only --device cpu is available in this build\n");
    return 2;
  }
  VerifyOptions options;
  if (const auto t = args->option("threshold")) {
    const auto v = parse_number(*t);
    if (!v || *v <= 0) {
      std::fprintf(stderr, "day0-cli verify: --threshold must be a positive number\n");
      return 2;
    }
    options.fail_above = *v;
  }
  if (const auto t = args->option("threads")) {
    const auto v = parse_integer(*t);
    if (!v || *v < 0 || *v > 4096) {
      std::fprintf(stderr, "day0-cli verify: --threads must be between 0 and 4096\n");
      return 2;
    }
    options.threads = static_cast<int>(*v);
  }
  const auto report = verify_model(*args->option("model"), *args->option("reference"), options);
  if (!report) {
    std::fprintf(stderr, "day0-cli verify: %s\n", plain_message(report.status().message()).c_str());
    return 1;
  }
  std::fputs(format_verify_report(*report).c_str(), stdout);
  return report->passed ? 0 : 1;
}

const Registration kRegistration{"verify", &run_verify, "compare a model layer by layer with a reference dump"};

}  // namespace
}  // namespace day0::cli
