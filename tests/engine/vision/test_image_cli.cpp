// day0-cli logits/generate --image on the tiny glm5_next checkpoint: the .npy has one row per
// expanded prompt position and equals the in-process image prompt; a text-only prompt's rows
// before the image agree with `logits` without images; hostile or mismatched input is a clear
// error (exit 1 or 2), never a crash.
#include <QtTest>

#include <cstring>
#include <fstream>
#include <random>

#include "app/process_runner.h"
#include "day0/images.h"
#include "engine/vision/image_bytes.h"

namespace fs = std::filesystem;

namespace {

QString cli() { return QString(DAY0_BIN_DIR) + "/day0-cli"; }
QString tiny() { return QString(DAY0_TEST_DATA_DIR) + "/models/tiny-glm5-next"; }

// float32 .npy -> values and shape (the writer's simple header: '<f4', C order).
std::vector<float> read_npy(const QString& path, std::vector<long>* shape) {
  std::ifstream in(path.toStdString(), std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.size() < 10) return {};
  const std::uint16_t hlen = static_cast<std::uint8_t>(all[8]) | (static_cast<std::uint8_t>(all[9]) << 8);
  const std::string header = all.substr(10, hlen);
  const auto a = header.find("'shape': (");
  shape->clear();
  for (std::size_t p = a + 10; p < header.size() && header[p] != ')';) {
    if (std::isdigit(static_cast<unsigned char>(header[p]))) {
      std::size_t used = 0;
      shape->push_back(std::stol(header.substr(p), &used));
      p += used;
    } else {
      ++p;
    }
  }
  std::vector<float> v((all.size() - 10 - hlen) / 4);
  std::memcpy(v.data(), all.data() + 10 + hlen, v.size() * 4);
  return v;
}

QString write_png(const QTemporaryDir& dir, const QString& name, std::uint32_t w, std::uint32_t h, unsigned seed) {
  std::mt19937 rng(seed);
  day0::test::Bytes rgb(static_cast<std::size_t>(w) * h * 3);
  for (auto& v : rgb) v = static_cast<std::uint8_t>(rng());
  const auto png = day0::test::make_png(w, h, 8, 2, rgb, w * 3);
  const QString path = dir.filePath(name);
  std::ofstream(path.toStdString(), std::ios::binary)
      .write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  return path;
}

}  // namespace

class TestImageCli : public QObject {
  Q_OBJECT

 private slots:
  void logits_with_two_images() {
    QTemporaryDir dir;
    const QString a = write_png(dir, "a.png", 140, 112, 1), b = write_png(dir, "b.png", 112, 112, 2);
    const QString out = dir.filePath("l.npy");
    const auto r = day0::test::run_program(cli(),
                                           {"logits", "--model", tiny(), "--tokens", "7,334,358,335,9,334,358,335,11",
                                            "--image", a, "--image", b, "--out", out, "--threads", "2"},
                                           day0::test::quiet_env());
    QVERIFY2(!r.crashed && r.exit_code == 0, qPrintable(r.err));
    std::vector<long> shape;
    const auto v = read_npy(out, &shape);
    QCOMPARE(shape.size(), std::size_t{2});
    QCOMPARE(shape[0], 9L - 2 + 20 + 16);
    QCOMPARE(shape[1], 384L);
    const std::vector<std::int32_t> tokens{7, 334, 358, 335, 9, 334, 358, 335, 11};
    auto direct = day0::image_prompt_logits(tiny().toStdString(), tokens, {a.toStdString(), b.toStdString()}, {2});
    QVERIFY2(direct.is_ok(), direct.status().message().c_str());
    QVERIFY(direct->logits == v);
    // Rows before the first image equal plain `logits` over the same first tokens.
    const QString plain = dir.filePath("p.npy");
    const auto r2 = day0::test::run_program(cli(), {"logits", "--model", tiny(), "--tokens", "7,334", "--out", plain},
                                            day0::test::quiet_env());
    QVERIFY2(r2.exit_code == 0, qPrintable(r2.err));
    std::vector<long> s2;
    const auto p = read_npy(plain, &s2);
    QCOMPARE(s2[0], 2L);
    for (std::size_t i = 0; i < p.size(); ++i) QVERIFY(std::abs(p[i] - v[i]) <= 1e-5f * (1 + std::abs(p[i])));
  }

  void generate_with_an_image() {
    QTemporaryDir dir;
    const QString a = write_png(dir, "a.png", 140, 112, 3);
    const auto r = day0::test::run_program(
        cli(),
        {"generate", "--model", tiny(), "--tokens", "5,334,358,335,6", "--image", a, "--max-new-tokens", "6", "--ids"},
        day0::test::quiet_env());
    QVERIFY2(!r.crashed && r.exit_code == 0, qPrintable(r.err));
    const QStringList lines = r.out.trimmed().split('\n');
    const QStringList ids = lines.last().split(',');
    QVERIFY(ids.size() >= 1 && ids.size() <= 6);
    // Greedy: the first id is the arg max of the prompt's last row.
    auto direct = day0::image_prompt_logits(tiny().toStdString(), std::vector<std::int32_t>{5, 334, 358, 335, 6},
                                            {a.toStdString()}, {2});
    QVERIFY(direct.is_ok());
    const auto last = direct->logits.end() - direct->vocab;
    QCOMPARE(ids[0].toInt(), static_cast<int>(std::max_element(last, direct->logits.end()) - last));
  }

  void bad_images_and_counts_are_clear_errors() {
    QTemporaryDir dir;
    const QString good = write_png(dir, "g.png", 140, 112, 4);
    const QString junk = dir.filePath("junk.png");
    std::ofstream(junk.toStdString()) << "GIF89a not really";
    const QString out = dir.filePath("x.npy");
    const struct {
      QStringList args;
      const char* needle;
    } cases[] = {
        {{"--tokens", "1,358,2", "--image", junk}, "GIF"},
        {{"--tokens", "1,358,2", "--image", dir.filePath("missing.png")}, "missing.png"},
        {{"--tokens", "1,2", "--image", good}, "image"},
        {{"--tokens", "1,358,358", "--image", good}, "image"},
    };
    for (const auto& c : cases) {
      const auto r = day0::test::run_program(cli(), QStringList{"logits", "--model", tiny(), "--out", out} + c.args,
                                             day0::test::quiet_env());
      QVERIFY(!r.crashed);
      QCOMPARE(r.exit_code, 1);
      QVERIFY2(r.err.contains(c.needle), qPrintable(r.err));
    }
    const auto r = day0::test::run_program(
        cli(), {"logits", "--model", tiny(), "--out", out, "--tokens", "1", "--image"}, day0::test::quiet_env());
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("--image needs a file"));
  }
};

QTEST_GUILESS_MAIN(TestImageCli)
#include "test_image_cli.moc"
