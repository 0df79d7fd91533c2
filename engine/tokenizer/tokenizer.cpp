// day0::Tokenizer: loading tokenizer.json and the encode/decode pipeline.
#include "day0/tokenizer.h"

#include <filesystem>

#include "day0/log.h"
#include "io/json_util.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace day0 {

namespace tokenizer {

namespace {

// Real tokenizer.json files reach ~35 MB (262k-token vocabularies with their merges).
constexpr std::uint64_t kMaxTokenizerJsonBytes = 512ull << 20;

}  // namespace

Result<std::shared_ptr<const TokenizerImpl>> TokenizerImpl::from_json(const json& root, const std::string& origin) {
  if (!root.is_object()) return wrong_type(origin, "a tokenizer.json object", root);
  auto impl = std::make_shared<TokenizerImpl>();
  impl->origin = origin;
  for (const char* ignored : {"truncation", "padding"}) {
    if (const auto it = root.find(ignored); it != root.end() && !it->is_null())
      DAY0_LOG_INFO("{}: \"{}\" is set and ignored (Day0 never truncates or pads)", origin, ignored);
  }
  const auto model = root.find("model");
  if (model == root.end() || !model->is_object())
    return wrong_type(origin + ": model", "an object", model == root.end() ? nullptr : &*model);
  std::string type = "BPE";
  if (const auto t = model->find("type"); t != model->end()) {
    if (!t->is_string()) return wrong_type(origin + ": model.type", "a string", *t);
    type = t->get<std::string>();
  } else if (!model->contains("merges")) {
    return error(ErrorCode::unsupported, origin + ": the model has no type and no merges (Day0 supports BPE)");
  }
  if (type != "BPE")
    return error(ErrorCode::unsupported,
                 origin + ": model type \"" + type + "\" is not supported (Day0 supports BPE models)");
  auto with_origin = [&origin](Status s) { return s.with_context(origin); };
  {
    auto bpe = BpeModel::from_json(*model, "model");
    if (!bpe) return with_origin(bpe.status());
    impl->model = std::make_unique<BpeModel>(std::move(*bpe));
  }
  auto field = [&root](const char* key) -> const json& {
    static const json null_value;
    const auto it = root.find(key);
    return it == root.end() ? null_value : *it;
  };
  {
    auto n = parse_normalizer(field("normalizer"), "normalizer");
    if (!n) return with_origin(n.status());
    impl->normalizer = std::move(*n);
  }
  {
    auto p = parse_pre_tokenizer(field("pre_tokenizer"), "pre_tokenizer");
    if (!p) return with_origin(p.status());
    impl->pre_tokenizer = std::move(*p);
  }
  {
    auto p = parse_post_processor(field("post_processor"), "post_processor");
    if (!p) return with_origin(p.status());
    impl->post_processor = std::move(*p);
  }
  {
    auto d = DecoderPipeline::parse(field("decoder"), "decoder");
    if (!d) return with_origin(d.status());
    impl->decoder = std::move(*d);
  }
  {
    auto added =
        AddedVocabulary::from_json(field("added_tokens"), *impl->model, impl->normalizer.get(), "added_tokens");
    if (!added) return with_origin(added.status());
    impl->added = std::move(*added);
  }
  impl->track_offsets = impl->pre_tokenizer && impl->pre_tokenizer->needs_offsets();
  return std::shared_ptr<const TokenizerImpl>(std::move(impl));
}

Result<std::vector<std::uint32_t>> TokenizerImpl::encode(std::string_view raw, bool add_special_tokens) const {
  std::string repaired;
  std::string_view text = raw;
  if (!is_valid_utf8(raw)) {
    repaired = lossy_utf8(raw);
    text = repaired;
  }
  std::vector<Piece> pieces;
  if (!text.empty()) {
    Piece whole;
    whole.text = std::string(text);
    whole.tracked = track_offsets;
    if (track_offsets) {
      // Each byte maps to the start of its character.
      whole.align.resize(text.size());
      std::size_t i = 0;
      while (i < text.size()) {
        const std::size_t start = i;
        i += utf8_length(static_cast<unsigned char>(text[i]));
        for (std::size_t k = start; k < i && k < text.size(); ++k) whole.align[k] = static_cast<std::uint32_t>(start);
      }
    }
    pieces.push_back(std::move(whole));
  }
  added.split(pieces, false);
  if (normalizer) {
    for (Piece& p : pieces)
      if (!p.is_final()) DAY0_RETURN_IF_ERROR(normalizer->normalize(p));
  }
  added.split(pieces, true);
  std::vector<std::uint32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  // Each piece goes through the pre-tokenizer and its parts straight into the model, so the
  // (many, small) parts of a long text are never all held at once.
  const PieceSink to_model = [&](Piece& part) {
    Status s = model->tokenize(part.text, ids);
    return s.is_ok() ? s : s.with_context(origin);
  };
  for (Piece& p : pieces) {
    if (p.is_final()) {
      ids.push_back(static_cast<std::uint32_t>(p.added_id));
      continue;
    }
    if (pre_tokenizer) {
      DAY0_RETURN_IF_ERROR(pre_tokenizer->pre_tokenize_piece(p, to_model));
    } else if (!p.text.empty()) {
      DAY0_RETURN_IF_ERROR(to_model(p));
    }
  }
  if (post_processor) post_processor->process(ids, add_special_tokens);
  return ids;
}

const std::string* TokenizerImpl::token_of(std::uint32_t id) const {
  if (const AddedToken* a = added.by_id(id)) return &a->surface;
  return model->id_to_token(id);
}

const std::string* TokenizerImpl::decoder_input(std::uint32_t id, bool skip_special_tokens) const {
  const std::string* s = token_of(id);
  if (s == nullptr) return nullptr;
  if (skip_special_tokens && added.is_special_content(*s)) return nullptr;
  return s;
}

std::string TokenizerImpl::decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::uint32_t id : ids)
    if (const std::string* s = decoder_input(id, skip_special_tokens)) tokens.push_back(*s);
  auto text = decoder.decode(tokens);
  if (!text) {
    DAY0_LOG_ERROR("{}: decoding failed: {}", origin, text.status().message());
    std::string joined;
    for (const std::string& t : tokens) joined += t;
    return lossy_utf8(joined);
  }
  return std::move(*text);
}

}  // namespace tokenizer

