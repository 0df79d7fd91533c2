// day0-cli make-demo-model: copies one of the shipped demo models (tiny models trained on
// Python's docstrings: a gpt-oss with MXFP4 experts, or a glm5_next) to a folder, so there is a
// model to open on a fresh machine.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/cli_args.h"
#include "cli/commands.h"

namespace day0::cli {
namespace {

namespace fs = std::filesystem;

// The shipped demo `folder`: under share/day0 beside an install (checked first, so an installed
// copy never reads a source tree that happens to exist), else next to the sources in a build tree.
std::optional<fs::path> find_demo_model(const std::string& folder) {
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share/day0" / folder);
  candidates.push_back(fs::path(DAY0_RESOURCES_DIR) / folder);
  for (const auto& c : candidates)
    if (fs::exists(c / "day0-demo.json", ec)) return c;
  return std::nullopt;
}

int run_make_demo_model(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse_with_words(argv, {"help"}, {"family"}, &problem);
  const bool help = args && args->flag("help");
  if (!args || help || args->words().size() != 1) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli make-demo-model: %s\n", problem.c_str());
    std::fprintf(help ? stdout : stderr,
                 "usage: day0-cli make-demo-model DIR [--family gpt-oss|glm5_next]\n"
                 "  Copies a shipped demo model to DIR: a tiny model trained on the docstrings of Python's\n"
                 "  standard library, with its tokenizer.json and chat template. It writes English about\n"
                 "  Python (often wrong: it is not an assistant). gpt-oss (the default) has MXFP4 experts;\n"
                 "  glm5_next is the GLM-5.3-Flash architecture (DSA, KDA, mHC, MoE).\n");
    return help ? 0 : 2;
  }
  const std::string family = args->option("family").value_or("gpt-oss");
  if (family != "gpt-oss" && family != "glm5_next") {
    std::fprintf(stderr, "day0-cli make-demo-model: --family is gpt-oss or glm5_next, not \"%s\"\n", family.c_str());
    return 2;
  }
  const std::string folder = family == "gpt-oss" ? "demo-model" : "demo-glm";
  const auto source = find_demo_model(folder);
  if (!source) {
    std::fprintf(stderr,
                 "day0-cli make-demo-model: the shipped demo model was not found (looked in "
                 "<install prefix>/share/day0/%s and %s/%s)\n",
                 folder.c_str(), DAY0_RESOURCES_DIR, folder.c_str());
    return 1;
  }
  const fs::path out = args->words()[0];
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) {
    std::fprintf(stderr, "day0-cli make-demo-model: cannot create %s: %s\n", out.c_str(), ec.message().c_str());
    return 1;
  }
  for (const auto& entry : fs::directory_iterator(*source, ec)) {
    fs::copy_file(entry.path(), out / entry.path().filename(), fs::copy_options::overwrite_existing, ec);
    if (ec) {
      std::fprintf(stderr, "day0-cli make-demo-model: cannot write %s: %s\n", (out / entry.path().filename()).c_str(),
                   ec.message().c_str());
      return 1;
    }
  }
  std::printf("wrote the %s demo model to %s (copied from %s)\n", family.c_str(), out.c_str(), source->c_str());
  return 0;
}

const Registration kRegistration{"make-demo-model", &run_make_demo_model, "write a small demo model (trained on Python's docstrings)"};

}  // namespace
}  // namespace day0::cli
