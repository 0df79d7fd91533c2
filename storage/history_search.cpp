// Full-text search over titles and message text. The FTS5 indexes use the trigram tokenizer
// (migration 3): every 3-character window is indexed, case-folded, so a term of 3 or more
// characters in any script (CJK too, which has no spaces between words) is found through the
// index. Terms of 1 or 2 characters cannot use a trigram index; they filter with instr() on
// the rows, which is a scan when every term is short.
#include <algorithm>

#include "storage/history_db.h"
#include "storage/statement.h"

namespace day0::storage {
namespace {

constexpr std::size_t kMaxTerms = 16;
constexpr std::size_t kMaxTermBytes = 256;

std::size_t count_code_points(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

// Words split on ASCII white space and the ideographic space U+3000; "double quotes" keep a
// phrase together. Unbalanced quotes run to the end of the query.
std::vector<std::string> split_terms(std::string_view query) {
  std::string text(query);
  for (std::size_t at; (at = text.find("\xe3\x80\x80")) != std::string::npos;) text.replace(at, 3, " ");
  std::vector<std::string> terms;
  std::string current;
  bool quoted = false;
  auto push = [&] {
    if (!current.empty() && current.size() <= kMaxTermBytes &&
        std::find(terms.begin(), terms.end(), current) == terms.end())
      terms.push_back(current);
    current.clear();
  };
  for (char c : text) {
    if (c == '"') {
      push();
      quoted = !quoted;
    } else if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')) {
      push();
    } else {
      current += c;
    }
  }
  push();
  if (terms.size() > kMaxTerms) terms.resize(kMaxTerms);
  return terms;
}

// An FTS5 string: inside double quotes every character is literal, '"' is doubled.
std::string fts_phrase(std::string_view term) {
  std::string out = "\"";
  for (char c : term) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

struct Plan {
  std::string match;  // FTS5 query of the long terms, empty when there are none
  std::vector<std::string> short_terms;
};

Plan plan_for(const std::vector<std::string>& terms) {
  Plan plan;
  for (const auto& t : terms) {
    if (count_code_points(t) >= 3) {
      if (!plan.match.empty()) plan.match += " AND ";
      plan.match += fts_phrase(t);
    } else {
      plan.short_terms.push_back(ascii_lower(t));
    }
  }
  return plan;
}

// Moves `at` back to the start of the UTF-8 character it points into.
std::size_t char_start(std::string_view text, std::size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) --at;
  return at;
}

// Steps `count` characters from `at`, forwards or backwards, within the text.
std::size_t step_chars(std::string_view text, std::size_t at, int count) {
  while (count > 0 && at < text.size()) {
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) ++at;
    --count;
  }
  while (count < 0 && at > 0) {
    at = char_start(text, at - 1);
    ++count;
  }
  return at;
}

// ~30 characters before the first match and ~50 after, on one line.
void make_snippet(const std::string& text, const std::vector<std::string>& terms, SearchHit* hit) {
  const std::string lower = ascii_lower(text);
  std::size_t best = std::string::npos, length = 0;
  for (const auto& t : terms) {
    const auto at = lower.find(ascii_lower(t));
    if (at != std::string::npos && (best == std::string::npos || at < best)) {
      best = at;
      length = t.size();
    }
  }
  const std::size_t match = best == std::string::npos ? 0 : best;
  const std::size_t begin = step_chars(text, match, -30);
  const std::size_t end = step_chars(text, match + length, 50);
  std::string out = begin > 0 ? "\xe2\x80\xa6" : "";  // U+2026 ellipsis
  const std::size_t offset = out.size() + (match - begin);
  out += text.substr(begin, end - begin);
  if (end < text.size()) out += "\xe2\x80\xa6";
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  hit->snippet = std::move(out);
  hit->match_offset = best == std::string::npos ? 0 : offset;
  hit->match_length = best == std::string::npos ? 0 : length;
}

// " AND instr(lower(<expr>), ?N) > 0" for each short term, numbering from `first`.
std::string short_filters(const Plan& plan, const std::string& expr, int first) {
  std::string out;
  for (std::size_t i = 0; i < plan.short_terms.size(); ++i)
    out += " AND instr(lower(" + expr + "), ?" + std::to_string(first + static_cast<int>(i)) + ") > 0";
  return out;
}

}  // namespace