Result<Tokenizer> Tokenizer::load(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::is_directory(path, ec) ? path / "tokenizer.json" : path;
  DAY0_ASSIGN_OR_RETURN(const std::string text, io::read_text_file(file, tokenizer::kMaxTokenizerJsonBytes));
  return from_json(text, file.string());
}

Result<Tokenizer> Tokenizer::from_json(std::string_view json_text, const std::string& origin) {
  DAY0_ASSIGN_OR_RETURN(const nlohmann::json root, io::parse_json(json_text, origin));
  DAY0_ASSIGN_OR_RETURN(auto impl, tokenizer::TokenizerImpl::from_json(root, origin));
  return Tokenizer(std::move(impl));
}

Result<std::vector<std::uint32_t>> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  return impl_->encode(text, add_special_tokens);
}

std::vector<std::string> Tokenizer::id_strings(std::span<const std::uint32_t> ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (std::uint32_t id : ids) {
    const std::string* s = impl_->token_of(id);
    out.push_back(s ? *s : std::string());
  }
  return out;
}

std::string Tokenizer::decode(std::span<const std::uint32_t> ids, bool skip_special_tokens) const {
  return impl_->decode(std::vector<std::uint32_t>(ids.begin(), ids.end()), skip_special_tokens);
}

std::optional<std::uint32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto id = impl_->added.token_to_id(token)) return id;
  return impl_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(std::uint32_t id) const {
  const std::string* s = impl_->token_of(id);
  if (s == nullptr) return std::nullopt;
  return *s;
}

bool Tokenizer::is_special(std::uint32_t id) const {
  const tokenizer::AddedToken* a = impl_->added.by_id(id);
  return a != nullptr && impl_->added.is_special_content(a->content);
}

std::size_t Tokenizer::vocab_size() const { return std::max(impl_->model->id_bound(), impl_->added.id_bound()); }

}  // namespace day0
