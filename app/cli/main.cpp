// day0-cli: Day0 without a window. Every subcommand calls the same engine API as the app.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "day0/log.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: day0-cli [--version] [--log-level LEVEL] <command> [options]\n\ncommands:\n");
  int width = 4;  // "help"
  for (const auto& c : day0::cli::commands()) width = std::max(width, static_cast<int>(std::strlen(c.name)));
  for (const auto& c : day0::cli::commands()) std::fprintf(out, "  %-*s  %s\n", width, c.name, c.summary);
  std::fprintf(out, "  %-*s  %s\n", width, "help", "this list, or 'help COMMAND' for a command's options");
  std::fprintf(out, "\nRun 'day0-cli help <command>' or 'day0-cli <command> --help' for a command's options.\n");
}

const day0::cli::Command* find_command(const std::string& name) {
  for (const auto& c : day0::cli::commands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  day0::log::Options log_options;
  log_options.console_level = day0::log::Level::warn;
  if (const char* to_file = std::getenv("DAY0_LOG_TO_FILE"); to_file && std::strcmp(to_file, "0") == 0)
    log_options.file = false;
  // Global options come before the command.
  while (!args.empty() && (args.front().rfind("--", 0) == 0 || args.front() == "-h")) {
    if (args.front() == "--version") args.front() = "version";
    if (args.front() == "version") break;
    if (args.front() == "--help" || args.front() == "-h") {
      print_usage(stdout);
      return 0;
    }
    if (args.front() == "--log-level" && args.size() >= 2) {
      if (!day0::log::parse_level(args[1], &log_options.console_level)) {
        std::fprintf(stderr, "day0-cli: unknown log level '%s' (trace, debug, info, warn, error, off)\n",
                     args[1].c_str());
        return 2;
      }
      args.erase(args.begin(), args.begin() + 2);
      continue;
    }
    std::fprintf(stderr, "day0-cli: unknown option %s\n", args.front().c_str());
    print_usage(stderr);
    return 2;
  }
  if (args.empty()) {
    print_usage(stderr);
    return 2;
  }
  if (args.front() == "help") {
    if (args.size() == 1) {
      print_usage(stdout);
      return 0;
    }
    if (const auto* c = find_command(args[1])) return c->run({"--help"});
    std::fprintf(stderr, "day0-cli: unknown command '%s'\n", args[1].c_str());
    print_usage(stderr);
    return 2;
  }
  day0::log::init(log_options);
  if (const auto* c = find_command(args.front())) return c->run({args.begin() + 1, args.end()});
  std::fprintf(stderr, "day0-cli: unknown command '%s'\n", args.front().c_str());
  print_usage(stderr);
  return 2;
}
