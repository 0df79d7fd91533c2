#pragma once
// A small argument reader for day0-cli subcommands: --flag, --key VALUE, --key=VALUE.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace day0::cli {

class Args {
 public:
  // `flags` take no value; `options` take one. Unknown arguments are errors.
  static std::optional<Args> parse(const std::vector<std::string>& argv, const std::set<std::string>& flags,
                                   const std::set<std::string>& options, std::string* error);

  bool flag(const std::string& name) const { return flags_.contains(name); }
  std::optional<std::string> option(const std::string& name) const;

 private:
  std::set<std::string> flags_;
  std::map<std::string, std::string> options_;
};

}  // namespace day0::cli
