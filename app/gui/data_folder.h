#pragma once
// The data folder (history.db, knowledge.db and the history's backups/) and moving it. The
// Settings offer to move the history when the data folder changes; the move itself happens at
// the next start, before anything opens the databases (AppController), so nothing moves under
// an open connection. day0-cli finds the same folder through the same settings file
// (app/cli/data_dir.h).
#include <QString>
#include <QStringList>

namespace day0::app {

// The names the data folder's history consists of, in the order they are moved.
QStringList dataFolderEntries();
// Whether `folder` holds a history database.
bool folderHasHistory(const QString& folder);
// What choosing `target` as the data folder (in place of `current`) would do: "same", "empty"
// (no history there yet: it can be moved there), "history" (one is there: it can be used), or
// "invalid" with `message` saying why (a file, not absolute, not writable).
struct DataFolderCheck {
  QString state;
  QString message;
  QString path;  // `target`, absolute and clean
};
DataFolderCheck checkDataFolder(const QString& target, const QString& current);
// Moves the data folder's entries from `from` into `to` (created when missing). Renames when
// both are on one file system, copies and then deletes otherwise. On a failure, what was moved
// is put back and the message says why; empty on success. Refuses when `to` has a history.
QString moveDataFolder(const QString& from, const QString& to);

}  // namespace day0::app
