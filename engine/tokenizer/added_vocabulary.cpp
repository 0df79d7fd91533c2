#include "tokenizer/added_vocabulary.h"

#include <algorithm>

#include "day0/log.h"
#include "tokenizer/unicode.h"

namespace day0::tokenizer {

namespace {

// Limits that only hostile files reach.
constexpr std::size_t kMaxAddedTokens = 1 << 20;
constexpr std::size_t kMaxAddedTokenBytes = 4096;

// Last character of text[0, end) / first of text[start, ...): Rust regex \w, as tokenizers checks.
bool ends_with_word(std::string_view text, std::size_t end) {
  if (end == 0) return false;
  std::size_t k = end - 1;
  while (k > 0 && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) --k;
  return is_rust_word_char(next_code_point(text, k));
}

bool starts_with_word(std::string_view text, std::size_t start) {
  if (start >= text.size()) return false;
  return is_rust_word_char(next_code_point(text, start));
}

}  // namespace

void AddedVocabulary::Trie::insert(std::string_view pattern, std::size_t token) {
  if (nodes.empty()) nodes.emplace_back();
  std::uint32_t at = 0;
  for (unsigned char b : pattern) {
    auto& children = nodes[at].children;
    const auto it = std::lower_bound(children.begin(), children.end(), b,
                                     [](const auto& child, unsigned char v) { return child.first < v; });
    if (it != children.end() && it->first == b) {
      at = it->second;
      continue;
    }
    const auto child = static_cast<std::uint32_t>(nodes.size());
    nodes[at].children.insert(it, {b, child});
    nodes.emplace_back();
    at = child;
  }
  // A repeated pattern keeps the first token (aho-corasick's lowest pattern index).
  if (nodes[at].token < 0) nodes[at].token = static_cast<std::int64_t>(token);
  first_byte[static_cast<unsigned char>(pattern[0])] = true;
}

Result<AddedVocabulary> AddedVocabulary::from_json(const json& tokens, const BpeModel& model,
                                                   const Normalizer* normalizer, const std::string& path) {
  AddedVocabulary v;
  v.id_bound_ = model.id_bound();
  if (tokens.is_null()) return v;
  if (!tokens.is_array()) return wrong_type(path, "an array", tokens);
  if (tokens.size() > kMaxAddedTokens)
    return error(ErrorCode::corrupt_data, path + " has " + std::to_string(tokens.size()) +
                                              " tokens, over the limit of " + std::to_string(kMaxAddedTokens));
  std::int64_t max_added = -1;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const json& t = tokens[i];
    const std::string where = path + "[" + std::to_string(i) + "]";
    if (!t.is_object()) return wrong_type(where, "an object", t);
    AddedToken token;
    DAY0_ASSIGN_OR_RETURN(token.content, read_string(t, "content", where));
    if (token.content.size() > kMaxAddedTokenBytes)
      return error(ErrorCode::corrupt_data, where + ".content has " + std::to_string(token.content.size()) +
                                                " bytes, over the limit of " + std::to_string(kMaxAddedTokenBytes));
    const auto id_field = t.find("id");
    if (id_field == t.end()) return error(ErrorCode::corrupt_data, where + " has no \"id\"");
    DAY0_ASSIGN_OR_RETURN(const std::uint32_t file_id, read_id(*id_field, where + ".id"));
    DAY0_ASSIGN_OR_RETURN(token.special, read_bool(t, "special", false, where));
    DAY0_ASSIGN_OR_RETURN(token.single_word, read_bool(t, "single_word", false, where));
    DAY0_ASSIGN_OR_RETURN(token.lstrip, read_bool(t, "lstrip", false, where));
    DAY0_ASSIGN_OR_RETURN(token.rstrip, read_bool(t, "rstrip", false, where));
    DAY0_ASSIGN_OR_RETURN(token.normalized, read_bool(t, "normalized", !token.special, where));
    if (token.content.empty()) continue;
    if (token.special) v.special_contents_.emplace(token.content, true);
    // An identical token already added is ignored; the same content with other flags replaces it.
    bool duplicate = false;
    for (const AddedToken& other : v.tokens_)
      duplicate = duplicate || (other.content == token.content && other.single_word == token.single_word &&
                                other.lstrip == token.lstrip && other.rstrip == token.rstrip &&
                                other.normalized == token.normalized && other.special == token.special);
    if (duplicate) continue;
    std::uint32_t id;
    if (const auto known = v.token_to_id(token.content)) {
      id = *known;
    } else if (const auto in_model = model.token_to_id(token.content)) {
      id = *in_model;
    } else {
      const auto model_size = static_cast<std::int64_t>(model.size());
      id = static_cast<std::uint32_t>(max_added < 0                                  ? model_size
                                      : (max_added >= model_size || model_size == 0) ? max_added + 1
                                                                                     : model_size);
    }
    if (id > kMaxTokenId) return error(ErrorCode::corrupt_data, where + ": too many added tokens");
    if (id != file_id)
      DAY0_LOG_WARN("{}: token \"{}\" is listed with id {} but takes id {} (as in the tokenizers library)", where,
                    token.content, file_id, id);
    token.id = id;
    v.content_to_id_[token.content] = id;
    max_added = std::max<std::int64_t>(max_added, id);
    if (const auto it = v.by_id_.find(id); it != v.by_id_.end()) {
      v.tokens_[it->second] = token;
    } else {
      v.by_id_.emplace(id, v.tokens_.size());
      v.tokens_.push_back(token);
    }
    v.id_bound_ = std::max<std::size_t>(v.id_bound_, std::size_t{id} + 1);
  }
  // tokenizers lists special tokens first, then the others, each in insertion order; the trie
  // keeps the first of equal patterns.
  std::vector<std::size_t> order(v.tokens_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&v](std::size_t i) { return v.tokens_[i].special; });
  for (std::size_t i : order) {
    AddedToken& token = v.tokens_[i];
    token.surface = token.content;
    if (!token.normalized) {
      v.raw_trie_.insert(token.content, i);
      continue;
    }
    Piece p;
    p.text = token.content;
    if (normalizer)
      DAY0_RETURN_IF_ERROR(normalizer->normalize(p).with_context(path + ": normalizing \"" + token.content + "\""));
    if (p.text.empty())
      return error(ErrorCode::unsupported,
                   path + ": added token \"" + token.content + "\" normalizes to nothing and could match anywhere");
    token.surface = p.text;
    v.normalized_trie_.insert(p.text, i);
  }
  return v;
}

