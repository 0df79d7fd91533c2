#include "tokenizer/normalizers.h"

#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

namespace day0::tokenizer {

namespace {

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  Status normalize(Piece& p) const override {
    if (!p.tracked) {
      p.text = normalize_unicode(p.text, form_, nullptr);
      return Status::ok();
    }
    std::vector<std::uint32_t> segments;
    std::string text = normalize_unicode(p.text, form_, &segments);
    std::vector<std::uint32_t> align(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) align[i] = p.align[segments[i]];
    p.text = std::move(text);
    p.align = std::move(align);
    return Status::ok();
  }

 private:
  NormalForm form_;
};

class Lowercase final : public Normalizer {
 public:
  Status normalize(Piece& p) const override {
    bool ascii = true;
    for (char c : p.text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii) {
      for (char& c : p.text)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      return Status::ok();
    }
    map_chars(p, [](std::uint32_t cp, std::string& out) { append_lowercase(out, cp); });
    return Status::ok();
  }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  Status normalize(Piece& p) const override {
    strip(p, left_, right_);
    return Status::ok();
  }

 private:
  bool left_, right_;
};

class StripAccents final : public Normalizer {
 public:
  Status normalize(Piece& p) const override {
    map_chars(p, [](std::uint32_t cp, std::string& out) {
      if (!is_combining_mark(cp)) append_utf8(out, cp);
    });
    return Status::ok();
  }
};

class Replace final : public Normalizer {
 public:
  Replace(std::shared_ptr<const Pattern> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  Status normalize(Piece& p) const override {
    std::vector<Span> spans;
    DAY0_RETURN_IF_ERROR(pattern_->find_matches(p.text, spans));
    replace_spans(p, spans, content_);
    return Status::ok();
  }

 private:
  std::shared_ptr<const Pattern> pattern_;
  std::string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string s) : s_(std::move(s)) {}
  Status normalize(Piece& p) const override {
    prepend(p, s_);
    return Status::ok();
  }

 private:
  std::string s_;
};

class Append final : public Normalizer {
 public:
  explicit Append(std::string s) : s_(std::move(s)) {}
  Status normalize(Piece& p) const override {
    append(p, s_);
    return Status::ok();
  }

 private:
  std::string s_;
};

class ByteLevelNormalizer final : public Normalizer {
 public:
  Status normalize(Piece& p) const override {
    const ByteLevelTable& t = byte_level_table();
    map_chars(p, [&t](std::uint32_t cp, std::string& out) {
      std::string bytes;
      append_utf8(bytes, cp);
      for (unsigned char b : bytes) out += t.byte_to_utf8[b];
    });
    return Status::ok();
  }
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  Status normalize(Piece& p) const override {
    for (const auto& n : parts_) DAY0_RETURN_IF_ERROR(n->normalize(p));
    return Status::ok();
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

Result<std::unique_ptr<Normalizer>> parse_normalizer(const json& j, const std::string& path, int depth) {
  if (j.is_null()) return std::unique_ptr<Normalizer>();
  if (depth > kMaxComponentDepth)
    return error(ErrorCode::corrupt_data,
                 path + ": components nested more than " + std::to_string(kMaxComponentDepth) + " deep");
  DAY0_ASSIGN_OR_RETURN(const std::string type, component_type(j, path));
  if (type == "NFC") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::nfc));
  if (type == "NFD") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::nfd));
  if (type == "NFKC") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::nfkc));
  if (type == "NFKD") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(NormalForm::nfkd));
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new Lowercase());
  if (type == "StripAccents") return std::unique_ptr<Normalizer>(new StripAccents());
  if (type == "ByteLevel") return std::unique_ptr<Normalizer>(new ByteLevelNormalizer());
  if (type == "Strip") {
    DAY0_ASSIGN_OR_RETURN(const bool left, read_bool(j, "strip_left", true, path));
    DAY0_ASSIGN_OR_RETURN(const bool right, read_bool(j, "strip_right", true, path));
    return std::unique_ptr<Normalizer>(new Strip(left, right));
  }
  if (type == "Replace") {
    DAY0_ASSIGN_OR_RETURN(auto pattern, parse_pattern(j, path));
    DAY0_ASSIGN_OR_RETURN(std::string content, read_string(j, "content", path));
    return std::unique_ptr<Normalizer>(new Replace(std::move(pattern), std::move(content)));
  }
  if (type == "Prepend") {
    DAY0_ASSIGN_OR_RETURN(std::string s, read_string(j, "prepend", path));
    return std::unique_ptr<Normalizer>(new Prepend(std::move(s)));
  }
  if (type == "Append") {
    DAY0_ASSIGN_OR_RETURN(std::string s, read_string(j, "append", path));
    return std::unique_ptr<Normalizer>(new Append(std::move(s)));
  }
  if (type == "Sequence") {
    const auto it = j.find("normalizers");
    if (it == j.end() || !it->is_array())
      return wrong_type(path + ".normalizers", "an array", it == j.end() ? nullptr : &*it);
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (std::size_t i = 0; i < it->size(); ++i) {
      DAY0_ASSIGN_OR_RETURN(auto part,
                            parse_normalizer((*it)[i], path + ".normalizers[" + std::to_string(i) + "]", depth + 1));
      if (part) parts.push_back(std::move(part));
    }
    return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(parts)));
  }
  return error(ErrorCode::unsupported, path + ": normalizer type \"" + type +
                                           "\" is not supported (Day0 supports NFC, NFD, NFKC, NFKD, Lowercase, "
                                           "Strip, StripAccents, Replace, Prepend, Append, ByteLevel, Sequence)");
}

Result<std::shared_ptr<const Pattern>> parse_pattern(const json& obj, const std::string& path) {
  const auto it = obj.find("pattern");
  if (it == obj.end()) return error(ErrorCode::corrupt_data, path + " has no \"pattern\"");
  const std::string p = path + ".pattern";
  if (!it->is_object() || it->size() != 1) return wrong_type(p, "{\"String\": ...} or {\"Regex\": ...}", *it);
  if (const auto s = it->find("String"); s != it->end()) {
    if (!s->is_string()) return wrong_type(p + ".String", "a string", *s);
    return Pattern::literal(s->get<std::string>());
  }
  if (const auto r = it->find("Regex"); r != it->end()) {
    if (!r->is_string()) return wrong_type(p + ".Regex", "a string", *r);
    auto compiled = Pattern::regex(r->get<std::string>());
    if (!compiled) return compiled.status().with_context(p);
    return compiled;
  }
  return wrong_type(p, "{\"String\": ...} or {\"Regex\": ...}", *it);
}

}  // namespace day0::tokenizer
