#include "io/image_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

// stb_image is compiled here only, restricted to the two formats Day0 accepts, with its own
// dimension limit as a second guard behind the header checks below.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_NO_HDR
#define STBI_NO_LINEAR
#define STBI_MAX_DIMENSIONS (1 << 15)
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#endif
#include <stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace day0::io {
namespace {

bool starts_with(std::span<const std::uint8_t> bytes, std::initializer_list<std::uint8_t> magic) {
  if (bytes.size() < magic.size()) return false;
  std::size_t i = 0;
  for (std::uint8_t m : magic)
    if (bytes[i++] != m) return false;
  return true;
}

const char* format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::png:
      return "PNG";
    case ImageFormat::jpeg:
      return "JPEG";
    case ImageFormat::gif:
      return "GIF";
    case ImageFormat::bmp:
      return "BMP";
    case ImageFormat::webp:
      return "WebP";
    case ImageFormat::tiff:
      return "TIFF";
    case ImageFormat::unknown:
      break;
  }
  return "unknown";
}

// The component count of a JPEG's frame header (SOFn), or 0 when the markers end first. stb
// converts 4-component (CMYK/YCCK) files with guesses about Adobe's inverted storage; Day0
// refuses them instead of showing the model wrong colours.
int jpeg_components(std::span<const std::uint8_t> b) {
  std::size_t i = 2;  // after SOI
  while (i + 4 <= b.size()) {
    if (b[i] != 0xFF) return 0;
    const std::uint8_t marker = b[i + 1];
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {
      i += 2;
      continue;
    }
    const std::size_t length = (static_cast<std::size_t>(b[i + 2]) << 8) | b[i + 3];
    if (length < 2) return 0;
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) return i + 9 < b.size() ? b[i + 9] : 0;
    if (marker == 0xDA || marker == 0xD9) return 0;  // scan or end before any frame header
    i += 2 + length;
  }
  return 0;
}

// stb_image 2.27 (Debian 12's) stores a Huffman table's code lengths in a 257-byte array without
// checking how many codes the DHT segment declares: more than 256 (16 counts of up to 255) write
// past it and past the 256 symbol values. Walks the segments as stb reads them (DHT tables one
// after another while the segment length lasts; scan data skipped up to the next marker) and
// returns the first table's code count above 256, or 0.
std::size_t oversized_jpeg_huffman_table(std::span<const std::uint8_t> b) {
  auto byte = [&b](std::size_t at) -> std::size_t { return at < b.size() ? b[at] : 0; };
  std::size_t i = 2;  // after SOI
  while (i + 1 < b.size()) {
    if (b[i] != 0xFF) {  // scan data (or junk, which stb skips) up to the next marker
      ++i;
      continue;
    }
    const std::uint8_t marker = b[i + 1];
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0x00 || marker == 0x01 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7)) {
      i += 2;  // stuffed 0xFF in scan data, TEM, SOI, RSTn: no length
      continue;
    }
    if (marker == 0xD9) return 0;  // EOI
    const std::size_t length = (byte(i + 2) << 8) | byte(i + 3);
    if (marker == 0xC4) {
      std::size_t at = i + 4;
      for (std::int64_t left = static_cast<std::int64_t>(length) - 2; left > 0 && at < b.size();) {
        std::size_t codes = 0;
        for (std::size_t k = 0; k < 16; ++k) codes += byte(at + 1 + k);
        if (codes > 256) return codes;
        at += 17 + codes;
        left -= static_cast<std::int64_t>(17 + codes);
      }
    }
    i += 2 + std::max<std::size_t>(length, 2);
  }
  return 0;
}

// stb_image 2.27 copies each IDAT chunk into its buffer with memcpy, which it has not allocated
// yet when the first IDAT is empty: memcpy(NULL, src, 0), undefined behaviour. Empty IDAT chunks
// carry no data, so they are dropped (into a copy, made only when there are any).
std::optional<std::vector<std::uint8_t>> without_empty_png_idat(std::span<const std::uint8_t> b) {
  auto be32 = [&b](std::size_t at) {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) |
           b[at + 3];
  };
  std::vector<std::size_t> empty;  // offsets of empty IDAT chunks (12 bytes each)
  for (std::size_t at = 8; at + 12 <= b.size();) {
    const std::uint64_t length = be32(at);
    if (length == 0 && std::memcmp(b.data() + at + 4, "IDAT", 4) == 0) empty.push_back(at);
    if (std::memcmp(b.data() + at + 4, "IEND", 4) == 0) break;
    at += 12 + length;
  }
  if (empty.empty()) return std::nullopt;
  std::vector<std::uint8_t> out;
  out.reserve(b.size());
  std::size_t from = 0;
  for (const std::size_t at : empty) {
    out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(from), b.begin() + static_cast<std::ptrdiff_t>(at));
    from = at + 12;
  }
  out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(from), b.end());
  return out;
}

}  // namespace

