// The engine thread and sessions on the tiny gpt-oss checkpoint: cache reuse across turns,
// cancellation, errors as events, reproducible sampling.
#include <QtTest>
#include <atomic>
#include <cmath>

#include "day0/engine.h"
#include "day0/tokenizer.h"

using namespace day0;

namespace {

const std::filesystem::path kModel = std::filesystem::path(DAY0_TEST_DATA_DIR) / "models/tiny-gpt-oss";

std::vector<std::int32_t> prompt(std::size_t n, std::uint32_t seed) {
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) {
    seed = seed * 1664525u + 1013904223u;
    id = static_cast<std::int32_t>((seed >> 8) % 380);
  }
  return ids;
}

double rel_l2(const float* a, const float* b, std::size_t n) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    num += (a[i] - b[i]) * static_cast<double>(a[i] - b[i]);
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

struct Collected {
  std::vector<std::int32_t> tokens;
  Event last;
};

Collected run(Engine& engine, const std::shared_ptr<Session>& session, Request request) {
  Collected c;
  auto handle = engine.submit(session, std::move(request), [&](const Event& e) {
    if (e.kind == Event::Kind::token) c.tokens.push_back(e.token);
    else c.last = e;
  });
  handle->wait();
  return c;
}

}  // namespace

class TestEngineSession : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    engine_ = Engine::create({.threads = 2});
    auto model = engine_->load_model(kModel);
    QVERIFY2(model.is_ok(), model.status().message().c_str());
    model_ = *model;
    const ModelSummary s = describe(*model_);
    QCOMPARE(s.model_type, std::string("gpt_oss"));
    QCOMPARE(s.vocab_size, std::int64_t{384});
    QVERIFY(std::find(s.eos_token_ids.begin(), s.eos_token_ids.end(), 382) != s.eos_token_ids.end());
  }

  void twoTurnsEqualOnePrefill() {
    const auto ids = prompt(40, 7);
    auto whole = engine_->new_session(model_);
    auto all = engine_->append_logits(whole, ids);
    QVERIFY(all.is_ok());
    auto turns = engine_->new_session(model_);
    auto first = engine_->append_logits(turns, std::span(ids).first(23));
    auto second = engine_->append_logits(turns, std::span(ids).subspan(23));
    QVERIFY(first.is_ok() && second.is_ok());
    QCOMPARE(session_length(*turns), std::int64_t{40});
    const std::size_t V = 384;
    for (std::size_t t = 0; t < 40; ++t) {
      const float* got = t < 23 ? first->data() + t * V : second->data() + (t - 23) * V;
      QVERIFY2(rel_l2(got, all->data() + t * V, V) < 1e-5, qPrintable(QString("row %1").arg(t)));
    }
  }

  void followUpReusesTheCache() {
    auto session = engine_->new_session(model_);
    Request r;
    r.context = prompt(30, 11);
    r.stop.max_new_tokens = 6;
    r.stop.stop_at_eos = false;
    const Collected a = run(*engine_, session, r);
    QCOMPARE(a.last.kind, Event::Kind::done);
    QCOMPARE(a.tokens.size(), std::size_t{6});
    QCOMPARE(a.last.stats.reused_tokens, std::int64_t{0});
    QCOMPARE(a.last.stats.prefilled_tokens, std::int64_t{30});

    // The next turn: the whole conversation so far plus new user tokens.
    Request follow = r;
    follow.context.insert(follow.context.end(), a.tokens.begin(), a.tokens.end());
    const auto more = prompt(9, 5);
    follow.context.insert(follow.context.end(), more.begin(), more.end());
    const Collected b = run(*engine_, session, follow);
    QCOMPARE(b.last.kind, Event::Kind::done);
    // Everything but the last generated token (never fed back) comes from the cache.
    QCOMPARE(b.last.stats.reused_tokens, std::int64_t{30 + 5});
    QCOMPARE(b.last.stats.prefilled_tokens, std::int64_t{1 + 9});

    // Same answer as a fresh session given the whole context at once.
    const Collected fresh = run(*engine_, engine_->new_session(model_), follow);
    QCOMPARE(b.tokens, fresh.tokens);

    // Regenerating the same turn reuses everything but the last context token.
    const Collected again = run(*engine_, session, follow);
    QCOMPARE(again.last.stats.reused_tokens, static_cast<std::int64_t>(follow.context.size()) - 1);
    QCOMPARE(again.tokens, b.tokens);
  }

  void cancelTakesEffectWithinOneStep() {
    auto session = engine_->new_session(model_);
    Request r;
    r.context = prompt(12, 3);
    r.stop.max_new_tokens = 100000;
    r.stop.stop_at_eos = false;
    std::shared_ptr<RequestHandle> handle;
    std::atomic<int> tokens{0};
    Event last;
    std::mutex m;
    std::condition_variable cv;
    bool have_handle = false;
    handle = engine_->submit(session, r, [&](const Event& e) {
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return have_handle; });
      }
      if (e.kind == Event::Kind::token) {
        if (++tokens == 3) handle->cancel();
      } else {
        last = e;
      }
    });
    {
      std::lock_guard lock(m);
      have_handle = true;
    }
    cv.notify_all();
    handle->wait();
    QVERIFY(handle->finished());
    QCOMPARE(last.kind, Event::Kind::done);
    QCOMPARE(last.reason, DoneReason::cancelled);
    QCOMPARE(tokens.load(), 3);
    QCOMPARE(last.stats.generated_tokens, std::int64_t{3});
  }

  void errorsArriveAsEvents() {
    auto session = engine_->new_session(model_);
    Request r;
    r.context = {1, 2, 999};
    const Collected c = run(*engine_, session, r);
    QCOMPARE(c.last.kind, Event::Kind::error);
    QVERIFY2(c.last.status.message().find("token id 999 is outside the vocabulary") != std::string::npos,
             c.last.status.message().c_str());
    r.context.clear();
    QCOMPARE(run(*engine_, session, r).last.kind, Event::Kind::error);
    // The session still works afterwards.
    r.context = prompt(5, 1);
    r.stop.max_new_tokens = 2;
    QCOMPARE(run(*engine_, session, r).last.kind, Event::Kind::done);
  }

  void eventsCarryTheDecodedText() {
    Request r;
    r.context = prompt(10, 17);
    r.stop.max_new_tokens = 24;
    r.stop.stop_at_eos = false;
    r.sampling.temperature = 1.0f;
    r.sampling.seed = 5;
    std::vector<std::uint32_t> ids;
    std::string text;
    auto handle = engine_->submit(engine_->new_session(model_), r, [&](const Event& e) {
      if (e.kind == Event::Kind::token) ids.push_back(static_cast<std::uint32_t>(e.token));
      for (const auto& piece : e.text) {
        QCOMPARE(piece.channel, OutputChannel::answer);  // no chat template: no reasoning split
        text += piece.text;
      }
    });
    handle->wait();
    auto tokenizer = Tokenizer::load(kModel);
    QVERIFY(tokenizer.is_ok());
    QCOMPARE(ids.size(), std::size_t{24});
    QCOMPARE(text, tokenizer->decode(ids));
  }

  void stopStringsEndTheReply() {
    // Generate freely, then ask again with a stop string taken from the middle of that text.
    Request r;
    r.context = prompt(10, 29);
    r.stop.max_new_tokens = 40;
    r.stop.stop_at_eos = false;
    const auto text_of = [&](const Request& request, Event* last) {
      std::string text;
      auto handle = engine_->submit(engine_->new_session(model_), request, [&](const Event& e) {
        for (const auto& piece : e.text) text += piece.text;
        if (e.kind != Event::Kind::token) *last = e;
      });
      handle->wait();
      return text;
    };
    Event last;
    const std::string full = text_of(r, &last);
    QVERIFY(full.size() > 20);
    // A stop string of three bytes that first occurs past the middle.
    std::size_t at = full.size() / 2;
    while (at + 3 < full.size() && full.find(full.substr(at, 3)) != at) ++at;
    QVERIFY(at + 3 < full.size());
    r.stop.stop_strings = {full.substr(at, 3), "never-generated-\x01"};
    const std::string cut = text_of(r, &last);
    QCOMPARE(last.reason, DoneReason::stop_string);
    QCOMPARE(cut, full.substr(0, at));
  }

  void samplingIsReproducible() {
    Request r;
    r.context = prompt(16, 21);
    r.stop.max_new_tokens = 12;
    r.stop.stop_at_eos = false;
    r.sampling.temperature = 1.3f;
    r.sampling.top_k = 50;
    r.sampling.top_p = 0.95f;
    r.sampling.seed = 1234;
    const Collected a = run(*engine_, engine_->new_session(model_), r);
    const Collected b = run(*engine_, engine_->new_session(model_), r);
    QCOMPARE(a.tokens, b.tokens);
    r.sampling.seed = 99;
    const Collected c = run(*engine_, engine_->new_session(model_), r);
    QVERIFY(a.tokens != c.tokens);
    // top-k 1 at any temperature is greedy.
    r.sampling.top_k = 1;
    const Collected k1 = run(*engine_, engine_->new_session(model_), r);
    Request greedy = r;
    greedy.sampling = Sampling{};
    QCOMPARE(k1.tokens, run(*engine_, engine_->new_session(model_), greedy).tokens);
  }

 private:
  std::unique_ptr<Engine> engine_;
  std::shared_ptr<Model> model_;
};

QTEST_APPLESS_MAIN(TestEngineSession)
#include "test_engine_session.moc"
