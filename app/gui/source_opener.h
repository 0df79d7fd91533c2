#pragma once
// Opening a cited source: the file at its line, or a PDF at its page, in the program the
// desktop uses for that file type. When that program (its desktop file id, from `xdg-mime
// query default <type>`) is an editor known to take a line, or a PDF viewer known to take a
// page, it is started with them; otherwise the file URL goes to QDesktopServices (the default
// handler, without the position).
#include <QString>
#include <QStringList>
#include <QUrl>

namespace day0::app {

struct OpenPlan {
  QString program;        // empty: open `url` with the default handler
  QStringList arguments;  // for `program`
  QUrl url;               // the file (with #page=N for viewers that read it from the URL)
};

// The command for `desktop_id` ("org.kde.kate.desktop", "code.desktop", ...; empty when
// unknown). `line` and `page` are 1-based; 0 means none.
OpenPlan plan_open(const QString& desktop_id, const QString& path, int line, int page);

// The desktop file id that opens files of `mime_type` (empty when xdg-mime is missing or says
// nothing). Runs a short process: call it off the GUI thread.
QString default_desktop_id(const QString& mime_type);

// Opens `path` at `line` or `page` without blocking the caller (the lookups run on a pool
// thread). False when the file does not exist.
bool open_source(const QString& path, int line, int page);

}  // namespace day0::app
