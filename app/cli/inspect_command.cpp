#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "day0/model_info.h"

namespace day0::cli {

namespace {

int run_inspect(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"json", "help"}, {"model"}, &problem);
  if (!args || args->flag("help") || !args->option("model")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli inspect: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli inspect [--model] DIR [--json]\n"
                 "  Describes a Hugging Face model folder: architecture, parameter counts, tensors by\n"
                 "  role, expert format, whether Day0 supports it. Works without the weights (config.json\n"
                 "  and model.safetensors.index.json only) to plan a download.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  const auto info = inspect_model(*args->option("model"));
  if (!info) {
    std::fprintf(stderr, "day0-cli inspect: %s\n", plain_message(info.status().message()).c_str());
    return 1;
  }
  const std::string text = args->flag("json") ? model_info_json(*info) + "\n" : format_model_info(*info);
  std::fputs(text.c_str(), stdout);
  return 0;
}

const Registration kRegistration{"inspect", &run_inspect, "describe a model folder (works without the weights)"};

}  // namespace

}  // namespace day0::cli
