// Where each routed expert lies in the shards (models/expert_locations.h): read with pread at the
// ranges it gives, every expert's bytes equal what the CPU model binds for that expert (gpt-oss:
// bind_gpt_oss's per-expert views; glm5_next: the tensors transformers saved per expert, and the
// stacked MXFP4 twin), on sharded and single-file checkpoints; a checkpoint whose expert tensors
// do not match config.json is refused with the tensor's name.
#include <fcntl.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "day0/model_info.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/architecture.h"
#include "models/expert_locations.h"
#include "models/gpt_oss_manifest.h"
#include "opened_checkpoint.h"

using namespace day0;
namespace fs = std::filesystem;

namespace {

const fs::path kData = DAY0_TEST_DATA_DIR;
const fs::path kSource = DAY0_SOURCE_DIR;

std::vector<std::uint8_t> pread_range(const fs::path& file, std::uint64_t offset, std::uint64_t length) {
  std::vector<std::uint8_t> out(length);
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) return {};
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n <= 0) break;
    done += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  if (done != length) out.clear();
  return out;
}

bool same_bytes(const std::vector<std::uint8_t>& read, const void* bound, std::uint64_t n) {
  return read.size() == n && std::memcmp(read.data(), bound, n) == 0;
}

}  // namespace

class TestExpertLocations : public QObject {
  Q_OBJECT
 private slots:
  void gptOssExpertsAreTheBoundExperts_data() {
    QTest::addColumn<QString>("dir");
    QTest::newRow("tiny-gpt-oss (2 shards)") << QString::fromStdString((kData / "models/tiny-gpt-oss").string());
    QTest::newRow("tiny-gpt-oss-full (1 file)") << QString::fromStdString((kData / "models/tiny-gpt-oss-full").string());
    QTest::newRow("demo-model") << QString::fromStdString((kSource / "resources/demo-model").string());
  }

  void gptOssExpertsAreTheBoundExperts() {
    QFETCH(QString, dir);
    const auto o = test::open_checkpoint(dir.toStdString());
    QVERIFY(o.checkpoint && o.config);
    const auto cfg = models::read_gpt_oss_config(*o.config);
    QVERIFY(cfg.is_ok());
    const auto weights = models::bind_gpt_oss(*cfg, o.checkpoint);
    QVERIFY2(weights.is_ok(), weights.is_ok() ? "" : weights.status().message().c_str());
    const auto experts = models::expert_locations(*o.checkpoint, o.manifest);
    QVERIFY2(experts.is_ok(), experts.is_ok() ? "" : experts.status().message().c_str());
    QCOMPARE(experts->size(), static_cast<std::size_t>(cfg->layers * cfg->experts));
    const std::uint64_t H = cfg->hidden, I = cfg->inter;
    for (const auto& e : *experts) {
      const auto& L = weights->layers[e.layer];
      // gate_up blocks, scales, down blocks, scales, then the two biases: the manifest's order
      QCOMPARE(e.ranges.size(), std::size_t{6});
      const auto read = [&](std::size_t i) {
        const auto& r = e.ranges[i];
        return pread_range(o.checkpoint->shards()[r.shard].path(), r.offset, r.length);
      };
      const auto& gu = L.gate_up[e.expert];
      const auto& dn = L.down[e.expert];
      QVERIFY(same_bytes(read(0), gu.blocks, 2 * I * H / 2));
      QVERIFY(same_bytes(read(1), gu.scales, 2 * I * H / 32));
      QVERIFY(same_bytes(read(2), dn.blocks, H * I / 2));
      QVERIFY(same_bytes(read(3), dn.scales, H * I / 32));
      QVERIFY(same_bytes(read(4), L.gate_up_bias[e.expert].data, 2 * I * 2));
      QVERIFY(same_bytes(read(5), L.down_bias[e.expert].data, H * 2));
      QCOMPARE(e.bytes, 2 * I * H / 2 + 2 * I * H / 32 + H * I / 2 + H * I / 32 + 2 * I * 2 + H * 2);
    }
  }

