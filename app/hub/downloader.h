#pragma once
// Downloads a repository's files into a folder: several files at a time, each into
// "<name>.part" beside its target and renamed when complete and verified (its size, and the
// SHA-256 the Hub gives for LFS files or the git blob id for the others). A dropped connection is
// resumed with an HTTP range from what the .part holds, in the same run (a few retries) or the
// next; a file that fails its checksum is deleted and reported, the good ones stay. Pause and
// cancel stop the transfers at once and keep the .part files. Files already complete are kept
// (`.day0-pull.json` in the folder records what was verified, so they are not read again).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "day0/status.h"
#include "hub/hub_client.h"

namespace day0::hub {

enum class FileState { queued, downloading, verifying, done, failed };
const char* file_state_name(FileState state);

struct FileProgress {
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t done = 0;  // bytes on disk (a resumed .part counts from its start)
  FileState state = FileState::queued;
  std::string error;  // when failed
};

struct Progress {
  std::uint64_t total_bytes = 0;
  std::uint64_t done_bytes = 0;
  double bytes_per_second = 0;  // over the last few seconds
  double seconds_left = -1;     // -1: not known yet
  int files_done = 0;
  int files_total = 0;
  bool paused = false;
  std::vector<FileProgress> files;
};

// Pause, resume and cancel from any thread.
class DownloadControl {
 public:
  void pause();
  void resume();
  void cancel();
  bool paused() const { return paused_.load(); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  friend class Downloader;
  // Waits while paused (or up to `seconds` when not); false once cancelled.
  bool wait(double seconds);
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<bool> paused_{false};
  std::atomic<bool> cancelled_{false};
  RequestStopper stopper_;
};

struct DownloadOptions {
  int parallel = 4;            // files at a time
  int retries = 5;             // per file, after a dropped connection or a server error
  double retry_delay_s = 0.5;  // doubled after each retry
  double progress_interval_s = 0.25;
};

struct DownloadReport {
  std::uint64_t bytes_downloaded = 0;  // in this run
  int files_done = 0;
  int files_reused = 0;               // complete before this run
  std::vector<std::string> failures;  // "<file>: <why>"
  bool cancelled = false;
  bool ok() const { return failures.empty() && !cancelled; }
};

class Downloader {
 public:
  Downloader(const HubClient& client, RepoRef ref, std::filesystem::path dir, DownloadOptions options = {});

  // Downloads `files` (paths already checked by the listing), calling `on_progress` on this
  // thread every progress_interval_s and once at the end. Returns when every file is done or
  // failed, or when `control` is cancelled.
  DownloadReport run(const std::vector<RemoteFile>& files, const std::function<void(const Progress&)>& on_progress,
                     DownloadControl* control);

 private:
  struct Slot;
  void fetch(Slot& slot, DownloadControl& control);
  Status fetch_attempts(Slot& slot, DownloadControl& control);
  bool reuse_complete(Slot& slot);
  void record_verified(const Slot& slot);

  const HubClient& client_;
  RepoRef ref_;
  std::filesystem::path dir_;
  DownloadOptions options_;
  std::atomic<std::uint64_t> downloaded_{0};
  std::mutex manifest_mutex_;
};

// Free bytes where `dir` is (or would be created), through statvfs on its nearest existing folder.
Result<std::uint64_t> free_disk_bytes(const std::filesystem::path& dir);
// What is still to download of `files` into `dir`: their sizes less complete targets and .part files.
std::uint64_t bytes_to_download(const std::vector<RemoteFile>& files, const std::filesystem::path& dir);
// Refuses (out_of_memory, naming both figures) when `dir`'s disk has less than `bytes` free plus
// 1% and 256 MiB to spare.
Status check_disk_room(const std::filesystem::path& dir, std::uint64_t bytes);

// "1.5 GB", "320 MB/s" style byte counts (decimal units, as the Hub shows sizes).
std::string format_size(double bytes);
// "1 h 05 min", "3 min 20 s", "12 s".
std::string format_duration(double seconds);

}  // namespace day0::hub