ImageFormat sniff_image_format(std::span<const std::uint8_t> bytes) {
  if (starts_with(bytes, {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A})) return ImageFormat::png;
  if (starts_with(bytes, {0xFF, 0xD8, 0xFF})) return ImageFormat::jpeg;
  if (starts_with(bytes, {'G', 'I', 'F', '8'})) return ImageFormat::gif;
  if (starts_with(bytes, {'B', 'M'})) return ImageFormat::bmp;
  if (starts_with(bytes, {'I', 'I', 0x2A, 0x00}) || starts_with(bytes, {'M', 'M', 0x00, 0x2A}))
    return ImageFormat::tiff;
  if (bytes.size() >= 12 && starts_with(bytes, {'R', 'I', 'F', 'F'}) && std::memcmp(bytes.data() + 8, "WEBP", 4) == 0)
    return ImageFormat::webp;
  return ImageFormat::unknown;
}

Result<RgbImage> decode_image(std::span<const std::uint8_t> bytes, const std::string& origin,
                              const ImageLimits& limits) {
  if (bytes.empty()) return error(ErrorCode::corrupt_data, origin + ": the image file is empty");
  if (bytes.size() > limits.max_file_bytes)
    return error(ErrorCode::invalid_argument, fmt::format("{}: the image file has {} bytes; the limit is {}", origin,
                                                          bytes.size(), limits.max_file_bytes));
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return error(ErrorCode::invalid_argument, origin + ": the image file is too large to decode");
  const ImageFormat format = sniff_image_format(bytes);
  if (format == ImageFormat::unknown)
    return error(ErrorCode::unsupported, origin + ": not a PNG or JPEG file (unrecognised leading bytes)");
  if (format != ImageFormat::png && format != ImageFormat::jpeg)
    return error(ErrorCode::unsupported, fmt::format("{}: {} images are not supported; convert it to PNG or JPEG",
                                                     origin, format_name(format)));
  if (format == ImageFormat::jpeg && jpeg_components(bytes) == 4)
    return error(ErrorCode::unsupported, origin + ": CMYK JPEG images are not supported; convert it to RGB");
  if (format == ImageFormat::jpeg) {
    if (const std::size_t codes = oversized_jpeg_huffman_table(bytes))
      return error(ErrorCode::corrupt_data,
                   fmt::format("{}: the JPEG data is corrupt (a Huffman table declares {} codes; at most 256 exist)",
                               origin, codes));
  }

  std::optional<std::vector<std::uint8_t>> cleaned;
  if (format == ImageFormat::png) {
    cleaned = without_empty_png_idat(bytes);
    if (cleaned) bytes = *cleaned;
  }
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int size = static_cast<int>(bytes.size());
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, size, &w, &h, &comp))
    return error(ErrorCode::corrupt_data, fmt::format("{}: the {} header is unreadable ({})", origin,
                                                      format_name(format), stbi_failure_reason()));
  if (w <= 0 || h <= 0)
    return error(ErrorCode::corrupt_data, fmt::format("{}: the image is {}x{} pixels", origin, w, h));
  if (w > limits.max_side || h > limits.max_side)
    return error(ErrorCode::invalid_argument, fmt::format("{}: the image is {}x{} pixels; each side may be at most {}",
                                                          origin, w, h, limits.max_side));
  const std::int64_t pixels = static_cast<std::int64_t>(w) * h;
  if (pixels > limits.max_pixels)
    return error(ErrorCode::invalid_argument,
                 fmt::format("{}: the image has {} pixels; the limit is {}", origin, pixels, limits.max_pixels));

  int dw = 0, dh = 0, dcomp = 0;
  stbi_uc* decoded = stbi_load_from_memory(data, size, &dw, &dh, &dcomp, 3);
  if (decoded == nullptr)
    return error(ErrorCode::corrupt_data, fmt::format("{}: the {} data is corrupt or truncated ({})", origin,
                                                      format_name(format), stbi_failure_reason()));
  if (dw != w || dh != h) {
    stbi_image_free(decoded);
    return error(ErrorCode::corrupt_data, origin + ": the decoded size differs from the header");
  }
  RgbImage image;
  image.width = w;
  image.height = h;
  image.pixels.assign(decoded, decoded + static_cast<std::size_t>(pixels) * 3);
  stbi_image_free(decoded);
  return image;
}

Result<RgbImage> load_image_file(const std::filesystem::path& path, const ImageLimits& limits) {
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  if (ec) return error(ErrorCode::not_found, path.string() + ": cannot read the image (" + ec.message() + ")");
  if (file_size > limits.max_file_bytes)
    return error(ErrorCode::invalid_argument, fmt::format("{}: the image file has {} bytes; the limit is {}",
                                                          path.string(), file_size, limits.max_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::io_error, path.string() + ": cannot open the image");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(file_size));
  if (file_size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(file_size)))
    return error(ErrorCode::io_error, path.string() + ": reading the image failed");
  return decode_image(bytes, path.string(), limits);
}

}  // namespace day0::io
