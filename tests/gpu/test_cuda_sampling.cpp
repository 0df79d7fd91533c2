// The GPU token sampler (kernels/token_sampler.h) against the CPU sampler (runtime::Sampler) on
// fixed logits: for each setting, many GPU draws must follow the CPU sampler's distribution (the
// kept tokens and their probabilities, Sampler::candidates()) by a chi-square test and never
// leave its kept set; greedy with penalties must equal the CPU's pick exactly; the same seed
// gives the same draws; the fed token joins the seen set.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "gpu/gpu_test_util.h"
#include "runtime/sampler.h"
#include "token_sampler.h"

using namespace day0;
using namespace day0::gpu_test;
namespace k = day0::kernels;

namespace {

struct DeviceSampler {
  GuardedBuffer memory;
  k::SamplerWorkspace ws;
  std::int64_t vocab;
  explicit DeviceSampler(std::int64_t v) : memory(k::sampler_workspace_bytes(v)), vocab(v) {
    cudaMemset(memory.as<void>(), 0, k::sampler_workspace_bytes(v));
    ws = k::sampler_workspace(memory.as<void>(), v);
  }
  unsigned configure(const Sampling& s, const std::vector<std::int32_t>& seen) {
    const k::SamplerConfig c =
        k::sampler_config(s.temperature, s.top_k, s.top_p, s.min_p, s.repetition_penalty, s.presence_penalty, s.seed);
    cudaMemcpy(ws.config, &c, sizeof(c), cudaMemcpyHostToDevice);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(vocab), 0);
    for (auto t : seen) mask[static_cast<std::size_t>(t)] = 1;
    cudaMemcpy(ws.seen, mask.data(), mask.size(), cudaMemcpyHostToDevice);
    return k::sampler_mode(s.temperature, s.top_k, s.top_p, s.min_p, s.repetition_penalty, s.presence_penalty, vocab);
  }
};

// `draws` picks from `logits` (copied fresh for every draw: penalties modify them in place) into
// one device array, read back at the end.
std::vector<std::int32_t> draw_many(DeviceSampler& d, unsigned mode, const std::vector<float>& logits, int draws) {
  GuardedBuffer work(logits.size() * 4), source = to_device(logits), picks(static_cast<std::size_t>(draws) * 4);
  for (int i = 0; i < draws; ++i) {
    if (cudaMemcpyAsync(work.as<void>(), source.as<void>(), logits.size() * 4, cudaMemcpyDeviceToDevice, nullptr) !=
        cudaSuccess)
      return {};
    if (k::sample_token(work.as<float>(), static_cast<std::int64_t>(logits.size()), mode, d.ws, nullptr,
                        picks.as<std::int32_t>() + i, nullptr) != cudaSuccess)
      return {};
  }
  if (cudaDeviceSynchronize() != cudaSuccess || !picks.guard_intact()) return {};
  return to_host<std::int32_t>(picks, static_cast<std::size_t>(draws));
}

// A vocabulary-sized row shaped like a language model's: a few dozen likely tokens over a long
// tail of noise.
std::vector<float> model_like_logits(std::mt19937& rng, std::size_t n, int head) {
  auto logits = random_floats(rng, n, 1.5f);
  for (int i = 0; i < head; ++i) logits[rng() % n] = 8.0f + 4.0f * std::uniform_real_distribution<float>(0, 1)(rng);
  return logits;
}

struct Verdict {
  bool ok = true;
  QString why;
};

