#pragma once
// tokenizer.json "model" of type BPE: vocab, merges (as "a b" strings or [a, b] pairs), unk_token,
// fuse_unk, byte_fallback (<0xNN> tokens), ignore_merges, continuing_subword_prefix,
// end_of_word_suffix. dropout is ignored (Day0 always tokenizes deterministically).
//
// Merging follows tokenizers' Word::merge_all: a priority queue of (rank, position) pairs, lowest
// rank first and leftmost among equals, entries checked for staleness when popped. Results of
// whole words are cached.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_read.h"

namespace day0::tokenizer {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  static Result<BpeModel> from_json(const json& model, const std::string& path);

  BpeModel(BpeModel&& other) noexcept;
  BpeModel& operator=(BpeModel&&) = delete;

  // Appends the ids of one pre-tokenized piece.
  Status tokenize(std::string_view piece, std::vector<std::uint32_t>& out) const;

  std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(std::uint32_t id) const;
  // Number of entries (tokenizers' get_vocab_size, which places new added tokens).
  std::size_t size() const { return vocab_.size(); }
  // One past the largest id.
  std::size_t id_bound() const { return vocab_r_.size(); }

 private:
  BpeModel() = default;
  Status merge_word(std::string_view word, std::vector<std::uint32_t>& out) const;

  struct MergeValue {
    std::uint32_t rank;
    std::uint32_t new_id;
  };
  TokenMap vocab_;
  std::vector<std::string> vocab_r_;
  std::vector<bool> has_id_;
  std::unordered_map<std::uint64_t, MergeValue> merges_;
  std::optional<std::string> unk_token_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::uint32_t byte_ids_[256] = {};  // <0xNN> ids, valid where has_byte_[b]
  bool has_byte_[256] = {};

  // Word -> ids. Taken with try_lock: a busy cache is skipped rather than waited for.
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::uint32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace day0::tokenizer
