#include "dialog_support.h"

#include <QQmlComponent>
#include <QQmlEngine>
#include <QUrl>

namespace day0::ui {

QString DialogSupport::problem(bool folder) const {
  if (engine_ == nullptr) return tr("no QML engine");
  // The URL Qt's QQuickPlatformFileDialog and QQuickPlatformFolderDialog load.
  const QUrl url(folder ? QStringLiteral("qrc:/qt-project.org/imports/QtQuick/Dialogs/quickimpl/qml/FolderDialog.qml")
                        : QStringLiteral("qrc:/qt-project.org/imports/QtQuick/Dialogs/quickimpl/qml/FileDialog.qml"));
  QQmlComponent component(engine_, url, QQmlComponent::PreferSynchronous);
  if (component.isReady()) return {};
  if (component.isLoading()) return tr("its QML is still loading");
  return component.errorString().trimmed();
}

}  // namespace day0::ui
