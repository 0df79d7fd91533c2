// glm5_next through the engine: a conversation's caches (MLA latents, indexer keys and pools,
// KDA states) carried across turns, and the rewinds a regenerated or edited turn needs, give
// the tokens a fresh session gives.
#include <QtTest>

#include "day0/engine.h"

using namespace day0;

namespace {

const std::filesystem::path kModel = std::filesystem::path(DAY0_TEST_DATA_DIR) / "models/tiny-glm5-hc3";

std::vector<std::int32_t> prompt(std::size_t n, std::uint32_t seed) {
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) {
    seed = seed * 1664525u + 1013904223u;
    id = static_cast<std::int32_t>((seed >> 8) % 240);
  }
  return ids;
}

struct Collected {
  std::vector<std::int32_t> tokens;
  Event last;
};

Collected run(Engine& engine, const std::shared_ptr<Session>& session, Request request) {
  Collected c;
  auto handle = engine.submit(session, std::move(request), [&](const Event& e) {
    if (e.kind == Event::Kind::token)
      c.tokens.push_back(e.token);
    else
      c.last = e;
  });
  handle->wait();
  return c;
}

}  // namespace

class TestGlm5NextSession : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    engine_ = Engine::create({.threads = 2});
    auto model = engine_->load_model(kModel);
    QVERIFY2(model.is_ok(), model.status().message().c_str());
    model_ = *model;
  }

  void turnsRegenerationAndEditsMatchAFreshSession() {
    auto session = engine_->new_session(model_);
    Request r;
    r.context = prompt(40, 11);
    r.stop.max_new_tokens = 8;
    r.stop.stop_at_eos = false;
    const Collected a = run(*engine_, session, r);
    QCOMPARE(a.last.kind, Event::Kind::done);
    QCOMPARE(a.tokens.size(), std::size_t{8});
    QCOMPARE(run(*engine_, engine_->new_session(model_), r).tokens, a.tokens);

    // The next turn reuses everything fed so far.
    Request follow = r;
    follow.context.insert(follow.context.end(), a.tokens.begin(), a.tokens.end());
    const auto more = prompt(12, 5);
    follow.context.insert(follow.context.end(), more.begin(), more.end());
    const Collected b = run(*engine_, session, follow);
    QCOMPARE(b.last.kind, Event::Kind::done);
    QCOMPARE(b.last.stats.reused_tokens, std::int64_t{40 + 7});
    const Collected fresh = run(*engine_, engine_->new_session(model_), follow);
    QCOMPARE(b.tokens, fresh.tokens);

    // Regenerating that turn rewinds the KDA states to the prompt's last-but-one token.
    const Collected again = run(*engine_, session, follow);
    QCOMPARE(again.last.stats.reused_tokens, static_cast<std::int64_t>(follow.context.size()) - 1);
    QCOMPARE(again.tokens, b.tokens);

    // Editing the first turn's reply: the session rewinds as far as it can and refeeds the rest.
    Request edited = follow;
    edited.context[44] = (edited.context[44] + 1) % 240;
    const Collected c = run(*engine_, session, edited);
    QCOMPARE(c.last.kind, Event::Kind::done);
    QVERIFY(c.last.stats.reused_tokens <= 44);
    QCOMPARE(c.tokens, run(*engine_, engine_->new_session(model_), edited).tokens);
  }

 private:
  std::unique_ptr<Engine> engine_;
  std::shared_ptr<Model> model_;
};

QTEST_APPLESS_MAIN(TestGlm5NextSession)
#include "test_glm5_next_session.moc"
