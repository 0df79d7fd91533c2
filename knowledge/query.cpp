#include "knowledge/query.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "knowledge/text_util.h"

namespace day0::knowledge {

namespace {

bool word_byte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }
bool lower(char c) { return c >= 'a' && c <= 'z'; }
bool upper(char c) { return c >= 'A' && c <= 'Z'; }
bool digit(char c) { return c >= '0' && c <= '9'; }

// Runs of word bytes (ASCII letters/digits and any byte of a non-ASCII character).
template <typename Fn>
void for_each_word(std::string_view text, Fn&& fn) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !word_byte(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) fn(text.substr(start, i - start));
  }
}

// "parseHTTPFrame2" -> parse, HTTP, Frame, 2. Empty when the word has no hump (ASCII only).
std::vector<std::string_view> humps(std::string_view w) {
  std::vector<std::string_view> parts;
  for (const char c : w)
    if (static_cast<unsigned char>(c) >= 0x80) return parts;
  std::size_t start = 0;
  for (std::size_t i = 1; i < w.size(); ++i) {
    const char a = w[i - 1], b = w[i];
    const bool cut = (lower(a) && upper(b)) || (digit(a) != digit(b)) ||
                     (upper(a) && upper(b) && i + 1 < w.size() && lower(w[i + 1]));
    if (cut) {
      parts.push_back(w.substr(start, i - start));
      start = i;
    }
  }
  if (start == 0) return {};
  parts.push_back(w.substr(start));
  return parts;
}

// The next code point of valid UTF-8 at text[i] (advancing i); U+FFFD for a broken sequence.
char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto b = static_cast<unsigned char>(text[i]);
  const int n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = n == 1 ? b : b & (0x7F >> n);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  i += static_cast<std::size_t>(n);
  return cp;
}

// Han (with extensions and compatibility ideographs), kana, the iteration mark, and Hangul.
bool cjk(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFF66 && c <= 0xFF9F) || (c >= 0x20000 && c <= 0x3134F) || c == 0x3005;
}

// CJK punctuation and fullwidth symbols (not the fullwidth letters and digits): they end a run
// and are no term of their own.
bool cjk_punctuation(char32_t c) {
  return (c >= 0x3000 && c <= 0x303F && c != 0x3005) || (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
         (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65) || (c >= 0x2010 && c <= 0x206F);
}

// For each word that holds CJK characters: its CJK runs as pairs (or single characters) and its
// other parts whole, in order.
template <typename Fn>
void for_each_cjk_term(std::string_view text, Fn&& fn) {
  for_each_word(text, [&fn](std::string_view w) {
    bool any = false;
    for (const char c : w) any |= static_cast<unsigned char>(c) >= 0xE3;  // CJK starts at U+3040
    if (!any) return;
    // Pieces of the word by code point: 0 other letters, 1 CJK, 2 punctuation (dropped).
    std::size_t i = 0, start = 0;
    int kind = -1;
    std::vector<std::size_t> marks;  // byte offsets of the CJK run's code points
    const auto flush = [&](std::size_t end) {
      if (kind == 0 && end > start) {
        fn(w.substr(start, end - start));
      } else if (kind == 1) {
        marks.push_back(end);
        if (marks.size() == 2) fn(w.substr(marks[0], end - marks[0]));
        for (std::size_t k = 0; k + 2 < marks.size(); ++k) fn(w.substr(marks[k], marks[k + 2] - marks[k]));
      }
      marks.clear();
    };
    while (i < w.size()) {
      const std::size_t at = i;
      const char32_t c = next_code_point(w, i);
      const int now = cjk(c) ? 1 : cjk_punctuation(c) ? 2 : 0;
      if (now != kind) {
        flush(at);
        kind = now;
        start = at;
      }
      if (now == 1) marks.push_back(at);
    }
    flush(w.size());
  });
}

bool stop_word(const std::string& w) {
  static const std::set<std::string> kStop = {
      "a",       "about",  "after", "all",    "also",  "am",    "an",    "and",  "any",  "are",    "as",    "at",
      "be",      "been",   "but",   "by",     "can",   "could", "did",   "do",   "does", "doing",  "for",   "from",
      "get",     "gets",   "had",   "has",    "have",  "he",    "her",   "here", "his",  "how",    "i",     "if",
      "in",      "into",   "is",    "it",     "its",   "just",  "me",    "my",   "need", "of",     "on",    "or",
      "our",     "out",    "she",   "should", "so",    "some",  "than",  "that", "the",  "their",  "them",  "then",
      "there",   "these",  "they",  "this",   "those", "to",    "up",    "us",   "was",  "we",     "were",  "what",
      "when",    "where",  "which", "while",  "who",   "whom",  "why",   "will", "with", "would",  "you",   "your",
      "tell",    "find",   "show",  "does",   "much",  "many",  "there", "want", "know", "please", "thing", "way",
      "happens", "happen", "mean",  "means",  "use",   "used",  "using", "kind", "sort"};
  return kStop.contains(w);
}

}  // namespace

std::string identifier_parts(std::string_view text) {
  std::string out;
  for_each_word(text, [&out](std::string_view w) {
    for (const auto part : humps(w)) {
      if (!out.empty()) out.push_back(' ');
      out.append(to_lower_ascii(part));
    }
  });
  return out;
}

std::string cjk_words(std::string_view text) {
  std::string out;
  for_each_cjk_term(text, [&out](std::string_view term) {
    if (!out.empty()) out.push_back(' ');
    out.append(to_lower_ascii(term));
  });
  return out;
}

std::string chunk_words(std::string_view title, std::string_view text, std::string_view relative_path) {
  std::string all;
  all.reserve(title.size() + text.size() + relative_path.size() + 2);
  all.append(title).append(" ").append(text).append(" ").append(relative_path);
  std::string out = identifier_parts(all);
  const std::string cjk_part = cjk_words(all);
  if (!out.empty() && !cjk_part.empty()) out.push_back(' ');
  return out + cjk_part;
}

std::vector<std::string> question_terms(std::string_view question, std::size_t max_terms) {
  // Keep whole UTF-8 characters: a question cut by an invalid byte is cleaned, not dropped.
  const std::string clean = is_valid_utf8(question) ? std::string(question) : sanitize_utf8(question);
  std::vector<std::string> all;
  for_each_word(clean, [&all](std::string_view w) {
    all.push_back(to_lower_ascii(w));
    for (const auto part : humps(w)) all.push_back(to_lower_ascii(part));
    for_each_cjk_term(w, [&all](std::string_view term) { all.push_back(to_lower_ascii(term)); });
  });
  std::vector<std::string> kept, fallback;
  std::set<std::string> seen;
  for (auto& w : all) {
    if (!seen.insert(w).second) continue;
    // One ASCII letter says nothing ("a", "I"); one digit or one CJK character may.
    if (w.size() == 1 && !digit(w[0])) continue;
    (stop_word(w) ? fallback : kept).push_back(w);
  }
  if (kept.empty()) kept = std::move(fallback);
  if (kept.size() > max_terms) kept.resize(max_terms);
  return kept;
}

std::string fts_query(const std::vector<std::string>& terms) {
  std::string out;
  for (const auto& t : terms) {
    if (!out.empty()) out += " OR ";
    out.push_back('"');
    for (const char c : t) {
      if (c == '"') out.push_back('"');
      out.push_back(c);
    }
    out.push_back('"');
  }
  return out;
}

}  // namespace day0::knowledge