// Chi-square of the GPU draws against the CPU's candidates: tokens expected at least 20 times
// are their own bins, the other kept tokens one bin; any draw outside the kept set fails.
Verdict compare(const std::vector<std::int32_t>& picks, runtime::Sampler::Candidates c) {
  Verdict v;
  if (picks.empty()) return {false, "no draws (a CUDA call failed)"};
  const double n = static_cast<double>(picks.size());
  std::map<std::int32_t, double> p;
  for (std::size_t i = 0; i < c.ids.size(); ++i) p[c.ids[i]] = c.probs[i];
  std::map<std::int32_t, int> counts;
  for (auto t : picks) {
    if (!p.count(t))
      return {false, QString("token %1 drawn outside the CPU's %2 kept tokens").arg(t).arg(c.ids.size())};
    ++counts[t];
  }
  double chi2 = 0, rest_p = 0, rest_count = 0;
  int bins = 0;
  for (const auto& [t, prob] : p) {
    const double expected = prob * n;
    const double seen = counts.count(t) ? counts[t] : 0;
    if (expected >= 20) {
      chi2 += (seen - expected) * (seen - expected) / expected;
      ++bins;
    } else {
      rest_p += prob;
      rest_count += seen;
    }
  }
  if (rest_p * n >= 20) {
    chi2 += (rest_count - rest_p * n) * (rest_count - rest_p * n) / (rest_p * n);
    ++bins;
  }
  const double df = std::max(1, bins - 1);
  // About 6 standard deviations above the mean of a chi-square with df degrees of freedom.
  const double limit = df + 6 * std::sqrt(2 * df) + 10;
  v.ok = chi2 <= limit;
  v.why = QString("chi2 %1 over %2 bins (limit %3), %4 kept tokens").arg(chi2).arg(bins).arg(limit).arg(c.ids.size());
  return v;
}

}  // namespace

