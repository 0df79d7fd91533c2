// A probe of the sanitizer setup (tests/sanitizers.cmake, tools/sanitizers/): it does what the
// suppression files excuse in Qt, and, when asked, what they must never hide in Day0's own code.
//   render          a QML window with an Image of an SVG icon, rendered offscreen, then torn down
//                   in order (window, engine, application): Qt's software scene graph leaks its
//                   textures (lsan.supp)
//   render-and-leak the same, plus a leak made here: an object holding a QImage and a QObject
//   handoff         pool threads hand captured payloads to the GUI thread through queued
//                   functors, the GUI thread hands work to the pool (tsan-qt.supp)
//   handoff-race    the same, plus a real race: a pool thread writes a shared counter after
//                   posting, with no lock, while the queued functor reads it
// It exits 0 when the run finished; a sanitizer report makes the sanitizer end it instead.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QThreadPool>
#include <QTimer>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  QElapsedTimer clock;
  clock.start();
  while (!done()) {
    if (clock.elapsed() > timeout_ms) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return true;
}

int render() {
  const QByteArray qml =
      "import QtQuick\n"
      "Window { width: 120; height: 80; visible: true\n"
      "  Image { source: \"file://" DAY0_SOURCE_DIR
      "/ui/icons/alert.svg\"; sourceSize.width: 32; "
      "sourceSize.height: 32 }\n"
      "}\n";
  auto engine = std::make_unique<QQmlApplicationEngine>();
  engine->loadData(qml);
  if (engine->rootObjects().isEmpty()) return 2;
  auto* window = qobject_cast<QQuickWindow*>(engine->rootObjects().constFirst());
  if (window == nullptr) return 2;
  // The window renders its frames once exposed; grabbing renders one more.
  wait_until([window] { return window->isExposed(); }, 10000);
  QElapsedTimer settle;
  settle.start();
  wait_until([&settle] { return settle.elapsed() > 100; }, 1000);
  const QImage frame = window->grabWindow();
  if (frame.isNull()) return 3;
  engine.reset();
  return 0;
}

// What a leak in Day0's code through Qt objects looks like: LeakSanitizer must name it.
struct LeakedByDay0 {
  QImage image{48, 48, QImage::Format_ARGB32};
  QObject* object = new QObject;
};
LeakedByDay0* volatile g_last_leak = nullptr;

void leak_on_purpose() {
  g_last_leak = new LeakedByDay0;
  g_last_leak->image.fill(Qt::red);
  g_last_leak = nullptr;
}

struct Shared {
  int unguarded = 0;  // written by pool threads and read by the GUI thread with no lock: a race
};

int handoff(bool race) {
  constexpr int kRounds = 300;
  QObject receiver;
  Shared shared;
  std::atomic<int> started{0};
  int delivered = 0;
  std::size_t checksum = 0;
  for (int i = 0; i < kRounds; ++i) {
    // GUI thread -> pool: the functor and its captures go through QThreadPool's queue.
    std::string label = "round " + std::to_string(i);
    QThreadPool::globalInstance()->start([&, label = std::move(label), i]() {
      ++started;
      // Pool -> GUI thread: a payload built here, read and freed there.
      std::vector<int> payload(64 + i % 7, i);
      QString text = QString::fromStdString(label);
      QMetaObject::invokeMethod(
          &receiver,
          [&, payload = std::move(payload), text = std::move(text)]() {
            checksum += payload.size() + static_cast<std::size_t>(text.size());
            if (race) checksum += static_cast<std::size_t>(shared.unguarded);
            ++delivered;
          },
          Qt::QueuedConnection);
      if (race) shared.unguarded = i;
    });
  }
  if (!wait_until([&] { return delivered == kRounds; }, 120000)) return 4;
  QThreadPool::globalInstance()->waitForDone();
  std::printf("handoff: %d rounds, checksum %zu\n", started.load(), checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitizer_probe render|render-and-leak|handoff|handoff-race\n");
    return 2;
  }
  const std::string mode = argv[1];
  QGuiApplication app(argc, argv);
  int code = 2;
  if (mode == "render" || mode == "render-and-leak") {
    code = render();
    if (mode == "render-and-leak") leak_on_purpose();
  } else if (mode == "handoff" || mode == "handoff-race") {
    code = handoff(mode == "handoff-race");
  }
  std::fflush(stdout);
  return code;
}
