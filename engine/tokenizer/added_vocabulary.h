#pragma once
// tokenizer.json "added_tokens": tokens matched in the text before pre-tokenization, exactly as
// tokenizers' AddedVocabulary: leftmost-longest matching, first the tokens with normalized=false
// on the original text, then the others on each normalized piece; single_word, lstrip and
// rstrip applied to each match.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/normalized.h"
#include "tokenizer/normalizers.h"

namespace day0::tokenizer {

struct AddedToken {
  std::string content;
  // What id_to_token and the decoder see: for normalized tokens the normalized content (as
  // tokenizers 0.23 returns it, so that the decoder inverts the normalizer), else the content.
  std::string surface;
  std::uint32_t id = 0;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

class AddedVocabulary {
 public:
  // Adds the tokens of the "added_tokens" array in order, assigning ids as tokenizers does (the
  // model's id when the content is in its vocab, else the next free id); a token whose assigned
  // id differs from the file's is reported in the log, as tokenizers warns.
  static Result<AddedVocabulary> from_json(const json& tokens, const BpeModel& model, const Normalizer* normalizer,
                                           const std::string& path);

  // Splits every non-final piece on the tokens matched against its text (`normalized_pass`
  // selects which tokens). Matches become final pieces.
  void split(std::vector<Piece>& pieces, bool normalized_pass) const;
  bool has_normalized_tokens() const { return !normalized_trie_.nodes.empty(); }
  bool has_raw_tokens() const { return !raw_trie_.nodes.empty(); }

  std::optional<std::uint32_t> token_to_id(std::string_view content) const;
  const AddedToken* by_id(std::uint32_t id) const;
  bool is_special_content(std::string_view content) const;
  std::size_t id_bound() const { return id_bound_; }

 private:
  struct Trie {
    struct Node {
      std::vector<std::pair<unsigned char, std::uint32_t>> children;  // sorted by byte
      std::int64_t token = -1;                                        // index into tokens_
    };
    std::vector<Node> nodes;  // nodes[0] is the root when non-empty
    bool first_byte[256] = {};
    void insert(std::string_view pattern, std::size_t token);
  };
  struct Match {
    std::size_t start, end, token;
  };
  // Leftmost-longest non-overlapping matches, then the single_word/lstrip/rstrip rules.
  std::vector<Match> find_matches(std::string_view text, const Trie& trie) const;

  std::vector<AddedToken> tokens_;
  TokenMap content_to_id_;
  std::unordered_map<std::uint32_t, std::size_t> by_id_;
  std::unordered_map<std::string, bool, StringHash, std::equal_to<>> special_contents_;
  Trie raw_trie_;
  Trie normalized_trie_;
  std::size_t id_bound_ = 0;
};

}  // namespace day0::tokenizer
