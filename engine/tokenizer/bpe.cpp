#include "tokenizer/bpe.h"

#include <queue>

#include "day0/log.h"
#include "tokenizer/unicode.h"

namespace day0::tokenizer {

namespace {

constexpr std::size_t kCacheCapacity = 1 << 16;
constexpr std::size_t kCachedWordBytes = 256;  // longer pieces are rare and not worth keeping
constexpr std::size_t kMaxIdGap = 1 << 20;

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) { return (std::uint64_t{a} << 32) | b; }

struct Symbol {
  std::uint32_t id;
  std::int64_t prev;
  std::int64_t next;
  std::size_t len;  // bytes of the word this symbol covers; 0 marks a merged-away symbol
};

struct MergeCandidate {
  std::uint32_t rank;
  std::size_t pos;
  std::uint32_t new_id;
  // std::priority_queue pops the largest: make the lowest rank, then the leftmost, the largest.
  bool operator<(const MergeCandidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

BpeModel::BpeModel(BpeModel&& o) noexcept
    : vocab_(std::move(o.vocab_)),
      vocab_r_(std::move(o.vocab_r_)),
      has_id_(std::move(o.has_id_)),
      merges_(std::move(o.merges_)),
      unk_token_(std::move(o.unk_token_)),
      continuing_subword_prefix_(std::move(o.continuing_subword_prefix_)),
      end_of_word_suffix_(std::move(o.end_of_word_suffix_)),
      fuse_unk_(o.fuse_unk_),
      byte_fallback_(o.byte_fallback_),
      ignore_merges_(o.ignore_merges_) {
  std::copy(std::begin(o.byte_ids_), std::end(o.byte_ids_), byte_ids_);
  std::copy(std::begin(o.has_byte_), std::end(o.has_byte_), has_byte_);
}

Result<BpeModel> BpeModel::from_json(const json& m, const std::string& path) {
  BpeModel bpe;
  const auto vocab = m.find("vocab");
  if (vocab == m.end() || !vocab->is_object())
    return wrong_type(path + ".vocab", "an object of token -> id", vocab == m.end() ? nullptr : &*vocab);
  std::uint32_t max_id = 0;
  bpe.vocab_.reserve(vocab->size());
  for (const auto& [token, value] : vocab->items()) {
    DAY0_ASSIGN_OR_RETURN(const std::uint32_t id, read_id(value, path + ".vocab[\"" + token + "\"]"));
    bpe.vocab_.emplace(token, id);
    max_id = std::max(max_id, id);
  }
  // Ids index a table: refuse a vocab whose ids are far sparser than any real one.
  if (!bpe.vocab_.empty() && max_id >= bpe.vocab_.size() + kMaxIdGap)
    return error(ErrorCode::corrupt_data, path + ".vocab: largest id " + std::to_string(max_id) + " for only " +
                                              std::to_string(bpe.vocab_.size()) + " tokens");
  if (!bpe.vocab_.empty()) {
    bpe.vocab_r_.resize(std::size_t{max_id} + 1);
    bpe.has_id_.assign(std::size_t{max_id} + 1, false);
  }
  for (const auto& [token, id] : bpe.vocab_) {
    if (bpe.has_id_[id])
      return error(ErrorCode::corrupt_data, path + ".vocab: tokens \"" + bpe.vocab_r_[id] + "\" and \"" + token +
                                                "\" both have id " + std::to_string(id));
    bpe.has_id_[id] = true;
    bpe.vocab_r_[id] = token;
  }

  DAY0_ASSIGN_OR_RETURN(bpe.unk_token_, read_optional_string(m, "unk_token", path));
  DAY0_ASSIGN_OR_RETURN(auto prefix, read_optional_string(m, "continuing_subword_prefix", path));
  DAY0_ASSIGN_OR_RETURN(auto suffix, read_optional_string(m, "end_of_word_suffix", path));
  bpe.continuing_subword_prefix_ = prefix.value_or("");
  bpe.end_of_word_suffix_ = suffix.value_or("");
  DAY0_ASSIGN_OR_RETURN(bpe.fuse_unk_, read_bool(m, "fuse_unk", false, path));
  DAY0_ASSIGN_OR_RETURN(bpe.byte_fallback_, read_bool(m, "byte_fallback", false, path));
  DAY0_ASSIGN_OR_RETURN(bpe.ignore_merges_, read_bool(m, "ignore_merges", false, path));
  if (const auto d = m.find("dropout"); d != m.end() && !d->is_null()) {
    if (!d->is_number()) return wrong_type(path + ".dropout", "a number or null", *d);
    const double p = d->get<double>();
    if (!(p >= 0.0 && p <= 1.0))
      return error(ErrorCode::corrupt_data, path + ".dropout must be between 0 and 1, found " + std::to_string(p));
    if (p > 0.0) DAY0_LOG_INFO("{}: BPE dropout {} ignored; Day0 tokenizes deterministically", path, p);
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (const auto it = bpe.vocab_.find(std::string_view(name)); it != bpe.vocab_.end()) {
      bpe.byte_ids_[b] = it->second;
      bpe.has_byte_[b] = true;
    }
  }

  const auto merges = m.find("merges");
  if (merges != m.end() && !merges->is_null()) {
    if (!merges->is_array()) return wrong_type(path + ".merges", "an array", *merges);
    bpe.merges_.reserve(merges->size());
    std::uint32_t rank = 0;
    for (std::size_t i = 0; i < merges->size(); ++i) {
      const json& entry = (*merges)[i];
      const std::string where = path + ".merges[" + std::to_string(i) + "]";
      std::string a, b;
      if (entry.is_string()) {
        const std::string s = entry.get<std::string>();
        if (s.rfind("#version", 0) == 0) continue;  // merges.txt header, skipped as tokenizers does
        const std::size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
          return error(ErrorCode::corrupt_data, where + ": \"" + s + "\" is not two tokens separated by one space");
        a = s.substr(0, space);
        b = s.substr(space + 1);
      } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
        a = entry[0].get<std::string>();
        b = entry[1].get<std::string>();
      } else {
        return wrong_type(where, "\"a b\" or [\"a\", \"b\"]", entry);
      }
      const auto ia = bpe.vocab_.find(a);
      const auto ib = bpe.vocab_.find(b);
      if (ia == bpe.vocab_.end() || ib == bpe.vocab_.end())
        return error(ErrorCode::corrupt_data,
                     where + " names \"" + (ia == bpe.vocab_.end() ? a : b) + "\", which is not in the vocab");
      if (b.size() < bpe.continuing_subword_prefix_.size())
        return error(ErrorCode::corrupt_data, where + ": \"" + b + "\" is shorter than continuing_subword_prefix");
      const std::string merged = a + b.substr(bpe.continuing_subword_prefix_.size());
      const auto im = bpe.vocab_.find(merged);
      if (im == bpe.vocab_.end())
        return error(ErrorCode::corrupt_data, where + ": the merged token \"" + merged + "\" is not in the vocab");
      // A repeated pair keeps its last rank, as tokenizers' HashMap collect does.
      bpe.merges_[pair_key(ia->second, ib->second)] = {rank, im->second};
      ++rank;
    }
  }
  return bpe;
}

std::optional<std::uint32_t> BpeModel::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(std::uint32_t id) const {
  if (id >= vocab_r_.size() || !has_id_[id]) return nullptr;
  return &vocab_r_[id];
}

Status BpeModel::tokenize(std::string_view piece, std::vector<std::uint32_t>& out) const {
  if (piece.empty()) return Status::ok();
  if (ignore_merges_) {
    if (const auto it = vocab_.find(piece); it != vocab_.end()) {
      out.push_back(it->second);
      return Status::ok();
    }
  }
  const bool cacheable = piece.size() <= kCachedWordBytes;
  if (cacheable) {
    std::unique_lock lock(cache_mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      if (const auto it = cache_.find(piece); it != cache_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return Status::ok();
      }
    }
  }
  const std::size_t before = out.size();
  DAY0_RETURN_IF_ERROR(merge_word(piece, out));
  if (cacheable) {
    std::unique_lock lock(cache_mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      if (cache_.size() >= kCacheCapacity) cache_.clear();
      cache_.emplace(std::string(piece),
                     std::vector<std::uint32_t>(out.begin() + static_cast<std::ptrdiff_t>(before), out.end()));
    }
  }
  return Status::ok();
}

Status BpeModel::merge_word(std::string_view w, std::vector<std::uint32_t>& out) const {
  std::vector<Symbol> symbols;
  symbols.reserve(w.size());
  auto add = [&symbols](std::uint32_t id, std::size_t len) {
    const auto n = static_cast<std::int64_t>(symbols.size());
    if (!symbols.empty()) symbols.back().next = n;
    symbols.push_back({id, n - 1, -1, len});
  };
  // A pending unk token: (id, bytes covered), not yet added so that fuse_unk can extend it.
  bool unk_pending = false;
  std::uint32_t unk_id = 0;
  std::size_t unk_len = 0;
  std::string scratch;
  std::size_t i = 0;
  while (i < w.size()) {
    const std::size_t start = i;
    i += utf8_length(static_cast<unsigned char>(w[i]));
    if (i > w.size()) i = w.size();
    const std::size_t byte_len = i - start;
    std::string_view s = w.substr(start, byte_len);
    if ((start > 0 && !continuing_subword_prefix_.empty()) || (i == w.size() && !end_of_word_suffix_.empty())) {
      scratch.clear();
      if (start > 0) scratch += continuing_subword_prefix_;
      scratch += s;
      if (i == w.size()) scratch += end_of_word_suffix_;
      s = scratch;
    }
    if (const auto it = vocab_.find(s); it != vocab_.end()) {
      if (unk_pending) {
        add(unk_id, unk_len);
        unk_pending = false;
      }
      add(it->second, byte_len);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char b : s) all = all && has_byte_[b];
      if (all) {
        // A pending unk stays pending here, exactly as tokenizers orders it.
        for (unsigned char b : s) add(byte_ids_[b], 1);
        continue;
      }
    }
    if (unk_token_) {
      const auto u = vocab_.find(*unk_token_);
      if (u == vocab_.end())
        return error(ErrorCode::corrupt_data, "unk_token \"" + *unk_token_ + "\" is not in the vocab");
      if (unk_pending && fuse_unk_) {
        unk_len += byte_len;
      } else {
        if (unk_pending) add(unk_id, unk_len);
        unk_pending = true;
        unk_id = u->second;
        unk_len = byte_len;
      }
    }
  }
  if (unk_pending) add(unk_id, unk_len);

