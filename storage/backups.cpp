#include "storage/backups.h"

#include <algorithm>
#include <ctime>
#include <regex>

#include "storage/file_util.h"

namespace day0::storage {

std::string utc_stamp(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  return text;
}

std::vector<BackupFile> list_backups(const std::filesystem::path& folder, std::string_view stem) {
  std::vector<BackupFile> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return out;
  // The stem is matched literally, the rest by pattern.
  static const std::regex pattern(R"(^-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(daily|before-v\d{1,6})\.db$)");
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= stem.size() || name.compare(0, stem.size(), stem) != 0) continue;
    const std::string rest = name.substr(stem.size());
    std::smatch m;
    if (!std::regex_match(rest, m, pattern) || !entry.is_regular_file(ec)) continue;
    std::tm tm{};
    tm.tm_year = std::stoi(m[1]) - 1900;
    tm.tm_mon = std::stoi(m[2]) - 1;
    tm.tm_mday = std::stoi(m[3]);
    tm.tm_hour = std::stoi(m[4]);
    tm.tm_min = std::stoi(m[5]);
    tm.tm_sec = std::stoi(m[6]);
    out.push_back({entry.path(), m[7], std::chrono::system_clock::from_time_t(timegm(&tm))});
  }
  std::sort(out.begin(), out.end(), [](const BackupFile& a, const BackupFile& b) {
    return a.taken != b.taken ? a.taken > b.taken : a.file.filename() > b.file.filename();
  });
  return out;
}

StoreResult<std::filesystem::path> make_backup(Database& db, const std::filesystem::path& folder, std::string_view stem,
                                               std::string_view kind, std::chrono::system_clock::time_point now) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return store_error("cannot create the backup folder " + folder.string() + ": " + ec.message());
  const auto target = folder / (std::string(stem) + "-" + utc_stamp(now) + "-" + std::string(kind) + ".db");
  if (std::filesystem::exists(target, ec)) return target;  // this kind was already taken this second
  auto partial = target;
  partial += ".partial";
  std::filesystem::remove(partial, ec);  // left by an interrupted backup
  DAY0_STORE_TRY(db.backup_to(partial));
  std::filesystem::rename(partial, target, ec);
  if (ec) return store_error("cannot rename the backup " + partial.string() + ": " + ec.message());
  DAY0_STORE_TRY(sync_path(folder));
  return target;
}

void prune_backups(const std::filesystem::path& folder, std::string_view stem, std::string_view kind_prefix, int keep) {
  int kept = 0;
  for (const auto& b : list_backups(folder, stem)) {
    if (b.kind.compare(0, kind_prefix.size(), kind_prefix) != 0) continue;
    if (kept < keep) {
      ++kept;
      continue;
    }
    std::error_code ec;
    std::filesystem::remove(b.file, ec);
  }
}

}  // namespace day0::storage
