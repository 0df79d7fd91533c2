// Image decoding: round trips through independent encoders (a stored-deflate PNG writer and
// stb_image_write's JPEG), and hostile input -- empty, wrong magic, unsupported formats,
// truncation at every length, absurd or zero dimensions, CMYK, random mutations -- each a clear
// error and never a crash.
#include <QtTest>

#include <random>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>
#pragma GCC diagnostic pop

#include "engine/vision/image_bytes.h"
#include "io/image_decode.h"

using day0::test::Bytes;

namespace {

Bytes random_rgb(std::uint32_t w, std::uint32_t h, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(static_cast<std::size_t>(w) * h * 3);
  for (auto& v : b) v = static_cast<std::uint8_t>(rng());
  return b;
}

Bytes encode_jpeg(const Bytes& rgb, int w, int h, int quality) {
  Bytes out;
  stbi_write_jpg_to_func(
      [](void* ctx, void* data, int size) {
        auto* o = static_cast<Bytes*>(ctx);
        o->insert(o->end(), static_cast<std::uint8_t*>(data), static_cast<std::uint8_t*>(data) + size);
      },
      &out, w, h, 3, rgb.data(), quality);
  return out;
}

// A smooth picture, so that a JPEG round trip stays close to it.
Bytes smooth_rgb(int w, int h) {
  Bytes b(static_cast<std::size_t>(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      b[static_cast<std::size_t>((y * w + x) * 3 + 0)] = static_cast<std::uint8_t>(255 * x / (w - 1));
      b[static_cast<std::size_t>((y * w + x) * 3 + 1)] = static_cast<std::uint8_t>(255 * y / (h - 1));
      b[static_cast<std::size_t>((y * w + x) * 3 + 2)] = 128;
    }
  return b;
}

}  // namespace

class TestImageDecode : public QObject {
  Q_OBJECT

 private slots:
  void png_rgb_round_trip() {
    const Bytes rgb = random_rgb(37, 23, 1);
    const Bytes png = day0::test::make_png(37, 23, 8, 2, rgb, 37 * 3);
    auto img = day0::io::decode_image(png, "t.png");
    QVERIFY2(img.is_ok(), img.status().message().c_str());
    QCOMPARE(img->width, 37);
    QCOMPARE(img->height, 23);
    QVERIFY(img->pixels == rgb);
  }

  void png_grey_alpha_and_16_bit_become_rgb() {
    // Grey: each value replicated over three channels.
    const Bytes grey = random_rgb(5, 4, 2);  // 60 bytes; the first 20 are the grey values
    const Bytes g(grey.begin(), grey.begin() + 20);
    auto a = day0::io::decode_image(day0::test::make_png(5, 4, 8, 0, g, 5), "g.png");
    QVERIFY2(a.is_ok(), a.status().message().c_str());
    for (std::size_t i = 0; i < 20; ++i)
      for (std::size_t c = 0; c < 3; ++c) QCOMPARE(a->pixels[i * 3 + c], g[i]);
    // RGBA: alpha dropped, colour kept (as PIL's convert("RGB")).
    const Bytes rgba = random_rgb(4, 3, 3);  // 36 bytes = 3 rows of 4 RGBA... reinterpret as 4 channels of 3x3
    auto b = day0::io::decode_image(day0::test::make_png(3, 3, 8, 6, rgba, 12), "a.png");
    QVERIFY2(b.is_ok(), b.status().message().c_str());
    for (std::size_t i = 0; i < 9; ++i)
      for (std::size_t c = 0; c < 3; ++c) QCOMPARE(b->pixels[i * 3 + c], rgba[i * 4 + c]);
    // 16-bit RGB: reduced to the high byte of each big-endian sample.
    const Bytes deep = random_rgb(4, 2, 4);  // 24 bytes = 2 rows of 2 pixels x 3 x 2 bytes
    auto c16 = day0::io::decode_image(day0::test::make_png(2, 2, 16, 2, deep, 12), "d.png");
    QVERIFY2(c16.is_ok(), c16.status().message().c_str());
    for (std::size_t i = 0; i < 12; ++i) QCOMPARE(c16->pixels[i], deep[i * 2]);
  }

