#include <QtTest>

#include "day0/status.h"

using namespace day0;

namespace {
Result<int> parse_positive(int v) {
  if (v <= 0) return error(ErrorCode::invalid_argument, "value must be positive, got " + std::to_string(v));
  return v;
}
Result<int> doubled(int v) {
  DAY0_ASSIGN_OR_RETURN(const int x, parse_positive(v));
  return 2 * x;
}
Status check(int v) {
  DAY0_RETURN_IF_ERROR(parse_positive(v).status());
  return Status::ok();
}
}  // namespace

class TestStatus : public QObject {
  Q_OBJECT
 private slots:
  void okStatus() {
    const Status s = Status::ok();
    QVERIFY(s.is_ok());
    QCOMPARE(s.to_string(), std::string("ok"));
  }
  void errorCarriesMessageAndContext() {
    const Status s = error(ErrorCode::corrupt_data, "tensor x ends at byte 812 but the file has 640");
    QVERIFY(!s.is_ok());
    QCOMPARE(s.code(), ErrorCode::corrupt_data);
    const Status c = s.with_context("model-00001.safetensors");
    QCOMPARE(c.message(), std::string("model-00001.safetensors: tensor x ends at byte 812 but the file has 640"));
    QCOMPARE(c.to_string(), std::string("corrupt data: model-00001.safetensors: tensor x ends at byte 812 but the file has 640"));
  }
  void propagationMacros() {
    QCOMPARE(doubled(21).value(), 42);
    const auto bad = doubled(-1);
    QVERIFY(!bad.is_ok());
    QCOMPARE(bad.status().code(), ErrorCode::invalid_argument);
    QVERIFY(bad.status().message().find("-1") != std::string::npos);
    QVERIFY(check(3).is_ok());
    QCOMPARE(check(0).code(), ErrorCode::invalid_argument);
  }
};

QTEST_APPLESS_MAIN(TestStatus)
#include "test_status.moc"
