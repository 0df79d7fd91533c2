#include "tokenizer/pre_tokenizers.h"

#include <functional>

#include "tokenizer/byte_level.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/unicode.h"

namespace day0::tokenizer {

namespace {

// GPT-2's pattern, used by ByteLevel when use_regex is true.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Runs `fn(piece, out)` on each non-final piece, keeping final ones, and drops empty results.
template <typename Fn>
Status split_each(std::vector<Piece>& pieces, Fn&& fn) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 4);
  for (Piece& p : pieces) {
    if (p.is_final()) {
      out.push_back(std::move(p));
      continue;
    }
    const std::size_t before = out.size();
    DAY0_RETURN_IF_ERROR(fn(p, out));
    std::size_t keep = before;
    for (std::size_t i = before; i < out.size(); ++i)
      if (!out[i].text.empty() || out[i].is_final()) {
        if (keep != i) out[keep] = std::move(out[i]);
        ++keep;
      }
    out.resize(keep);
  }
  pieces = std::move(out);
  return Status::ok();
}

// tokenizers' Pattern for `Fn(char) -> bool`: every matching character is its own match.
void char_spans(std::string_view text, const std::function<bool(std::uint32_t)>& test, std::vector<Span>& out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  std::size_t last = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t at = i;
    const std::uint32_t cp = next_code_point(text, i);
    if (!test(cp)) continue;
    if (last < at) out.push_back({last, at, false});
    out.push_back({at, i, true});
    last = i;
  }
  if (last < text.size()) out.push_back({last, text.size(), false});
}

Result<SplitBehavior> parse_behavior(const json& j, const char* key, SplitBehavior fallback, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) return wrong_type(path + "." + key, "a string", *it);
  const std::string s = it->get<std::string>();
  if (s == "Removed") return SplitBehavior::removed;
  if (s == "Isolated") return SplitBehavior::isolated;
  if (s == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (s == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (s == "Contiguous") return SplitBehavior::contiguous;
  return error(ErrorCode::corrupt_data, path + "." + key + ": unknown split behavior \"" + s + "\"");
}

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(std::shared_ptr<const Pattern> pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Span> spans;
    return split_each(pieces, [&](Piece& p, std::vector<Piece>& out) -> Status {
      DAY0_RETURN_IF_ERROR(pattern_->find_matches(p.text, spans));
      split_piece(p, spans, behavior_, invert_, out);
      return Status::ok();
    });
  }
  Status pre_tokenize_piece(Piece& piece, const PieceSink& sink) const override {
    std::vector<Span> spans;
    DAY0_RETURN_IF_ERROR(pattern_->find_matches(piece.text, spans));
    return split_piece(piece, spans, behavior_, invert_, sink);
  }

 private:
  std::shared_ptr<const Pattern> pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class CharSplitPreTokenizer final : public PreTokenizer {
 public:
  CharSplitPreTokenizer(std::function<bool(std::uint32_t)> test, SplitBehavior behavior)
      : test_(std::move(test)), behavior_(behavior) {}
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Span> spans;
    return split_each(pieces, [&](Piece& p, std::vector<Piece>& out) -> Status {
      char_spans(p.text, test_, spans);
      split_piece(p, spans, behavior_, false, out);
      return Status::ok();
    });
  }

 private:
  std::function<bool(std::uint32_t)> test_;
  SplitBehavior behavior_;
};

class ByteLevelPreTokenizer final : public PreTokenizer {
  static void map_bytes(Piece& p) {
    if (p.tracked) {
      const ByteLevelTable& t = byte_level_table();
      std::vector<std::uint32_t> align;
      align.reserve(p.text.size() * 2);
      for (std::size_t i = 0; i < p.text.size(); ++i)
        align.insert(align.end(), t.utf8_length[static_cast<unsigned char>(p.text[i])], p.align[i]);
      p.align = std::move(align);
    }
    byte_level_map(p.text);
  }