class TestCudaSampling : public QObject {
  Q_OBJECT
 private slots:
  void follows_the_cpu_sampler() {
    std::mt19937 rng(11);
    struct Case {
      const char* name;
      std::size_t vocab;
      Sampling s;
      int seen;  // tokens marked seen (the highest logits first, then random ones)
    };
    const auto sampling = [](float t, int top_k, float top_p, float min_p, float rep = 1.0f, float pres = 0.0f) {
      Sampling s;
      s.temperature = t;
      s.top_k = top_k;
      s.top_p = top_p;
      s.min_p = min_p;
      s.repetition_penalty = rep;
      s.presence_penalty = pres;
      s.seed = 99;
      return s;
    };
    const std::vector<Case> cases{
        {"app defaults (T 0.7, top-p 0.95)", 201088, sampling(0.7f, 0, 0.95f, 0.0f), 0},
        {"top-k 40", 201088, sampling(1.0f, 40, 1.0f, 0.0f), 0},
        {"min-p 0.05", 201088, sampling(0.8f, 0, 1.0f, 0.05f), 0},
        {"top-k 100, top-p 0.9, min-p 0.01", 201088, sampling(1.2f, 100, 0.9f, 0.01f), 0},
        {"top-p 0.5 over a flat tail", 201088, sampling(1.5f, 0, 0.5f, 0.0f), 0},
        {"penalties, top-p 0.95", 201088, sampling(0.7f, 0, 0.95f, 0.0f, 1.3f, 0.5f), 12},
        {"temperature only", 1000, sampling(1.0f, 0, 1.0f, 0.0f), 0},
        {"temperature and presence penalty", 1000, sampling(0.9f, 0, 1.0f, 0.0f, 1.0f, 1.0f), 40},
        {"top-k larger than the vocabulary", 1000, sampling(1.0f, 5000, 1.0f, 0.0f), 0},
        {"odd vocabulary, top-k 7", 2049, sampling(0.6f, 7, 1.0f, 0.0f), 0},
    };
    const int draws = 40000;
    for (const auto& c : cases) {
      auto logits = model_like_logits(rng, c.vocab, c.vocab > 10000 ? 30 : 8);
      std::vector<std::int32_t> seen;
      std::vector<std::int32_t> order(c.vocab);
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + std::min<std::size_t>(c.vocab, 8), order.end(),
                        [&](auto a, auto b) { return logits[a] > logits[b]; });
      for (int i = 0; i < c.seen; ++i)
        seen.push_back(i < 4 ? order[static_cast<std::size_t>(i)] : static_cast<std::int32_t>(rng() % c.vocab));
      DeviceSampler d(static_cast<std::int64_t>(c.vocab));
      const unsigned mode = d.configure(c.s, seen);
      const auto picks = draw_many(d, mode, logits, draws);
      runtime::Sampler cpu(c.s);
      auto copy = logits;
      const Verdict v = compare(picks, cpu.candidates(copy, seen));
      qInfo("%s: %s", c.name, qPrintable(v.why));
      QVERIFY2(v.ok, qPrintable(QString(c.name) + ": " + v.why));
      QVERIFY(d.memory.guard_intact());
    }
  }

  // Runs of equal logits where a filter ends: top-k and top-p keep the lowest ids of the run.
  void ties_at_the_cut() {
    std::mt19937 rng(5);
    const std::size_t V = 50000;
    auto logits = random_floats(rng, V, 1.0f);
    for (int i = 0; i < 20; ++i) logits[rng() % V] = 9.0f + i * 0.01f;  // 20 above the run
    std::vector<std::int32_t> run;
    for (int i = 0; i < 300; ++i) {
      const auto t = static_cast<std::int32_t>(rng() % V);
      if (logits[t] < 9.0f) {
        logits[t] = 8.5f;
        run.push_back(t);
      }
    }
    for (const auto& [top_k, top_p] : std::vector<std::pair<int, float>>{{50, 1.0f}, {0, 0.6f}, {45, 0.99f}}) {
      Sampling s;
      s.temperature = 1.0f;
      s.top_k = top_k;
      s.top_p = top_p;
      s.seed = 3;
      DeviceSampler d(V);
      const unsigned mode = d.configure(s, {});
      const auto picks = draw_many(d, mode, logits, 30000);
      runtime::Sampler cpu(s);
      auto copy = logits;
      const auto candidates = cpu.candidates(copy, {});
      const Verdict v = compare(picks, candidates);
      qInfo("ties, top-k %d top-p %.2f: %s", top_k, top_p, qPrintable(v.why));
      QVERIFY2(v.ok, qPrintable(v.why));
      // The cut fell inside the run: some of its tokens kept, not all.
      const std::set<std::int32_t> kept(candidates.ids.begin(), candidates.ids.end());
      const auto in_run = std::count_if(run.begin(), run.end(), [&](auto t) { return kept.count(t) > 0; });
      QVERIFY(in_run > 0 && in_run < static_cast<std::int64_t>(run.size()));
    }
  }

  // Greedy with penalties: exactly the CPU's pick, over many rows; also NaN and -inf logits.
  void greedy_with_penalties() {
    std::mt19937 rng(8);
    for (const std::size_t V : {7ul, 1000ul, 201088ul}) {
      for (int row = 0; row < 20; ++row) {
        auto logits = random_floats(rng, V, 2.0f);
        if (V > 10) {
          logits[rng() % V] = std::nanf("");
          logits[rng() % V] = -INFINITY;
        }
        std::vector<std::int32_t> seen;
        for (int i = 0; i < 30; ++i) seen.push_back(static_cast<std::int32_t>(rng() % V));
        // The top token is often seen, so the penalty changes the answer.
        seen.push_back(static_cast<std::int32_t>(
            std::max_element(logits.begin(), logits.end(),
                             [](float a, float b) { return std::isnan(a) || (!std::isnan(b) && a < b); }) -
            logits.begin()));
        Sampling s;
        s.temperature = 0.0f;
        s.repetition_penalty = row % 2 ? 1.5f : 1.0f;
        s.presence_penalty = row % 3 ? 0.7f : 0.0f;
        if (s.repetition_penalty == 1.0f && s.presence_penalty == 0.0f) s.presence_penalty = 2.0f;
        DeviceSampler d(static_cast<std::int64_t>(V));
        const unsigned mode = d.configure(s, seen);
        QCOMPARE(mode, static_cast<unsigned>(k::kSamplePenalties));
        const auto picks = draw_many(d, mode, logits, 1);
        QCOMPARE(picks.size(), std::size_t{1});
        auto copy = logits;
        for (auto& x : copy)
          if (std::isnan(x)) x = -INFINITY;
        runtime::Sampler cpu(s);
        QCOMPARE(picks[0], cpu.sample(copy, seen));
      }
    }
  }

  // The same seed and draw number give the same tokens; another seed other tokens; the draw
  // number advances by one per draw.
  void seeded() {
    std::mt19937 rng(2);
    const auto logits = model_like_logits(rng, 201088, 30);
    Sampling s;
    s.temperature = 1.0f;
    s.top_p = 0.95f;
    s.seed = 1234;
    DeviceSampler d(201088);
    const unsigned mode = d.configure(s, {});
    const auto a = draw_many(d, mode, logits, 200);
    k::SamplerConfig c;
    CUDA_VERIFY(cudaMemcpy(&c, d.ws.config, sizeof(c), cudaMemcpyDeviceToHost));
    QCOMPARE(c.draws, 200u);
    d.configure(s, {});
    const auto b = draw_many(d, mode, logits, 200);
    QCOMPARE(a, b);
    s.seed = 1235;
    d.configure(s, {});
    const auto other = draw_many(d, mode, logits, 200);
    QVERIFY(other != a);
  }

  // The token a step fed counts as seen for its own draw and joins the seen set after it; the
  // step's end goes to the mapped host slot and advances the positions.
  void fed_token_and_step_end() {
    const std::size_t V = 1000;
    std::vector<float> logits(V, 0.0f);
    logits[10] = 5.0f;
    logits[20] = 4.9f;
    Sampling s;
    s.temperature = 0.0f;
    s.presence_penalty = 1.0f;
    DeviceSampler d(V);
    const unsigned mode = d.configure(s, {});
    auto work = to_device(logits);
    GuardedBuffer token(4), positions(8);
    const std::int32_t fed = 10;
    CUDA_VERIFY(cudaMemcpy(token.as<void>(), &fed, 4, cudaMemcpyHostToDevice));
    const std::vector<std::int32_t> start{7, 8};
    CUDA_VERIFY(cudaMemcpy(positions.as<void>(), start.data(), 8, cudaMemcpyHostToDevice));
    std::int32_t* host = nullptr;
    std::int32_t* host_dev = nullptr;
    CUDA_VERIFY(cudaHostAlloc(reinterpret_cast<void**>(&host), 8, cudaHostAllocMapped));
    CUDA_VERIFY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_dev), host, 0));
    host[0] = host[1] = -1;
    k::StepEnd end;
    end.host_picks = host_dev;
    end.positions = positions.as<std::int32_t>();
    // fed and out are the same slot, as in the decode step.
    CUDA_VERIFY(k::sample_token(work.as<float>(), V, mode, d.ws, token.as<std::int32_t>(), token.as<std::int32_t>(),
                                nullptr, end));
    CUDA_VERIFY(cudaDeviceSynchronize());
    QCOMPARE(to_host<std::int32_t>(token, 1)[0], 20);  // 10 was fed: 5.0 - 1.0 < 4.9
    QCOMPARE(host[1], 20);
    QCOMPARE(host[0], -1);
    QCOMPARE(to_host<std::int32_t>(positions, 2), (std::vector<std::int32_t>{8, 9}));
    std::vector<std::uint8_t> mask(V);
    CUDA_VERIFY(cudaMemcpy(mask.data(), d.ws.seen, V, cudaMemcpyDeviceToHost));
    QCOMPARE(static_cast<int>(mask[10]), 1);
    QCOMPARE(std::accumulate(mask.begin(), mask.end(), 0), 1);
    CUDA_VERIFY(cudaFreeHost(host));
    QVERIFY(d.memory.guard_intact() && token.guard_intact() && positions.guard_intact());
  }

  void refuses_bad_arguments() {
    DeviceSampler d(100);
    GuardedBuffer logits(400), out(4);
    QCOMPARE(k::sample_token(nullptr, 100, k::kSampleDraw, d.ws, nullptr, out.as<std::int32_t>(), nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(k::sample_token(logits.as<float>(), 0, k::kSampleDraw, d.ws, nullptr, out.as<std::int32_t>(), nullptr),
             cudaErrorInvalidValue);
    // Filters without a draw, and unknown mode bits.
    QCOMPARE(k::sample_token(logits.as<float>(), 100, k::kSampleTopK, d.ws, nullptr, out.as<std::int32_t>(), nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(k::sample_token(logits.as<float>(), 100, 64u, d.ws, nullptr, out.as<std::int32_t>(), nullptr),
             cudaErrorInvalidValue);
    QCOMPARE(k::sampler_mode(0.0f, 40, 0.9f, 0.1f, 1.0f, 0.0f, 100), 0u);
    QCOMPARE(k::sampler_mode(0.7f, 0, 1.0f, 0.0f, 1.0f, 0.0f, 100), static_cast<unsigned>(k::kSampleDraw));
    QCOMPARE(k::sampler_mode(0.7f, 100, 1.0f, 0.0f, 1.0f, 0.0f, 100), static_cast<unsigned>(k::kSampleDraw));
    CUDA_VERIFY(cudaGetLastError());
  }
};

int main(int argc, char** argv) {
  if (const int skip = skip_without_gpu()) return skip;
  TestCudaSampling test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_cuda_sampling.moc"
