#include "experts/expert_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace day0::experts {
namespace {

constexpr std::uint64_t kDirectAlign = 4096;  // O_DIRECT offset, length and buffer alignment

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

struct ExpertStore::Job {
  std::size_t shard = 0;
  std::uint64_t offset = 0, length = 0;
  std::uint8_t* destination = nullptr;
  std::shared_ptr<Batch> batch;
};

struct ExpertStore::Batch {
  std::size_t pending = 0;  // guarded by the store's mutex
  Status status;            // the first error
  std::condition_variable done;
};

Result<std::unique_ptr<ExpertStore>> ExpertStore::open(std::vector<std::filesystem::path> shards,
                                                       std::vector<models::ExpertLocation> experts,
                                                       const StoreOptions& options) {
  std::unique_ptr<ExpertStore> store(new ExpertStore());
  for (auto& path : shards) {
    Shard s;
    s.path = std::move(path);
    s.fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s.fd < 0) return error(ErrorCode::io_error, "cannot open " + s.path.string() + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(s.fd, &st) != 0) {
      ::close(s.fd);
      return error(ErrorCode::io_error, "cannot stat " + s.path.string() + ": " + std::strerror(errno));
    }
    s.size = static_cast<std::uint64_t>(st.st_size);
    s.mtime_ns = mtime_ns(st);
    if (options.direct) s.direct_fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    store->shards_.push_back(std::move(s));
  }
  store->direct_active_ = options.direct && !store->shards_.empty() &&
                          std::all_of(store->shards_.begin(), store->shards_.end(),
                                      [](const Shard& s) { return s.direct_fd >= 0; });
  for (auto& e : experts) {
    for (const auto& r : e.ranges) {
      if (r.shard >= store->shards_.size())
        return error(ErrorCode::invalid_argument, "expert range of " + r.tensor + " names shard " +
                                                      std::to_string(r.shard) + " of " +
                                                      std::to_string(store->shards_.size()));
      const Shard& s = store->shards_[r.shard];
      if (r.offset > s.size || r.length > s.size - r.offset)
        return error(ErrorCode::corrupt_data, s.path.filename().string() + " ends at byte " + std::to_string(s.size) +
                                                  " but expert bytes of " + r.tensor + " run to " +
                                                  std::to_string(r.offset + r.length));
      store->max_range_bytes_ = std::max(store->max_range_bytes_, r.length);
    }
    store->max_expert_bytes_ = std::max(store->max_expert_bytes_, e.bytes);
    const auto key = std::make_pair(e.layer, e.expert);
    store->experts_.emplace(key, std::move(e));
  }
  const std::size_t readers = std::clamp<std::size_t>(options.readers, 1, 64);
  for (std::size_t i = 0; i < readers; ++i) store->readers_.emplace_back([s = store.get()] { s->reader_loop(); });
  return store;
}

ExpertStore::~ExpertStore() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (auto& t : readers_) t.join();
  for (const Shard& s : shards_) {
    if (s.fd >= 0) ::close(s.fd);
    if (s.direct_fd >= 0) ::close(s.direct_fd);
  }
}

std::uint64_t ExpertStore::bytes(std::int32_t layer, std::int32_t expert) const {
  const auto it = experts_.find({layer, expert});
  return it == experts_.end() ? 0 : it->second.bytes;
}

const models::ExpertLocation* ExpertStore::location(std::int32_t layer, std::int32_t expert) const {
  const auto it = experts_.find({layer, expert});
  return it == experts_.end() ? nullptr : &it->second;
}

StoreStats ExpertStore::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

Status ExpertStore::read(std::span<const ExpertRead> experts) {
  auto batch = std::make_shared<Batch>();
  std::vector<Job> jobs;
  for (const ExpertRead& r : experts) {
    const auto it = experts_.find({r.layer, r.expert});
    if (it == experts_.end())
      return error(ErrorCode::invalid_argument, "the checkpoint has no expert " + std::to_string(r.expert) +
                                                    " in layer " + std::to_string(r.layer));
    if (r.destination.size() < it->second.bytes)
      return error(ErrorCode::invalid_argument, "expert " + std::to_string(r.expert) + " of layer " +
                                                    std::to_string(r.layer) + " needs " +
                                                    std::to_string(it->second.bytes) + " bytes; the buffer holds " +
                                                    std::to_string(r.destination.size()));
    std::uint64_t at = 0;
    for (const auto& range : it->second.ranges) {
      jobs.push_back({range.shard, range.offset, range.length, r.destination.data() + at, batch});
      at += range.length;
    }
  }
  if (jobs.empty()) return Status::ok();
  std::unique_lock lock(mutex_);
  batch->pending = jobs.size();
  for (auto& j : jobs) queue_.push_back(std::move(j));
  work_.notify_all();
  batch->done.wait(lock, [&] { return batch->pending == 0; });
  if (batch->status.is_ok()) stats_.experts += experts.size();
  return batch->status;
}

