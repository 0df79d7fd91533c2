#include "chat_template/lexer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "chat_template/unicode.h"
#include "chat_template/value.h"

namespace day0::chat_template {

namespace {

// Byte length of the Python whitespace character at s[pos], 0 if there is none.
std::size_t space_at(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return 0;
  const auto b = static_cast<unsigned char>(s[pos]);
  if (b < 0x80) return py_isspace(b) ? 1 : 0;
  // Multi-byte whitespace: U+0085, U+00A0 (2 bytes), U+1680, U+2000.., U+3000 (3 bytes).
  std::size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
  if (pos + len > s.size()) return 0;
  const auto cps = decode_utf8(s.substr(pos, len));
  return cps.size() == 1 && py_isspace(cps[0]) ? len : 0;
}

std::size_t skip_spaces(std::string_view s, std::size_t pos) {
  while (std::size_t n = space_at(s, pos)) pos += n;
  return pos;
}

// Python's str.rstrip() on s[begin, end): the new end.
std::size_t rstrip_end(std::string_view s, std::size_t begin, std::size_t end) {
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (space_at(s, start) != end - start) break;
    end = start;
  }
  return end;
}

bool all_spaces(std::string_view s, std::size_t begin, std::size_t end) {
  if (begin >= end) return false;  // jinja2 uses \s+ : at least one character
  std::size_t p = begin;
  while (p < end) {
    const std::size_t n = space_at(s, p);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

bool starts(std::string_view s, std::size_t pos, std::string_view what) { return s.substr(pos, what.size()) == what; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

// (\d+_)*\d+ : digits with single underscores between them; returns the end or npos.
std::size_t match_digits(std::string_view s, std::size_t pos) {
  if (pos >= s.size() || !is_digit(s[pos])) return std::string_view::npos;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  while (pos + 1 < s.size() && s[pos] == '_' && is_digit(s[pos + 1])) {
    ++pos;
    while (pos < s.size() && is_digit(s[pos])) ++pos;
  }
  return pos;
}

std::size_t match_float(std::string_view s, std::size_t pos) {
  if (pos > 0 && s[pos - 1] == '.') return std::string_view::npos;
  std::size_t p = match_digits(s, pos);
  if (p == std::string_view::npos) return p;
  std::size_t frac_end = std::string_view::npos;
  if (p < s.size() && s[p] == '.') frac_end = match_digits(s, p + 1);
  const std::size_t after_frac = frac_end != std::string_view::npos ? frac_end : p;
  if (after_frac < s.size() && (s[after_frac] == 'e' || s[after_frac] == 'E')) {
    std::size_t q = after_frac + 1;
    if (q < s.size() && (s[q] == '+' || s[q] == '-')) ++q;
    const std::size_t exp_end = match_digits(s, q);
    if (exp_end != std::string_view::npos) return exp_end;
  }
  return frac_end;
}

std::size_t match_integer(std::string_view s, std::size_t pos, int* base) {
  auto run = [&](std::size_t p, auto is_ok) -> std::size_t {
    // (_?[digits])+
    std::size_t start = p;
    while (p < s.size()) {
      if (is_ok(s[p])) {
        ++p;
      } else if (s[p] == '_' && p + 1 < s.size() && is_ok(s[p + 1])) {
        p += 2;
      } else {
        break;
      }
    }
    return p > start ? p : std::string_view::npos;
  };
  if (pos >= s.size() || !is_digit(s[pos])) return std::string_view::npos;
  if (s[pos] == '0' && pos + 1 < s.size()) {
    const char k = static_cast<char>(s[pos + 1] | 0x20);
    std::size_t e = std::string_view::npos;
    if (k == 'b') e = run(pos + 2, [](char c) { return c == '0' || c == '1'; }), *base = 2;
    if (k == 'o') e = run(pos + 2, [](char c) { return c >= '0' && c <= '7'; }), *base = 8;
    if (k == 'x')
      e = run(pos + 2, [](char c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }), *base = 16;
    if (e != std::string_view::npos) return e;
  }
  *base = 10;
  if (s[pos] == '0') {
    std::size_t p = pos + 1;
    while (p < s.size()) {
      if (s[p] == '0') {
        ++p;
      } else if (s[p] == '_' && p + 1 < s.size() && s[p + 1] == '0') {
        p += 2;
      } else {
        break;
      }
    }
    return p;
  }
  return run(pos, is_digit);
}

const char* const kOperators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                  "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};

void append_hex_escape(std::string& out, char32_t c) {
  static const char* digits = "0123456789abcdef";
  const int width = c < 0x100 ? 2 : c < 0x10000 ? 4 : 8;
  out += '\\';
  out += width == 2 ? 'x' : width == 4 ? 'u' : 'U';
  for (int i = width - 1; i >= 0; --i) out += digits[(c >> (4 * i)) & 0xF];
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// value_str[1:-1].encode("ascii", "backslashreplace").decode("unicode-escape")
std::string unescape_string(std::string_view body) {
  std::string ascii;
  ascii.reserve(body.size());
  for (const char32_t c : decode_utf8(body)) {
    if (c < 0x80) {
      ascii += static_cast<char>(c);
    } else {
      append_hex_escape(ascii, c);
    }
  }
  std::string out;
  out.reserve(ascii.size());
  for (std::size_t i = 0; i < ascii.size(); ++i) {
    const char c = ascii[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= ascii.size()) fail(ErrorKind::syntax, "\\ at end of string");
    const char e = ascii[++i];
    switch (e) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
      case 'u':
      case 'U': {
        const int width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        char32_t cp = 0;
        for (int k = 0; k < width; ++k) {
          const int h = i + 1 < ascii.size() ? hex_value(ascii[i + 1]) : -1;
          if (h < 0)
            fail(ErrorKind::syntax, std::string("truncated \\") +
                                        (e == 'x'   ? "xXX"
                                         : e == 'u' ? "uXXXX"
                                                    : "UXXXXXXXX") +
                                        " escape");
          cp = cp * 16 + static_cast<char32_t>(h);
          ++i;
        }
        if (cp > 0x10FFFF) fail(ErrorKind::syntax, "illegal Unicode character");
        if (cp >= 0xD800 && cp <= 0xDFFF) fail(ErrorKind::syntax, "a string literal holds a lone surrogate");
        append_utf8(out, cp);
        break;
      }
      case 'N':
        fail(ErrorKind::syntax, "\\N{...} escapes are not supported");
      default:
        if (e >= '0' && e <= '7') {
          char32_t cp = static_cast<char32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < ascii.size() && ascii[i + 1] >= '0' && ascii[i + 1] <= '7'; ++k)
            cp = cp * 8 + static_cast<char32_t>(ascii[++i] - '0');
          append_utf8(out, cp);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view raw) { normalize(raw); }

  LexedTemplate run() {
    while (pos_ < src_.size()) {
      if (state_ == State::root) {
        lex_root();
      } else {
        lex_tag();
      }
    }
    // An unclosed tag is reported by the parser, which sees eof where the tag end belongs.
    push(Tok::eof, "", static_cast<std::uint32_t>(src_.size()));
    LexedTemplate out;
    out.source = std::move(src_);
    out.tokens = std::move(tokens_);
    return out;
  }

  [[noreturn]] void error_at(std::size_t offset, std::string message) {
    TemplateError e{ErrorKind::syntax, std::move(message)};
    LexedTemplate tmp;
    tmp.source = src_;
    tmp.position(static_cast<std::uint32_t>(offset), &e.line, &e.column);
    throw e;
  }

 private:
  enum class State { root, block, variable };

  void normalize(std::string_view raw) {
    src_.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        src_ += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        src_ += raw[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  void push(Tok type, std::string value, std::uint32_t offset) {
    Token t;
    t.type = type;
    t.value = std::move(value);
    t.offset = offset;
    tokens_.push_back(std::move(t));
  }

  // Where the next `{{`, `{%` or `{#` starts, or npos.
  std::size_t next_tag(std::size_t from) const {
    std::size_t p = from;
    while ((p = src_.find('{', p)) != std::string::npos) {
      if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) return p;
      ++p;
    }
    return std::string::npos;
  }

  // `{%[-+]?\s*raw\s*(-%}\s*|%})` at p: returns the end of the match, or npos.
  std::size_t match_raw_begin(std::size_t p, char* sign) const {
    if (!starts(src_, p, "{%")) return std::string::npos;
    std::size_t q = p + 2;
    *sign = 0;
    if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) *sign = src_[q++];
    q = skip_spaces(src_, q);
    if (!starts(src_, q, "raw")) return std::string::npos;
    q = skip_spaces(src_, q + 3);
    if (starts(src_, q, "-%}")) return skip_spaces(src_, q + 3);
    if (starts(src_, q, "%}")) return q + 2;
    return std::string::npos;
  }

  // Applies `-` (strip all whitespace before the tag) or lstrip_blocks to the text
  // [text_begin, tag) and pushes it as data.
  void push_text(std::size_t text_begin, std::size_t tag, char sign, bool is_variable) {
    std::size_t end = tag;
    if (sign == '-') {
      end = rstrip_end(src_, text_begin, tag);
    } else if (sign != '+' && !is_variable) {
      const std::size_t nl = src_.rfind('\n', tag == 0 ? 0 : tag - 1);
      const std::size_t l_pos = (nl == std::string::npos || nl < text_begin) ? text_begin : nl + 1;
      if ((l_pos > text_begin || line_starting_) && all_spaces(src_, l_pos, tag)) end = l_pos;
    }
    if (end > text_begin)
      push(Tok::data, src_.substr(text_begin, end - text_begin), static_cast<std::uint32_t>(text_begin));
  }

  void lex_root() {
    const std::size_t tag = next_tag(pos_);
    if (tag == std::string::npos) {
      push(Tok::data, src_.substr(pos_), static_cast<std::uint32_t>(pos_));
      line_starting_ = src_.back() == '\n';
      pos_ = src_.size();
      return;
    }
    char raw_sign = 0;
    const std::size_t raw_end = match_raw_begin(tag, &raw_sign);
    if (raw_end != std::string::npos) {
      push_text(pos_, tag, raw_sign, false);
      lex_raw(tag, raw_end);
      return;
    }
    const char kind = src_[tag + 1];
    std::size_t after = tag + 2;
    char sign = 0;
    if (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
    push_text(pos_, tag, sign, kind == '{');
    line_starting_ = false;
    if (kind == '#') {
      lex_comment(tag, after);
      return;
    }
    push(kind == '{' ? Tok::variable_begin : Tok::block_begin, "", static_cast<std::uint32_t>(tag));
    state_ = kind == '{' ? State::variable : State::block;
    pos_ = after;
  }

  void lex_comment(std::size_t tag, std::size_t from) {
    for (std::size_t p = from; p < src_.size(); ++p) {
      if (starts(src_, p, "+#}")) {
        finish_skip(p + 3);
        return;
      }
      if (starts(src_, p, "-#}")) {
        finish_skip(skip_spaces(src_, p + 3));
        return;
      }
      if (starts(src_, p, "#}")) {
        std::size_t end = p + 2;
        if (end < src_.size() && src_[end] == '\n') ++end;
        finish_skip(end);
        return;
      }
    }
    error_at(tag, "Missing end of comment tag");
  }

  void finish_skip(std::size_t end) {
    line_starting_ = end > 0 && src_[end - 1] == '\n';
    pos_ = end;
  }

  void lex_raw(std::size_t tag, std::size_t body) {
    // (.*?)({%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?))
    for (std::size_t p = body; p < src_.size(); ++p) {
      if (!starts(src_, p, "{%")) continue;
      std::size_t q = p + 2;
      char sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) sign = src_[q++];
      q = skip_spaces(src_, q);
      if (!starts(src_, q, "endraw")) continue;
      q = skip_spaces(src_, q + 6);
      std::size_t end;
      if (starts(src_, q, "+%}")) {
        end = q + 3;
      } else if (starts(src_, q, "-%}")) {
        end = skip_spaces(src_, q + 3);
      } else if (starts(src_, q, "%}")) {
        end = q + 2;
        if (end < src_.size() && src_[end] == '\n') ++end;
      } else {
        continue;
      }
      line_starting_ = false;
      push_text(body, p, sign, false);
      finish_skip(end);
      return;
    }
    error_at(tag, "Missing end of raw directive");
  }

  void lex_tag() {
    const std::size_t p = pos_;
    if (balance_.empty()) {
      if (state_ == State::block) {
        std::size_t end = std::string::npos;
        if (starts(src_, p, "+%}")) {
          end = p + 3;
        } else if (starts(src_, p, "-%}")) {
          end = skip_spaces(src_, p + 3);
        } else if (starts(src_, p, "%}")) {
          end = p + 2;
          if (end < src_.size() && src_[end] == '\n') ++end;
        }
        if (end != std::string::npos) {
          push(Tok::block_end, "", static_cast<std::uint32_t>(p));
          state_ = State::root;
          finish_skip(end);
          return;
        }
      } else {
        std::size_t end = std::string::npos;
        if (starts(src_, p, "-}}")) {
          end = skip_spaces(src_, p + 3);
        } else if (starts(src_, p, "}}")) {
          end = p + 2;
        }
        if (end != std::string::npos) {
          push(Tok::variable_end, "", static_cast<std::uint32_t>(p));
          state_ = State::root;
          finish_skip(end);
          return;
        }
      }
    }
    if (const std::size_t n = space_at(src_, p)) {
      const std::size_t end = skip_spaces(src_, p + n);
      finish_skip(end);
      return;
    }
    line_starting_ = false;
    if (const std::size_t e = match_float(src_, p); e != std::string::npos) {
      std::string text;
      for (std::size_t i = p; i < e; ++i)
        if (src_[i] != '_') text += src_[i];
      Token t;
      t.type = Tok::floating;
      t.float_value = std::strtod(text.c_str(), nullptr);
      t.value = src_.substr(p, e - p);
      t.offset = static_cast<std::uint32_t>(p);
      tokens_.push_back(std::move(t));
      pos_ = e;
      return;
    }
    int base = 10;
    if (const std::size_t e = match_integer(src_, p, &base); e != std::string::npos) {
      std::string digits;
      for (std::size_t i = p + (base == 10 ? 0 : 2); i < e; ++i)
        if (src_[i] != '_') digits += src_[i];
      errno = 0;
      const unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
        error_at(p, "integer literal " + src_.substr(p, e - p) + " is too large (Day0 integers are 64-bit)");
      Token t;
      t.type = Tok::integer;
      t.int_value = static_cast<std::int64_t>(v);
      t.value = src_.substr(p, e - p);
      t.offset = static_cast<std::uint32_t>(p);
      tokens_.push_back(std::move(t));
      pos_ = e;
      return;
    }
    if (is_name_byte(static_cast<unsigned char>(src_[p]))) {
      std::size_t e = p;
      while (e < src_.size() && is_name_byte(static_cast<unsigned char>(src_[e])) && space_at(src_, e) == 0) ++e;
      if (is_digit(src_[p])) error_at(p, "Invalid character in identifier");
      push(Tok::name, src_.substr(p, e - p), static_cast<std::uint32_t>(p));
      pos_ = e;
      return;
    }
    if (src_[p] == '\'' || src_[p] == '"') {
      const char q = src_[p];
      std::size_t e = p + 1;
      while (e < src_.size() && src_[e] != q) e += src_[e] == '\\' ? 2 : 1;
      if (e >= src_.size())
        error_at(p, "unexpected char " + repr_string(std::string(1, q)) + " at " + std::to_string(p));
      try {
        push(Tok::string, unescape_string(std::string_view(src_).substr(p + 1, e - p - 1)),
             static_cast<std::uint32_t>(p));
      } catch (TemplateError& err) {
        error_at(p, err.message);
      }
      pos_ = e + 1;
      return;
    }
    for (const char* op : kOperators) {
      if (!starts(src_, p, op)) continue;
      const std::string o = op;
      if (o == "(" || o == "[" || o == "{") {
        balance_.push_back(o == "(" ? ')' : o == "[" ? ']' : '}');
      } else if (o == ")" || o == "]" || o == "}") {
        if (balance_.empty()) error_at(p, "unexpected '" + o + "'");
        const char expected = balance_.back();
        balance_.pop_back();
        if (expected != o[0]) error_at(p, "unexpected '" + o + "', expected '" + std::string(1, expected) + "'");
      }
      push(Tok::op, o, static_cast<std::uint32_t>(p));
      pos_ = p + o.size();
      return;
    }
    std::string shown;
    const auto cps = decode_utf8(std::string_view(src_).substr(p, 4));
    append_utf8(shown, cps.empty() ? U'?' : cps[0]);
    error_at(p, "unexpected char " + repr_string(shown) + " at " + std::to_string(p));
  }

  std::string src_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  State state_ = State::root;
  bool line_starting_ = true;
  std::vector<char> balance_;
};

}  // namespace

void LexedTemplate::position(std::uint32_t offset, int* line, int* column) const {
  const std::size_t end = std::min<std::size_t>(offset, source.size());
  int l = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < end; ++i) {
    if (source[i] == '\n') {
      ++l;
      line_start = i + 1;
    }
  }
  *line = l;
  *column = static_cast<int>(utf8_length(std::string_view(source).substr(line_start, end - line_start))) + 1;
}

LexedTemplate lex(std::string_view source) { return Lexer(source).run(); }

}  // namespace day0::chat_template
