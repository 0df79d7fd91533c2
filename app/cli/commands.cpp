#include "cli/commands.h"

#include <algorithm>
#include <cstring>

namespace day0::cli {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

const std::vector<Command>& commands() { return registry(); }

Registration::Registration(const char* name, CommandFn run, const char* summary) {
  auto& r = registry();
  r.push_back({name, run, summary});
  std::sort(r.begin(), r.end(), [](const Command& a, const Command& b) { return std::strcmp(a.name, b.name) < 0; });
}

}  // namespace day0::cli
