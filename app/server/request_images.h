#pragma once
// A chat completions request's image parts made ready for the engine, which reads images from
// PNG or JPEG files (Request::images): data URLs are decoded into files of the server's private
// temporary folder, absolute paths are used as they are, and every image is decoded once here so
// that one the model cannot take is a 400 before anything is queued, and its size tells how many
// positions it takes in the context.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "day0/engine.h"
#include "day0/status.h"
#include "server/chat_request.h"

namespace day0::server {

// The server's private temporary folder for decoded data-URL images: <temp>/day0-server-XXXXXX
// (mode 0700, the temp folder being $TMPDIR or /tmp), made on first use and removed with
// whatever is left in it when the server goes.
class ImageFolder {
 public:
  ImageFolder() = default;
  ~ImageFolder();
  ImageFolder(const ImageFolder&) = delete;
  ImageFolder& operator=(const ImageFolder&) = delete;

  // Writes `bytes` to a new file of the folder (a name no other file had, readable by this user
  // only); `extension` such as ".png".
  Result<std::filesystem::path> write(std::string_view bytes, std::string_view extension);
  // The folder; empty until the first write.
  std::filesystem::path path() const;

 private:
  mutable std::mutex mutex_;
  std::filesystem::path path_;
  std::atomic<std::uint64_t> next_{1};
};

// One request's images, in the order of its image parts: the files the engine reads and the
// positions each takes. The files written for it are removed by remove() (when its generation
// has finished) or at the latest when it is destroyed.
class RequestImages {
 public:
  RequestImages() = default;
  ~RequestImages() { remove(); }
  RequestImages(const RequestImages&) = delete;
  RequestImages& operator=(const RequestImages&) = delete;

  std::vector<std::filesystem::path> files;
  std::vector<std::int64_t> positions;  // image_file_token_count of each file

  // Removes the files written for this request (those given as paths are left alone).
  void remove();

 private:
  friend std::optional<ApiError> prepare_images(const std::vector<ImagePart>&, const Model&, ImageFolder&,
                                                RequestImages*);
  std::vector<std::filesystem::path> temporary_;
};

// Makes `parts` ready for `model` (one that takes images): data URLs decoded into `folder`, each
// image decoded and counted. A payload that is not a PNG or JPEG image, or an image the model
// cannot take, is a 400 with code invalid_image_format naming the part; a file the server cannot
// write is a 500.
std::optional<ApiError> prepare_images(const std::vector<ImagePart>& parts, const Model& model, ImageFolder& folder,
                                       RequestImages* out);

// Puts `placeholder` (the text that stands for one image) into each message's content where
// its image part stood, and adds to each message's extra_tokens the positions its images take
// beyond their placeholders' image token (positions[k] - 1 for image k).
void place_images(const std::vector<ImagePart>& parts, const std::vector<std::int64_t>& positions,
                  const std::string& placeholder, std::vector<ChatMessage>* messages);

}  // namespace day0::server
