#pragma once
// .gitignore matching with git's semantics (gitignore(5)): comments and escapes, trailing
// spaces, negation "!", directory-only "dir/", patterns anchored by a slash, "*", "?",
// character classes ("[a-z]", "[!0-9]", "[[:digit:]]"), "**/" (any folders), "/**" (all
// inside) and "/**/" (zero or more folders). Nested .gitignore files apply to their folder and
// below, deeper files and later lines winning. Private to knowledge/.
#include <string>
#include <string_view>
#include <vector>

namespace day0::knowledge {

class GitignorePattern {
 public:
  // False for blank lines and comments.
  static bool parse(std::string_view line, GitignorePattern* out);

  // `path` relative to the .gitignore's folder, '/'-separated, no leading or trailing slash.
  bool matches(std::string_view path, bool is_dir) const;
  bool negated() const { return negated_; }

 private:
  enum class Op { literal, any_char, char_class, star, globstar_dirs, everything };
  struct Token {
    Op op = Op::literal;
    char c = 0;
    std::vector<std::pair<unsigned char, unsigned char>> ranges;  // char_class
    std::vector<std::string> named;                               // char_class: "digit", ...
    bool negate_class = false;
  };
  bool match_tokens(std::string_view text) const;
  static bool class_matches(const Token& t, unsigned char c);

  std::vector<Token> tokens_;
  bool negated_ = false;
  bool dir_only_ = false;
  bool anchored_ = false;  // had a slash before its end: matched against the whole path
};

class GitignoreRules {
 public:
  // Adds the patterns of the .gitignore in folder `base` ("" for the root, "a/b" otherwise).
  void add(const std::string& base, std::string_view content);
  // `path` relative to the root. Only the rules of the path's own ancestors apply.
  bool ignored(std::string_view path, bool is_dir) const;

 private:
  struct Set {
    std::string base;
    std::vector<GitignorePattern> patterns;
  };
  std::vector<Set> sets_;  // in the order added: parents before children
};

}  // namespace day0::knowledge
