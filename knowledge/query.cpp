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

std::vector<std::string> question_terms(std::string_view question, std::size_t max_terms) {
  std::vector<std::string> all;
  for_each_word(question, [&all](std::string_view w) {
    // Keep whole UTF-8 characters: a word cut by an invalid byte is cleaned, not dropped.
    const std::string word = to_lower_ascii(is_valid_utf8(w) ? std::string(w) : sanitize_utf8(w));
    all.push_back(word);
    for (const auto part : humps(w)) all.push_back(to_lower_ascii(part));
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
