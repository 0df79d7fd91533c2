#include "tokenizer/decoders.h"

#include "tokenizer/byte_level.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/unicode.h"

namespace day0::tokenizer {

struct DecoderSpec {
  enum class Kind { byte_level, metaspace, byte_fallback, fuse, strip, replace };
  Kind kind;
  std::uint32_t replacement = 0;  // Metaspace
  bool prepend_never = false;     // Metaspace: prepend_scheme "never" keeps token 0's first space
  std::uint32_t strip_content = 0;
  std::size_t strip_start = 0, strip_stop = 0;
  std::shared_ptr<const Pattern> pattern;  // Replace
  std::string content;                     // Replace
};

namespace {

using Kind = DecoderSpec::Kind;

// Maximum counts in Strip; real files use 0 or 1.
constexpr std::uint64_t kMaxStripCount = 1 << 16;

// "<0xNN>" -> the byte, as tokenizers' ByteFallback reads it.
int byte_token(std::string_view token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = token[k];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// A byte run of ByteFallback: one token holding the string when it is valid UTF-8, else one
// U+FFFD token per byte.
void push_byte_run(std::vector<std::string>& out, std::string_view bytes) {
  if (is_valid_utf8(bytes)) {
    out.emplace_back(bytes);
    return;
  }
  for (std::size_t k = 0; k < bytes.size(); ++k) out.emplace_back("\xEF\xBF\xBD");
}

// ByteLevel: the bytes a token stands for, or its own UTF-8 when a character is not in the table.
void append_token_bytes(std::string& out, std::string_view token) {
  const ByteLevelTable& t = byte_level_table();
  const std::size_t before = out.size();
  std::size_t i = 0;
  while (i < token.size()) {
    const std::uint32_t cp = next_code_point(token, i);
    if (cp >= t.char_to_byte.size() || t.char_to_byte[cp] < 0) {
      out.resize(before);
      out.append(token);
      return;
    }
    out.push_back(static_cast<char>(t.char_to_byte[cp]));
  }
}

std::string metaspace_token(const DecoderSpec& d, std::string_view token, bool first) {
  std::string out;
  out.reserve(token.size());
  std::size_t i = 0;
  while (i < token.size()) {
    const std::size_t at = i;
    const std::uint32_t cp = next_code_point(token, i);
    if (cp == d.replacement) {
      if (!(first && !d.prepend_never)) out.push_back(' ');
    } else {
      out.append(token, at, i - at);
    }
  }
  return out;
}

Result<std::string> replace_token(const DecoderSpec& d, std::string_view token) {
  std::vector<Span> spans;
  DAY0_RETURN_IF_ERROR(d.pattern->find_matches(token, spans));
  std::string out;
  for (const Span& s : spans) {
    if (s.is_match) {
      out += d.content;
    } else {
      out.append(token.substr(s.start, s.end - s.start));
    }
  }
  return out;
}

std::string strip_token(const DecoderSpec& d, std::string_view token) {
  std::vector<std::pair<std::size_t, std::size_t>> chars;  // (byte start, byte end)
  std::vector<std::uint32_t> cps;
  std::size_t i = 0;
  while (i < token.size()) {
    const std::size_t at = i;
    cps.push_back(next_code_point(token, i));
    chars.push_back({at, i});
  }
  std::size_t start_cut = 0;
  for (std::size_t k = 0; k < d.strip_start && k < cps.size(); ++k) {
    if (cps[k] != d.strip_content) break;
    start_cut = k + 1;
  }
  std::size_t stop_cut = cps.size();
  for (std::size_t k = 0; k < d.strip_stop && k < cps.size(); ++k) {
    const std::size_t index = cps.size() - k - 1;
    if (cps[index] != d.strip_content) break;
    stop_cut = index;
  }
  if (start_cut >= stop_cut) return {};
  return std::string(token.substr(chars[start_cut].first, chars[stop_cut - 1].second - chars[start_cut].first));
}

Status run_stage(const DecoderSpec& d, std::vector<std::string>& tokens) {
  switch (d.kind) {
    case Kind::byte_level: {
      std::string bytes;
      for (const std::string& t : tokens) append_token_bytes(bytes, t);
      tokens.assign(1, lossy_utf8(bytes));
      return Status::ok();
    }
    case Kind::metaspace:
      for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = metaspace_token(d, tokens[i], i == 0);
      return Status::ok();
    case Kind::byte_fallback: {
      std::vector<std::string> out;
      std::string run;
      bool in_run = false;
      for (std::string& t : tokens) {
        const int b = byte_token(t);
        if (b >= 0) {
          run.push_back(static_cast<char>(b));
          in_run = true;
          continue;
        }
        if (in_run) {
          push_byte_run(out, run);
          run.clear();
          in_run = false;
        }
        out.push_back(std::move(t));
      }
      if (in_run) push_byte_run(out, run);
      tokens = std::move(out);
      return Status::ok();
    }
    case Kind::fuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      return Status::ok();
    }
    case Kind::strip:
      for (std::string& t : tokens) t = strip_token(d, t);
      return Status::ok();
    case Kind::replace:
      for (std::string& t : tokens) {
        DAY0_ASSIGN_OR_RETURN(t, replace_token(d, t));
      }
      return Status::ok();
  }
  return Status::ok();
}

// ---- streaming stages -------------------------------------------------------------------------

class ByteLevelStage final : public StreamStage {
 public:
  void push(std::string token, std::vector<std::string>& out) override {
    append_token_bytes(pending_, token);
    const std::size_t tail = incomplete_utf8_tail(pending_);
    if (pending_.size() == tail) return;
    out.push_back(lossy_utf8(std::string_view(pending_).substr(0, pending_.size() - tail)));
    pending_.erase(0, pending_.size() - tail);
  }
  void finish(std::vector<std::string>& out) override {
    if (!pending_.empty()) out.push_back(lossy_utf8(pending_));
    pending_.clear();
  }