StoreResult<std::vector<SearchHit>> HistoryDb::search(std::string_view query, const SearchOptions& options) {
  const auto terms = split_terms(query);
  if (terms.empty() || options.limit <= 0) return std::vector<SearchHit>{};
  DAY0_STORE_ASSIGN(hits, search_titles(terms, options));
  DAY0_STORE_ASSIGN(messages, search_messages(terms, options));
  for (auto& m : messages) hits.push_back(std::move(m));
  if (hits.size() > static_cast<std::size_t>(options.limit)) hits.resize(static_cast<std::size_t>(options.limit));
  return hits;
}

StoreResult<std::vector<SearchHit>> HistoryDb::search_titles(const std::vector<std::string>& terms,
                                                             const SearchOptions& options) {
  const Plan plan = plan_for(terms);
  // ?1 match, ?2 include archived, ?3 limit, ?4... short terms.
  std::string sql = "SELECT c.id, c.uuid, c.title, c.updated_at FROM ";
  sql += plan.match.empty() ? "conversations c WHERE 1"
                            : "conversation_search s JOIN conversations c ON c.id = s.rowid "
                              "WHERE conversation_search MATCH ?1";
  sql += " AND (?2 OR c.archived = 0)" + short_filters(plan, "c.title", 4);
  sql += plan.match.empty() ? " ORDER BY c.updated_at DESC, c.id DESC" : " ORDER BY bm25(conversation_search), c.id";
  sql += " LIMIT ?3";
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, sql));
  if (!plan.match.empty()) s.bind(1, plan.match);
  s.bind(2, std::int64_t{options.include_archived}).bind(3, std::int64_t{options.limit});
  for (std::size_t i = 0; i < plan.short_terms.size(); ++i) s.bind(4 + static_cast<int>(i), plan.short_terms[i]);
  std::vector<SearchHit> out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    SearchHit hit;
    hit.conversation_id = s.column_int(0);
    hit.conversation_uuid = s.column_text(1);
    hit.conversation_title = s.column_text(2);
    hit.created_at = s.column_int(3);
    make_snippet(hit.conversation_title, terms, &hit);
    out.push_back(std::move(hit));
  }
  return out;
}

StoreResult<std::vector<SearchHit>> HistoryDb::search_messages(const std::vector<std::string>& terms,
                                                               const SearchOptions& options) {
  const Plan plan = plan_for(terms);
  std::string sql = "SELECT m.id, m.uuid, m.role, m.content, m.reasoning, m.created_at, c.id, c.uuid, c.title FROM ";
  sql += plan.match.empty() ? "messages m JOIN conversations c ON c.id = m.conversation_id WHERE 1"
                            : "message_search s JOIN messages m ON m.id = s.rowid JOIN conversations c ON c.id = "
                              "m.conversation_id WHERE message_search MATCH ?1";
  sql += " AND (?2 OR c.archived = 0)" + short_filters(plan, "m.content || char(10) || m.reasoning", 4);
  sql += plan.match.empty() ? " ORDER BY m.created_at DESC, m.id DESC" : " ORDER BY bm25(message_search), m.id";
  sql += " LIMIT ?3";
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, sql));
  if (!plan.match.empty()) s.bind(1, plan.match);
  s.bind(2, std::int64_t{options.include_archived}).bind(3, std::int64_t{options.limit});
  for (std::size_t i = 0; i < plan.short_terms.size(); ++i) s.bind(4 + static_cast<int>(i), plan.short_terms[i]);
  std::vector<SearchHit> out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    SearchHit hit;
    hit.message_id = s.column_int(0);
    hit.message_uuid = s.column_text(1);
    hit.role = parse_role(s.column_text(2));
    const std::string content = s.column_text(3);
    const std::string reasoning = s.column_text(4);
    hit.created_at = s.column_int(5);
    hit.conversation_id = s.column_int(6);
    hit.conversation_uuid = s.column_text(7);
    hit.conversation_title = s.column_text(8);
    make_snippet(content, terms, &hit);
    if (hit.match_length == 0 && !reasoning.empty()) {
      SearchHit in_reasoning = hit;
      make_snippet(reasoning, terms, &in_reasoning);
      if (in_reasoning.match_length > 0) hit = std::move(in_reasoning);
    }
    out.push_back(std::move(hit));
  }
  return out;
}

}  // namespace day0::storage
