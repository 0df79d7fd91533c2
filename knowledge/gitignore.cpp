#include "knowledge/gitignore.h"

#include <cctype>

namespace day0::knowledge {

namespace {

bool named_class(const std::string& name, unsigned char c) {
  if (name == "alnum") return std::isalnum(c);
  if (name == "alpha") return std::isalpha(c);
  if (name == "digit") return std::isdigit(c);
  if (name == "lower") return std::islower(c);
  if (name == "upper") return std::isupper(c);
  if (name == "space") return std::isspace(c);
  if (name == "punct") return std::ispunct(c);
  if (name == "xdigit") return std::isxdigit(c);
  if (name == "blank") return c == ' ' || c == '\t';
  if (name == "cntrl") return std::iscntrl(c);
  if (name == "graph") return std::isgraph(c);
  if (name == "print") return std::isprint(c);
  return false;
}

}  // namespace

bool GitignorePattern::parse(std::string_view line, GitignorePattern* out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // Trailing spaces go unless escaped with a backslash.
  while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
    line.remove_suffix(1);
  if (line.empty() || line.front() == '#') return false;
  GitignorePattern p;
  if (line.front() == '!') {
    p.negated_ = true;
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    p.dir_only_ = true;
    while (!line.empty() && line.back() == '/') line.remove_suffix(1);
  }
  if (line.empty()) return false;
  // A slash at the start or in the middle anchors the pattern to the .gitignore's folder.
  p.anchored_ = line.find('/') != std::string_view::npos;
  if (line.front() == '/') line.remove_prefix(1);
  const std::size_t n = line.size();
  for (std::size_t i = 0; i < n; ++i) {
    const char c = line[i];
    Token t;
    if (c == '\\' && i + 1 < n) {
      t.c = line[++i];
    } else if (c == '?') {
      t.op = Op::any_char;
    } else if (c == '*') {
      std::size_t stars = 1;
      while (i + stars < n && line[i + stars] == '*') ++stars;
      const bool at_segment_start = i == 0 || line[i - 1] == '/';
      const std::size_t after = i + stars;
      if (stars >= 2 && at_segment_start && after < n && line[after] == '/') {
        t.op = Op::globstar_dirs;  // "**/": zero or more whole folders
        i = after;                 // the slash is part of the token
      } else if (stars >= 2 && at_segment_start && after == n) {
        t.op = Op::everything;  // "/**" at the end, or a lone "**"
        i = after - 1;
      } else {
        t.op = Op::star;
        i = after - 1;
      }
    } else if (c == '[') {
      // A class; without its closing bracket the '[' is literal.
      std::size_t j = i + 1;
      Token cls;
      cls.op = Op::char_class;
      if (j < n && (line[j] == '!' || line[j] == '^')) cls.negate_class = true, ++j;
      bool closed = false;
      bool first = true;
      while (j < n) {
        char a = line[j];
        if (a == ']' && !first) {
          closed = true;
          break;
        }
        first = false;
        if (a == '[' && j + 1 < n && line[j + 1] == ':') {
          const std::size_t end = line.find(":]", j + 2);
          if (end != std::string_view::npos) {
            cls.named.emplace_back(line.substr(j + 2, end - j - 2));
            j = end + 2;
            continue;
          }
        }
        if (a == '\\' && j + 1 < n) a = line[++j];
        unsigned char lo = static_cast<unsigned char>(a), hi = lo;
        if (j + 2 < n && line[j + 1] == '-' && line[j + 2] != ']') {
          char b = line[j + 2];
          j += 2;
          if (b == '\\' && j + 1 < n) b = line[++j];
          hi = static_cast<unsigned char>(b);
        }
        cls.ranges.emplace_back(lo, hi);
        ++j;
      }
      if (closed) {
        t = std::move(cls);
        i = j;
      } else {
        t.c = '[';
      }
    } else {
      t.c = c;
    }
    p.tokens_.push_back(std::move(t));
  }
  *out = std::move(p);
  return true;
}

bool GitignorePattern::class_matches(const Token& t, unsigned char c) {
  bool in = false;
  for (const auto& [lo, hi] : t.ranges)
    if (c >= lo && c <= hi) in = true;
  for (const auto& name : t.named)
    if (named_class(name, c)) in = true;
  return in != t.negate_class;
}

// Dynamic programming over (token, text position), so hostile patterns ("*a*a*a*...") stay
// quadratic at worst. row_next[s]: tokens after t match text[s..].
bool GitignorePattern::match_tokens(std::string_view text) const {
  const std::size_t S = text.size();
  std::vector<char> next(S + 1, 0), cur(S + 1, 0);
  next[S] = 1;
  for (std::size_t t = tokens_.size(); t-- > 0;) {
    const Token& tok = tokens_[t];
    bool slash_then_rest = false;  // globstar_dirs: some k >= s has text[k] == '/' and next[k + 1]
    for (std::size_t s = S + 1; s-- > 0;) {
      const bool has = s < S;
      const unsigned char ch = has ? static_cast<unsigned char>(text[s]) : 0;
      switch (tok.op) {
        case Op::literal:
          cur[s] = has && ch == static_cast<unsigned char>(tok.c) && next[s + 1];
          break;
        case Op::any_char:
          cur[s] = has && ch != '/' && next[s + 1];
          break;
        case Op::char_class:
          cur[s] = has && ch != '/' && class_matches(tok, ch) && next[s + 1];
          break;
        case Op::star:
          cur[s] = next[s] || (has && ch != '/' && cur[s + 1]);
          break;
        case Op::everything:
          cur[s] = next[s] || (has && cur[s + 1]);
          break;
        case Op::globstar_dirs:
          if (has && ch == '/' && next[s + 1]) slash_then_rest = true;
          cur[s] = next[s] || slash_then_rest;
          break;
      }
    }
    std::swap(cur, next);
  }
  return next[0];
}

bool GitignorePattern::matches(std::string_view path, bool is_dir) const {
  if (dir_only_ && !is_dir) return false;
  if (anchored_) return match_tokens(path);
  const auto slash = path.find_last_of('/');
  return match_tokens(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

void GitignoreRules::add(const std::string& base, std::string_view content) {
  Set set;
  set.base = base;
  std::size_t at = 0;
  while (at <= content.size()) {
    const std::size_t end = content.find('\n', at);
    const std::string_view line = content.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    GitignorePattern p;
    if (GitignorePattern::parse(line, &p)) set.patterns.push_back(std::move(p));
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  if (!set.patterns.empty()) sets_.push_back(std::move(set));
}

bool GitignoreRules::ignored(std::string_view path, bool is_dir) const {
  bool ignored = false;
  for (const Set& set : sets_) {
    std::string_view relative = path;
    if (!set.base.empty()) {
      if (!(path.size() > set.base.size() && path.starts_with(set.base) && path[set.base.size()] == '/')) continue;
      relative = path.substr(set.base.size() + 1);
    }
    for (const auto& p : set.patterns)
      if (p.matches(relative, is_dir)) ignored = !p.negated();
  }
  return ignored;
}

}  // namespace day0::knowledge