 private:
  std::string pending_;
};

class MetaspaceStage final : public StreamStage {
 public:
  MetaspaceStage(const DecoderSpec& d, bool fused) : d_(d), fused_(fused) {}
  void push(std::string token, std::vector<std::string>& out) override {
    out.push_back(metaspace_token(d_, token, fused_ || index_ == 0));
    ++index_;
  }
  void finish(std::vector<std::string>&) override {}

 private:
  const DecoderSpec& d_;
  bool fused_;
  std::size_t index_ = 0;
};

class ByteFallbackStage final : public StreamStage {
 public:
  void push(std::string token, std::vector<std::string>& out) override {
    const int b = byte_token(token);
    if (b >= 0) {
      run_.push_back(static_cast<char>(b));
      in_run_ = true;
      return;
    }
    finish(out);
    out.push_back(std::move(token));
  }
  void finish(std::vector<std::string>& out) override {
    if (!in_run_) return;
    push_byte_run(out, run_);
    run_.clear();
    in_run_ = false;
  }

 private:
  std::string run_;
  bool in_run_ = false;
};

class PerTokenStage final : public StreamStage {
 public:
  explicit PerTokenStage(const DecoderSpec& d) : d_(d) {}
  void push(std::string token, std::vector<std::string>& out) override {
    if (d_.kind == Kind::strip) {
      out.push_back(strip_token(d_, token));
    } else {
      auto r = replace_token(d_, token);
      out.push_back(r ? std::move(*r) : std::move(token));
    }
  }
  void finish(std::vector<std::string>&) override {}

 private:
  const DecoderSpec& d_;
};

class PassStage final : public StreamStage {
 public:
  void push(std::string token, std::vector<std::string>& out) override { out.push_back(std::move(token)); }
  void finish(std::vector<std::string>&) override {}
};

// Strip on the fused text: drops up to `start` leading and `stop` trailing content characters of
// the whole text, holding back a trailing run of content characters until it is settled.
class FusedStripStage final : public StreamStage {
 public:
  explicit FusedStripStage(const DecoderSpec& d) : d_(d) {}
  void push(std::string token, std::vector<std::string>& out) override {
    std::string emit;
    std::size_t i = 0;
    while (i < token.size()) {
      const std::size_t at = i;
      const std::uint32_t cp = next_code_point(token, i);
      if (!leading_done_) {
        if (cp == d_.strip_content && stripped_ < d_.strip_start) {
          ++stripped_;
          continue;
        }
        leading_done_ = true;
      }
      if (d_.strip_stop > 0 && cp == d_.strip_content) {
        held_.append(token, at, i - at);
        ++held_count_;
        if (held_count_ > d_.strip_stop) {  // the oldest held one can no longer be stripped
          const std::size_t n = utf8_length(static_cast<unsigned char>(held_[0]));
          emit.append(held_, 0, n);
          held_.erase(0, n);
          --held_count_;
        }
        continue;
      }
      emit += held_;
      held_.clear();
      held_count_ = 0;
      emit.append(token, at, i - at);
    }
    if (!emit.empty()) out.push_back(std::move(emit));
  }
  void finish(std::vector<std::string>&) override {
    held_.clear();
    held_count_ = 0;
  }

