#include "storage/open_history.h"

#include <sqlite3.h>
#include <algorithm>

#include "storage/backups.h"
#include "storage/file_util.h"
#include "storage/migrations.h"

namespace day0::storage {
namespace {

// What SQLite says about a file that is damaged, as opposed to busy, unreadable or full.
bool is_damage(const StoreError& e) { return e.sqlite_code == SQLITE_CORRUPT || e.sqlite_code == SQLITE_NOTADB; }

// The first few lines of quick_check's report, on one line.
std::string first_lines(const std::string& text, int lines) {
  std::string out;
  std::size_t at = 0;
  for (int i = 0; i < lines && at < text.size(); ++i) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (!out.empty()) out += "; ";
    out += text.substr(at, end - at);
    at = end + 1;
  }
  return at < text.size() ? out + "; ..." : out;
}

struct Probe {
  Database db;
  bool damaged = false;
  std::string problem;
  int version = 0;
};

std::filesystem::path with_suffix(const std::filesystem::path& path, const std::string& suffix) {
  auto out = path;
  out += suffix;
  return out;
}

std::uintmax_t size_or_zero(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// Opens and checks the file. The check connection keeps the -wal file on close: SQLite
// would otherwise delete the log of a file it could not use.
StoreResult<Probe> probe(const std::filesystem::path& path, ConnectionOptions connection) {
  Probe p;
  auto damaged = [&p](std::string problem) {
    p.damaged = true;
    p.problem = std::move(problem);
    return std::move(p);
  };
  // SQLite deletes the log of an empty or missing database file unread; a log with data
  // beside no database is a damaged history, not a new one.
  if (const auto wal = size_or_zero(with_suffix(path, "-wal")); wal > 0 && size_or_zero(path) == 0)
    return damaged("the database file is missing or empty but its write-ahead log holds " + std::to_string(wal) +
                   " bytes");
  connection.keep_wal_on_close = true;
  auto db = Database::open(path, connection);
  if (!db) return is_damage(db.error()) ? StoreResult<Probe>(damaged(db.error().message)) : db.error();
  auto check = db->quick_check();
  if (!check) return is_damage(check.error()) ? StoreResult<Probe>(damaged(check.error().message)) : check.error();
  if (check.value() != "ok") return damaged("quick_check: " + first_lines(check.value(), 3));
  auto version = db->user_version();
  if (!version)
    return is_damage(version.error()) ? StoreResult<Probe>(damaged(version.error().message)) : version.error();
  if (version.value() > latest_history_version())
    return store_error("the history database " + path.string() + " has schema version " +
                       std::to_string(version.value()) + ", newer than this Day0 knows (" +
                       std::to_string(latest_history_version()) +
                       "); it was written by a newer version and is left untouched");
  if (version.value() == 0) {
    auto tables = db->query_int("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'");
    if (!tables) return tables.error();
    if (tables.value() > 0)
      return store_error(path.string() +
                         " is an SQLite database but not a Day0 history (it has tables and no schema version); it "
                         "is left untouched: choose another file");
  }
  db->set_keep_wal_on_close(false);
  p.db = std::move(db).value();
  p.version = version.value();
  return p;
}

// Renames the database and its -wal/-shm/-journal to <name>.damaged-<stamp>[-n]<suffix>. The
// side files go first: a WAL left beside a new database would be replayed into it.
StoreResult<std::filesystem::path> move_aside(const std::filesystem::path& path,
                                              std::chrono::system_clock::time_point now) {
  std::error_code ec;
  std::filesystem::path target;
  for (int n = 1;; ++n) {
    target = with_suffix(path, ".damaged-" + utc_stamp(now) + (n > 1 ? "-" + std::to_string(n) : ""));
    if (!std::filesystem::exists(target, ec) && !std::filesystem::exists(with_suffix(target, "-wal"), ec)) break;
  }
  for (const char* side : {"-wal", "-shm", "-journal"}) {
    const auto from = with_suffix(path, side);
    if (!std::filesystem::exists(from, ec)) continue;
    std::filesystem::rename(from, with_suffix(target, side), ec);
    if (ec) return store_error("cannot move the damaged " + from.string() + " aside: " + ec.message());
  }
  if (std::filesystem::exists(path, ec)) {
    std::filesystem::rename(path, target, ec);
    if (ec) return store_error("cannot move the damaged " + path.string() + " aside: " + ec.message());
  }
  DAY0_STORE_TRY(sync_path(path.has_parent_path() ? path.parent_path() : std::filesystem::path(".")));
  return target;
}

bool backup_is_good(const std::filesystem::path& file) {
  auto db = Database::open_read_only(file);
  if (!db) return false;
  auto check = db->quick_check();
  auto version = db->user_version();
  return check && check.value() == "ok" && version && version.value() >= 1 &&
         version.value() <= latest_history_version();
}

std::string describe_time(std::chrono::system_clock::time_point t) {
  std::string s = utc_stamp(t);  // YYYYMMDD-HHMMSS
  return s.substr(0, 4) + "-" + s.substr(4, 2) + "-" + s.substr(6, 2) + " " + s.substr(9, 2) + ":" + s.substr(11, 2) +
         " UTC";
}

// Moves the damaged file aside and puts the newest good backup, or nothing, in its place.
StoreStatus recover(const std::filesystem::path& path, const std::filesystem::path& backups, const std::string& problem,
                    std::chrono::system_clock::time_point now, OpenReport* report) {
  DAY0_STORE_ASSIGN(aside, move_aside(path, now));
  report->moved_aside = aside;
  std::error_code ec;
  const bool main_file = std::filesystem::exists(aside, ec);
  const bool wal = std::filesystem::exists(with_suffix(aside, "-wal"), ec);
  report->notices.push_back("The history database " + path.string() + " was damaged (" + problem + "). " +
                            (main_file
                                 ? "It was moved, untouched, to " + aside.string() + (wal ? " (with its -wal)" : "")
                                 : "Its write-ahead log was moved, untouched, to " + aside.string() + "-wal") +
                            ".");
  for (const auto& b : list_backups(backups, path.stem().string())) {
    if (!backup_is_good(b.file)) continue;
    DAY0_STORE_TRY(copy_file_durably(b.file, path));
    report->restored_from = b.file;
    report->notices.push_back("Restored the backup " + b.file.string() + " from " + describe_time(b.taken) +
                              "; anything written after it is only in the damaged file.");
    return Ok{};
  }
  report->notices.push_back("No usable backup was found; started a new, empty history.");
  return Ok{};
}

}  // namespace

StoreResult<OpenedHistory> open_history_database(const std::filesystem::path& path, const OpenOptions& options) {
  const auto now = options.clock ? options.clock() : std::chrono::system_clock::now();
  const auto folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const auto backups = options.backup_folder.empty() ? folder / "backups" : options.backup_folder;
  const std::string stem = path.stem().string();
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return store_error("cannot create the folder " + folder.string() + ": " + ec.message());

  OpenReport report;
  DAY0_STORE_ASSIGN(found, probe(path, options.connection));
  if (found.damaged) {
    found.db = Database();  // closed before its file is renamed
    DAY0_STORE_TRY(recover(path, backups, found.problem, now, &report));
    DAY0_STORE_ASSIGN(again, probe(path, options.connection));
    if (again.damaged)
      return store_error("the history database " + path.string() + " is still damaged: " + again.problem);
    found = std::move(again);
  }
  Database db = std::move(found.db);
  report.schema_before = found.version;

  const int latest = latest_history_version();
  if (found.version >= 1 && found.version < latest) {
    auto made = make_backup(db, backups, stem, "before-v" + std::to_string(latest), now);
    if (!made)
      return store_error("cannot back up the history before upgrading it (" + made.error().message +
                         "); it is left as it was");
    report.backups_made.push_back(made.value());
    prune_backups(backups, stem, "before-", options.migration_backups_kept);
  }
  DAY0_STORE_TRY(db.migrate(history_migrations()));
  report.schema_after = latest;

  if (options.daily_backup) {
    const auto all = list_backups(backups, stem);
    std::optional<std::chrono::system_clock::time_point> last;
    for (const auto& b : all)
      if (b.kind == "daily") {
        last = b.taken;
        break;
      }
    auto conversations = db.query_int("SELECT count(*) FROM conversations");
    const bool due = !last || now - *last >= std::chrono::hours(24) || *last > now + std::chrono::hours(24);
    if (due && conversations && conversations.value() > 0) {
      auto made = make_backup(db, backups, stem, "daily", now);
      if (made) {
        report.backups_made.push_back(made.value());
        prune_backups(backups, stem, "daily", options.daily_backups_kept);
      } else {
        report.notices.push_back("The daily backup of the history failed: " + made.error().message);
      }
    }
  }
  return OpenedHistory{std::move(db), std::move(report)};
}

}  // namespace day0::storage
