#pragma once
// day0-cli subcommands. Each lives in its own cli/<name>_command.cpp and registers itself with
// a static Registration; main() looks the name up. A command returns the process exit code:
// 0 success, 1 failure (with a message on stderr), 2 bad usage.
#include <string>
#include <vector>

namespace day0::cli {

using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  const char* name;
  CommandFn run;
  const char* summary;
};

// Commands in name order.
const std::vector<Command>& commands();

struct Registration {
  Registration(const char* name, CommandFn run, const char* summary);
};

}  // namespace day0::cli
