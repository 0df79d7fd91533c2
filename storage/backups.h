#pragma once
// Backups of the history database: consistent copies made with VACUUM INTO, named
//   <stem>-YYYYMMDD-HHMMSS-<kind>.db   (UTC; kind "daily" or "before-vN")
// in a backups folder beside the database, so the newest is found by name alone.
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "storage/database.h"

namespace day0::storage {

struct BackupFile {
  std::filesystem::path file;
  std::string kind;
  std::chrono::system_clock::time_point taken;
};

// The backups of the database whose file name stem is `stem`, newest first.
std::vector<BackupFile> list_backups(const std::filesystem::path& folder, std::string_view stem);

// Writes a backup of `db` (flushed to disk, under its final name only once complete).
StoreResult<std::filesystem::path> make_backup(Database& db, const std::filesystem::path& folder, std::string_view stem,
                                               std::string_view kind, std::chrono::system_clock::time_point now);

// Deletes all but the newest `keep` backups whose kind starts with `kind_prefix`.
void prune_backups(const std::filesystem::path& folder, std::string_view stem, std::string_view kind_prefix, int keep);

// "YYYYMMDD-HHMMSS" in UTC.
std::string utc_stamp(std::chrono::system_clock::time_point t);

}  // namespace day0::storage
