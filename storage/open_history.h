#pragma once
// Opening the history database at start-up, so that a damaged file never stops Day0 and
// never loses what it holds:
//  1. open and PRAGMA quick_check;
//  2. a damaged file (not a database, corrupt pages, truncated) is moved aside, with its -wal
//     and -shm, to <name>.damaged-YYYYMMDD-HHMMSS (never deleted), and the newest backup that
//     passes quick_check is restored, else a fresh database is created; the report says so;
//  3. before migrating an existing database to a newer schema, a backup (kind before-vN);
//  4. once a day, a backup (kind daily).
// A database written by a newer Day0, one that is locked, or a file that is a database but
// not Day0's history gives an error and is left untouched.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "storage/database.h"

namespace day0::storage {

struct OpenOptions {
  ConnectionOptions connection;
  std::filesystem::path backup_folder;  // empty: "backups" beside the database
  bool daily_backup = true;
  int daily_backups_kept = 5;                                    // about a working week
  int migration_backups_kept = 3;                                // one per schema upgrade, the last three
  std::function<std::chrono::system_clock::time_point()> clock;  // empty: the system clock
};

struct OpenReport {
  // Sentences for the person, e.g. shown once in the app's status area or on stderr.
  std::vector<std::string> notices;
  std::optional<std::filesystem::path> moved_aside;    // where the damaged file went
  std::optional<std::filesystem::path> restored_from;  // the backup in use instead
  std::vector<std::filesystem::path> backups_made;
  int schema_before = 0;  // user_version found (0: new database)
  int schema_after = 0;
};

struct OpenedHistory {
  Database db;
  OpenReport report;
};

StoreResult<OpenedHistory> open_history_database(const std::filesystem::path& path, const OpenOptions& options = {});

}  // namespace day0::storage
