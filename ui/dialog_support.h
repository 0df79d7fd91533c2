#pragma once
// DialogSupport (QML singleton): whether Qt's own file and folder dialogs can load in this QML
// engine. Where the desktop offers no native dialog, Qt falls back to QML dialogs that import
// further modules (Qt.labs.folderlistmodel among them); when one is missing Qt 6.4 warns and
// then crashes opening a FileDialog, and a FolderDialog does nothing. PathField asks here first.
#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QString>

namespace day0::ui {

class DialogSupport : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  explicit DialogSupport(QQmlEngine* engine) : engine_(engine) {}
  static DialogSupport* create(QQmlEngine* engine, QJSEngine*) { return new DialogSupport(engine); }

  // Why Qt's own file (`folder` false) or folder dialog cannot load, in Qt's words; empty when
  // it loads. Compiled as Qt compiles it (same URL, same engine, same style variant), so what
  // this finds is what opening the dialog would find.
  Q_INVOKABLE QString problem(bool folder) const;

 private:
  QPointer<QQmlEngine> engine_;
};

}  // namespace day0::ui
