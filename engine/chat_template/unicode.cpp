#include "chat_template/unicode.h"

namespace day0::chat_template {

namespace {

// Decodes one code point at s[i]; returns its length in bytes, 0 when invalid.
std::size_t decode_one(std::string_view s, std::size_t i, char32_t* out) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *out = b0;
    return 1;
  }
  std::size_t len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *out = cp;
  return len;
}

bool in(char32_t c, char32_t lo, char32_t hi) { return c >= lo && c <= hi; }

}  // namespace

std::size_t find_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    const std::size_t n = decode_one(s, i, &cp);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::vector<char32_t> decode_utf8(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    const std::size_t n = decode_one(s, i, &cp);
    if (n == 0) {
      out.push_back(0xFFFD);
      ++i;
    } else {
      out.push_back(cp);
      i += n;
    }
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string encode_utf8(const std::vector<char32_t>& cps, std::size_t begin, std::size_t end) {
  std::string out;
  out.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) append_utf8(out, cps[i]);
  return out;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (const char ch : s)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
  return n;
}

bool is_ascii(std::string_view s) {
  for (const char ch : s)
    if (static_cast<unsigned char>(ch) >= 0x80) return false;
  return true;
}

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         in(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool py_isdigit(char32_t c) {
  return in(c, '0', '9') || c == 0xB2 || c == 0xB3 || c == 0xB9 || in(c, 0x660, 0x669) || in(c, 0x6F0, 0x6F9) ||
         in(c, 0x966, 0x96F) || in(c, 0xFF10, 0xFF19);
}

bool py_is_upper_cased(char32_t c) {
  return in(c, 'A', 'Z') || (in(c, 0xC0, 0xDE) && c != 0xD7) || (in(c, 0x100, 0x17F) && (c % 2 == 0) && c != 0x138) ||
         in(c, 0x391, 0x3A9) || in(c, 0x400, 0x42F);
}

bool py_is_lower_cased(char32_t c) {
  return in(c, 'a', 'z') || (in(c, 0xDF, 0xFF) && c != 0xF7) || (in(c, 0x100, 0x17F) && (c % 2 == 1)) ||
         in(c, 0x3AC, 0x3CE) || in(c, 0x430, 0x45F) || c == 0xB5 || c == 0xAA || c == 0xBA;
}

bool py_isalpha(char32_t c) {
  if (c < 0x80) return in(c, 'a', 'z') || in(c, 'A', 'Z');
  if (c == 0xD7 || c == 0xF7) return false;
  if (c == 0xAA || c == 0xB5 || c == 0xBA || in(c, 0xC0, 0x24F)) return true;
  if (in(c, 0x370, 0x3FF) || in(c, 0x400, 0x52F) || in(c, 0x5D0, 0x5EA) || in(c, 0x620, 0x64A)) return true;
  if (in(c, 0x3040, 0x30FF) || in(c, 0x4E00, 0x9FFF) || in(c, 0xAC00, 0xD7A3)) return true;
  return false;
}

bool py_isalnum(char32_t c) { return py_isalpha(c) || py_isdigit(c); }

char32_t py_to_upper(char32_t c) {
  if (in(c, 'a', 'z')) return c - 32;
  if (c < 0x80) return c;
  if (in(c, 0xE0, 0xFE) && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (in(c, 0x100, 0x17F) && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
    // Latin Extended-A pairs: even upper, odd lower, except 0x139..0x148 and 0x179..0x17E (odd upper).
    const bool odd_upper = in(c, 0x139, 0x148) || in(c, 0x179, 0x17E);
    if (odd_upper) return (c % 2 == 0) ? c - 1 : c;
    return (c % 2 == 1) ? c - 1 : c;
  }
  if (c == 0x131) return 'I';
  if (in(c, 0x3B1, 0x3C9) && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c == 0x3AC) return 0x386;
  if (in(c, 0x3AD, 0x3AF)) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (in(c, 0x430, 0x44F)) return c - 32;
  if (in(c, 0x450, 0x45F)) return c - 80;
  return c;
}

char32_t py_to_lower(char32_t c) {
  if (in(c, 'A', 'Z')) return c + 32;
  if (c < 0x80) return c;
  if (in(c, 0xC0, 0xDE) && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (in(c, 0x100, 0x17F) && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
    const bool odd_upper = in(c, 0x139, 0x148) || in(c, 0x179, 0x17E);
    if (odd_upper) return (c % 2 == 1) ? c + 1 : c;
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (in(c, 0x391, 0x3A9) && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (in(c, 0x388, 0x38A)) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (in(c, 0x410, 0x42F)) return c + 32;
  if (in(c, 0x400, 0x40F)) return c + 80;
  return c;
}

bool py_isprintable(char32_t c) {
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x7F) return true;
  if (c <= 0xA0 || c == 0xAD) return false;
  if (c == 0x1680 || in(c, 0x2000, 0x200F) || in(c, 0x2028, 0x202F) || in(c, 0x205F, 0x206F) || c == 0x3000)
    return false;
  if (in(c, 0xD800, 0xF8FF) || c == 0xFEFF || in(c, 0xFFF0, 0xFFFB) || c == 0xFFFE || c == 0xFFFF) return false;
  if (in(c, 0xE0000, 0xE0FFF) || c >= 0xF0000) return false;
  if (c == 0x61C || in(c, 0x600, 0x605) || c == 0x6DD || c == 0x70F || c == 0x180E) return false;
  return true;
}

std::string py_upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (is_ascii(s)) {
    for (const char ch : s) out += (ch >= 'a' && ch <= 'z') ? static_cast<char>(ch - 32) : ch;
    return out;
  }
  for (const char32_t c : decode_utf8(s)) append_utf8(out, py_to_upper(c));
  return out;
}

std::string py_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (is_ascii(s)) {
    for (const char ch : s) out += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
    return out;
  }
  for (const char32_t c : decode_utf8(s)) append_utf8(out, py_to_lower(c));
  return out;
}

}  // namespace day0::chat_template
