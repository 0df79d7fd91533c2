#include "server/request_images.h"

#include "common/base64.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace day0::server {
namespace {

// The file name's extension for a data URL's media type ("data:image/png;base64,..." -> ".png").
std::string extension_for(std::string_view url) {
  const std::size_t slash = url.find('/'), end = url.find_first_of(";,");
  const std::string_view subtype = slash == std::string_view::npos || end == std::string_view::npos || end < slash
                                       ? std::string_view()
                                       : url.substr(slash + 1, end - slash - 1);
  if (subtype == "png") return ".png";
  if (subtype == "jpeg" || subtype == "jpg") return ".jpg";
  return ".img";  // the decoder goes by the leading bytes, not the name
}

}  // namespace

ImageFolder::~ImageFolder() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path ImageFolder::path() const {
  std::lock_guard lock(mutex_);
  return path_;
}

Result<std::filesystem::path> ImageFolder::write(std::string_view bytes, std::string_view extension) {
  std::filesystem::path folder;
  {
    std::lock_guard lock(mutex_);
    if (path_.empty()) {
      std::error_code ec;
      const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
      if (ec) return error(ErrorCode::io_error, "no temporary folder for images: " + ec.message());
      std::string pattern = (temp / "day0-server-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr)
        return error(ErrorCode::io_error,
                     "cannot make a temporary folder for images in " + temp.string() + ": " + std::strerror(errno));
      path_ = pattern;
    }
    folder = path_;
  }
  const std::filesystem::path file = folder / ("image-" + std::to_string(next_.fetch_add(1)) + std::string(extension));
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return error(ErrorCode::io_error, "cannot write an image to " + folder.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::error_code ec;
      std::filesystem::remove(file, ec);
      return error(ErrorCode::io_error, "cannot write an image to " + folder.string() + ": " + why);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ec;
    std::filesystem::remove(file, ec);
    return error(ErrorCode::io_error, "cannot write an image to " + folder.string() + ": " + why);
  }
  return file;
}

void RequestImages::remove() {
  for (const auto& file : temporary_) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
  }
  temporary_.clear();
}

std::optional<ApiError> prepare_images(const std::vector<ImagePart>& parts, const Model& model, ImageFolder& folder,
                                       RequestImages* out) {
  for (const ImagePart& part : parts) {
    std::filesystem::path file;
    const bool data = part.url.rfind("data:", 0) == 0;
    if (data) {
      const std::size_t comma = part.url.find(',');
      const auto bytes =
          comma == std::string::npos ? std::nullopt : base64_decode(std::string_view(part.url).substr(comma + 1), false);
      if (!bytes)
        return ApiError{400, "invalid image data URL: the payload is not base64", "invalid_request_error", part.param,
                        "invalid_image_url"};
      auto written = folder.write(*bytes, extension_for(part.url));
      if (!written)
        return ApiError{500, "the image could not be stored on the server: " + written.status().message(),
                        "server_error", "", "image_storage_failed"};
      out->temporary_.push_back(*written);
      file = std::move(*written);
    } else {
      file = part.url.rfind("file://", 0) == 0 ? part.url.substr(7) : part.url;
    }
    auto positions = image_file_token_count(model, file);
    if (!positions) {
      // The decoder names the file; a decoded data URL's file is the server's business.
      std::string why = positions.status().message();
      const std::string prefix = file.string() + ": ";
      if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
      if (data)
        for (std::size_t at = why.find(file.string()); at != std::string::npos; at = why.find(file.string(), at))
          why.replace(at, file.string().size(), "the image");
      const std::string what =
          data ? "the image in '" + part.param + "'" : "the image file '" + part.url.substr(0, 200) + "'";
      return ApiError{400, what + " cannot be used: " + why, "invalid_request_error", part.param,
                      "invalid_image_format"};
    }
    out->files.push_back(std::move(file));
    out->positions.push_back(*positions);
  }
  return std::nullopt;
}

void place_images(const std::vector<ImagePart>& parts, const std::vector<std::int64_t>& positions,
                  const std::string& placeholder, std::vector<ChatMessage>* messages) {
  // From the last part back, so that the offsets of earlier parts in a message stay right.
  for (std::size_t k = parts.size(); k-- > 0;) {
    const ImagePart& part = parts[k];
    if (part.message >= messages->size()) continue;
    ChatMessage& m = (*messages)[part.message];
    m.content.insert(std::min(part.offset, m.content.size()), placeholder);
    if (k < positions.size()) m.extra_tokens += std::max<std::int64_t>(0, positions[k] - 1);
  }
}

}  // namespace day0::server
