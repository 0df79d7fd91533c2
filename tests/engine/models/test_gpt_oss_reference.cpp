// gpt-oss on the CPU against Hugging Face transformers: every fixture under
// tests/data/reference/gpt-oss/ (made by tools/reference/make_gpt_oss_fixtures.py) checked layer
// by layer with VERIFY.md's thresholds, plus the greedy continuation through the cache.
#include <QtTest>
#include <filesystem>

#include "day0/verify.h"

using namespace day0;
namespace fs = std::filesystem;

class TestGptOssReference : public QObject {
  Q_OBJECT
 private slots:
  void matchesTransformers_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("reference");
    const fs::path data = DAY0_TEST_DATA_DIR;
    int n = 0;
    for (const auto& entry : fs::directory_iterator(data / "reference/gpt-oss")) {
      if (entry.path().extension() != ".safetensors") continue;
      const fs::path model = data / "models" / entry.path().stem();
      QTest::newRow(entry.path().stem().c_str())
          << QString::fromStdString(model.string()) << QString::fromStdString(entry.path().string());
      ++n;
    }
    QVERIFY2(n >= 3, "expected the fixtures of at least three tiny gpt-oss configurations");
  }

  void matchesTransformers() {
    QFETCH(QString, model);
    QFETCH(QString, reference);
    VerifyOptions options;
    options.threads = 2;
    const auto report = verify_model(model.toStdString(), reference.toStdString(), options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    const std::string table = format_verify_report(*report);
    QVERIFY2(report->passed, table.c_str());
    bool saw_logits = false, saw_layers = false, saw_router = false, saw_greedy = false;
    for (const auto& row : report->rows) {
      if (row.name == "logits" || row.name == "logits_prefill") {
        saw_logits = true;
        QVERIFY2(row.rel_l2 <= 1e-4, table.c_str());  // the typical bound of VERIFY.md
      }
      if (row.name.rfind("hidden.", 0) == 0) saw_layers = true;
      if (row.name.find(".topk") != std::string::npos) saw_router = true;
      if (row.name.rfind("greedy", 0) == 0) {
        saw_greedy = true;
        QCOMPARE(row.agreement, 1.0);
      }
    }
    QVERIFY2(saw_logits && saw_layers && saw_router && saw_greedy, table.c_str());
    qInfo("%s", table.c_str());
  }

  void aWrongModelFails() {
    // The same check on another configuration's weights must fail: the comparison can fail.
    const std::filesystem::path data = DAY0_TEST_DATA_DIR;
    VerifyOptions options;
    options.threads = 2;
    const auto report = verify_model(data / "models/tiny-gpt-oss-full", data / "reference/gpt-oss/tiny-gpt-oss.safetensors",
                                     options);
    QVERIFY2(report.is_ok(), report.status().message().c_str());
    QVERIFY(!report->passed);
  }
};

QTEST_APPLESS_MAIN(TestGptOssReference)
#include "test_gpt_oss_reference.moc"
