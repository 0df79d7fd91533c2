#pragma once
// Decoding untrusted image files (PNG and JPEG) into 8-bit RGB. The format is recognised by its
// magic bytes, the header is read and checked against the limits before any pixel memory is
// allocated, and every failure (corrupt, truncated, hostile or unsupported input) is a Status
// naming the cause; nothing here aborts.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "day0/status.h"

namespace day0::io {

struct ImageLimits {
  std::int64_t max_side = 16384;                // width and height, each
  std::int64_t max_pixels = 64ll << 20;         // width * height
  std::uint64_t max_file_bytes = 256ull << 20;  // encoded size
};

// Interleaved 8-bit RGB: pixels[(y * width + x) * 3 + c].
struct RgbImage {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::vector<std::uint8_t> pixels;
};

enum class ImageFormat { unknown, png, jpeg, gif, bmp, webp, tiff };

// The format the leading bytes announce.
ImageFormat sniff_image_format(std::span<const std::uint8_t> bytes);

// Decodes PNG (8-bit; 16-bit channels are reduced to 8 bits; grey, palette and alpha are
// converted, alpha dropped) or JPEG (grey or YCbCr; CMYK is refused). `origin` names the input in
// messages.
Result<RgbImage> decode_image(std::span<const std::uint8_t> bytes, const std::string& origin,
                              const ImageLimits& limits = {});

Result<RgbImage> load_image_file(const std::filesystem::path& path, const ImageLimits& limits = {});

}  // namespace day0::io