Status ExpertStore::check_unchanged(const Shard& shard) const {
  struct stat st {};
  if (::fstat(shard.fd, &st) != 0)
    return error(ErrorCode::io_error, "cannot stat " + shard.path.string() + ": " + std::strerror(errno));
  if (static_cast<std::uint64_t>(st.st_size) != shard.size || mtime_ns(st) != shard.mtime_ns)
    return error(ErrorCode::corrupt_data, shard.path.filename().string() +
                                              " changed on disk since the model was opened (size " +
                                              std::to_string(shard.size) + " -> " + std::to_string(st.st_size) +
                                              "); open the model again");
  return Status::ok();
}

Status ExpertStore::read_range(const Job& job, std::vector<std::uint8_t>& bounce) {
  const Shard& shard = shards_[job.shard];
  if (Status s = check_unchanged(shard); !s.is_ok()) return s;
  const auto short_read = [&](std::uint64_t got) {
    return error(ErrorCode::corrupt_data, shard.path.filename().string() + ": read " + std::to_string(got) + " of " +
                                              std::to_string(job.length) + " bytes at offset " +
                                              std::to_string(job.offset) + " (the file changed underneath?)");
  };
  if (direct_active_) {
    // Aligned superset of the range, through an aligned bounce buffer.
    const std::uint64_t begin = job.offset / kDirectAlign * kDirectAlign;
    const std::uint64_t end = (job.offset + job.length + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    const std::uint64_t span = end - begin;
    if (bounce.size() < span + kDirectAlign) bounce.resize(span + kDirectAlign);
    auto* aligned = reinterpret_cast<std::uint8_t*>(
        (reinterpret_cast<std::uintptr_t>(bounce.data()) + kDirectAlign - 1) / kDirectAlign * kDirectAlign);
    std::uint64_t got = 0;
    while (got < span) {
      const ssize_t n = ::pread(shard.direct_fd, aligned + got, span - got, static_cast<off_t>(begin + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return error(ErrorCode::io_error, "cannot read " + shard.path.string() + ": " + std::strerror(errno));
      if (n == 0) break;  // end of file: the last block of the file is shorter than the alignment
      got += static_cast<std::uint64_t>(n);
    }
    if (got < job.offset - begin + job.length) return short_read(got > job.offset - begin ? got - (job.offset - begin) : 0);
    std::memcpy(job.destination, aligned + (job.offset - begin), job.length);
    return Status::ok();
  }
  std::uint64_t got = 0;
  while (got < job.length) {
    const ssize_t n = ::pread(shard.fd, job.destination + got, job.length - got, static_cast<off_t>(job.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return error(ErrorCode::io_error, "cannot read " + shard.path.string() + ": " + std::strerror(errno));
    if (n == 0) return short_read(got);
    got += static_cast<std::uint64_t>(n);
  }
  return Status::ok();
}

void ExpertStore::reader_loop() {
  std::vector<std::uint8_t> bounce;  // O_DIRECT only: grows to the largest range once
  std::unique_lock lock(mutex_);
  while (true) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    // A batch that already failed skips its remaining reads.
    const bool skip = !job.batch->status.is_ok();
    lock.unlock();
    Status status;
    double seconds = 0;
    if (!skip) {
      const auto t0 = std::chrono::steady_clock::now();
      status = read_range(job, bounce);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    lock.lock();
    if (!skip && status.is_ok()) {
      stats_.bytes += job.length;
      stats_.read_seconds += seconds;
    }
    if (!status.is_ok() && job.batch->status.is_ok()) job.batch->status = std::move(status);
    if (--job.batch->pending == 0) job.batch->done.notify_all();
  }
}

}  // namespace day0::experts
