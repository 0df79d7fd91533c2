#include "gui/source_opener.h"

#include <QCoreApplication>
#include <QDesktopServices>
#include <QFileInfo>
#include <QMetaObject>
#include <QMimeDatabase>
#include <QProcess>
#include <QStandardPaths>
#include <QThreadPool>

namespace day0::app {
namespace {

// "org.gnome.gedit.desktop" -> "org.gnome.gedit"; case kept (ids are case-sensitive).
QString stem(const QString& desktop_id) {
  QString id = desktop_id.trimmed();
  if (id.endsWith(QStringLiteral(".desktop"))) id.chop(8);
  return id;
}

bool is_one_of(const QString& id, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (id.compare(QLatin1String(n), Qt::CaseInsensitive) == 0) return true;
  return false;
}

}  // namespace

OpenPlan plan_open(const QString& desktop_id, const QString& path, int line, int page) {
  OpenPlan plan;
  plan.url = QUrl::fromLocalFile(path);
  const QString id = stem(desktop_id);
  const QString n = QString::number(line);
  if (page > 0) {
    const QString p = QString::number(page);
    if (is_one_of(id, {"org.gnome.Evince", "evince"})) {
      plan.program = QStringLiteral("evince");
      plan.arguments = {QStringLiteral("-p"), p, path};
    } else if (is_one_of(id, {"org.kde.okular", "okular", "okularApplication_pdf"})) {
      plan.program = QStringLiteral("okular");
      plan.arguments = {QStringLiteral("-p"), p, path};
    } else if (is_one_of(id, {"firefox", "firefox-esr", "org.mozilla.firefox", "chromium", "chromium-browser",
                              "google-chrome", "com.google.Chrome", "microsoft-edge"})) {
      // Browsers' PDF viewers read the page from the URL's fragment.
      plan.url.setFragment(QStringLiteral("page=") + p);
    }
    return plan;
  }
  if (line <= 0) return plan;
  if (is_one_of(id, {"code", "visual-studio-code", "code-oss", "codium", "vscodium", "com.visualstudio.code"})) {
    plan.program = is_one_of(id, {"codium", "vscodium"}) ? QStringLiteral("codium")
                   : id == QLatin1String("code-oss")     ? QStringLiteral("code-oss")
                                                         : QStringLiteral("code");
    plan.arguments = {QStringLiteral("--goto"), path + QLatin1Char(':') + n};
  } else if (is_one_of(id, {"org.gnome.gedit", "gedit"})) {
    plan.program = QStringLiteral("gedit");
    plan.arguments = {QLatin1Char('+') + n, path};
  } else if (is_one_of(id, {"org.kde.kate", "kate"})) {
    plan.program = QStringLiteral("kate");
    plan.arguments = {QStringLiteral("--line"), n, path};
  } else if (is_one_of(id, {"org.kde.kwrite", "kwrite"})) {
    plan.program = QStringLiteral("kwrite");
    plan.arguments = {QStringLiteral("--line"), n, path};
  } else if (is_one_of(id, {"gvim", "org.vim.Vim"})) {
    plan.program = QStringLiteral("gvim");
    plan.arguments = {QLatin1Char('+') + n, path};
  } else if (is_one_of(id, {"emacs", "emacsclient", "org.gnu.emacs"})) {
    plan.program = QStringLiteral("emacs");
    plan.arguments = {QLatin1Char('+') + n, path};
  } else if (is_one_of(id, {"sublime_text", "com.sublimetext.three", "sublime-text"})) {
    plan.program = QStringLiteral("subl");
    plan.arguments = {path + QLatin1Char(':') + n};
  } else if (is_one_of(id, {"geany", "org.geany.Geany"})) {
    plan.program = QStringLiteral("geany");
    plan.arguments = {QStringLiteral("--line=") + n, path};
  } else if (is_one_of(id, {"pluma", "xed", "org.x.editor"})) {
    plan.program = is_one_of(id, {"pluma"}) ? QStringLiteral("pluma") : QStringLiteral("xed");
    plan.arguments = {QLatin1Char('+') + n, path};
  }
  return plan;
}

QString default_desktop_id(const QString& mime_type) {
  const QString xdg = QStandardPaths::findExecutable(QStringLiteral("xdg-mime"));
  if (xdg.isEmpty() || mime_type.isEmpty()) return {};
  QProcess p;
  p.start(xdg, {QStringLiteral("query"), QStringLiteral("default"), mime_type});
  if (!p.waitForFinished(3000)) {
    p.kill();
    p.waitForFinished(1000);
    return {};
  }
  return QString::fromUtf8(p.readAllStandardOutput()).section(u'\n', 0, 0).trimmed();
}

bool open_source(const QString& path, int line, int page) {
  if (!QFileInfo(path).isFile()) return false;
  QThreadPool::globalInstance()->start([path, line, page]() {
    const QString mime = QMimeDatabase().mimeTypeForFile(path).name();
    OpenPlan plan = plan_open(default_desktop_id(mime), path, line, page);
    if (!plan.program.isEmpty() && !QStandardPaths::findExecutable(plan.program).isEmpty() &&
        QProcess::startDetached(plan.program, plan.arguments))
      return;
    if (!plan.program.isEmpty()) plan.url = QUrl::fromLocalFile(path);
    // QDesktopServices belongs to the GUI thread.
    QMetaObject::invokeMethod(
        QCoreApplication::instance(), [url = plan.url]() { QDesktopServices::openUrl(url); }, Qt::QueuedConnection);
  });
  return true;
}

}  // namespace day0::app
