#include "backend/cuda/weight_upload.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/cuda/cuda_support.h"
#include "formats/float_formats.h"

namespace day0::cuda {

WeightUploader::WeightUploader(int device, int threads, std::size_t piece_bytes)
    : device_(device), piece_bytes_(std::max<std::size_t>(piece_bytes, 1 << 16)) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // DAY0_UPLOAD_THREADS overrides the default, for measuring (docs/perf-notes.md, "Loading").
  const char* env = std::getenv("DAY0_UPLOAD_THREADS");
  if (threads <= 0 && env != nullptr) threads = std::atoi(env);
  threads_ = threads > 0 ? std::min(threads, 64) : std::clamp(cores / 2, 1, 8);
}

void WeightUploader::enqueue(void* dst, const void* src, std::size_t bytes) {
  queued_ += bytes;
  for (std::size_t at = 0; at < bytes; at += piece_bytes_)
    pieces_.push_back({static_cast<std::uint8_t*>(dst) + at, static_cast<const std::uint8_t*>(src) + at,
                       std::min(piece_bytes_, bytes - at)});
}

void WeightUploader::enqueue(void* dst, std::vector<std::uint8_t> data) {
  owned_.push_back(std::move(data));
  enqueue(dst, owned_.back().data(), owned_.back().size());
}

Status WeightUploader::finish(const std::string& what) {
  if (pieces_.empty()) return Status::ok();
  // Large pieces first spread the tail evenly; neighbouring pieces of one tensor go to different
  // threads, so each thread reads the page cache in large runs all the same.
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  Status failure = Status::ok();
  const auto fail = [&](const Status& s) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.is_ok()) failure = s;
    next.store(pieces_.size());
  };
  const auto worker = [&] {
    const auto run = [&]() -> Status {
      DAY0_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "selecting GPU " + std::to_string(device_));
      DAY0_ASSIGN_OR_RETURN(Stream stream, Stream::create());
      std::array<PinnedBuffer, 2> staging;
      std::array<Event, 2> copied;
      for (int b = 0; b < 2; ++b) {
        DAY0_ASSIGN_OR_RETURN(staging[b], PinnedBuffer::allocate(piece_bytes_, "uploading " + what));
        DAY0_ASSIGN_OR_RETURN(copied[b], Event::create(cudaEventDisableTiming));
      }
      std::array<bool, 2> used{false, false};
      for (int k = 0;; ++k) {
        const std::size_t i = next.fetch_add(1);
        if (i >= pieces_.size()) break;
        const Piece& p = pieces_[i];
        const int b = k & 1;
        // The buffer's previous copy must be done before it is filled again.
        if (used[b]) DAY0_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(copied[b].get()), "uploading " + what);
        std::memcpy(staging[b].as<void>(), p.src, p.bytes);
        DAY0_CUDA_RETURN_IF_ERROR(
            cudaMemcpyAsync(p.dst, staging[b].as<void>(), p.bytes, cudaMemcpyHostToDevice, stream.get()),
            "uploading " + what);
        DAY0_CUDA_RETURN_IF_ERROR(cudaEventRecord(copied[b].get(), stream.get()), "uploading " + what);
        used[b] = true;
      }
      DAY0_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.get()), "uploading " + what);
      return Status::ok();
    };
    if (Status s = run(); !s.is_ok()) fail(s);
  };
  const int n = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads_), pieces_.size()));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  pieces_.clear();
  owned_.clear();
  queued_ = 0;
  return failure;
}

namespace {

Status place(MemoryLedger* ledger, std::size_t bytes, DeviceBuffer* out, MemoryCategory category,
             const std::string& what) {
  DAY0_ASSIGN_OR_RETURN(*out, DeviceBuffer::allocate(bytes, category, ledger, what));
  return Status::ok();
}

}  // namespace