 private:
  const DecoderSpec& d_;
  bool leading_done_ = false;
  std::size_t stripped_ = 0;
  std::string held_;
  std::size_t held_count_ = 0;
};

// Literal Replace on the fused text: a match can straddle fragments, so the last
// (pattern length - 1) bytes wait for more text.
class FusedReplaceStage final : public StreamStage {
 public:
  explicit FusedReplaceStage(const DecoderSpec& d) : d_(d) {}
  void push(std::string token, std::vector<std::string>& out) override {
    buffer_ += token;
    const std::string& lit = d_.pattern->source();
    if (lit.empty()) {
      out.push_back(std::move(buffer_));
      buffer_.clear();
      return;
    }
    std::string emit;
    std::size_t at = 0;
    for (std::size_t m = buffer_.find(lit); m != std::string::npos; m = buffer_.find(lit, at)) {
      emit.append(buffer_, at, m - at);
      emit += d_.content;
      at = m + lit.size();
    }
    std::size_t keep_from = buffer_.size() >= lit.size() ? buffer_.size() - (lit.size() - 1) : 0;
    keep_from = std::max(keep_from, at);
    while (keep_from > at && keep_from < buffer_.size() &&
           (static_cast<unsigned char>(buffer_[keep_from]) & 0xC0) == 0x80)
      --keep_from;
    emit.append(buffer_, at, keep_from - at);
    buffer_.erase(0, keep_from);
    if (!emit.empty()) out.push_back(std::move(emit));
  }
  void finish(std::vector<std::string>& out) override {
    if (!buffer_.empty()) out.push_back(std::move(buffer_));
    buffer_.clear();
  }

 private:
  const DecoderSpec& d_;
  std::string buffer_;
};

class JoinWithSpaceStage final : public StreamStage {
 public:
  void push(std::string token, std::vector<std::string>& out) override {
    if (count_++ > 0) out.push_back(" ");
    out.push_back(std::move(token));
  }
  void finish(std::vector<std::string>&) override {}