 public:
  ByteLevelPreTokenizer(bool add_prefix_space, std::shared_ptr<const Pattern> regex)
      : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    if (add_prefix_space_ || regex_) {
      std::vector<Span> spans;
      DAY0_RETURN_IF_ERROR(split_each(pieces, [&](Piece& p, std::vector<Piece>& out) -> Status {
        if (add_prefix_space_ && (p.text.empty() || p.text[0] != ' ')) prepend(p, " ");
        if (!regex_) {
          out.push_back(std::move(p));
          return Status::ok();
        }
        DAY0_RETURN_IF_ERROR(regex_->find_matches(p.text, spans));
        split_piece(p, spans, SplitBehavior::isolated, false, out);
        return Status::ok();
      }));
    } else {
      // Nothing to split: only the empty pieces go, in place.
      std::erase_if(pieces, [](const Piece& p) { return !p.is_final() && p.text.empty(); });
    }
    // Then every byte becomes its printable stand-in.
    for (Piece& p : pieces)
      if (!p.is_final()) map_bytes(p);
    return Status::ok();
  }
  Status pre_tokenize_piece(Piece& piece, const PieceSink& sink) const override {
    if (add_prefix_space_ || regex_) return PreTokenizer::pre_tokenize_piece(piece, sink);
    if (piece.text.empty()) return Status::ok();
    map_bytes(piece);
    return sink(piece);
  }

 private:
  bool add_prefix_space_;
  std::shared_ptr<const Pattern> regex_;
};

enum class PrependScheme { first, never, always };

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::uint32_t replacement, PrependScheme scheme, bool split)
      : scheme_(scheme), split_(split), space_(Pattern::literal(" ")) {
    append_utf8(replacement_, replacement);
    replacement_pattern_ = Pattern::literal(replacement_);
  }
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Span> spans;
    return split_each(pieces, [&](Piece& p, std::vector<Piece>& out) -> Status {
      DAY0_RETURN_IF_ERROR(space_->find_matches(p.text, spans));
      if (spans.size() > 1 || (spans.size() == 1 && spans[0].is_match)) replace_spans(p, spans, replacement_);
      const bool starts = p.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && p.shift == 0)))
        prepend(p, replacement_);
      if (!split_) {
        out.push_back(std::move(p));
        return Status::ok();
      }
      DAY0_RETURN_IF_ERROR(replacement_pattern_->find_matches(p.text, spans));
      split_piece(p, spans, SplitBehavior::merged_with_next, false, out);
      return Status::ok();
    });
  }
  bool needs_offsets() const override { return scheme_ == PrependScheme::first; }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
  std::shared_ptr<const Pattern> space_;
  std::shared_ptr<const Pattern> replacement_pattern_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& p : parts_) DAY0_RETURN_IF_ERROR(p->pre_tokenize(pieces));
    return Status::ok();
  }
  Status pre_tokenize_piece(Piece& piece, const PieceSink& sink) const override { return run_from(0, piece, sink); }
  bool needs_offsets() const override {
    for (const auto& p : parts_)
      if (p->needs_offsets()) return true;
    return false;
  }

 private:
  // Parts [i, end) on `piece`: each part's output goes straight into the next part.
  Status run_from(std::size_t i, Piece& piece, const PieceSink& sink) const {
    if (i == parts_.size()) return sink(piece);
    if (i + 1 == parts_.size()) return parts_[i]->pre_tokenize_piece(piece, sink);
    return parts_[i]->pre_tokenize_piece(piece, [&](Piece& part) { return run_from(i + 1, part, sink); });
  }
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

Result<PrependScheme> parse_prepend_scheme(const json& j, const std::string& path) {
  PrependScheme scheme = PrependScheme::always;
  if (const auto it = j.find("prepend_scheme"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return wrong_type(path + ".prepend_scheme", "a string", *it);
    const std::string s = it->get<std::string>();
    if (s == "first") {
      scheme = PrependScheme::first;
    } else if (s == "never") {
      scheme = PrependScheme::never;
    } else if (s == "always") {
      scheme = PrependScheme::always;
    } else {
      return error(ErrorCode::corrupt_data, path + ".prepend_scheme: unknown value \"" + s + "\"");
    }
  }
  // Files from before prepend_scheme existed say add_prefix_space.
  if (const auto it = j.find("add_prefix_space"); it != j.end() && it->is_boolean() && !it->get<bool>()) {
    if (scheme != PrependScheme::never && j.contains("prepend_scheme"))
      return error(ErrorCode::corrupt_data, path + ": add_prefix_space false contradicts prepend_scheme");
    scheme = PrependScheme::never;
  }
  return scheme;
}

}  // namespace

Status PreTokenizer::pre_tokenize_piece(Piece& piece, const PieceSink& sink) const {
  std::vector<Piece> parts;
  parts.push_back(std::move(piece));
  DAY0_RETURN_IF_ERROR(pre_tokenize(parts));
  for (Piece& part : parts) DAY0_RETURN_IF_ERROR(sink(part));
  return Status::ok();
}

