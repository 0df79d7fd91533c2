#pragma once
// A small argument reader for day0-cli subcommands: --flag, --key VALUE, --key=VALUE; -h is
// --help, and where "model" is an option a bare word is the model folder (`chat DIR`).
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
  // As parse(), with words (anything not starting with "--", and a bare "--") kept in order among
  // the options, for subcommands such as `history show 3 --json`.
  static std::optional<Args> parse_with_words(const std::vector<std::string>& argv, const std::set<std::string>& flags,
                                              const std::set<std::string>& options, std::string* error);

  bool flag(const std::string& name) const { return flags_.contains(name); }
  std::optional<std::string> option(const std::string& name) const;
  const std::set<std::string>& flags() const { return flags_; }
  const std::map<std::string, std::string>& options() const { return options_; }
  const std::vector<std::string>& words() const { return words_; }

 private:
  static std::optional<Args> parse_impl(const std::vector<std::string>& argv, const std::set<std::string>& flags,
                                        const std::set<std::string>& options, bool words, std::string* error);

  std::set<std::string> flags_;
  std::map<std::string, std::string> options_;
  std::vector<std::string> words_;
};

}  // namespace day0::cli
