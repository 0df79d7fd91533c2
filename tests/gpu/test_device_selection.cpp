// --device selection: "cuda" runs on a GPU when one answers and otherwise, with a logged
// reason, on the CPU with the same results; unknown devices are refused with a clear message.
#include <QTest>

#include <cmath>

#include "core/thread_pool.h"
#include "day0/devices.h"
#include "day0/engine.h"
#include "models/loaded_model.h"

using namespace day0;

class TestDeviceSelection : public QObject {
  Q_OBJECT
 private slots:
  void cuda_or_fallback() {
    const auto dir = std::filesystem::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-gpt-oss";
    auto engine = Engine::create({1});
    ModelOptions cpu_options, cuda_options;
    cuda_options.device = "cuda";
    auto cpu = engine->load_model(dir, cpu_options);
    auto gpu = engine->load_model(dir, cuda_options);
    QVERIFY(cpu && gpu);
    const bool have_gpu = !discover_devices().gpus.empty();
    QCOMPARE(QString::fromStdString(describe(**gpu).device), QString(have_gpu ? "cuda:0" : "cpu"));
    QCOMPARE(describe(**cpu).device, std::string("cpu"));
    QVERIFY(describe(**cpu).device_memory.empty());
    const std::vector<std::int32_t> tokens{1, 5, 9, 2};
    auto a = engine->append_logits(engine->new_session(*cpu), tokens);
    auto b = engine->append_logits(engine->new_session(*gpu), tokens);
    QVERIFY(a && b);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a->size(); ++i) {
      num += std::pow((*a)[i] - (*b)[i], 2);
      den += std::pow((*a)[i], 2);
    }
    QVERIFY(std::sqrt(num / den) <= (have_gpu ? 2e-2 : 0.0));
    if (have_gpu) QVERIFY(describe(**gpu).decode_bytes_per_token > 0);
  }

  // What the system can give now: read from /proc/meminfo (as the memory plan does), never more
  // than the machine's RAM.
  void available_memory() {
    const std::uint64_t available = available_memory_bytes();
    QVERIFY(available > 0);
    QVERIFY(available <= discover_devices().cpu.memory);
  }

  void unknown_device() {
    auto engine = Engine::create({1});
    ModelOptions options;
    options.device = "tpu";
    auto m = engine->load_model(std::filesystem::path(DAY0_TEST_DATA_DIR) / "models" / "tiny-gpt-oss", options);
    QVERIFY(!m);
    QVERIFY(m.status().message().find("unknown device") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestDeviceSelection)
#include "test_device_selection.moc"
