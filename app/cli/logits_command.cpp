// day0-cli logits: float32 logits for every prompt position from one prefill, as .npy.
#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/image_args.h"
#include "cli/model_args.h"
#include "cli/npy.h"
#include "day0/engine.h"
#include "day0/images.h"

namespace day0::cli {
namespace {

int run_logits(const std::vector<std::string>& argv_in) {
  std::string problem;
  std::vector<std::string> argv = argv_in;
  const std::vector<std::string> images = take_images(argv, &problem);
  const auto args = problem.empty()
                        ? Args::parse(argv, {"help"}, {"model", "tokens", "out", "device", "threads"}, &problem)
                        : std::nullopt;
  if (!args || args->flag("help") || !args->option("model") || !args->option("tokens") || !args->option("out")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli logits: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli logits [--model] DIR --tokens 1,2,3 --out FILE.npy [--image FILE]... [--device cpu]\n"
                 "                       [--threads N]\n"
                 "  Writes float32 logits for every prompt position, shape [n_tokens, vocab], from one prefill.\n"
                 "  With --image (PNG or JPEG, repeatable), each occurrence of the model's image token in --tokens\n"
                 "  stands for the next image and expands to its tokens; n_tokens counts the expanded prompt.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  const auto tokens = parse_token_list(*args->option("tokens"), &problem);
  if (!tokens) {
    std::fprintf(stderr, "day0-cli logits: %s\n", problem.c_str());
    return 2;
  }
  if (!images.empty()) {
    ImagePromptOptions options;
    if (const auto d = args->option("device")) options.device = *d;
    if (const auto t = args->option("threads")) {
      const auto n = parse_integer(*t);
      if (!n || *n < 0 || *n > 4096) {
        std::fprintf(stderr, "day0-cli logits: --threads must be between 0 and 4096\n");
        return 2;
      }
      options.threads = static_cast<int>(*n);
    }
    const std::vector<std::filesystem::path> paths(images.begin(), images.end());
    auto out = image_prompt_logits(*args->option("model"), *tokens, paths, options);
    if (!out) {
      std::fprintf(stderr, "day0-cli logits: %s\n", plain_message(out.status().message()).c_str());
      return 1;
    }
    if (!write_npy(*args->option("out"), out->logits.data(),
                   {static_cast<std::int64_t>(out->expanded.size()), out->vocab}, &problem)) {
      std::fprintf(stderr, "day0-cli logits: %s\n", problem.c_str());
      return 1;
    }
    return 0;
  }
  int exit_code = 0;
  auto opened = open_model(*args, "logits", &exit_code);
  if (!opened) return exit_code;
  auto session = opened->engine->new_session(opened->model);
  auto logits = opened->engine->append_logits(session, *tokens);
  if (!logits) {
    std::fprintf(stderr, "day0-cli logits: %s\n", plain_message(logits.status().message()).c_str());
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
