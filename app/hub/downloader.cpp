#include "hub/downloader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "hub/digest.h"

namespace day0::hub {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kManifest = ".day0-pull.json";

fs::path part_path(const fs::path& target) { return target.string() + ".part"; }

// What a finished file must hash to: the LFS SHA-256, else the git blob id.
struct Expected {
  Digest::Kind kind = Digest::Kind::sha256;
  std::string hex;  // empty: only the size can be checked
};

Expected expected_of(const RemoteFile& f) {
  if (!f.sha256.empty()) return {Digest::Kind::sha256, f.sha256};
  if (!f.git_oid.empty()) return {Digest::Kind::sha1, f.git_oid};
  return {};
}

// A fresh digest, with git's "blob <size>\0" header already fed for blob ids.
Digest start_digest(const RemoteFile& f) {
  const Expected e = expected_of(f);
  Digest d(e.kind);
  if (e.kind == Digest::Kind::sha1) {
    const std::string header = "blob " + std::to_string(f.size);
    d.update(header.data(), header.size() + 1);  // with its terminating NUL
  }
  return d;
}

// Feeds the first `bytes` of `path` to `digest`; false when the file is shorter or unreadable.
bool hash_file(const fs::path& path, std::uint64_t bytes, Digest& digest, const DownloadControl* control) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buffer(1 << 20);
  while (bytes > 0 && in) {
    if (control && control->cancelled()) return false;
    in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(bytes, buffer.size())));
    const auto got = static_cast<std::uint64_t>(in.gcount());
    if (got == 0) return false;
    digest.update(buffer.data(), got);
    bytes -= got;
  }
  return bytes == 0;
}

std::int64_t mtime_ns(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::uint64_t size_or_zero(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

json read_manifest(const fs::path& dir) {
  std::ifstream in(dir / kManifest);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_object())
    return json{{"files", json::object()}};
  return j;
}

}  // namespace

const char* file_state_name(FileState state) {
  switch (state) {
    case FileState::queued:
      return "queued";
    case FileState::downloading:
      return "downloading";
    case FileState::verifying:
      return "verifying";
    case FileState::done:
      return "done";
    case FileState::failed:
      return "failed";
  }
  return "?";
}

void DownloadControl::pause() {
  {
    std::lock_guard lock(mutex_);
    paused_ = true;
  }
  stopper_.stop();
  cv_.notify_all();
}

void DownloadControl::resume() {
  {
    std::lock_guard lock(mutex_);
    paused_ = false;
    if (!cancelled_) stopper_.reset();
  }
  cv_.notify_all();
}

void DownloadControl::cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  stopper_.stop();
  cv_.notify_all();
}

bool DownloadControl::wait(double seconds) {
  std::unique_lock lock(mutex_);
  if (paused_) {
    cv_.wait(lock, [&] { return !paused_ || cancelled_; });
  } else if (seconds > 0) {
    cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return cancelled_.load() || paused_.load(); });
  }
  return !cancelled_;
}

struct Downloader::Slot {
  RemoteFile file;
  fs::path target;
  std::atomic<std::uint64_t> done{0};
  std::atomic<FileState> state{FileState::queued};
  std::string error;  // written by its worker before state becomes failed
  bool reused = false;
};

Downloader::Downloader(const HubClient& client, RepoRef ref, fs::path dir, DownloadOptions options)
    : client_(client), ref_(std::move(ref)), dir_(std::move(dir)), options_(options) {}

bool Downloader::reuse_complete(Slot& slot) {
  std::error_code ec;
  if (!fs::is_regular_file(slot.target, ec) || size_or_zero(slot.target) != slot.file.size) return false;
  const Expected expected = expected_of(slot.file);
  {
    std::lock_guard lock(manifest_mutex_);
    const json m = read_manifest(dir_);
    const auto it = m["files"].find(slot.file.path);
    if (it != m["files"].end() && it->is_object() && it->value("size", std::uint64_t{0}) == slot.file.size &&
        it->value("hash", std::string()) == expected.hex &&
        it->value("mtime_ns", std::int64_t{-2}) == mtime_ns(slot.target))
      return true;
  }
  if (expected.hex.empty()) return true;  // nothing more to check than the size
  slot.state = FileState::verifying;
  Digest d = start_digest(slot.file);
  if (!hash_file(slot.target, slot.file.size, d, nullptr) || d.hex() != expected.hex) return false;
  record_verified(slot);
  return true;
}

void Downloader::record_verified(const Slot& slot) {
  std::lock_guard lock(manifest_mutex_);
  json m = read_manifest(dir_);
  m["repo"] = ref_.repo;
  m["revision"] = ref_.revision;
  m["files"][slot.file.path] = {
      {"size", slot.file.size}, {"hash", expected_of(slot.file).hex}, {"mtime_ns", mtime_ns(slot.target)}};
  const fs::path temp = dir_ / (std::string(kManifest) + ".new");
  {
    std::ofstream out(temp, std::ios::trunc);
    out << m.dump(1) << "\n";
    if (!out) return;  // only a cache: the file is verified again next time
  }
  std::error_code ec;
  fs::rename(temp, dir_ / kManifest, ec);
}

