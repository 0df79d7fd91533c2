#include "cli/cli_args.h"

namespace day0::cli {

std::optional<Args> Args::parse(const std::vector<std::string>& argv, const std::set<std::string>& flags,
                                const std::set<std::string>& options, std::string* error) {
  return parse_impl(argv, flags, options, false, error);
}

std::optional<Args> Args::parse_with_words(const std::vector<std::string>& argv, const std::set<std::string>& flags,
                                           const std::set<std::string>& options, std::string* error) {
  return parse_impl(argv, flags, options, true, error);
}

std::optional<Args> Args::parse_impl(const std::vector<std::string>& argv, const std::set<std::string>& flags,
                                     const std::set<std::string>& options, bool words, std::string* error) {
  Args args;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg == "-h" && flags.contains("help")) arg = "--help";
    // Commands that take a model take its folder as a word too: `chat DIR` is `chat --model DIR`.
    if (!words && arg.rfind("-", 0) != 0 && options.contains("model") && !args.options_.contains("model")) {
      args.options_["model"] = arg;
      continue;
    }
    if (words && (arg.rfind("--", 0) != 0 || arg == "--")) {
      args.words_.push_back(arg);
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      *error = arg.rfind("-", 0) == 0 && arg.size() > 1 ? "unknown option " + arg + " (options start with --)"
                                                        : "unexpected argument '" + arg + "'";
      return std::nullopt;
    }
    std::optional<std::string> inline_value;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const std::string name = arg.substr(2);
    if (flags.contains(name)) {
      if (inline_value) {
        *error = "--" + name + " takes no value";
        return std::nullopt;
      }
      args.flags_.insert(name);
    } else if (options.contains(name)) {
      if (inline_value) {
        args.options_[name] = *inline_value;
      } else if (i + 1 < argv.size()) {
        if (name == "model" && args.options_.contains("model")) {
          *error = "the model is given twice ('" + args.options_["model"] + "' and '" + argv[i + 1] + "')";
          return std::nullopt;
        }
        args.options_[name] = argv[++i];
      } else {
        *error = "--" + name + " needs a value";
        return std::nullopt;
      }
    } else {
      *error = "unknown option --" + name;
      return std::nullopt;
    }
  }
  return args;
}

std::optional<std::string> Args::option(const std::string& name) const {
  const auto it = options_.find(name);
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

}  // namespace day0::cli
