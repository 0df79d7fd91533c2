#pragma once
// day0-cli subcommands. Each returns the process exit code: 0 success, 1 failure (with a
// message on stderr), 2 bad usage.
#include <string>
#include <vector>

namespace day0::cli {

int run_version(const std::vector<std::string>& args);
int run_inspect(const std::vector<std::string>& args);

}  // namespace day0::cli
