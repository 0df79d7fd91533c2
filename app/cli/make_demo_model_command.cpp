// day0-cli make-demo-model: copies the shipped random-weight demo model (a tiny gpt-oss with a
// real tokenizer and chat template) to a folder, so there is a model to open on a fresh machine.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/cli_args.h"
#include "cli/commands.h"

namespace day0::cli {
namespace {

namespace fs = std::filesystem;

// The shipped demo: under share/day0 beside an install (checked first, so an installed copy never
// reads a source tree that happens to exist), else next to the sources in a build tree.
std::optional<fs::path> find_demo_model() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share/day0/demo-model");
  candidates.push_back(fs::path(DAY0_RESOURCES_DIR) / "demo-model");
  for (const auto& c : candidates)
    if (fs::exists(c / "day0-demo.json", ec)) return c;
  return std::nullopt;
}

int run_make_demo_model(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help"}, {}, &problem);
  std::vector<std::string> positional;
  if (!args && argv.size() == 1 && argv[0].rfind("--", 0) != 0) positional = argv;
  if (positional.empty() || (args && args->flag("help"))) {
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli make-demo-model DIR\n"
                 "  Writes a small random-weight gpt-oss checkpoint with a real tokenizer.json and chat\n"
                 "  template to DIR (it runs end to end; its replies are noise).\n");
    return args && args->flag("help") ? 0 : 2;
  }
  const auto source = find_demo_model();
  if (!source) {
    std::fprintf(stderr,
                 "day0-cli make-demo-model: the shipped demo model was not found (looked in "
                 "<install prefix>/share/day0/demo-model and %s/demo-model)\n",
                 DAY0_RESOURCES_DIR);
    return 1;
  }
  const fs::path out = positional[0];
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
  std::printf("wrote the random-weight demo model to %s (copied from %s)\n", out.c_str(), source->c_str());
  return 0;
}

const Registration kRegistration{"make-demo-model", &run_make_demo_model, "write the small random-weight demo model"};

}  // namespace
}  // namespace day0::cli