  std::priority_queue<MergeCandidate> queue;
  auto lookup = [this](std::uint32_t a, std::uint32_t b) -> const MergeValue* {
    const auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  };
  for (std::size_t k = 0; k + 1 < symbols.size(); ++k)
    if (const MergeValue* m = lookup(symbols[k].id, symbols[k + 1].id)) queue.push({m->rank, k, m->new_id});
  while (!queue.empty()) {
    const MergeCandidate top = queue.top();
    queue.pop();
    Symbol& cur = symbols[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;
    const auto next_pos = static_cast<std::size_t>(cur.next);
    const Symbol right = symbols[next_pos];
    const MergeValue* m = lookup(cur.id, right.id);
    if (m == nullptr || m->new_id != top.new_id) continue;  // stale entry
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    symbols[next_pos].len = 0;
    if (right.next > -1 && static_cast<std::size_t>(right.next) < symbols.size())
      symbols[static_cast<std::size_t>(right.next)].prev = static_cast<std::int64_t>(top.pos);
    if (cur.prev >= 0) {
      const auto prev = static_cast<std::size_t>(cur.prev);
      if (const MergeValue* pm = lookup(symbols[prev].id, cur.id)) queue.push({pm->rank, prev, pm->new_id});
    }
    if (cur.next >= 0 && static_cast<std::size_t>(cur.next) < symbols.size()) {
      if (const MergeValue* nm = lookup(cur.id, symbols[static_cast<std::size_t>(cur.next)].id))
        queue.push({nm->rank, top.pos, nm->new_id});
    }
  }
  for (const Symbol& s : symbols)
    if (s.len != 0) out.push_back(s.id);
  return Status::ok();
}

}  // namespace day0::tokenizer
