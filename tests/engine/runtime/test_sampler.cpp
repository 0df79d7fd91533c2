// The sampler: greedy, penalties, filters, and the distribution it draws from.
#include <QtTest>
#include <cmath>

#include "runtime/sampler.h"

using namespace day0;
using runtime::Sampler;

class TestSampler : public QObject {
  Q_OBJECT
 private slots:
  void greedyPicksTheLargestLowestIdOnTies() {
    Sampler s(Sampling{});
    std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f};
    QCOMPARE(s.sample(logits, {}), 1);
  }

  void penaltiesApplyToSeenTokens() {
    Sampling p;
    p.repetition_penalty = 2.0f;
    Sampler s(p);
    // Token 0 (seen, 3.0 -> 1.5) loses to token 1 (2.0); a seen negative logit gets more negative.
    std::vector<float> logits{3.0f, 2.0f, -1.0f};
    const std::vector<std::int32_t> seen{0, 2};
    QCOMPARE(s.sample(logits, seen), 1);
    QCOMPARE(logits[0], 1.5f);
    QCOMPARE(logits[2], -2.0f);
    Sampling q;
    q.presence_penalty = 1.5f;
    Sampler t(q);
    std::vector<float> l2{3.0f, 2.0f};
    QCOMPARE(t.sample(l2, std::vector<std::int32_t>{0}), 1);
    QCOMPARE(l2[0], 1.5f);
  }

  void matchesTheSoftmaxDistribution() {
    // p = softmax(logits / T): with logits ln(0.5), ln(0.3), ln(0.2) and T = 1.
    Sampling p;
    p.temperature = 1.0f;
    p.seed = 42;
    Sampler s(p);
    const std::vector<float> base{std::log(0.5f), std::log(0.3f), std::log(0.2f)};
    std::array<int, 3> counts{};
    const int n = 30000;
    for (int i = 0; i < n; ++i) {
      auto logits = base;
      ++counts[static_cast<std::size_t>(s.sample(logits, {}))];
    }
    QVERIFY(std::abs(counts[0] / double(n) - 0.5) < 0.015);
    QVERIFY(std::abs(counts[1] / double(n) - 0.3) < 0.015);
    QVERIFY(std::abs(counts[2] / double(n) - 0.2) < 0.015);
    // T = 2 flattens: p ~ sqrt of the above, renormalised.
    p.temperature = 2.0f;
    Sampler hot(p);
    counts = {};
    for (int i = 0; i < n; ++i) {
      auto logits = base;
      ++counts[static_cast<std::size_t>(hot.sample(logits, {}))];
    }
    const double z = std::sqrt(0.5) + std::sqrt(0.3) + std::sqrt(0.2);
    QVERIFY(std::abs(counts[0] / double(n) - std::sqrt(0.5) / z) < 0.015);
    QVERIFY(std::abs(counts[2] / double(n) - std::sqrt(0.2) / z) < 0.015);
  }

  void filtersCutTheTail() {
    const std::vector<float> base{std::log(0.5f), std::log(0.3f), std::log(0.2f)};
    Sampling p;
    p.temperature = 1.0f;
    p.top_p = 0.4f;  // the first token alone reaches 0.4
    Sampler top_p(p);
    for (int i = 0; i < 200; ++i) {
      auto logits = base;
      QCOMPARE(top_p.sample(logits, {}), 0);
    }
    p.top_p = 1.0f;
    p.min_p = 0.5f;  // keeps tokens with p >= 0.25: ids 0 and 1
    Sampler min_p(p);
    for (int i = 0; i < 500; ++i) {
      auto logits = base;
      QVERIFY(min_p.sample(logits, {}) != 2);
    }
    p.min_p = 0.0f;
    p.top_k = 2;
    Sampler top_k(p);
    for (int i = 0; i < 500; ++i) {
      auto logits = base;
      QVERIFY(top_k.sample(logits, {}) != 2);
    }
  }

  void seedsAreReproducible() {
    Sampling p;
    p.temperature = 1.0f;
    p.seed = 7;
    std::vector<std::int32_t> a, b;
    Sampler s1(p), s2(p);
    for (int i = 0; i < 50; ++i) {
      std::vector<float> l1(100), l2(100);
      for (int j = 0; j < 100; ++j) l1[static_cast<std::size_t>(j)] = l2[static_cast<std::size_t>(j)] = std::sin(j * 0.37f);
      a.push_back(s1.sample(l1, {}));
      b.push_back(s2.sample(l2, {}));
    }
    QCOMPARE(a, b);
  }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
