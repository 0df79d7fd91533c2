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

// A message from a library as a person should read it: JSON parser codes such as
// "[json.exception.parse_error.101] parse error at line 2, column 1: syntax error while parsing
// value - " are reduced to "line 2, column 1: ".
std::string plain_message(const std::string& message);

struct Registration {
  Registration(const char* name, CommandFn run, const char* summary);
};

}  // namespace day0::cli
