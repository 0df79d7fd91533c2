#include "gui/data_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QTemporaryFile>
#include <utility>
#include <vector>

namespace day0::app {

QStringList dataFolderEntries() {
  return {QStringLiteral("history.db"),   QStringLiteral("history.db-wal"), QStringLiteral("history.db-shm"),
          QStringLiteral("history.db-journal"), QStringLiteral("knowledge.db"), QStringLiteral("knowledge.db-wal"),
          QStringLiteral("knowledge.db-shm"),   QStringLiteral("knowledge.db-journal"), QStringLiteral("backups")};
}

bool folderHasHistory(const QString& folder) {
  return QFileInfo(QDir(folder).filePath(QStringLiteral("history.db"))).isFile();
}

DataFolderCheck checkDataFolder(const QString& target, const QString& current) {
  DataFolderCheck check;
  const QString t = target.trimmed();
  if (t.isEmpty() || !QDir::isAbsolutePath(t)) {
    check.state = QStringLiteral("invalid");
    check.message = QObject::tr("The data folder must be a full path, such as /home/me/day0-data.");
    return check;
  }
  check.path = QDir::cleanPath(t);
  if (check.path == QDir::cleanPath(current)) {
    check.state = QStringLiteral("same");
    return check;
  }
  const QFileInfo info(check.path);
  if (info.exists() && !info.isDir()) {
    check.state = QStringLiteral("invalid");
    check.message = QObject::tr("%1 is a file, not a folder.").arg(check.path);
    return check;
  }
  if (check.path.startsWith(QDir::cleanPath(current) + u'/')) {
    check.state = QStringLiteral("invalid");
    check.message = QObject::tr("%1 is inside the current data folder.").arg(check.path);
    return check;
  }
  if (folderHasHistory(check.path)) {
    check.state = QStringLiteral("history");
    return check;
  }
  // The nearest existing folder must let us create files.
  QString probe = check.path;
  while (!QFileInfo(probe).exists() && QFileInfo(probe).absolutePath() != probe) probe = QFileInfo(probe).absolutePath();
  if (!QFileInfo(probe).isDir() || !QFileInfo(probe).isWritable()) {
    check.state = QStringLiteral("invalid");
    check.message = QObject::tr("%1 cannot be written.").arg(probe);
    return check;
  }
  check.state = QStringLiteral("empty");
  return check;
}

namespace {

bool copyTree(const QString& from, const QString& to) {
  const QFileInfo info(from);
  if (info.isDir()) {
    if (!QDir().mkpath(to)) return false;
    for (const QString& name : QDir(from).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden))
      if (!copyTree(QDir(from).filePath(name), QDir(to).filePath(name))) return false;
    return true;
  }
  return QFile::copy(from, to);
}

bool removeTree(const QString& path) {
  return QFileInfo(path).isDir() ? QDir(path).removeRecursively() : QFile::remove(path);
}

// Moves one entry; false leaves `from` as it was.
bool moveEntry(const QString& from, const QString& to) {
  if (QFile::rename(from, to) || QDir().rename(from, to)) return true;
  if (!copyTree(from, to)) {
    removeTree(to);
    return false;
  }
  if (!removeTree(from)) {
    // The copy is whole; the original stays too (nothing is lost).
    return true;
  }
  return true;
}

}  // namespace

QString moveDataFolder(const QString& from, const QString& to) {
  if (QDir::cleanPath(from) == QDir::cleanPath(to)) return {};
  if (folderHasHistory(to)) return QObject::tr("%1 already holds a history.").arg(to);
  if (!QDir().mkpath(to)) return QObject::tr("%1 cannot be created.").arg(to);
  std::vector<std::pair<QString, QString>> moved;
  for (const QString& name : dataFolderEntries()) {
    const QString source = QDir(from).filePath(name);
    const QString target = QDir(to).filePath(name);
    if (!QFileInfo::exists(source)) continue;
    if (QFileInfo::exists(target) && name != QLatin1String("backups")) removeTree(target);  // a stray -wal/-shm
    if (QFileInfo::exists(target) || !moveEntry(source, target)) {
      for (auto it = moved.rbegin(); it != moved.rend(); ++it) moveEntry(it->second, it->first);
      return QObject::tr("%1 cannot be moved to %2.").arg(source, to);
    }
    moved.emplace_back(source, target);
  }
  return {};
}

}  // namespace day0::app