  void glmExpertsPerTensorAndStacked() {
    // tiny-glm5-hc4 stores each expert's gate/up/down as its own bf16 tensors (as transformers
    // saves them); tiny-glm5-hc4-mxfp4 is the same weights with the experts stacked in MXFP4.
    const auto bf = test::open_checkpoint(kData / "models/tiny-glm5-hc4");
    const auto mx = test::open_checkpoint(kData / "models/tiny-glm5-hc4-mxfp4");
    QVERIFY(bf.checkpoint && mx.checkpoint);
    const auto a = models::expert_locations(*bf.checkpoint, bf.manifest);
    const auto b = models::expert_locations(*mx.checkpoint, mx.manifest);
    QVERIFY2(a.is_ok(), a.is_ok() ? "" : a.status().message().c_str());
    QVERIFY2(b.is_ok(), b.is_ok() ? "" : b.status().message().c_str());
    QCOMPARE(a->size(), b->size());
    QVERIFY(!a->empty());
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto& x = (*a)[i];
      const auto& y = (*b)[i];
      QCOMPARE(x.layer, y.layer);
      QCOMPARE(x.expert, y.expert);
      QCOMPARE(x.ranges.size(), std::size_t{3});  // gate_proj, up_proj, down_proj
      QCOMPARE(y.ranges.size(), std::size_t{4});  // gate_up blocks, scales, down blocks, scales
      const std::string want = ".experts." + std::to_string(x.expert) + ".";
      for (const auto& r : x.ranges) {
        QVERIFY2(r.tensor.find(want) != std::string::npos, r.tensor.c_str());
        const auto ref = bf.checkpoint->find(r.tensor);
        QVERIFY(ref.has_value());
        const auto span = ref->file->data(*ref->info);
        QVERIFY(same_bytes(pread_range(bf.checkpoint->shards()[r.shard].path(), r.offset, r.length), span.data(),
                           span.size()));
      }
      // Stacked: expert e's slice of each [E, ...] tensor.
      for (const auto& r : y.ranges) {
        const auto ref = mx.checkpoint->find(r.tensor);
        QVERIFY(ref.has_value());
        const auto span = ref->file->data(*ref->info);
        const std::uint64_t per = span.size() / ref->info->shape[0];
        QCOMPARE(r.length, per);
        QVERIFY(same_bytes(pread_range(mx.checkpoint->shards()[r.shard].path(), r.offset, r.length),
                           span.data() + per * static_cast<std::uint64_t>(y.expert), per));
      }
    }
  }

  void aMisshapenCheckpointIsRefused() {
    // The same weights under a config.json with another expert width: every expert tensor's
    // shape now disagrees, and the error names one.
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const auto& entry : fs::directory_iterator(kData / "models/tiny-gpt-oss"))
      fs::copy_file(entry.path(), dir / entry.path().filename());
    nlohmann::json config;
    std::ifstream(dir / "config.json") >> config;
    config["intermediate_size"] = config["intermediate_size"].get<int>() * 2;
    std::ofstream(dir / "config.json") << config.dump(2);
    const auto o = test::open_checkpoint(dir);
    QVERIFY(o.checkpoint);
    const auto experts = models::expert_locations(*o.checkpoint, o.manifest);
    QVERIFY(!experts.is_ok());
    const std::string message = experts.status().message();
    QVERIFY2(message.find("mlp.experts.") != std::string::npos && message.find("shape") != std::string::npos,
             message.c_str());
  }

  void inspectReportsTheExpertBytes() {
    // tiny-gpt-oss: H 64, I 64; per expert: gate_up blocks 2I*H/2 + scales 2I*H/32, down blocks
    // H*I/2 + scales H*I/32, biases (2I + H) bf16.
    const auto info = inspect_model(kData / "models/tiny-gpt-oss");
    QVERIFY(info.is_ok());
    QCOMPARE(info->bytes_per_expert, std::uint64_t{4096 + 256 + 2048 + 128 + 256 + 128});
    QCOMPARE(info->expert_byte_ranges, std::uint64_t{6});
    const std::string text = format_model_info(*info);
    QVERIFY2(text.find("Expert bytes") != std::string::npos && text.find("6 contiguous file ranges") != std::string::npos,
             text.c_str());
  }
};

QTEST_APPLESS_MAIN(TestExpertLocations)
#include "test_expert_locations.moc"
