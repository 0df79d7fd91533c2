#pragma once
// Joining images with text. A prompt names each image with ONE image token (between the image
// begin and end tokens); expansion turns the k-th image token into as many image tokens as the
// k-th image has features, and the embedding of each expanded image token is the matching row of
// that image's features (the vision tower's output), as transformers' masked_scatter does.
//
// Models that take images implement ImageInputModel beside LoadedModel; image_input() finds it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "day0/status.h"
#include "io/model_config.h"
#include "models/loaded_model.h"
#include "vision/glm5_vision_preprocess.h"

namespace day0::vision {

struct ImageTokenIds {
  std::int32_t image = -1;  // the placeholder
  std::int32_t begin = -1;
  std::int32_t end = -1;
};

// image_token_id, image_start_token_id, image_end_token_id from config.json.
Result<ImageTokenIds> image_token_ids(const io::ModelConfig& config);

// One image's features in the text model's hidden size and a hash of its pixels.
struct EncodedImage {
  std::vector<float> features;  // [tokens, hidden]
  std::int64_t tokens = 0;
  std::uint64_t hash = 0;
};

// FNV-1a over the preprocessed pixel values and grid: equal images, equal hashes.
std::uint64_t hash_vision_input(const VisionInput& input);

// The k-th occurrence of `image_token` becomes counts[k] copies; the number of occurrences must
// equal counts.size().
Result<std::vector<std::int32_t>> expand_image_placeholders(std::span<const std::int32_t> tokens,
                                                            std::int32_t image_token,
                                                            std::span<const std::int64_t> counts);

// For an expanded prompt: which image row each position holds. image[p] = -1 for text; else the
// image index, with row[p] its feature row. Errors when the image tokens and the images' token
// counts disagree.
struct ImagePositions {
  std::vector<std::int32_t> image;
  std::vector<std::int64_t> row;
};
Result<ImagePositions> locate_image_rows(std::span<const std::int32_t> expanded, std::int32_t image_token,
                                         std::span<const EncodedImage> images);

// A key per position for prefix reuse: the token id for text, and for image positions a negative
// value derived from the image's hash and the row, so that a session holding another image at the
// same place is not reused past it.
std::vector<std::int64_t> history_keys(std::span<const std::int32_t> expanded, const ImagePositions& where,
                                       std::span<const EncodedImage> images);

class ImageInputModel {
 public:
  virtual ~ImageInputModel() = default;
  virtual const ImageTokenIds& image_tokens() const = 0;
  virtual const ProcessorConfig& processor() const = 0;
  virtual std::int64_t embedding_size() const = 0;
  // The preprocessed image through the vision tower.
  virtual Result<EncodedImage> encode_image(const VisionInput& input, models::ForwardTrace* trace) = 0;
  // Token embeddings, rows [tokens.size(), embedding_size()].
  virtual Status embed_tokens(std::span<const std::int32_t> tokens, float* out) const = 0;
  // LoadedModel::forward over given input embeddings [T, embedding_size()].
  virtual Status forward_embeddings(models::SessionState& state, const float* embeddings, std::int64_t T,
                                    std::int64_t logit_rows, float* logits, models::ForwardTrace* trace) = 0;
  // Why this model reads no images although its family can (a vision tower that could not be
  // loaded), or empty.
  virtual std::string images_unavailable() const { return {}; }
};

inline ImageInputModel* image_input(models::LoadedModel& model) { return dynamic_cast<ImageInputModel*>(&model); }

// Feeds positions [from, to) of an expanded prompt: text rows embedded, image rows taken from the
// images' features. Writes the logits of the last `logit_rows` positions.
Status forward_with_images(ImageInputModel& model, models::SessionState& state, std::span<const std::int32_t> expanded,
                           const ImagePositions& where, std::span<const EncodedImage> images, std::int64_t from,
                           std::int64_t to, std::int64_t logit_rows, float* logits, models::ForwardTrace* trace);

// A request's context made ready to feed: image tokens expanded, per-position keys for prefix
// reuse (history_keys), and the encoded images. Without images, tokens and keys are the context.
struct PreparedPrompt {
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> keys;
  ImagePositions where;
  std::vector<EncodedImage> images;
  ImageInputModel* model = nullptr;
  bool has_images() const { return !images.empty(); }
};

// Decodes, preprocesses and encodes `files` in order (reusing `cache`, keyed by the preprocessed
// pixels' hash, when given) and expands the context's image tokens.
Result<PreparedPrompt> prepare_prompt(models::LoadedModel& model, std::span<const std::int32_t> context,
                                      const std::vector<std::filesystem::path>& files,
                                      std::map<std::uint64_t, EncodedImage>* cache);

}  // namespace day0::vision
