#include "engine/vision/image_bytes.h"

namespace day0::test {
namespace {

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

void chunk(Bytes& out, const char* type, const Bytes& data) {
  put32(out, static_cast<std::uint32_t>(data.size()));
  Bytes body(type, type + 4);
  body.insert(body.end(), data.begin(), data.end());
  out.insert(out.end(), body.begin(), body.end());
  put32(out, crc32(body.data(), body.size()));
}

}  // namespace

std::uint32_t crc32(const std::uint8_t* data, std::size_t n, std::uint32_t crc) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

Bytes make_png(std::uint32_t width, std::uint32_t height, std::uint8_t bit_depth, std::uint8_t color_type,
               const Bytes& raw, std::size_t row_bytes) {
  Bytes out{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  Bytes ihdr;
  put32(ihdr, width);
  put32(ihdr, height);
  ihdr.insert(ihdr.end(), {bit_depth, color_type, 0, 0, 0});
  chunk(out, "IHDR", ihdr);
  if (raw.empty()) return out;
  // zlib stream: header, stored blocks of at most 65535 bytes, Adler-32.
  Bytes filtered;
  for (std::size_t r = 0; r * row_bytes < raw.size(); ++r) {
    filtered.push_back(0);
    filtered.insert(filtered.end(), raw.begin() + static_cast<std::ptrdiff_t>(r * row_bytes),
                    raw.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_bytes));
  }
  Bytes z{0x78, 0x01};
  std::size_t pos = 0;
  do {
    const std::size_t n = std::min<std::size_t>(65535, filtered.size() - pos);
    const bool last = pos + n == filtered.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<std::uint8_t>(n));
    z.push_back(static_cast<std::uint8_t>(n >> 8));
    z.push_back(static_cast<std::uint8_t>(~n));
    z.push_back(static_cast<std::uint8_t>(~n >> 8));
    z.insert(z.end(), filtered.begin() + static_cast<std::ptrdiff_t>(pos),
             filtered.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < filtered.size());
  std::uint32_t a = 1, b = 0;
  for (std::uint8_t v : filtered) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  put32(z, (b << 16) | a);
  chunk(out, "IDAT", z);
  chunk(out, "IEND", {});
  return out;
}

Bytes make_jpeg_header(std::uint16_t width, std::uint16_t height, std::uint8_t components) {
  Bytes b{0xFF, 0xD8, 0xFF, 0xC0};
  const std::uint16_t length = static_cast<std::uint16_t>(8 + 3 * components);
  b.push_back(static_cast<std::uint8_t>(length >> 8));
  b.push_back(static_cast<std::uint8_t>(length));
  b.push_back(8);
  b.push_back(static_cast<std::uint8_t>(height >> 8));
  b.push_back(static_cast<std::uint8_t>(height));
  b.push_back(static_cast<std::uint8_t>(width >> 8));
  b.push_back(static_cast<std::uint8_t>(width));
  b.push_back(components);
  for (std::uint8_t c = 0; c < components; ++c) b.insert(b.end(), {static_cast<std::uint8_t>(c + 1), 0x11, 0});
  b.insert(b.end(), {0xFF, 0xD9});
  return b;
}

}  // namespace day0::test
