// day0: the desktop app. The logic lives in day0_app and the QML module Day0.Ui; this file
// only wires them together.
#include <QtQml/qqmlextensionplugin.h>
#include <QGuiApplication>
#include <QIcon>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <cstdio>
#include <memory>

#include "day0/devices.h"
#include "day0/log.h"
#include "day0/version.h"
#include "gui/app_controller.h"
#include "gui/app_settings.h"
#include "gui/gui_options.h"
#include "gui/image_attachments.h"
#include "gui/selftest.h"

Q_IMPORT_QML_PLUGIN(Day0_UiPlugin)

namespace {

int print_version() {
  const day0::BuildInfo build = day0::build_info();
  std::printf("day0 %s (%s build, CUDA %s)\n", build.version.c_str(), build.build_type.c_str(),
              build.cuda ? ("on, sm " + build.cuda_architectures).c_str() : "off");
  for (const auto& line : day0::describe_devices(day0::discover_devices())) std::printf("  %s\n", line.c_str());
  return 0;
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
  // Fractional scale factors (1.25, 1.5) are used as they are, not rounded: crisp text on HiDPI.
  QGuiApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
  QGuiApplication app(argc, argv);
  QGuiApplication::setApplicationName(QStringLiteral("Day0"));
  QGuiApplication::setOrganizationName(QStringLiteral("Day0"));
  QGuiApplication::setApplicationVersion(QString::fromStdString(day0::build_info().version));
  QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/qt/qml/Day0/Ui/icons/day0.svg")));

  // Fusion draws without shader effects, so it renders the same with the software renderer
  // (virtual machines, remote sessions, offscreen) as on a GPU; the QML sets its palette.
  QQuickStyle::setStyle(QStringLiteral("Fusion"));

  // The self-test leaves no trace: a temporary data folder unless one is named.
  std::unique_ptr<QTemporaryDir> scratch;
  day0::app::AppPaths paths;
  if (!options.data_dir.empty()) {
    const QString dir = QString::fromStdString(options.data_dir);
    paths = {dir, dir + QStringLiteral("/day0.ini")};
  } else if (options.selftest) {
    scratch = std::make_unique<QTemporaryDir>();
    paths = {scratch->path(), scratch->path() + QStringLiteral("/day0.ini")};
  } else {
    paths = day0::app::AppController::defaultPaths();
  }

  day0::app::AppController controller(paths);
  if (!options.theme.empty()) controller.settings()->setTheme(QString::fromStdString(options.theme));
  if (options.selftest) controller.settings()->setMaxNewTokens(64);
  QQmlApplicationEngine engine;
  engine.addImageProvider(QStringLiteral("day0"),
                          new day0::app::AttachmentImageProvider(controller.attachmentSource()));
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
  controller.start(QString::fromStdString(options.model));
  std::unique_ptr<day0::app::SelfTest> selftest;
  if (options.selftest) {
    selftest = std::make_unique<day0::app::SelfTest>(window, &controller, QString::fromStdString(options.screenshot),
                                                     QString::fromStdString(options.page));
    selftest->start();
  }
  const int code = QGuiApplication::exec();
  selftest.reset();
  return code;
}
