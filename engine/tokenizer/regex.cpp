#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>

#include "tokenizer/unicode.h"

namespace day0::tokenizer {

namespace {

// onig's \w for UTF-8 text (checked code point by code point against tokenizers 0.23).
constexpr const char* kWordSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}";

Status unsupported_pattern(std::string_view pattern, const std::string& why) {
  return error(ErrorCode::unsupported, "regex '" + std::string(pattern) + "': " + why);
}

// Per-thread match data and JIT stack: a compiled pattern is shared, match state is not.
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  pcre2_match_context* context = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    // Deep backtracking over long whitespace runs needs more than the default 32 KiB.
    jit_stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
    context = pcre2_match_context_create(nullptr);
    if (context && jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

}  // namespace

Result<std::string> translate_onig_pattern(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 32);
  bool in_class = false;
  std::size_t class_start = 0;  // index just after '[' (and '^') of the open class
  const std::string word_class = std::string("[") + kWordSet + "]";
  const std::string word_boundary =
      "(?:(?<=" + word_class + ")(?!" + word_class + ")|(?<!" + word_class + ")(?=" + word_class + "))";
  const std::string not_word_boundary =
      "(?:(?<=" + word_class + ")(?=" + word_class + ")|(?<!" + word_class + ")(?!" + word_class + "))";
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return unsupported_pattern(p, "ends with a lone backslash");
      const char e = p[i + 1];
      ++i;
      switch (e) {
        case 's':
          out += "\\p{White_Space}";
          break;
        case 'S':
          out += "\\P{White_Space}";
          break;
        case 'w':
          out += in_class ? std::string(kWordSet) : word_class;
          break;
        case 'W':
          if (in_class) return unsupported_pattern(p, "\\W inside a character class");
          out += std::string("[^") + kWordSet + "]";
          break;
        case 'h':
          out += in_class ? "0-9a-fA-F" : "[0-9a-fA-F]";
          break;
        case 'H':
          if (in_class) return unsupported_pattern(p, "\\H inside a character class");
          out += "[^0-9a-fA-F]";
          break;
        case 'v':
          out += "\\x{0B}";
          break;
        case 'b':
          out += in_class ? "\\x{08}" : word_boundary;
          break;
        case 'B':
          if (in_class) return unsupported_pattern(p, "\\B inside a character class");
          out += not_word_boundary;
          break;
        case 'u': {
          std::size_t k = 0;
          while (k < 4 && i + 1 + k < p.size() && std::isxdigit(static_cast<unsigned char>(p[i + 1 + k]))) ++k;
          if (k != 4) return unsupported_pattern(p, "\\u needs four hex digits");
          out += "\\x{" + std::string(p.substr(i + 1, 4)) + "}";
          i += 4;
          break;
        }
        default:
          out += '\\';
          out += e;
          break;
      }
      continue;
    }
    if (in_class) {
      if (c == '[') {
        if (i + 1 < p.size() && p[i + 1] == ':') {
          const std::size_t close = p.find(":]", i + 2);
          if (close == std::string_view::npos) return unsupported_pattern(p, "unterminated POSIX class");
          out += p.substr(i, close + 2 - i);
          i = close + 1;
          continue;
        }
        return unsupported_pattern(p, "nested character classes");
      }
      if (c == '&' && i + 1 < p.size() && p[i + 1] == '&') return unsupported_pattern(p, "class intersection (&&)");
      if (c == ']' && out.size() > class_start) in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += '^';
        ++i;
      }
      class_start = out.size();
      continue;
    }
    if (c == '(' && i + 2 < p.size() && p[i + 1] == '?' && std::isalpha(static_cast<unsigned char>(p[i + 2]))) {
      // Inline options: Ruby's (?m) is PCRE2's (?s) (dot matches newline).
      std::size_t k = i + 2;
      std::string opts;
      while (k < p.size() && (std::isalpha(static_cast<unsigned char>(p[k])) || p[k] == '-')) opts += p[k++];
      if (k < p.size() && (p[k] == ':' || p[k] == ')') && opts.find_first_not_of("imx-") == std::string::npos) {
        for (char& o : opts)
          if (o == 'm') o = 's';
        out += "(?" + opts;
        i = k - 1;
        continue;
      }
    }
    out += c;
  }
  if (in_class) return unsupported_pattern(p, "unterminated character class");
  return out;
}

Result<std::shared_ptr<const Pattern>> Pattern::regex(std::string_view onig_pattern) {
  DAY0_ASSIGN_OR_RETURN(const std::string translated, translate_onig_pattern(onig_pattern));
  return compile(translated, onig_pattern);
}

Result<std::shared_ptr<const Pattern>> Pattern::pcre2(std::string_view pattern) { return compile(pattern, pattern); }

Result<std::shared_ptr<const Pattern>> Pattern::compile(std::string_view pcre2_pattern, std::string_view source) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* compiled =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre2_pattern.data()), pcre2_pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_NO_UTF_CHECK, &code, &offset, nullptr);
  if (compiled == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code, message, sizeof message);
    return error(ErrorCode::unsupported, "regex '" + std::string(source) +
                                             "' does not compile: " + reinterpret_cast<const char*>(message) +
                                             " (at offset " + std::to_string(offset) + " of its PCRE2 form)");
  }
  std::shared_ptr<Pattern> pattern(new Pattern());
  pattern->source_ = std::string(source);
  pattern->code_ = compiled;
  pattern->jit_ = pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE) == 0;
  return std::shared_ptr<const Pattern>(std::move(pattern));
}

std::shared_ptr<const Pattern> Pattern::literal(std::string text) {
  std::shared_ptr<Pattern> pattern(new Pattern());
  pattern->source_ = text;
  pattern->literal_ = std::move(text);
  return pattern;
}

Pattern::~Pattern() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

Status Pattern::find_matches(std::string_view text, std::vector<Span>& out) const {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return Status::ok();
  }
  std::size_t prev = 0;
  auto add_match = [&](std::size_t s, std::size_t e) {
    if (prev != s) out.push_back({prev, s, false});
    out.push_back({s, e, true});
    prev = e;
  };
  if (code_ == nullptr) {
    if (!literal_.empty()) {
      for (std::size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at)) {
        add_match(at, at + literal_.size());
        at += literal_.size();
      }
    }
  } else {
    // onig's find_iter: search from the end of the last match; an empty match right where the
    // last match ended is refused and the search moves on by one character.
    auto* re = static_cast<pcre2_code*>(code_);
    MatchState& state = match_state();
    std::size_t last_end = 0;
    bool have_last = false;
    std::size_t last_match_end = 0;
    while (last_end <= text.size()) {
      const int rc = jit_ ? pcre2_jit_match(re, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), last_end, 0,
                                            state.data, state.context)
                          : pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), last_end,
                                        PCRE2_NO_UTF_CHECK, state.data, state.context);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(rc, message, sizeof message);
        return error(ErrorCode::invalid_argument, "regex '" + source_ + "' failed on a text of " +
                                                      std::to_string(text.size()) +
                                                      " bytes: " + reinterpret_cast<const char*>(message));
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
      const std::size_t s = ov[0];
      const std::size_t e = ov[1];
      if (e == s && have_last && last_match_end == e) {
        if (last_end >= text.size()) break;
        last_end += utf8_length(static_cast<unsigned char>(text[last_end]));
        continue;
      }
      last_end = e;
      have_last = true;
      last_match_end = e;
      add_match(s, e);
    }
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
  return Status::ok();
}

}  // namespace day0::tokenizer
