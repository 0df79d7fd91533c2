// The host expert cache (experts/expert_cache.h) over the expert store on real checkpoints: what a
// lease points at is the expert's bytes as the mapped checkpoint holds them; misses are read, hits
// are not; the least recently used expert that no lease holds is the one evicted; held experts
// stay put; a request larger than the free slots, or naming an expert twice, is refused; an
// expert that fails the check (or whose shard changed underneath) leaves no slot behind and is
// read again next time; a budget below the smallest workable cache is refused with the figure.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>

#include "experts/expert_cache.h"
#include "experts/expert_store.h"
#include "opened_checkpoint.h"

using namespace day0;
namespace fs = std::filesystem;

namespace {

const fs::path kData = DAY0_TEST_DATA_DIR;

struct Fixture {
  test::OpenedCheckpoint opened;
  std::shared_ptr<experts::ExpertStore> store;
};

Fixture open_store(const fs::path& dir) {
  Fixture f;
  f.opened = test::open_checkpoint(dir);
  if (f.opened.experts.empty()) return f;
  auto store = experts::ExpertStore::open(f.opened.shards, f.opened.experts, {.readers = 3});
  if (store) f.store = std::shared_ptr<experts::ExpertStore>(std::move(*store));
  return f;
}

std::unique_ptr<experts::ExpertCache> make_cache(const Fixture& f, std::size_t count,
                                                 experts::ExpertCache::Check check = nullptr) {
  const std::uint64_t slot = (f.store->max_expert_bytes() + 63) / 64 * 64;
  auto cache = experts::ExpertCache::create(f.store, slot * count + slot / 2, 1, std::move(check));
  return cache ? std::move(*cache) : nullptr;
}

}  // namespace

