#include "gui/user_path.h"

#include <QDir>
#include <QUrl>

namespace day0::app {

QString localPathFromUser(const QVariant& value) {
  if (value.metaType() == QMetaType::fromType<QUrl>()) {
    const QUrl url = value.toUrl();
    if (url.isLocalFile()) return url.toLocalFile();
    return localPathFromUser(url.toString());
  }
  QString text = value.toString().trimmed();
  if (text.size() >= 2 && (text.front() == u'\'' || text.front() == u'"') && text.back() == text.front())
    text = text.mid(1, text.size() - 2).trimmed();
  if (text.startsWith(QStringLiteral("file:"))) {
    const QUrl url(text);
    if (url.isLocalFile()) return url.toLocalFile();
  }
  if (text == QStringLiteral("~")) return QDir::homePath();
  if (text.startsWith(QStringLiteral("~/"))) return QDir::homePath() + text.mid(1);
  return text;
}

}  // namespace day0::app
