#pragma once
// What the GUI tests that drive a whole AppController share: the demo model, the wait for
// anything the engine does, an app whose data and settings live under a test's folder, and a
// model loaded into it.
#include <QSignalSpy>
#include <QString>

#include <memory>

#include "gui/app_controller.h"
#include "gui/app_settings.h"
#include "gui/model_manager.h"

namespace day0::gui_test {

inline const QString kDemo = QStringLiteral(DAY0_SOURCE_DIR "/tests/data/models/demo-random");
inline constexpr int kWaitMs = 30000;

// An app keeping its history and settings under `root`, replies cut at `max_new_tokens`.
inline std::unique_ptr<app::AppController> makeApp(const QString& root, int max_new_tokens = 12) {
  auto app = std::make_unique<app::AppController>(app::AppPaths{root + "/data", root + "/day0.ini"});
  app->settings()->setMaxNewTokens(max_new_tokens);
  return app;
}

// Loads the model folder `dir` and waits until it is ready.
inline bool loadModel(app::AppController& app, const QString& dir = kDemo) {
  QSignalSpy ready(app.models(), &app::ModelManager::modelReady);
  app.models()->load(dir);
  return ready.wait(kWaitMs);
}

}  // namespace day0::gui_test