class TestExpertCache : public QObject {
  Q_OBJECT
 private slots:
  void leasesHoldTheCheckpointBytes_data() {
    QTest::addColumn<QString>("dir");
    QTest::newRow("tiny-gpt-oss (MXFP4, stacked)") << QString::fromStdString((kData / "models/tiny-gpt-oss").string());
    QTest::newRow("tiny-glm5-hc4 (bf16, per expert)") << QString::fromStdString((kData / "models/tiny-glm5-hc4").string());
    QTest::newRow("tiny-glm5-hc4-mxfp4") << QString::fromStdString((kData / "models/tiny-glm5-hc4-mxfp4").string());
  }
  void leasesHoldTheCheckpointBytes() {
    QFETCH(QString, dir);
    const Fixture f = open_store(dir.toStdString());
    QVERIFY(f.store);
    // Fewer slots than experts, so that every pass evicts.
    auto cache = make_cache(f, 3);
    QVERIFY(cache);
    QCOMPARE(cache->slot_count(), std::size_t{3});
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& e : f.opened.experts) {
        const std::int32_t ids[] = {e.expert};
        auto lease = cache->acquire(e.layer, ids);
        QVERIFY2(lease, lease.status().message().c_str());
        const auto want = test::mapped_bytes(*f.opened.checkpoint, e);
        QVERIFY(std::memcmp(lease->data(0), want.data(), want.size()) == 0);
      }
    const auto s = cache->stats();
    QCOMPARE(s.lookups, 2 * f.opened.experts.size());
    QCOMPARE(s.hits + s.misses, s.lookups);
    QVERIFY(s.misses >= f.opened.experts.size());
    QCOMPARE(s.evictions, s.misses - 3);
  }

  void evictsTheLeastRecentlyUsed() {
    const Fixture f = open_store(kData / "models/tiny-gpt-oss");
    QVERIFY(f.store);
    auto cache = make_cache(f, 3);
    QVERIFY(cache);
    const auto get = [&](std::int32_t e) {
      const std::int32_t ids[] = {e};
      auto lease = cache->acquire(0, ids);
      return lease.is_ok();
    };
    QVERIFY(get(0) && get(1) && get(2));  // 3 misses
    QVERIFY(get(0));                      // hit; 1 is now the least recent
    QVERIFY(get(3));                      // miss, evicts 1
    QVERIFY(get(0) && get(2));            // hits
    auto s = cache->stats();
    QCOMPARE(s.misses, std::uint64_t{4});
    QCOMPARE(s.hits, std::uint64_t{3});
    QCOMPARE(s.evictions, std::uint64_t{1});
    QVERIFY(get(1));  // miss again: it was the one evicted (3 goes now)
    s = cache->stats();
    QCOMPARE(s.misses, std::uint64_t{5});
    QVERIFY(get(0) && get(2) && get(1));
    QCOMPARE(cache->stats().hits, std::uint64_t{6});
    QVERIFY(cache->stats().bytes_read > 0);
  }

  void heldExpertsStay() {
    const Fixture f = open_store(kData / "models/tiny-gpt-oss");
    QVERIFY(f.store);
    auto cache = make_cache(f, 3);
    QVERIFY(cache);
    const std::int32_t held_ids[] = {0, 1};
    auto held = cache->acquire(0, held_ids);
    QVERIFY(held);
    const std::uint8_t* first = held->data(0);
    QCOMPARE(cache->free_slots(), std::size_t{1});
    const std::int32_t two[] = {2, 3};
    const auto refused = cache->acquire(0, two);
    QVERIFY(!refused);
    QCOMPARE(refused.status().code(), ErrorCode::invalid_argument);
    // Cycling other experts through the one free slot never moves the held ones.
    for (std::int32_t e = 2; e < 4; ++e) {
      const std::int32_t one[] = {e};
      QVERIFY(cache->acquire(0, one));
    }
    const std::int32_t again[] = {0};
    auto hit = cache->acquire(0, again);
    QVERIFY(hit);
    QCOMPARE(hit->data(0), first);
    *held = experts::ExpertCache::Lease{};  // released
    QCOMPARE(cache->free_slots(), std::size_t{2});  // `hit` still holds expert 0
    const std::int32_t twice[] = {1, 1};
    QVERIFY(!cache->acquire(0, twice));
  }

  void failedCheckKeepsNothing() {
    const Fixture f = open_store(kData / "models/tiny-gpt-oss");
    QVERIFY(f.store);
    bool reject = true;
    auto cache = make_cache(f, 3, [&](std::int32_t, std::int32_t expert, const std::uint8_t*) {
      return reject && expert == 1 ? error(ErrorCode::corrupt_data, "expert 1 is damaged") : Status::ok();
    });
    QVERIFY(cache);
    const std::int32_t ids[] = {0, 1};
    const auto failed = cache->acquire(0, ids);
    QVERIFY(!failed);
    QCOMPARE(failed.status().code(), ErrorCode::corrupt_data);
    QCOMPARE(QString::fromStdString(failed.status().message()), QString("expert 1 is damaged"));
    QCOMPARE(cache->free_slots(), std::size_t{3});  // nothing held after the failure
    reject = false;
    QVERIFY(cache->acquire(0, ids));
    // Both read again: nothing of the failed acquire was kept.
    QCOMPARE(cache->stats().misses, std::uint64_t{2});
    QCOMPARE(cache->stats().hits, std::uint64_t{0});
  }

  void changedShardFailsTheAcquire() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const auto& entry : fs::directory_iterator(kData / "models/tiny-gpt-oss"))
      fs::copy_file(entry.path(), dir / entry.path().filename());
    const Fixture f = open_store(dir);
    QVERIFY(f.store);
    auto cache = make_cache(f, 2);
    QVERIFY(cache);
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".safetensors") fs::resize_file(entry.path(), 64);
    const std::int32_t ids[] = {0};
    const auto failed = cache->acquire(0, ids);
    QVERIFY(!failed);
    QVERIFY2(failed.status().message().find("changed on disk") != std::string::npos, failed.status().message().c_str());
    QCOMPARE(cache->free_slots(), std::size_t{2});
  }

  void budgetBelowTheSmallestCacheIsRefused() {
    const Fixture f = open_store(kData / "models/tiny-gpt-oss");
    QVERIFY(f.store);
    const auto cache = experts::ExpertCache::create(f.store, f.store->max_expert_bytes() * 3, 4);
    QVERIFY(!cache);
    QCOMPARE(cache.status().code(), ErrorCode::out_of_memory);
    QVERIFY2(cache.status().message().find("at least 4") != std::string::npos, cache.status().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestExpertCache)
#include "test_expert_cache.moc"
