#pragma once
// Patterns of tokenizer.json (Split, Replace): `{"Regex": ...}` is an Oniguruma pattern in
// `tokenizers` (its SysRegex), `{"String": ...}` a literal. Regexes run through PCRE2 (UTF, JIT)
// after translating the escapes whose meaning differs between the two engines, so that matches
// equal onig's:
//   \s \S      onig: White_Space         PCRE2 (UCP): also U+180E      -> \p{White_Space}
//   \w \W \b   onig: Alphabetic, M, Nd, Pc and U+00B2 U+00B3 U+00B9 U+00BC-U+00BE
//   \h \H      onig: hexadecimal digit   PCRE2: horizontal space
//   \v         onig: U+000B              PCRE2: vertical space class
//   \uHHHH     onig only                                             -> \x{HHHH}
//   ^ $        onig (Ruby syntax): line anchors                      -> PCRE2_MULTILINE
// Character classes with set operations (&&) or nested classes are refused. Property tables:
// PCRE2 10.42 knows Unicode 14; characters assigned later count as unassigned.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "day0/status.h"

namespace day0::tokenizer {

struct Span {
  std::size_t start;
  std::size_t end;
  bool is_match;
};

class Pattern {
 public:
  // An Oniguruma regex, translated for PCRE2.
  static Result<std::shared_ptr<const Pattern>> regex(std::string_view onig_pattern);
  static std::shared_ptr<const Pattern> literal(std::string text);
  // A pattern already in PCRE2 syntax (for the fixed regexes of Rust's regex crate that some
  // components use).
  static Result<std::shared_ptr<const Pattern>> pcre2(std::string_view pattern);
  ~Pattern();
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Cuts valid UTF-8 `text` into matches and the gaps between them, covering all of it, as
  // tokenizers' Pattern::find_matches does (an empty text gives one empty non-match).
  Status find_matches(std::string_view text, std::vector<Span>& out) const;

  const std::string& source() const { return source_; }
  bool is_regex() const { return code_ != nullptr; }

 private:
  Pattern() = default;
  static Result<std::shared_ptr<const Pattern>> compile(std::string_view pcre2_pattern, std::string_view source);
  std::string source_;    // as written in tokenizer.json
  std::string literal_;   // for literal patterns
  void* code_ = nullptr;  // pcre2_code_8*, null for literal patterns
  bool jit_ = false;
};

// Exposed for tests: the PCRE2 form of an Oniguruma pattern.
Result<std::string> translate_onig_pattern(std::string_view pattern);

}  // namespace day0::tokenizer
