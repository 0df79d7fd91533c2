// Routed experts streamed from disk into the expert cache (models/streamed_experts.h) against the
// same model with its experts memory-mapped, for every expert layout: gpt-oss (stacked MXFP4 with
// biases), glm5_next with bf16 experts (a tensor per expert) and with MXFP4 experts. Prompt
// logits and then token-by-token decoding must be bit-identical (the same kernels read the same
// bytes, from a cache slot instead of the map), with a cache far smaller than the experts, so that
// experts are evicted and read again.
//
// The memory plan: a model that fits stays mapped; one whose weights do not fit streams its
// experts through a cache of what is left; too little memory even for that is refused with the
// figures; a cache smaller than one token's experts is refused. An MXFP4 expert with a NaN scale
// fails the generation that routes to it with a message, and the engine goes on.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "day0/engine.h"
#include "io/checkpoint.h"

using namespace day0;
namespace fs = std::filesystem;

namespace {

const fs::path kModels = fs::path(DAY0_TEST_DATA_DIR) / "models";

std::vector<std::int32_t> prompt_tokens(std::int64_t vocab, std::size_t n) {
  std::vector<std::int32_t> t;
  for (std::size_t i = 0; i < n; ++i) t.push_back(static_cast<std::int32_t>((i * 7919 + 13) % static_cast<std::size_t>(vocab)));
  return t;
}

// Logits of a prompt, then of 6 tokens fed one at a time (each the argmax of the row before).
Result<std::vector<float>> run(Engine& engine, const std::shared_ptr<Model>& model) {
  const auto summary = describe(*model);
  auto session = engine.new_session(model);
  const auto prompt = prompt_tokens(summary.vocab_size, 24);
  auto logits = engine.append_logits(session, prompt);
  if (!logits) return logits.status();
  std::vector<float> all = *logits;
  for (int step = 0; step < 6; ++step) {
    const float* last = all.data() + all.size() - static_cast<std::size_t>(summary.vocab_size);
    const auto next = static_cast<std::int32_t>(std::max_element(last, last + summary.vocab_size) - last);
    const std::int32_t one[] = {next};
    auto row = engine.append_logits(session, one);
    if (!row) return row.status();
    all.insert(all.end(), row->begin(), row->end());
  }
  return all;
}

std::uint64_t file_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") total += fs::file_size(e.path());
  return total;
}

}  // namespace