Result<std::unique_ptr<PreTokenizer>> parse_pre_tokenizer(const json& j, const std::string& path, int depth) {
  using Ptr = std::unique_ptr<PreTokenizer>;
  if (j.is_null()) return Ptr();
  if (depth > kMaxComponentDepth)
    return error(ErrorCode::corrupt_data,
                 path + ": components nested more than " + std::to_string(kMaxComponentDepth) + " deep");
  DAY0_ASSIGN_OR_RETURN(const std::string type, component_type(j, path));
  if (type == "Split") {
    DAY0_ASSIGN_OR_RETURN(auto pattern, parse_pattern(j, path));
    DAY0_ASSIGN_OR_RETURN(const SplitBehavior behavior, parse_behavior(j, "behavior", SplitBehavior::isolated, path));
    DAY0_ASSIGN_OR_RETURN(const bool invert, read_bool(j, "invert", false, path));
    return Ptr(new SplitPreTokenizer(std::move(pattern), behavior, invert));
  }
  if (type == "ByteLevel") {
    DAY0_ASSIGN_OR_RETURN(const bool add_prefix_space, read_bool(j, "add_prefix_space", true, path));
    DAY0_ASSIGN_OR_RETURN(const bool use_regex, read_bool(j, "use_regex", true, path));
    std::shared_ptr<const Pattern> regex;
    if (use_regex) {
      DAY0_ASSIGN_OR_RETURN(regex, Pattern::regex(kGpt2Pattern));
    }
    return Ptr(new ByteLevelPreTokenizer(add_prefix_space, std::move(regex)));
  }
  if (type == "Digits") {
    DAY0_ASSIGN_OR_RETURN(const bool individual, read_bool(j, "individual_digits", false, path));
    return Ptr(new CharSplitPreTokenizer(is_numeric, individual ? SplitBehavior::isolated : SplitBehavior::contiguous));
  }
  if (type == "Metaspace") {
    DAY0_ASSIGN_OR_RETURN(const std::uint32_t replacement, read_char(j, "replacement", path));
    DAY0_ASSIGN_OR_RETURN(const PrependScheme scheme, parse_prepend_scheme(j, path));
    DAY0_ASSIGN_OR_RETURN(const bool split, read_bool(j, "split", true, path));
    return Ptr(new MetaspacePreTokenizer(replacement, scheme, split));
  }
  if (type == "WhitespaceSplit") return Ptr(new CharSplitPreTokenizer(is_white_space, SplitBehavior::removed));
  if (type == "Whitespace") {
    // tokenizers: Rust regex \w+|[^\w\s]+, inverted and removed.
    constexpr const char* kWord = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
    DAY0_ASSIGN_OR_RETURN(auto pattern,
                          Pattern::pcre2(std::string(kWord) + "+|[^\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}"
                                                              "\\p{White_Space}]+"));
    return Ptr(new SplitPreTokenizer(std::move(pattern), SplitBehavior::removed, true));
  }
  if (type == "Punctuation") {
    DAY0_ASSIGN_OR_RETURN(const SplitBehavior behavior, parse_behavior(j, "behavior", SplitBehavior::isolated, path));
    return Ptr(new CharSplitPreTokenizer(is_punctuation, behavior));
  }
  if (type == "BertPreTokenizer") {
    std::vector<Ptr> parts;
    parts.push_back(Ptr(new CharSplitPreTokenizer(is_white_space, SplitBehavior::removed)));
    parts.push_back(Ptr(new CharSplitPreTokenizer(is_punctuation, SplitBehavior::isolated)));
    return Ptr(new SequencePreTokenizer(std::move(parts)));
  }
  if (type == "CharDelimiterSplit") {
    DAY0_ASSIGN_OR_RETURN(const std::uint32_t delimiter, read_char(j, "delimiter", path));
    return Ptr(
        new CharSplitPreTokenizer([delimiter](std::uint32_t cp) { return cp == delimiter; }, SplitBehavior::removed));
  }
  if (type == "Sequence") {
    const auto it = j.find("pretokenizers");
    if (it == j.end() || !it->is_array())
      return wrong_type(path + ".pretokenizers", "an array", it == j.end() ? nullptr : &*it);
    std::vector<Ptr> parts;
    for (std::size_t i = 0; i < it->size(); ++i) {
      DAY0_ASSIGN_OR_RETURN(
          auto part, parse_pre_tokenizer((*it)[i], path + ".pretokenizers[" + std::to_string(i) + "]", depth + 1));
      if (part) parts.push_back(std::move(part));
    }
    return Ptr(new SequencePreTokenizer(std::move(parts)));
  }
  return error(ErrorCode::unsupported,
               path + ": pre-tokenizer type \"" + type +
                   "\" is not supported (Day0 supports Split, ByteLevel, Digits, Metaspace, Whitespace, "
                   "WhitespaceSplit, Punctuation, BertPreTokenizer, CharDelimiterSplit, Sequence)");
}

}  // namespace day0::tokenizer
