#pragma once
// Weights from the mapped checkpoint to the GPU through pinned staging buffers on several
// threads. A copy from pageable memory runs at about 7.7 GB/s on an H200 host and blocks the
// caller; here each thread copies pieces of the queued ranges into one of its two pinned buffers
// (reading the page cache) while its stream moves the previous piece over PCIe at pinned speed.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "backend/cuda/cuda_support.h"
#include "day0/status.h"

namespace day0::cuda {

class WeightUploader {
 public:
  // `threads` workers (0: up to 8, by the host's cores), each with two pinned buffers of
  // `piece_bytes`, on GPU `device`.
  explicit WeightUploader(int device, int threads = 0, std::size_t piece_bytes = std::size_t{16} << 20);
  WeightUploader(const WeightUploader&) = delete;
  WeightUploader& operator=(const WeightUploader&) = delete;

  // Queues a copy of `bytes` from host `src` (valid until finish()) to device `dst`.
  void enqueue(void* dst, const void* src, std::size_t bytes);
  // Queues a copy of `data` (kept here until finish()) to device `dst`.
  void enqueue(void* dst, std::vector<std::uint8_t> data);
  // Runs every queued copy and waits for all of them; the first failure, naming `what`.
  Status finish(const std::string& what);
  std::uint64_t bytes_queued() const { return queued_; }

 private:
  struct Piece {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  int device_;
  int threads_;
  std::size_t piece_bytes_;
  std::vector<Piece> pieces_;
  std::deque<std::vector<std::uint8_t>> owned_;
  std::uint64_t queued_ = 0;
};

// Places a program's weights: allocates each tensor in the ledger and queues its copy on an
// uploader (the host bytes must stay valid until the uploader's finish()).
class WeightPlacer {
 public:
  WeightPlacer(WeightUploader& uploader, MemoryLedger* ledger) : up_(uploader), ledger_(ledger) {}
  // `bytes` as they are.
  Status raw(const void* host, std::size_t bytes, DeviceBuffer* out, MemoryCategory category, const std::string& what);
  // `bytes` kept by the uploader until it finishes.
  Status owned(std::vector<std::uint8_t> bytes, DeviceBuffer* out, MemoryCategory category, const std::string& what);
  // Rows of one or more matrices stacked into one bf16 buffer (converted where stored otherwise).
  Status bf16(const std::vector<cpu::Matrix>& parts, DeviceBuffer* out, MemoryCategory category,
              const std::string& what);
  // The same as fp32.
  Status f32(const std::vector<cpu::Matrix>& parts, DeviceBuffer* out, MemoryCategory category,
             const std::string& what);
  // MXFP4 matrices of one shape stacked: every matrix's blocks into `blocks`, its scales into
  // `scales` (expert_cache).
  Status mxfp4(const std::vector<cpu::Mxfp4Matrix>& parts, DeviceBuffer* blocks, DeviceBuffer* scales,
               const std::string& what);

 private:
  WeightUploader& up_;
  MemoryLedger* ledger_;
};

}  // namespace day0::cuda