Status WeightPlacer::raw(const void* host, std::size_t bytes, DeviceBuffer* out, MemoryCategory category,
                         const std::string& what) {
  DAY0_RETURN_IF_ERROR(place(ledger_, bytes, out, category, what));
  up_.enqueue(out->get(), host, bytes);
  return Status::ok();
}

Status WeightPlacer::owned(std::vector<std::uint8_t> bytes, DeviceBuffer* out, MemoryCategory category,
                           const std::string& what) {
  DAY0_RETURN_IF_ERROR(place(ledger_, bytes.size(), out, category, what));
  up_.enqueue(out->get(), std::move(bytes));
  return Status::ok();
}

Status WeightPlacer::bf16(const std::vector<cpu::Matrix>& parts, DeviceBuffer* out, MemoryCategory category,
                          const std::string& what) {
  std::size_t total = 0;
  for (const auto& m : parts) total += static_cast<std::size_t>(m.rows * m.cols);
  DAY0_RETURN_IF_ERROR(place(ledger_, total * 2, out, category, what));
  std::size_t offset = 0;
  std::vector<float> row;
  for (const auto& m : parts) {
    const std::size_t n = static_cast<std::size_t>(m.rows * m.cols);
    auto* dst = out->as<std::uint16_t>() + offset;
    if (m.dtype == DType::bf16) {
      up_.enqueue(dst, m.data, n * 2);
    } else {
      row.resize(static_cast<std::size_t>(m.cols));
      std::vector<std::uint8_t> converted(n * 2);
      auto* bf16 = reinterpret_cast<std::uint16_t*>(converted.data());
      for (std::int64_t r = 0; r < m.rows; ++r) {
        cpu::decode_row(m, r, row.data());
        for (std::int64_t c = 0; c < m.cols; ++c)
          bf16[static_cast<std::size_t>(r * m.cols + c)] = formats::f32_to_bf16(row[static_cast<std::size_t>(c)]);
      }
      up_.enqueue(dst, std::move(converted));
    }
    offset += n;
  }
  return Status::ok();
}

Status WeightPlacer::f32(const std::vector<cpu::Matrix>& parts, DeviceBuffer* out, MemoryCategory category,
                         const std::string& what) {
  std::size_t total = 0;
  for (const auto& m : parts) total += static_cast<std::size_t>(m.rows * m.cols);
  std::vector<std::uint8_t> all(total * sizeof(float));
  auto* f = reinterpret_cast<float*>(all.data());
  std::size_t at = 0;
  for (const auto& m : parts) {
    for (std::int64_t r = 0; r < m.rows; ++r) cpu::decode_row(m, r, f + at + static_cast<std::size_t>(r * m.cols));
    at += static_cast<std::size_t>(m.rows * m.cols);
  }
  DAY0_RETURN_IF_ERROR(place(ledger_, all.size(), out, category, what));
  up_.enqueue(out->get(), std::move(all));
  return Status::ok();
}

Status WeightPlacer::mxfp4(const std::vector<cpu::Mxfp4Matrix>& experts, DeviceBuffer* blocks, DeviceBuffer* scales,
                           const std::string& what) {
  const std::size_t n_blocks = static_cast<std::size_t>(experts[0].rows * experts[0].cols / 32);
  DAY0_RETURN_IF_ERROR(place(ledger_, n_blocks * 16 * experts.size(), blocks, MemoryCategory::expert_cache, what));
  DAY0_RETURN_IF_ERROR(place(ledger_, n_blocks * experts.size(), scales, MemoryCategory::expert_cache, what));
  for (std::size_t e = 0; e < experts.size(); ++e) {
    up_.enqueue(blocks->as<std::uint8_t>() + e * n_blocks * 16, experts[e].blocks, n_blocks * 16);
    up_.enqueue(scales->as<std::uint8_t>() + e * n_blocks, experts[e].scales, n_blocks);
  }
  return Status::ok();
}

}  // namespace day0::cuda
