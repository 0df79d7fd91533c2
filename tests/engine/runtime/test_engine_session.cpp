// The engine thread and sessions on the tiny gpt-oss checkpoint: cache reuse across turns,
// cancellation, errors as events, reproducible sampling.
#include <QtTest>
#include <atomic>
#include <cmath>

#include "day0/chat.h"
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

  // Progress while the prompt is read: 0 of the total first, then after every chunk, all before
  // the first token; a follow-up counts only what the cache did not hold.
  void prefillProgressPrecedesTokens() {
    auto session = engine_->new_session(model_);
    Request r;
    r.context = prompt(600, 11);
    r.stop.max_new_tokens = 3;
    r.stop.stop_at_eos = false;
    std::vector<Event> events;
    engine_->submit(session, r, [&](const Event& e) { events.push_back(e); })->wait();
    QVERIFY(!events.empty());
    QCOMPARE(events.back().kind, Event::Kind::done);
    std::vector<std::pair<std::int64_t, std::int64_t>> progress;
    std::size_t first_token = events.size();
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i].kind == Event::Kind::progress) {
        QVERIFY2(i < first_token, "a progress event after a token");
        progress.emplace_back(events[i].prefill_done, events[i].prefill_total);
      } else if (events[i].kind == Event::Kind::token && first_token == events.size()) {
        first_token = i;
      }
    }
    QCOMPARE(first_token, std::size_t{progress.size()});
    // 600 tokens in chunks of 256: 0, 256, 512, 600.
    const std::vector<std::pair<std::int64_t, std::int64_t>> expected{{0, 600}, {256, 600}, {512, 600}, {600, 600}};
    QCOMPARE(progress, expected);
    QCOMPARE(events.back().stats.prefilled_tokens, std::int64_t{600});

    auto more = r.context;
    const auto tail = prompt(40, 5);
    more.insert(more.end(), tail.begin(), tail.end());
    r.context = more;
    events.clear();
    engine_->submit(session, r, [&](const Event& e) { events.push_back(e); })->wait();
    QCOMPARE(events.back().kind, Event::Kind::done);
    const std::int64_t fresh = 640 - events.back().stats.reused_tokens;
    QVERIFY(fresh > 0 && fresh < 256);
    QCOMPARE(events.front().kind, Event::Kind::progress);
    QCOMPARE(events.front().prefill_done, std::int64_t{0});
    QCOMPARE(events.front().prefill_total, fresh);
    QCOMPARE(events[1].kind, Event::Kind::progress);
    QCOMPARE(events[1].prefill_done, fresh);
    QCOMPARE(events[2].kind, Event::Kind::token);
  }

  // Cancel while the prompt is read: it stops between chunks, with no token.
  void cancelDuringPrefill() {
    auto session = engine_->new_session(model_);
    Request r;
    r.context = prompt(1200, 17);
    r.stop.max_new_tokens = 4;
    std::shared_ptr<RequestHandle> handle;
    std::mutex m;
    std::condition_variable cv;
    bool have_handle = false;
    std::vector<Event> events;
    handle = engine_->submit(session, r, [&](const Event& e) {
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return have_handle; });
      }
      events.push_back(e);
      if (e.kind == Event::Kind::progress && e.prefill_done == 256) handle->cancel();
    });
    {
      std::lock_guard lock(m);
      have_handle = true;
    }
    cv.notify_all();
    handle->wait();
    QCOMPARE(events.back().kind, Event::Kind::done);
    QCOMPARE(events.back().reason, DoneReason::cancelled);
    QCOMPARE(events.back().stats.generated_tokens, std::int64_t{0});
    QCOMPARE(events.back().stats.prefilled_tokens, std::int64_t{256});
    for (const auto& e : events) QVERIFY(e.kind != Event::Kind::token);
    QCOMPARE(session_length(*session), std::int64_t{256});
  }

  // Fitting a conversation into a context: the policies keep the right turns, the system prompt
  // always, and as many recent turns as fit.
  void encodeFittingKeepsTheRightTurns() {
    auto formatter = ChatFormatter::load(std::filesystem::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random");
    QVERIFY2(formatter.is_ok(), formatter.status().message().c_str());
    std::vector<ChatMessage> messages{{"system", "You are terse.", ""}};
    for (int i = 0; i < 10; ++i) {
      messages.push_back({"user", "question " + std::to_string(i) + std::string(40, 'q'), ""});
      messages.push_back({"assistant", "answer " + std::to_string(i) + std::string(40, 'a'), ""});
    }
    messages.push_back({"user", "the last question", ""});
    const auto full = formatter->encode(messages, true);
    QVERIFY(full.is_ok());
    const auto whole = static_cast<std::int64_t>(full->size());
    const std::int64_t reserve = 16;
    const std::int64_t context = whole / 2 + reserve;
    const auto budget = context - reserve;
    const auto length = [&](const std::vector<std::size_t>& kept) {
      std::vector<ChatMessage> chosen;
      for (const auto i : kept) chosen.push_back(messages[i]);
      return static_cast<std::int64_t>(formatter->encode(chosen, true)->size());
    };

    // Room enough: everything, untouched.
    auto all = formatter->encode_fitting(messages, whole + reserve, reserve, ContextOverflow::rolling_window);
    QVERIFY(all.is_ok() && all->fits);
    QCOMPARE(all->dropped, std::size_t{0});
    QCOMPARE(all->tokens, *full);

    auto stop = formatter->encode_fitting(messages, context, reserve, ContextOverflow::stop);
    QVERIFY(stop.is_ok());
    QVERIFY(!stop->fits);
    QCOMPARE(stop->full_tokens, whole);
    QCOMPARE(stop->kept.size(), messages.size());

    auto middle = formatter->encode_fitting(messages, context, reserve, ContextOverflow::truncate_middle);
    QVERIFY(middle.is_ok());
    QVERIFY(middle->fits);
    QVERIFY(middle->dropped > 0);
    QCOMPARE(middle->kept.size() + middle->dropped, messages.size());
    QVERIFY(static_cast<std::int64_t>(middle->tokens.size()) <= budget);
    QCOMPARE(static_cast<std::int64_t>(middle->tokens.size()), length(middle->kept));
    // System prompt and first turn, then a run of whole turns up to the last message.
    QCOMPARE(middle->kept[0], std::size_t{0});
    QCOMPARE(middle->kept[1], std::size_t{1});
    QCOMPARE(middle->kept[2], std::size_t{2});
    const std::size_t from = middle->kept[3];
    QVERIFY(from > 3);
    QCOMPARE(messages[from].role, std::string("user"));
    for (std::size_t k = 3; k < middle->kept.size(); ++k) QCOMPARE(middle->kept[k], from + (k - 3));
    QCOMPARE(middle->kept.back(), messages.size() - 1);
    // One more turn would not have fit.
    std::vector<std::size_t> bigger{0, 1, 2, from - 2, from - 1};
    bigger.insert(bigger.end(), middle->kept.begin() + 3, middle->kept.end());
    QVERIFY(length(bigger) > budget);

    auto rolling = formatter->encode_fitting(messages, context, reserve, ContextOverflow::rolling_window);
    QVERIFY(rolling.is_ok());
    QVERIFY(rolling->fits);
    QCOMPARE(rolling->kept[0], std::size_t{0});
    const std::size_t start = rolling->kept[1];
    QVERIFY(start > 1);
    QCOMPARE(messages[start].role, std::string("user"));
    for (std::size_t k = 1; k < rolling->kept.size(); ++k) QCOMPARE(rolling->kept[k], start + (k - 1));
    QVERIFY(static_cast<std::int64_t>(rolling->tokens.size()) <= budget);
    std::vector<std::size_t> wider{0, start - 2, start - 1};
    wider.insert(wider.end(), rolling->kept.begin() + 1, rolling->kept.end());
    QVERIFY(length(wider) > budget);
    // Rolling keeps at least as many recent messages as truncate-middle does.
    QVERIFY(rolling->kept.size() - 1 >= middle->kept.size() - 3);

    // Not even the system prompt and the last message fit: said, not crashed.
    auto tiny = formatter->encode_fitting(messages, 12, 4, ContextOverflow::truncate_middle);
    QVERIFY(tiny.is_ok());
    QVERIFY(!tiny->fits);

    QCOMPARE(parse_context_overflow("rolling"), std::optional(ContextOverflow::rolling_window));
    QCOMPARE(parse_context_overflow("truncate-middle"), std::optional(ContextOverflow::truncate_middle));
    QVERIFY(!parse_context_overflow("sideways"));
    QCOMPARE(std::string(context_overflow_name(ContextOverflow::rolling_window)), std::string("rolling-window"));
  }

  // Images take more positions than their placeholders' tokens: a message's extra_tokens count
  // when the conversation is fitted, so a turn whose image fills the context is left out.
  void encodeFittingCountsImagePositions() {
    auto formatter = ChatFormatter::load(std::filesystem::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random");
    QVERIFY2(formatter.is_ok(), formatter.status().message().c_str());
    std::vector<ChatMessage> messages{{"system", "You are terse.", ""},
                                      {"user", "look at this", ""},
                                      {"assistant", "a cat", ""},
                                      {"user", "and this one?", ""}};
    const auto text = static_cast<std::int64_t>(formatter->encode(messages, true)->size());
    const std::int64_t reserve = 8;
    const std::int64_t context = text + reserve + 100;
    auto plain = formatter->encode_fitting(messages, context, reserve, ContextOverflow::rolling_window);
    QVERIFY(plain.is_ok() && plain->fits && plain->dropped == 0);
    QCOMPARE(plain->positions, text);
    messages[1].extra_tokens = 400;  // an image in the first question
    auto fitted = formatter->encode_fitting(messages, context, reserve, ContextOverflow::rolling_window);
    QVERIFY(fitted.is_ok());
    QCOMPARE(fitted->full_tokens, text + 400);
    QVERIFY(fitted->fits);
    QCOMPARE(fitted->dropped, std::size_t{2});
    QCOMPARE(fitted->kept, (std::vector<std::size_t>{0, 3}));
    QCOMPARE(fitted->positions, static_cast<std::int64_t>(fitted->tokens.size()));
    auto stop = formatter->encode_fitting(messages, context, reserve, ContextOverflow::stop);
    QVERIFY(stop.is_ok() && !stop->fits);
    // The image in the last question: it cannot be left out, and does not fit.
    messages[1].extra_tokens = 0;
    messages[3].extra_tokens = 400;
    auto last = formatter->encode_fitting(messages, context, reserve, ContextOverflow::truncate_middle);
    QVERIFY(last.is_ok() && !last->fits);
    QVERIFY(last->positions > context - reserve);
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
