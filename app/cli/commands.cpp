#include "cli/commands.h"

#include <algorithm>
#include <cstring>
#include <regex>

namespace day0::cli {
namespace {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace

const std::vector<Command>& commands() { return registry(); }

std::string plain_message(const std::string& message) {
  static const std::regex kJsonCode(R"(\[json\.exception\.[a-z_]+\.\d+\] )");
  static const std::regex kParseError(R"(parse error( at (line \d+, column \d+))?: syntax error while parsing \w+ - )");
  std::string out = std::regex_replace(message, kJsonCode, "");
  out = std::regex_replace(out, kParseError, "$2: ");
  out = std::regex_replace(out, std::regex(R"(\(: )"), "(");
  return out;
}

Registration::Registration(const char* name, CommandFn run, const char* summary) {
  auto& r = registry();
  r.push_back({name, run, summary});
  std::sort(r.begin(), r.end(), [](const Command& a, const Command& b) { return std::strcmp(a.name, b.name) < 0; });
}

}  // namespace day0::cli
