// The expert store (experts/expert_store.h) on real checkpoints: every expert read through it,
// one at a time and all at once on several reader threads, buffered and with O_DIRECT, equals the
// expert's bytes in the mapped checkpoint (the concatenation of its tensors' slices); a request
// for an expert that does not exist or into a buffer too small is refused; a shard truncated or
// rewritten after the store opened it fails the read with a message, and nothing crashes.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "experts/expert_store.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/architecture.h"
#include "models/expert_locations.h"
#include "opened_checkpoint.h"

using namespace day0;
namespace fs = std::filesystem;

namespace {

const fs::path kData = DAY0_TEST_DATA_DIR;
const fs::path kSource = DAY0_SOURCE_DIR;

}  // namespace

class TestExpertStore : public QObject {
  Q_OBJECT
 private slots:
  void readsEveryExpert_data() {
    QTest::addColumn<QString>("dir");
    QTest::addColumn<bool>("direct");
    for (const auto& [name, dir] : {std::pair{"tiny-gpt-oss", kData / "models/tiny-gpt-oss"},
                                    std::pair{"tiny-glm5-hc4 (bf16, per expert)", kData / "models/tiny-glm5-hc4"},
                                    std::pair{"tiny-glm5-hc4-mxfp4", kData / "models/tiny-glm5-hc4-mxfp4"},
                                    std::pair{"demo-model", kSource / "resources/demo-model"}}) {
      QTest::newRow((std::string(name) + ", buffered").c_str()) << QString::fromStdString(dir.string()) << false;
      QTest::newRow((std::string(name) + ", O_DIRECT").c_str()) << QString::fromStdString(dir.string()) << true;
    }
  }

  void readsEveryExpert() {
    QFETCH(QString, dir);
    QFETCH(bool, direct);
    auto m = test::open_checkpoint(dir.toStdString());
    QVERIFY(m.checkpoint && !m.experts.empty());
    const auto want = m.experts;
    auto store = experts::ExpertStore::open(m.shards, m.experts, {.readers = 3, .direct = direct});
    QVERIFY2(store.is_ok(), store.is_ok() ? "" : store.status().message().c_str());
    if (direct) qInfo("O_DIRECT %s here", (*store)->direct_active() ? "in use" : "refused by the filesystem");
    // One at a time.
    for (const auto& e : want) {
      std::vector<std::uint8_t> buffer((*store)->bytes(e.layer, e.expert), 0xAB);
      QCOMPARE(buffer.size(), static_cast<std::size_t>(e.bytes));
      const experts::ExpertRead r{e.layer, e.expert, buffer};
      const Status s = (*store)->read({&r, 1});
      QVERIFY2(s.is_ok(), s.message().c_str());
      QVERIFY(buffer == test::mapped_bytes(*m.checkpoint, e));
    }
    // All at once, into one buffer.
    std::vector<std::uint8_t> all((*store)->max_expert_bytes() * want.size());
    std::vector<experts::ExpertRead> reads;
    for (std::size_t i = 0; i < want.size(); ++i)
      reads.push_back({want[i].layer, want[i].expert,
                       std::span<std::uint8_t>(all).subspan(i * (*store)->max_expert_bytes(),
                                                            (*store)->max_expert_bytes())});
    const Status s = (*store)->read(reads);
    QVERIFY2(s.is_ok(), s.message().c_str());
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto expect = test::mapped_bytes(*m.checkpoint, want[i]);
      QVERIFY(std::memcmp(all.data() + i * (*store)->max_expert_bytes(), expect.data(), expect.size()) == 0);
      total += expect.size();
    }
    const auto stats = (*store)->stats();
    QCOMPARE(stats.experts, static_cast<std::uint64_t>(2 * want.size()));
    QCOMPARE(stats.bytes, 2 * total);
  }

  void badRequestsAreRefused() {
    auto m = test::open_checkpoint(kData / "models/tiny-gpt-oss");
    auto store = experts::ExpertStore::open(m.shards, m.experts);
    QVERIFY(store.is_ok());
    std::vector<std::uint8_t> small(16);
    experts::ExpertRead r{0, 0, small};
    Status s = (*store)->read({&r, 1});
    QVERIFY(!s.is_ok());
    QVERIFY2(std::string(s.message()).find("needs") != std::string::npos, s.message().c_str());
    std::vector<std::uint8_t> big((*store)->max_expert_bytes());
    r = {0, 999, big};
    s = (*store)->read({&r, 1});
    QVERIFY(!s.is_ok());
    QVERIFY2(std::string(s.message()).find("no expert 999") != std::string::npos, s.message().c_str());
    // Ranges past the end of a shard are refused at open.
    auto bad = m.experts;
    bad[0].ranges[0].offset = 1ull << 40;
    const auto refused = experts::ExpertStore::open(m.shards, bad);
    QVERIFY(!refused.is_ok());
  }

  void aShardChangedUnderneathFailsTheRead_data() {
    QTest::addColumn<bool>("truncate");
    QTest::newRow("truncated") << true;
    QTest::newRow("rewritten") << false;
  }

  void aShardChangedUnderneathFailsTheRead() {
    QFETCH(bool, truncate);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const auto& entry : fs::directory_iterator(kData / "models/tiny-gpt-oss"))
      fs::copy_file(entry.path(), dir / entry.path().filename());
    auto m = test::open_checkpoint(dir);
    QVERIFY(m.checkpoint);
    auto store = experts::ExpertStore::open(m.shards, m.experts);
    QVERIFY(store.is_ok());
    const auto& e = m.experts.back();
    const fs::path shard = m.shards[e.ranges.front().shard];
    m.checkpoint.reset();  // the mapping goes; the store keeps its own descriptors
    if (truncate) {
      fs::resize_file(shard, 64);
    } else {
      // Same size, new contents and modification time (as a re-download would leave it).
      const auto size = fs::file_size(shard);
      std::ofstream(shard, std::ios::binary | std::ios::trunc) << std::string(size, 'x');
      fs::last_write_time(shard, fs::last_write_time(shard) + std::chrono::seconds(5));
    }
    std::vector<std::uint8_t> buffer((*store)->max_expert_bytes());
    const experts::ExpertRead r{e.layer, e.expert, buffer};
    const Status s = (*store)->read({&r, 1});
    QVERIFY(!s.is_ok());
    QVERIFY2(std::string(s.message()).find("changed on disk") != std::string::npos, s.message().c_str());
  }
};

QTEST_APPLESS_MAIN(TestExpertStore)
#include "test_expert_store.moc"
