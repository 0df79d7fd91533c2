#include "vision/image_input.h"

#include "io/image_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace day0::vision {

Result<ImageTokenIds> image_token_ids(const io::ModelConfig& config) {
  const io::ConfigView root = config.root();
  ImageTokenIds ids;
  const io::IntRange range{0, (1ll << 31) - 1};
  DAY0_ASSIGN_OR_RETURN(const std::int64_t image, root.get_int("image_token_id", range));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t begin, root.get_int("image_start_token_id", range));
  DAY0_ASSIGN_OR_RETURN(const std::int64_t end, root.get_int("image_end_token_id", range));
  ids.image = static_cast<std::int32_t>(image);
  ids.begin = static_cast<std::int32_t>(begin);
  ids.end = static_cast<std::int32_t>(end);
  return ids;
}

std::uint64_t hash_vision_input(const VisionInput& input) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&](const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  const std::int64_t grid[3] = {input.grid_t, input.grid_h, input.grid_w};
  mix(grid, sizeof grid);
  mix(input.pixel_values.data(), input.pixel_values.size() * sizeof(float));
  return h;
}

Result<std::vector<std::int32_t>> expand_image_placeholders(std::span<const std::int32_t> tokens,
                                                            std::int32_t image_token,
                                                            std::span<const std::int64_t> counts) {
  const auto n = static_cast<std::size_t>(std::count(tokens.begin(), tokens.end(), image_token));
  if (n != counts.size())
    return error(ErrorCode::invalid_argument,
                 fmt::format("the prompt has {} image token(s) (id {}) but {} image(s) were given", n, image_token,
                             counts.size()));
  std::vector<std::int32_t> out;
  std::size_t k = 0;
  for (const std::int32_t t : tokens) {
    if (t != image_token) {
      out.push_back(t);
      continue;
    }
    if (counts[k] <= 0) return error(ErrorCode::invalid_argument, "an image has no tokens");
    out.insert(out.end(), static_cast<std::size_t>(counts[k]), image_token);
    ++k;
  }
  return out;
}

Result<ImagePositions> locate_image_rows(std::span<const std::int32_t> expanded, std::int32_t image_token,
                                         std::span<const EncodedImage> images) {
  ImagePositions where;
  where.image.assign(expanded.size(), -1);
  where.row.assign(expanded.size(), 0);
  std::size_t k = 0;
  std::int64_t r = 0;
  std::int64_t total = 0;
  for (const auto& im : images) total += im.tokens;
  for (std::size_t p = 0; p < expanded.size(); ++p) {
    if (expanded[p] != image_token) continue;
    if (k >= images.size())
      return error(ErrorCode::invalid_argument,
                   fmt::format("the prompt has more image tokens than the {} the images provide", total));
    where.image[p] = static_cast<std::int32_t>(k);
    where.row[p] = r;
    if (++r == images[k].tokens) {
      ++k;
      r = 0;
    }
  }
  if (k != images.size() || r != 0)
    return error(ErrorCode::invalid_argument,
                 fmt::format("the prompt's image tokens do not match the images' {} tokens", total));
  return where;
}

std::vector<std::int64_t> history_keys(std::span<const std::int32_t> expanded, const ImagePositions& where,
                                       std::span<const EncodedImage> images) {
  std::vector<std::int64_t> keys(expanded.size());
  for (std::size_t p = 0; p < expanded.size(); ++p) {
    const std::int32_t k = where.image[p];
    if (k < 0) {
      keys[p] = expanded[p];
      continue;
    }
    // Negative, never a token id; depends on the image's pixels and the row within it.
    const std::uint64_t h = (images[static_cast<std::size_t>(k)].hash ^
                             (static_cast<std::uint64_t>(where.row[p]) * 0x9E3779B97F4A7C15ull)) >>
                            2;
    keys[p] = -1 - static_cast<std::int64_t>(h);
  }
  return keys;
}

Status forward_with_images(ImageInputModel& model, models::SessionState& state, std::span<const std::int32_t> expanded,
                           const ImagePositions& where, std::span<const EncodedImage> images, std::int64_t from,
                           std::int64_t to, std::int64_t logit_rows, float* logits, models::ForwardTrace* trace) {
  if (from < 0 || to > static_cast<std::int64_t>(expanded.size()) || from >= to)
    return error(ErrorCode::invalid_argument, "nothing to feed: the position range is empty");
  const std::int64_t H = model.embedding_size(), T = to - from;
  std::vector<float> emb(static_cast<std::size_t>(T * H));
  DAY0_RETURN_IF_ERROR(
      model.embed_tokens(expanded.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(T)), emb.data()));
  for (std::int64_t p = from; p < to; ++p) {
    const std::int32_t k = where.image[static_cast<std::size_t>(p)];
    if (k < 0) continue;
    const EncodedImage& im = images[static_cast<std::size_t>(k)];
    const std::int64_t r = where.row[static_cast<std::size_t>(p)];
    if (static_cast<std::int64_t>(im.features.size()) != im.tokens * H)
      return error(ErrorCode::invalid_argument, fmt::format("image features hold {} values; expected {} tokens of {}",
                                                            im.features.size(), im.tokens, H));
    std::memcpy(emb.data() + (p - from) * H, im.features.data() + r * H, static_cast<std::size_t>(H) * sizeof(float));
  }
  return model.forward_embeddings(state, emb.data(), T, logit_rows, logits, trace);
}

Result<PreparedPrompt> prepare_prompt(models::LoadedModel& model, std::span<const std::int32_t> context,
                                      const std::vector<std::filesystem::path>& files,
                                      std::map<std::uint64_t, EncodedImage>* cache) {
  PreparedPrompt p;
  if (files.empty()) {
    p.tokens.assign(context.begin(), context.end());
    p.keys.assign(context.begin(), context.end());
    return p;
  }
  p.model = image_input(model);
  if (p.model != nullptr && !p.model->images_unavailable().empty())
    return error(ErrorCode::unsupported, "this model reads no images: " + p.model->images_unavailable());
  if (p.model == nullptr || p.model->image_tokens().image < 0)
    return error(ErrorCode::unsupported, "this model takes no images");
  constexpr std::size_t kCachedImages = 16;
  std::vector<std::int64_t> counts;
  for (const auto& file : files) {
    DAY0_ASSIGN_OR_RETURN(const io::RgbImage rgb, io::load_image_file(file));
    DAY0_ASSIGN_OR_RETURN(const VisionInput input, preprocess_image(rgb, p.model->processor()));
    const std::uint64_t hash = hash_vision_input(input);
    if (cache) {
      if (auto it = cache->find(hash); it != cache->end()) {
        counts.push_back(it->second.tokens);
        p.images.push_back(it->second);
        continue;
      }
    }
    DAY0_ASSIGN_OR_RETURN(EncodedImage enc, p.model->encode_image(input, nullptr));
    counts.push_back(enc.tokens);
    if (cache) {
      if (cache->size() >= kCachedImages) cache->clear();
      cache->emplace(hash, enc);
    }
    p.images.push_back(std::move(enc));
  }
  const std::int32_t image_token = p.model->image_tokens().image;
  DAY0_ASSIGN_OR_RETURN(p.tokens, expand_image_placeholders(context, image_token, counts));
  DAY0_ASSIGN_OR_RETURN(p.where, locate_image_rows(p.tokens, image_token, p.images));
  p.keys = history_keys(p.tokens, p.where, p.images);
  return p;
}

}  // namespace day0::vision