Status Downloader::fetch_attempts(Slot& slot, DownloadControl& control) {
  const RemoteFile& f = slot.file;
  const fs::path part = part_path(slot.target);
  std::error_code ec;
  fs::create_directories(slot.target.parent_path(), ec);
  if (ec)
    return error(ErrorCode::io_error, "cannot create " + slot.target.parent_path().string() + ": " + ec.message());

  std::uint64_t offset = size_or_zero(part);
  if (offset > f.size) offset = 0;  // longer than the file: not ours to continue
  Digest digest = start_digest(f);
  if (offset > 0 && !hash_file(part, offset, digest, &control)) {
    if (control.cancelled()) return error(ErrorCode::cancelled, "stopped");
    offset = 0;
    digest = start_digest(f);
  }
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return error(ErrorCode::io_error, "cannot write " + part.string() + ": " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  if (::ftruncate(fd, static_cast<off_t>(offset)) != 0 || ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0)
    return error(ErrorCode::io_error, "cannot write " + part.string() + ": " + std::strerror(errno));
  slot.done = offset;

  int retries_left = options_.retries;
  double delay = options_.retry_delay_s;
  while (offset < f.size || f.size == 0) {
    if (!control.wait(0)) return error(ErrorCode::cancelled, "stopped");
    slot.state = FileState::downloading;
    Status write_error;
    const Status s = client_.download(
        ref_, f.path, offset,
        [&](const DownloadStart& start) {
          if (start.offset != offset) {  // the server ignored the range: start again from byte 0
            offset = 0;
            digest = start_digest(f);
            if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) < 0) {
              write_error = error(ErrorCode::io_error, "cannot write " + part.string() + ": " + std::strerror(errno));
              return false;
            }
            slot.done = 0;
          }
          if (start.total != 0 && start.total != f.size) {
            write_error = error(ErrorCode::corrupt_data, "the server sends " + std::to_string(start.total) +
                                                             " bytes, the file list says " + std::to_string(f.size));
            return false;
          }
          return true;
        },
        [&](const char* data, std::size_t n) {
          if (offset + n > f.size) {
            write_error = error(ErrorCode::corrupt_data, "the server sent more than the " + std::to_string(f.size) +
                                                             " bytes the file list gives");
            return false;
          }
          for (std::size_t written = 0; written < n;) {
            const ssize_t w = ::write(fd, data + written, n - written);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
              write_error = error(ErrorCode::io_error, "cannot write " + part.string() + ": " + std::strerror(errno));
              return false;
            }
            written += static_cast<std::size_t>(w);
          }
          digest.update(data, n);
          offset += n;
          slot.done = offset;
          downloaded_ += n;
          return !control.cancelled() && !control.paused();
        },
        &control.stopper_);
    if (!write_error.is_ok()) return write_error;
    if (s.is_ok() && offset == f.size) break;
    if (control.cancelled()) return error(ErrorCode::cancelled, "stopped");
    if (s.code() == ErrorCode::cancelled) continue;  // paused: wait at the top, then resume
    const bool transient = s.is_ok() || s.code() == ErrorCode::io_error;
    if (!transient || retries_left-- <= 0)
      return s.is_ok() ? error(ErrorCode::io_error, "the server ended the file after " + std::to_string(offset) +
                                                        " of " + std::to_string(f.size) + " bytes")
                       : s;
    if (!control.wait(delay)) return error(ErrorCode::cancelled, "stopped");
    delay *= 2;
  }

  slot.state = FileState::verifying;
  const Expected expected = expected_of(f);
  if (!expected.hex.empty()) {
    const std::string got = digest.hex();
    if (got != expected.hex) {
      fs::remove(part, ec);
      return error(ErrorCode::corrupt_data,
                   std::string(expected.kind == Digest::Kind::sha256 ? "SHA-256" : "git blob id") +
                       " mismatch: " + "the Hub lists " + expected.hex + ", the bytes received hash to " + got +
                       "; the damaged file was deleted (pull again to fetch it anew)");
    }
  }
  if (::fsync(fd) != 0)
    return error(ErrorCode::io_error, "cannot write " + part.string() + ": " + std::strerror(errno));
  fs::rename(part, slot.target, ec);
  if (ec) return error(ErrorCode::io_error, "cannot rename " + part.string() + ": " + ec.message());
  record_verified(slot);
  return Status::ok();
}

void Downloader::fetch(Slot& slot, DownloadControl& control) {
  if (reuse_complete(slot)) {
    slot.reused = true;
    slot.done = slot.file.size;
    slot.state = FileState::done;
    return;
  }
  const Status s = fetch_attempts(slot, control);
  if (s.is_ok()) {
    slot.done = slot.file.size;
    slot.state = FileState::done;
    return;
  }
  if (s.code() == ErrorCode::cancelled) {
    slot.state = FileState::queued;
    return;
  }
  slot.error = s.message();
  slot.state = FileState::failed;
}