 private:
  std::size_t count_ = 0;
};

Status parse_into(const json& j, const std::string& path, int depth,
                  std::vector<std::shared_ptr<const DecoderSpec>>& specs) {
  if (depth > kMaxComponentDepth)
    return error(ErrorCode::corrupt_data,
                 path + ": components nested more than " + std::to_string(kMaxComponentDepth) + " deep");
  DAY0_ASSIGN_OR_RETURN(const std::string type, component_type(j, path));
  auto d = std::make_shared<DecoderSpec>();
  if (type == "Sequence") {
    const auto it = j.find("decoders");
    if (it == j.end() || !it->is_array())
      return wrong_type(path + ".decoders", "an array", it == j.end() ? nullptr : &*it);
    for (std::size_t i = 0; i < it->size(); ++i)
      DAY0_RETURN_IF_ERROR(parse_into((*it)[i], path + ".decoders[" + std::to_string(i) + "]", depth + 1, specs));
    return Status::ok();
  }
  if (type == "ByteLevel") {
    d->kind = Kind::byte_level;
  } else if (type == "ByteFallback") {
    d->kind = Kind::byte_fallback;
  } else if (type == "Fuse") {
    d->kind = Kind::fuse;
  } else if (type == "Metaspace") {
    d->kind = Kind::metaspace;
    DAY0_ASSIGN_OR_RETURN(d->replacement, read_char(j, "replacement", path));
    std::string scheme = "always";
    if (const auto it = j.find("prepend_scheme"); it != j.end() && it->is_string()) scheme = it->get<std::string>();
    if (scheme != "always" && scheme != "first" && scheme != "never")
      return error(ErrorCode::corrupt_data, path + ".prepend_scheme: unknown value \"" + scheme + "\"");
    DAY0_ASSIGN_OR_RETURN(const bool add_prefix_space, read_bool(j, "add_prefix_space", true, path));
    d->prepend_never = scheme == "never" || !add_prefix_space;
  } else if (type == "Strip") {
    d->kind = Kind::strip;
    DAY0_ASSIGN_OR_RETURN(d->strip_content, read_char(j, "content", path));
    DAY0_ASSIGN_OR_RETURN(d->strip_start, read_count(j, "start", 0, kMaxStripCount, path));
    DAY0_ASSIGN_OR_RETURN(d->strip_stop, read_count(j, "stop", 0, kMaxStripCount, path));
  } else if (type == "Replace") {
    d->kind = Kind::replace;
    DAY0_ASSIGN_OR_RETURN(d->pattern, parse_pattern(j, path));
    DAY0_ASSIGN_OR_RETURN(d->content, read_string(j, "content", path));
  } else {
    return error(ErrorCode::unsupported, path + ": decoder type \"" + type +
                                             "\" is not supported (Day0 supports ByteLevel, Metaspace, "
                                             "ByteFallback, Fuse, Strip, Replace, Sequence)");
  }
  specs.push_back(std::move(d));
  return Status::ok();
}

}  // namespace

Result<DecoderPipeline> DecoderPipeline::parse(const json& j, const std::string& path) {
  DecoderPipeline p;
  if (j.is_null()) return p;
  p.explicit_ = true;
  DAY0_RETURN_IF_ERROR(parse_into(j, path, 0, p.specs_));
  return p;
}

Result<std::string> DecoderPipeline::decode(std::vector<std::string> tokens) const {
  std::string out;
  if (!has_decoder()) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out.push_back(' ');
      out += tokens[i];
    }
    return out;
  }
  for (const auto& d : specs_) DAY0_RETURN_IF_ERROR(run_stage(*d, tokens));
  for (const std::string& t : tokens) out += t;
  return out;
}

bool DecoderPipeline::streamable() const {
  bool fused = false;
  for (const auto& d : specs_) {
    switch (d->kind) {
      case Kind::byte_level:
      case Kind::byte_fallback:
        if (fused) return false;
        break;
      case Kind::replace:
        if (fused && d->pattern->is_regex()) return false;
        break;
      default:
        break;
    }
    if (d->kind == Kind::byte_level || d->kind == Kind::fuse) fused = true;
  }
  return true;
}

std::vector<std::unique_ptr<StreamStage>> DecoderPipeline::make_stream() const {
  std::vector<std::unique_ptr<StreamStage>> stages;
  if (!streamable()) return stages;
  if (!has_decoder()) {
    stages.push_back(std::make_unique<JoinWithSpaceStage>());
    return stages;
  }
  bool fused = false;
  for (const auto& d : specs_) {
    switch (d->kind) {
      case Kind::byte_level:
        stages.push_back(std::make_unique<ByteLevelStage>());
        break;
      case Kind::byte_fallback:
        stages.push_back(std::make_unique<ByteFallbackStage>());
        break;
      case Kind::fuse:
        stages.push_back(std::make_unique<PassStage>());
        break;
      case Kind::metaspace:
        stages.push_back(std::make_unique<MetaspaceStage>(*d, fused));
        break;
      case Kind::strip:
        if (fused) {
          stages.push_back(std::make_unique<FusedStripStage>(*d));
        } else {
          stages.push_back(std::make_unique<PerTokenStage>(*d));
        }
        break;
      case Kind::replace:
        if (fused) {
          stages.push_back(std::make_unique<FusedReplaceStage>(*d));
        } else {
          stages.push_back(std::make_unique<PerTokenStage>(*d));
        }
        break;
    }
    if (d->kind == Kind::byte_level || d->kind == Kind::fuse) fused = true;
  }
  // A chain with no stage at all (an empty Sequence) still concatenates.
  if (stages.empty()) stages.push_back(std::make_unique<PassStage>());
  return stages;
}

}  // namespace day0::tokenizer
