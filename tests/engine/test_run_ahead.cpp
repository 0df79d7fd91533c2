// The run-ahead bookkeeping of the GPU executor (backend/cuda/run_ahead.h), which needs no GPU:
// a queued step is taken only by exactly its feed, any other call ends its claim, and the pick
// left in the token slot serves only the feed that follows it.
#include <QTest>

#include <vector>

#include "backend/cuda/run_ahead.h"

using day0::cuda::RunAhead;

class TestRunAhead : public QObject {
  Q_OBJECT
 private slots:
  void queued_step_is_taken_by_its_feed_only() {
    RunAhead r;
    QVERIFY(!r.queued());
    r.queue(7, 10);
    QVERIFY(r.queued());
    r.picked(7, 10, 42, true);  // the step feeding 42 at 10 is queued
    const std::vector<std::int32_t> t42{42}, t43{43}, two{42, 1};
    QVERIFY(r.take(7, 10, t42));
    QVERIFY(!r.queued());
    // Another token, another position, another session, several tokens: not the queued step,
    // and the claim ends with the first call.
    for (const auto& [session, position, tokens] :
         std::vector<std::tuple<std::uint64_t, std::int64_t, std::vector<std::int32_t>>>{
             {7, 10, t43}, {7, 11, t42}, {8, 10, t42}, {7, 10, two}}) {
      r.queue(7, 10);
      r.picked(7, 10, 42, true);
      QVERIFY(!r.take(session, position, tokens));
      QVERIFY(!r.queued());
      QVERIFY(!r.take(7, 10, t42));
    }
  }

  // A step queued before its token is known (the pick failed to arrive): no feed matches it,
  // but it is still queued, so the next call waits for the stream.
  void step_without_token_matches_nothing() {
    RunAhead r;
    r.queue(3, 5);
    QVERIFY(r.queued());
    const std::vector<std::int32_t> minus{-1};
    QVERIFY(!r.take(3, 5, minus));
    QVERIFY(!r.queued());
  }

  void token_left_on_the_device() {
    RunAhead r;
    const std::vector<std::int32_t> t9{9}, t8{8};
    r.picked(1, 20, 9, false);
    QVERIFY(!r.queued());
    QVERIFY(!r.token_on_device(1, 20, t8));
    QVERIFY(!r.token_on_device(1, 20, t9));  // the claim ended with the call before
    r.picked(1, 20, 9, false);
    QVERIFY(r.token_on_device(1, 20, t9));
    QVERIFY(!r.token_on_device(1, 20, t9));
    r.queue(1, 21);
    r.drop();
    QVERIFY(!r.queued());
  }
};

QTEST_APPLESS_MAIN(TestRunAhead)
#include "test_run_ahead.moc"
