// day0-cli logits: float32 logits for every prompt position from one prefill, as .npy.
#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "cli/npy.h"
#include "day0/engine.h"

namespace day0::cli {
namespace {

int run_logits(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help"}, {"model", "tokens", "out", "device", "threads"}, &problem);
  if (!args || args->flag("help") || !args->option("model") || !args->option("tokens") || !args->option("out")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli logits: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli logits --model DIR --tokens 1,2,3 --out FILE.npy [--device cpu] [--threads N]\n"
                 "  Writes float32 logits for every prompt position, shape [n_tokens, vocab], from one prefill.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  const auto tokens = parse_token_list(*args->option("tokens"), &problem);
  if (!tokens) {
    std::fprintf(stderr, "day0-cli logits: %s\n", problem.c_str());
    return 2;
  }
  int exit_code = 0;
  auto opened = open_model(*args, "logits", &exit_code);
  if (!opened) return exit_code;
  auto session = opened->engine->new_session(opened->model);
  auto logits = opened->engine->append_logits(session, *tokens);
  if (!logits) {
    std::fprintf(stderr, "day0-cli logits: %s\n", logits.status().message().c_str());
    return 1;
  }
  const std::int64_t vocab = describe(*opened->model).vocab_size;
  if (!write_npy(*args->option("out"), logits->data(), {static_cast<std::int64_t>(tokens->size()), vocab}, &problem)) {
    std::fprintf(stderr, "day0-cli logits: %s\n", problem.c_str());
    return 1;
  }
  return 0;
}

const Registration kRegistration{"logits", &run_logits, "write the logits of every prompt position (.npy)"};

}  // namespace
}  // namespace day0::cli