DownloadReport Downloader::run(const std::vector<RemoteFile>& files,
                               const std::function<void(const Progress&)>& on_progress, DownloadControl* control) {
  DownloadControl own;
  DownloadControl& ctl = control ? *control : own;
  std::vector<std::unique_ptr<Slot>> slots;
  for (const auto& f : files) {
    auto slot = std::make_unique<Slot>();
    slot->file = f;
    slot->target = dir_ / f.path;
    slots.push_back(std::move(slot));
  }
  // Largest first, so the long transfers start early and the small ones fill in beside them.
  std::vector<Slot*> order;
  for (auto& s : slots) order.push_back(s.get());
  std::stable_sort(order.begin(), order.end(),
                   [](const Slot* a, const Slot* b) { return a->file.size > b->file.size; });

  std::atomic<std::size_t> next{0};
  std::atomic<int> running{0};
  const int workers = std::max(1, std::min<int>(options_.parallel, static_cast<int>(order.size())));
  std::vector<std::thread> threads;
  running = workers;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      while (!ctl.cancelled()) {
        const std::size_t i = next++;
        if (i >= order.size()) break;
        fetch(*order[i], ctl);
      }
      --running;
    });

  std::deque<std::pair<Clock::time_point, std::uint64_t>> window;  // for the rate
  const auto snapshot = [&] {
    Progress p;
    p.files_total = static_cast<int>(slots.size());
    p.paused = ctl.paused();
    for (const auto& s : slots) {
      FileProgress fp{s->file.path, s->file.size, s->done.load(), s->state.load(), ""};
      if (fp.state == FileState::failed) fp.error = s->error;
      if (fp.state == FileState::done) ++p.files_done;
      p.total_bytes += fp.size;
      p.done_bytes += fp.state == FileState::failed ? 0 : fp.done;
      p.files.push_back(std::move(fp));
    }
    const auto now = Clock::now();
    window.emplace_back(now, downloaded_.load());
    while (window.size() > 2 && now - window.front().first > std::chrono::seconds(5)) window.pop_front();
    const double dt = std::chrono::duration<double>(now - window.front().first).count();
    if (dt > 0.2 && !p.paused)
      p.bytes_per_second = static_cast<double>(window.back().second - window.front().second) / dt;
    if (p.bytes_per_second > 0) p.seconds_left = static_cast<double>(p.total_bytes - p.done_bytes) / p.bytes_per_second;
    return p;
  };
  while (running.load() > 0) {
    if (on_progress) on_progress(snapshot());
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.progress_interval_s));
  }
  for (auto& t : threads) t.join();
  if (on_progress) on_progress(snapshot());

  DownloadReport report;
  report.bytes_downloaded = downloaded_.load();
  report.cancelled = ctl.cancelled();
  for (const auto& s : slots) {
    if (s->state == FileState::done) ++(s->reused ? report.files_reused : report.files_done);
    if (s->state == FileState::failed) report.failures.push_back(s->file.path + ": " + s->error);
  }
  return report;
}

Result<std::uint64_t> free_disk_bytes(const fs::path& dir) {
  std::error_code ec;
  fs::path probe = fs::absolute(dir.empty() ? fs::path(".") : dir, ec);
  while (!fs::exists(probe, ec) && probe.has_parent_path() && probe.parent_path() != probe) probe = probe.parent_path();
  struct statvfs st {};
  if (::statvfs(probe.c_str(), &st) != 0)
    return error(ErrorCode::io_error, "cannot tell the free space of " + probe.string() + ": " + std::strerror(errno));
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

std::uint64_t bytes_to_download(const std::vector<RemoteFile>& files, const fs::path& dir) {
  std::uint64_t total = 0;
  for (const auto& f : files) {
    const fs::path target = dir / f.path;
    if (size_or_zero(target) == f.size && fs::exists(target)) continue;
    total += f.size - std::min(f.size, size_or_zero(part_path(target)));
  }
  return total;
}

Status check_disk_room(const fs::path& dir, std::uint64_t bytes) {
  if (bytes == 0) return Status::ok();
  DAY0_ASSIGN_OR_RETURN(const std::uint64_t free, free_disk_bytes(dir));
  const std::uint64_t spare = bytes / 100 + (256ull << 20);
  if (bytes > free || free - bytes < spare)
    return error(ErrorCode::out_of_memory, "not enough disk space in " + dir.string() + ": the download needs " +
                                               format_size(static_cast<double>(bytes)) + " (and a little to spare), " +
                                               format_size(static_cast<double>(free)) + " is free");
  return Status::ok();
}

std::string format_size(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) {
    bytes /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text,
                u == 0        ? "%.0f %s"
                : bytes < 10  ? "%.2f %s"
                : bytes < 100 ? "%.1f %s"
                              : "%.0f %s",
                bytes, units[u]);
  return text;
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  char text[48];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, (s / 60) % 60);
  else if (s >= 60)
    std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld s", s);
  return text;
}

}  // namespace day0::hub
