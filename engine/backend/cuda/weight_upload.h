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

}  // namespace day0::cuda