class TestStreamedExperts : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { engine_ = Engine::create({.threads = 2}); }

  void sameLogitsAsMapped_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt-oss (MXFP4, stacked, biases)") << "tiny-gpt-oss";
    QTest::newRow("gpt-oss demo-random") << "demo-random";
    QTest::newRow("glm5_next (bf16, a tensor per expert)") << "tiny-glm5-hc4";
    QTest::newRow("glm5_next (MXFP4)") << "tiny-glm5-hc4-mxfp4";
    QTest::newRow("glm5_next (KDA, DSA, vision)") << "tiny-glm5-next";
  }
  void sameLogitsAsMapped() {
    QFETCH(QString, model);
    const fs::path dir = kModels / model.toStdString();
    auto mapped = engine_->load_model(dir);
    QVERIFY2(mapped, mapped.status().message().c_str());
    QVERIFY(!describe(**mapped).experts.streamed);
    const auto want = run(*engine_, *mapped);
    QVERIFY2(want, want.status().message().c_str());

    // A cache of a small part of the experts: as little as the plan accepts, plus one expert.
    const auto probe = engine_->load_model(dir, {.expert_cache_bytes = 1});
    QVERIFY(!probe);
    QCOMPARE(probe.status().code(), ErrorCode::invalid_argument);
    QVERIFY2(probe.status().message().find("one token's experts need") != std::string::npos,
             probe.status().message().c_str());

    // A cache of an eighth of the checkpoint (buffered and O_DIRECT reads), and of a fifth: a
    // prompt then reaches more experts of a layer than fit at once, which go in groups, the next
    // one read while the last runs.
    for (const auto& [divisor, direct] : {std::pair{8u, false}, std::pair{8u, true}, std::pair{5u, false}}) {
      ModelOptions options;
      options.expert_cache_bytes = file_bytes(dir) / divisor;
      options.direct_expert_reads = direct;
      auto streamed = engine_->load_model(dir, options);
      QVERIFY2(streamed, streamed.status().message().c_str());
      const auto got = run(*engine_, *streamed);
      QVERIFY2(got, got.status().message().c_str());
      QCOMPARE(got->size(), want->size());
      QVERIFY(std::memcmp(got->data(), want->data(), got->size() * sizeof(float)) == 0);
      const ExpertStreaming s = describe(**streamed).experts;
      QVERIFY(s.streamed);
      QVERIFY(s.cache_bytes > 0);
      QCOMPARE(s.hits + s.misses, s.lookups);
      QVERIFY(s.misses > 0);
      if (s.cache_bytes < s.expert_bytes / 2) QVERIFY(s.evictions > 0);
      QVERIFY(s.bytes_read >= s.misses);
      qInfo("%s%s, 1/%u: cache %.0f%% of %llu expert bytes, %llu lookups, hit rate %.2f, %llu evictions, %llu bytes read",
            qPrintable(model), direct ? (s.direct ? " (O_DIRECT)" : " (O_DIRECT refused by the filesystem)") : "", divisor,
            100.0 * static_cast<double>(s.cache_bytes) / static_cast<double>(s.expert_bytes),
            static_cast<unsigned long long>(s.expert_bytes), static_cast<unsigned long long>(s.lookups),
            static_cast<double>(s.hits) / static_cast<double>(s.lookups), static_cast<unsigned long long>(s.evictions),
            static_cast<unsigned long long>(s.bytes_read));
    }
  }

  void planStreamsWhatDoesNotFit() {
    const fs::path dir = kModels / "tiny-glm5-hc4-mxfp4";
    ModelOptions options;
    options.max_context = 4096;
    auto whole = engine_->load_model(dir, options);
    QVERIFY2(whole, whole.status().message().c_str());
    const auto fits = describe(**whole);
    QVERIFY(!fits.experts.streamed);
    QVERIFY(fits.planned_bytes > 0);

    // Just too little for the whole model: the experts are streamed, through a cache that holds
    // what is left, and the plan stays within the limit.
    options.memory_limit_bytes = fits.planned_bytes - 1;
    auto tight = engine_->load_model(dir, options);
    QVERIFY2(tight, tight.status().message().c_str());
    const auto streamed = describe(**tight);
    QVERIFY(streamed.experts.streamed);
    QVERIFY(streamed.planned_bytes <= options.memory_limit_bytes);
    QVERIFY(streamed.experts.cache_bytes < streamed.experts.expert_bytes);
    QCOMPARE(streamed.max_context, std::int64_t{4096});
    const auto a = run(*engine_, *whole);
    const auto b = run(*engine_, *tight);
    QVERIFY(a && b);
    QVERIFY(std::memcmp(a->data(), b->data(), a->size() * sizeof(float)) == 0);

    // No context asked for: the longest whose state takes at most an eighth of the room, never
    // less than 4096, within the limit.
    {
      ModelOptions automatic;
      automatic.memory_limit_bytes = options.memory_limit_bytes;
      auto model = engine_->load_model(dir, automatic);
      QVERIFY2(model, model.status().message().c_str());
      const auto s = describe(**model);
      QVERIFY(s.experts.streamed);
      QVERIFY(s.max_context >= 4096);
      QVERIFY(s.planned_bytes <= automatic.memory_limit_bytes);
    }

    // Half the experts' room.
    options.memory_limit_bytes = fits.planned_bytes - streamed.experts.expert_bytes / 2;
    auto half = engine_->load_model(dir, options);
    QVERIFY2(half, half.status().message().c_str());
    QVERIFY(describe(**half).experts.streamed);
    QVERIFY(describe(**half).experts.cache_bytes <= streamed.experts.expert_bytes / 2 + 64);

    // Not even the smallest cache: refused, with the figures.
    options.memory_limit_bytes = fits.planned_bytes - streamed.experts.expert_bytes;
    const auto refused = engine_->load_model(dir, options);
    QVERIFY(!refused);
    QCOMPARE(refused.status().code(), ErrorCode::out_of_memory);
    QVERIFY2(refused.status().message().find("even with its experts read from disk") != std::string::npos,
             refused.status().message().c_str());
  }

  void damagedExpertFailsTheGeneration() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const auto& entry : fs::directory_iterator(kModels / "tiny-glm5-hc4-mxfp4"))
      fs::copy_file(entry.path(), dir / entry.path().filename());
    {
      // Every MXFP4 scale of every expert's gate_up NaN (0xFF): whichever experts a token picks.
      auto checkpoint = io::Checkpoint::open(dir);
      QVERIFY(checkpoint);
      int damaged = 0;
      for (const auto& shard : (*checkpoint)->shards())
        for (const auto& t : shard.header().tensors) {
          if (t.name.find("experts.gate_up_proj_scales") == std::string::npos) continue;
          std::fstream f(shard.path(), std::ios::in | std::ios::out | std::ios::binary);
          f.seekp(static_cast<std::streamoff>(shard.file_offset(t)));
          const std::string nan(static_cast<std::size_t>(t.nbytes()), '\xff');
          f.write(nan.data(), static_cast<std::streamsize>(nan.size()));
          ++damaged;
        }
      QVERIFY(damaged > 0);
    }
    const auto mapped = engine_->load_model(dir);
    QVERIFY(!mapped);  // the mapped path checks every scale when it binds
    QCOMPARE(mapped.status().code(), ErrorCode::corrupt_data);

    auto streamed = engine_->load_model(dir, {.expert_cache_bytes = file_bytes(dir) / 4});
    QVERIFY2(streamed, streamed.status().message().c_str());
    const auto failed = run(*engine_, *streamed);
    QVERIFY(!failed);
    QCOMPARE(failed.status().code(), ErrorCode::corrupt_data);
    QVERIFY2(failed.status().message().find("NaN scale") != std::string::npos, failed.status().message().c_str());
    // The engine goes on with other models.
    auto good = engine_->load_model(kModels / "tiny-gpt-oss");
    QVERIFY(good);
    QVERIFY(run(*engine_, *good));
  }

 private:
  std::unique_ptr<Engine> engine_;
};

QTEST_GUILESS_MAIN(TestStreamedExperts)
#include "test_streamed_experts.moc"
