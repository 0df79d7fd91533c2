#pragma once
// Test-side image encoders, independent of the engine's decoder: a minimal PNG writer (stored,
// uncompressed deflate blocks; any bit depth and colour type the caller describes) and helpers
// to build hostile headers.
#include <cstdint>
#include <string>
#include <vector>

namespace day0::test {

using Bytes = std::vector<std::uint8_t>;

std::uint32_t crc32(const std::uint8_t* data, std::size_t n, std::uint32_t crc = 0);

// A PNG with the given IHDR fields; `raw` is the unfiltered scanline data (without the filter
// byte, which is written as 0 per row). With `raw` empty only the signature and IHDR are written.
Bytes make_png(std::uint32_t width, std::uint32_t height, std::uint8_t bit_depth, std::uint8_t color_type,
               const Bytes& raw, std::size_t row_bytes);

// A JPEG prefix (SOI, SOF0) announcing width x height with `components` channels, then EOI.
Bytes make_jpeg_header(std::uint16_t width, std::uint16_t height, std::uint8_t components);

}  // namespace day0::test
