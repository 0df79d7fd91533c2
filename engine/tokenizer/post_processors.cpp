#include "tokenizer/post_processors.h"

#include <map>
#include <sstream>

namespace day0::tokenizer {

namespace {

// A template: the sequence itself (nullopt) or a special token's ids, in order.
using Template = std::vector<std::optional<std::vector<std::uint32_t>>>;

class TemplateProcessing final : public PostProcessor {
 public:
  explicit TemplateProcessing(Template single) : single_(std::move(single)) {}
  void process(std::vector<std::uint32_t>& ids, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    std::vector<std::uint32_t> out;
    for (const auto& piece : single_) {
      if (piece) {
        out.insert(out.end(), piece->begin(), piece->end());
      } else {
        out.insert(out.end(), ids.begin(), ids.end());
      }
    }
    ids = std::move(out);
  }

 private:
  Template single_;
};

class Identity final : public PostProcessor {
 public:
  void process(std::vector<std::uint32_t>&, bool) const override {}
};

class SequenceProcessor final : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  void process(std::vector<std::uint32_t>& ids, bool add_special_tokens) const override {
    for (const auto& p : parts_) p->process(ids, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

// ["<s>", 0] of Roberta/Bert processing.
Result<std::uint32_t> read_pair_id(const json& j, const char* key, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_string())
    return wrong_type(path + "." + key, "[token, id]", it == j.end() ? nullptr : &*it);
  return read_id((*it)[1], path + "." + key + "[1]");
}

// One template piece: {"Sequence": {"id": "A"}} / {"SpecialToken": {"id": "<s>"}} or "$A" / "<s>".
Result<std::optional<std::string>> read_piece(const json& p, const std::string& path) {
  if (p.is_string()) {
    std::string s = p.get<std::string>();
    if (const std::size_t colon = s.rfind(':'); colon != std::string::npos && colon > 0) s = s.substr(0, colon);
    if (!s.empty() && s[0] == '$') return std::optional<std::string>();
    return std::optional<std::string>(s);
  }
  if (!p.is_object() || p.size() != 1) return wrong_type(path, "{\"Sequence\": ...} or {\"SpecialToken\": ...}", p);
  if (const auto s = p.find("Sequence"); s != p.end()) {
    if (!s->is_object()) return wrong_type(path + ".Sequence", "an object", *s);
    DAY0_ASSIGN_OR_RETURN(const std::string id, read_string(*s, "id", path + ".Sequence"));
    if (id != "A" && id != "B") return error(ErrorCode::corrupt_data, path + ".Sequence.id must be A or B");
    if (id == "B") return error(ErrorCode::unsupported, path + ": a single-sequence template naming sequence B");
    return std::optional<std::string>();
  }
  if (const auto s = p.find("SpecialToken"); s != p.end()) {
    if (!s->is_object()) return wrong_type(path + ".SpecialToken", "an object", *s);
    DAY0_ASSIGN_OR_RETURN(std::string id, read_string(*s, "id", path + ".SpecialToken"));
    return std::optional<std::string>(std::move(id));
  }
  return wrong_type(path, "{\"Sequence\": ...} or {\"SpecialToken\": ...}", p);
}

Result<std::unique_ptr<PostProcessor>> parse_template(const json& j, const std::string& path) {
  std::map<std::string, std::vector<std::uint32_t>> specials;
  if (const auto st = j.find("special_tokens"); st != j.end() && !st->is_null()) {
    if (!st->is_object()) return wrong_type(path + ".special_tokens", "an object", *st);
    for (const auto& [name, entry] : st->items()) {
      const std::string where = path + ".special_tokens[\"" + name + "\"]";
      if (!entry.is_object()) return wrong_type(where, "an object", entry);
      const auto ids = entry.find("ids");
      if (ids == entry.end() || !ids->is_array()) return wrong_type(where + ".ids", "an array", entry);
      std::vector<std::uint32_t> list;
      for (std::size_t k = 0; k < ids->size(); ++k) {
        DAY0_ASSIGN_OR_RETURN(const std::uint32_t id, read_id((*ids)[k], where + ".ids[" + std::to_string(k) + "]"));
        list.push_back(id);
      }
      specials[name] = std::move(list);
    }
  }
  const auto single = j.find("single");
  if (single == j.end()) return error(ErrorCode::corrupt_data, path + " has no \"single\" template");
  // Pointers into the document (copying json values recurses over their depth).
  std::vector<json> words_storage;
  std::vector<const json*> pieces;
  if (single->is_string()) {
    std::istringstream words(single->get<std::string>());
    for (std::string w; words >> w;) words_storage.emplace_back(w);
    for (const json& w : words_storage) pieces.push_back(&w);
  } else if (single->is_array()) {
    for (const json& p : *single) pieces.push_back(&p);
  } else {
    return wrong_type(path + ".single", "a template (array or string)", *single);
  }
  Template t;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string where = path + ".single[" + std::to_string(i) + "]";
    DAY0_ASSIGN_OR_RETURN(const auto name, read_piece(*pieces[i], where));
    if (!name) {
      t.emplace_back(std::nullopt);
      continue;
    }
    const auto it = specials.find(*name);
    if (it == specials.end())
      return error(ErrorCode::corrupt_data, where + ": special token \"" + *name + "\" is not in special_tokens");
    t.emplace_back(it->second);
  }
  return std::unique_ptr<PostProcessor>(new TemplateProcessing(std::move(t)));
}

}  // namespace

Result<std::unique_ptr<PostProcessor>> parse_post_processor(const json& j, const std::string& path, int depth) {
  using Ptr = std::unique_ptr<PostProcessor>;
  if (j.is_null()) return Ptr();
  if (depth > kMaxComponentDepth)
    return error(ErrorCode::corrupt_data,
                 path + ": components nested more than " + std::to_string(kMaxComponentDepth) + " deep");
  DAY0_ASSIGN_OR_RETURN(const std::string type, component_type(j, path));
  if (type == "TemplateProcessing") return parse_template(j, path);
  if (type == "ByteLevel") return Ptr(new Identity());
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    DAY0_ASSIGN_OR_RETURN(const std::uint32_t cls, read_pair_id(j, "cls", path));
    DAY0_ASSIGN_OR_RETURN(const std::uint32_t sep, read_pair_id(j, "sep", path));
    return Ptr(new TemplateProcessing(
        Template{std::vector<std::uint32_t>{cls}, std::nullopt, std::vector<std::uint32_t>{sep}}));
  }
  if (type == "Sequence") {
    const auto it = j.find("processors");
    if (it == j.end() || !it->is_array())
      return wrong_type(path + ".processors", "an array", it == j.end() ? nullptr : &*it);
    std::vector<Ptr> parts;
    for (std::size_t i = 0; i < it->size(); ++i) {
      DAY0_ASSIGN_OR_RETURN(auto part,
                            parse_post_processor((*it)[i], path + ".processors[" + std::to_string(i) + "]", depth + 1));
      if (part) parts.push_back(std::move(part));
    }
    return Ptr(new SequenceProcessor(std::move(parts)));
  }
  return error(ErrorCode::unsupported, path + ": post-processor type \"" + type +
                                           "\" is not supported (Day0 supports TemplateProcessing, ByteLevel, "
                                           "RobertaProcessing, BertProcessing, Sequence)");
}

}  // namespace day0::tokenizer