  void jpeg_round_trip_is_close() {
    const int w = 48, h = 32;
    const Bytes rgb = smooth_rgb(w, h);
    const Bytes jpg = encode_jpeg(rgb, w, h, 95);
    QVERIFY(jpg.size() > 100);
    auto img = day0::io::decode_image(jpg, "t.jpg");
    QVERIFY2(img.is_ok(), img.status().message().c_str());
    QCOMPARE(img->width, w);
    QCOMPARE(img->height, h);
    double err = 0;
    for (std::size_t i = 0; i < rgb.size(); ++i) err += std::abs(int(img->pixels[i]) - int(rgb[i]));
    QVERIFY2(err / static_cast<double>(rgb.size()) < 3.0, qPrintable(QString::number(err / rgb.size())));
  }

  void unsupported_and_unknown_formats_are_refused() {
    const struct {
      Bytes bytes;
      day0::ErrorCode code;
      const char* needle;
    } cases[] = {
        {{}, day0::ErrorCode::corrupt_data, "empty"},
        {{'h', 'e', 'l', 'l', 'o'}, day0::ErrorCode::unsupported, "not a PNG or JPEG"},
        {{'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0}, day0::ErrorCode::unsupported, "GIF"},
        {{'B', 'M', 0, 0, 0, 0}, day0::ErrorCode::unsupported, "BMP"},
        {{'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'}, day0::ErrorCode::unsupported, "WebP"},
        {{'I', 'I', 0x2A, 0}, day0::ErrorCode::unsupported, "TIFF"},
    };
    for (const auto& c : cases) {
      auto r = day0::io::decode_image(c.bytes, "x");
      QVERIFY(!r.is_ok());
      QCOMPARE(r.status().code(), c.code);
      QVERIFY2(r.status().message().find(c.needle) != std::string::npos, r.status().message().c_str());
    }
  }

  void hostile_headers_fail_before_allocating() {
    // 100000 x 100000 in a well-formed IHDR (valid CRC), no pixel data.
    auto huge = day0::io::decode_image(day0::test::make_png(100000, 100000, 8, 2, {}, 0), "huge.png");
    QVERIFY(!huge.is_ok());
    QVERIFY2(huge.status().message().find("100000") != std::string::npos ||
                 huge.status().message().find("header") != std::string::npos,
             huge.status().message().c_str());
    // Within stb's own limit but beyond Day0's pixel budget, given real (small) data.
    day0::io::ImageLimits tight;
    tight.max_pixels = 100;
    auto big = day0::io::decode_image(day0::test::make_png(20, 20, 8, 2, random_rgb(20, 20, 5), 60), "b.png", tight);
    QVERIFY(!big.is_ok());
    QCOMPARE(big.status().code(), day0::ErrorCode::invalid_argument);
    QVERIFY2(big.status().message().find("400 pixels") != std::string::npos, big.status().message().c_str());
    tight = {};
    tight.max_side = 16;
    auto wide = day0::io::decode_image(day0::test::make_png(20, 2, 8, 2, random_rgb(20, 2, 6), 60), "w.png", tight);
    QVERIFY(!wide.is_ok());
    QVERIFY2(wide.status().message().find("at most 16") != std::string::npos, wide.status().message().c_str());
    // Zero-sized.
    for (auto [w, h] : {std::pair{0u, 5u}, std::pair{5u, 0u}, std::pair{0u, 0u}}) {
      auto z = day0::io::decode_image(day0::test::make_png(w, h, 8, 2, {}, 0), "z.png");
      QVERIFY(!z.is_ok());
    }
    auto jz = day0::io::decode_image(day0::test::make_jpeg_header(0, 10, 3), "z.jpg");
    QVERIFY(!jz.is_ok());
    // A JPEG frame header announcing 65000 x 65000 pixels.
    auto jh = day0::io::decode_image(day0::test::make_jpeg_header(65000, 65000, 3), "h.jpg");
    QVERIFY(!jh.is_ok());
    // CMYK JPEG.
    auto cmyk = day0::io::decode_image(day0::test::make_jpeg_header(16, 16, 4), "c.jpg");
    QVERIFY(!cmyk.is_ok());
    QCOMPARE(cmyk.status().code(), day0::ErrorCode::unsupported);
    QVERIFY2(cmyk.status().message().find("CMYK") != std::string::npos, cmyk.status().message().c_str());
  }

  void every_truncation_is_an_error() {
    const Bytes png = day0::test::make_png(9, 7, 8, 2, random_rgb(9, 7, 7), 27);
    const Bytes jpg = encode_jpeg(smooth_rgb(24, 16), 24, 16, 90);
    // A PNG cut before its IEND chunk's end, or a JPEG cut anywhere before its scan data ends,
    // must not decode (stb tolerates a missing JPEG EOI, so the last bytes are exempt).
    for (std::size_t n = 0; n + 12 < png.size(); ++n) {
      auto r = day0::io::decode_image(std::span(png.data(), n), "cut.png");
      QVERIFY2(!r.is_ok(), qPrintable(QString("PNG cut at %1 decoded").arg(n)));
    }
    std::size_t failures = 0;
    for (std::size_t n = 0; n + 2 < jpg.size(); ++n) {
      auto r = day0::io::decode_image(std::span(jpg.data(), n), "cut.jpg");
      if (!r.is_ok()) {
        ++failures;
        QVERIFY(!r.status().message().empty());
      } else {
        QCOMPARE(r->width, 24);
        QCOMPARE(r->pixels.size(), std::size_t{24 * 16 * 3});
      }
    }
    QVERIFY(failures > jpg.size() / 2);
  }

  void random_mutations_never_crash() {
    const Bytes png = day0::test::make_png(16, 12, 8, 2, random_rgb(16, 12, 8), 48);
    const Bytes jpg = encode_jpeg(smooth_rgb(32, 24), 32, 24, 80);
    std::mt19937 rng(1234);
    int decoded = 0, refused = 0;
    for (const Bytes* base : {&png, &jpg}) {
      for (int iter = 0; iter < 4000; ++iter) {
        Bytes m = *base;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; f < flips; ++f) {
          const std::size_t at = 2 + rng() % (m.size() - 2);  // keep the magic
          m[at] = static_cast<std::uint8_t>(rng());
        }
        if (rng() % 4 == 0) m.resize(2 + rng() % (m.size() - 2));
        auto r = day0::io::decode_image(m, "m");
        if (r.is_ok()) {
          ++decoded;
          QVERIFY(r->width > 0 && r->height > 0);
          QCOMPARE(r->pixels.size(), static_cast<std::size_t>(r->width * r->height * 3));
        } else {
          ++refused;
          QVERIFY(!r.status().message().empty());
        }
      }
    }
    QVERIFY(refused > 0);
    qInfo("mutations: %d decoded, %d refused", decoded, refused);
  }

  void files_are_read_with_limits() {
    auto missing = day0::io::load_image_file("/nonexistent/day0/picture.png");
    QVERIFY(!missing.is_ok());
    QVERIFY2(missing.status().message().find("picture.png") != std::string::npos, missing.status().message().c_str());
    QTemporaryDir dir;
    const QString path = dir.filePath("p.png");
    const Bytes png = day0::test::make_png(3, 2, 8, 2, random_rgb(3, 2, 9), 9);
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(reinterpret_cast<const char*>(png.data()), static_cast<qint64>(png.size()));
    f.close();
    auto ok = day0::io::load_image_file(path.toStdString());
    QVERIFY2(ok.is_ok(), ok.status().message().c_str());
    QCOMPARE(ok->width, 3);
    day0::io::ImageLimits tiny;
    tiny.max_file_bytes = 10;
    auto too_big = day0::io::load_image_file(path.toStdString(), tiny);
    QVERIFY(!too_big.is_ok());
    QCOMPARE(too_big.status().code(), day0::ErrorCode::invalid_argument);
  }
};

QTEST_APPLESS_MAIN(TestImageDecode)
#include "test_image_decode.moc"
