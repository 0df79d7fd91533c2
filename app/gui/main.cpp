// day0: the desktop app. The logic lives in day0_app and the QML module Day0.Ui; this file
// only wires them together.
#include <QGuiApplication>
#include <QIcon>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTimer>
#include <QtQml/qqmlextensionplugin.h>
#include <cstdio>

#include "day0/devices.h"
#include "day0/log.h"
#include "day0/version.h"
#include "gui/app_controller.h"
#include "gui/gui_options.h"

Q_IMPORT_QML_PLUGIN(Day0_UiPlugin)

namespace {

int print_version() {
  const day0::BuildInfo build = day0::build_info();
  std::printf("day0 %s (%s build, CUDA %s)\n", build.version.c_str(), build.build_type.c_str(),
              build.cuda ? ("on, sm " + build.cuda_architectures).c_str() : "off");
  for (const auto& line : day0::describe_devices(day0::discover_devices())) std::printf("  %s\n", line.c_str());
  return 0;
}

// Renders a frame once the controller is idle, checks it, optionally saves it, and quits.
void run_selftest(QQuickWindow* window, const day0::app::AppController* controller, const QString& screenshot) {
  auto* timer = new QTimer(window);
  timer->setInterval(100);
  QObject::connect(timer, &QTimer::timeout, window, [window, controller, timer, screenshot, waited = 0]() mutable {
    if ((controller->busy() || ++waited < 3) && waited < 300) return;
    timer->stop();
    const QImage image = window->grabWindow();
    if (image.isNull() || image.width() < 100 || image.height() < 100) {
      std::fprintf(stderr, "day0 --selftest: the window rendered no usable frame\n");
      QCoreApplication::exit(1);
      return;
    }
    if (!screenshot.isEmpty() && !image.save(screenshot, "PNG")) {
      std::fprintf(stderr, "day0 --selftest: cannot write %s\n", qPrintable(screenshot));
      QCoreApplication::exit(1);
      return;
    }
    if (!controller->errorMessage().isEmpty())
      std::printf("day0 --selftest: the window shows an error: %s\n", qPrintable(controller->errorMessage()));
    std::printf("day0 --selftest: ok (%dx%d frame%s%s)\n", image.width(), image.height(),
                screenshot.isEmpty() ? "" : ", saved to ", qPrintable(screenshot));
    QCoreApplication::exit(0);
  });
  timer->start();
}

}  // namespace

int main(int argc, char** argv) {
  const day0::app::GuiOptions options = day0::app::parse_gui_options({argv + 1, argv + argc});
  if (!options.error.empty()) {
    std::fprintf(stderr, "day0: %s\n%s", options.error.c_str(), day0::app::gui_usage().c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(day0::app::gui_usage().c_str(), stdout);
    return 0;
  }
  if (options.version) return print_version();
  if (options.selftest) {
    if (day0::app::missing_display_reason()) qputenv("QT_QPA_PLATFORM", "offscreen");
  } else if (const auto reason = day0::app::missing_display_reason()) {
    std::fputs(reason->c_str(), stderr);
    return 1;
  }

  day0::log::init();
  QGuiApplication app(argc, argv);
  QGuiApplication::setApplicationName(QStringLiteral("Day0"));
  QGuiApplication::setOrganizationName(QStringLiteral("Day0"));
  QGuiApplication::setApplicationVersion(QString::fromStdString(day0::build_info().version));
  QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/qt/qml/Day0/Ui/icons/day0.svg")));

  // Fusion draws without shader effects, so it renders the same with the software renderer
  // (virtual machines, remote sessions, offscreen) as on a GPU, and follows the system palette.
  QQuickStyle::setStyle(QStringLiteral("Fusion"));

  day0::app::AppController controller;
  QQmlApplicationEngine engine;
  engine.setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(&controller)}});
  QObject::connect(
      &engine, &QQmlApplicationEngine::objectCreationFailed, &app,
      []() {
        std::fprintf(stderr, "day0: the user interface failed to load (see the messages above)\n");
        QCoreApplication::exit(1);
      },
      Qt::QueuedConnection);
  engine.addImportPath(QStringLiteral("qrc:/qt/qml"));
  engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Day0/Ui/Main.qml")));
  if (engine.rootObjects().isEmpty()) return 1;
  auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());
  if (window == nullptr) {
    std::fprintf(stderr, "day0: the main QML object is not a window\n");
    return 1;
  }
  DAY0_LOG_INFO("day0 {} started", day0::build_info().version);
  if (!options.model.empty())
    controller.inspectFolder(QUrl::fromLocalFile(QString::fromStdString(options.model)));
  if (options.selftest) run_selftest(window, &controller, QString::fromStdString(options.screenshot));
  return QGuiApplication::exec();
}