std::optional<std::uint32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto it = content_to_id_.find(content);
  if (it == content_to_id_.end()) return std::nullopt;
  return it->second;
}

const AddedToken* AddedVocabulary::by_id(std::uint32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

bool AddedVocabulary::is_special_content(std::string_view content) const {
  return special_contents_.find(content) != special_contents_.end();
}

std::vector<AddedVocabulary::Match> AddedVocabulary::find_matches(std::string_view text, const Trie& trie) const {
  std::vector<Match> found;
  if (trie.nodes.empty() || text.empty()) return found;
  std::size_t start_offset = 0;  // end of the previous accepted match
  std::size_t pos = 0;           // where the automaton resumes (end of the previous raw match)
  while (pos < text.size()) {
    // Leftmost start with a match; the longest pattern there.
    std::size_t start = pos;
    std::int64_t token = -1;
    std::size_t end = 0;
    for (; start < text.size(); ++start) {
      if (!trie.first_byte[static_cast<unsigned char>(text[start])]) continue;
      std::uint32_t at = 0;
      for (std::size_t k = start; k < text.size(); ++k) {
        const auto& children = trie.nodes[at].children;
        const auto b = static_cast<unsigned char>(text[k]);
        const auto it = std::lower_bound(children.begin(), children.end(), b,
                                         [](const auto& child, unsigned char v) { return child.first < v; });
        if (it == children.end() || it->first != b) break;
        at = it->second;
        if (trie.nodes[at].token >= 0) {
          token = trie.nodes[at].token;
          end = k + 1;
        }
      }
      if (token >= 0) break;
    }
    if (token < 0) break;
    pos = end;
    const AddedToken& t = tokens_[static_cast<std::size_t>(token)];
    std::size_t s = start;
    std::size_t e = end;
    if (t.single_word) {
      const bool start_space = s == 0 || !ends_with_word(text, s);
      const bool stop_space = e == text.size() || !starts_with_word(text, e);
      if (!start_space || !stop_space) continue;
    }
    if (t.lstrip) {
      // Leftmost start of the whitespace run that ends at s, not reaching into a previous match.
      std::size_t ws = s;
      while (ws > 0) {
        std::size_t k = ws - 1;
        while (k > 0 && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) --k;
        std::size_t probe = k;
        if (!is_white_space(next_code_point(text, probe))) break;
        ws = k;
      }
      s = std::max(ws, start_offset);
    }
    if (t.rstrip) {
      while (e < text.size()) {
        std::size_t probe = e;
        if (!is_white_space(next_code_point(text, probe))) break;
        e = probe;
      }
    }
    found.push_back({s, e, static_cast<std::size_t>(token)});
    start_offset = e;
  }
  return found;
}

void AddedVocabulary::split(std::vector<Piece>& pieces, bool normalized_pass) const {
  const Trie& trie = normalized_pass ? normalized_trie_ : raw_trie_;
  std::vector<Piece> out;
  out.reserve(pieces.size() + 8);
  for (Piece& p : pieces) {
    if (p.is_final()) {
      out.push_back(std::move(p));
      continue;
    }
    const std::vector<Match> matches = find_matches(p.text, trie);
    std::size_t at = 0;
    // Every piece is re-sliced (even when nothing matched), as tokenizers does: a slice takes
    // the original offset of its first byte.
    for (const Match& m : matches) {
      if (at < m.start) out.push_back(slice(p, at, m.start));
      Piece token = slice(p, m.start, m.end);
      token.added_id = tokens_[m.token].id;
      if (!token.text.empty()) out.push_back(std::move(token));
      at = m.end;
    }
    if (at < p.text.size()) out.push_back(slice(p, at, p.text.size()));
  }
  pieces = std::move(out);
}

}  // namespace day0::tokenizer
