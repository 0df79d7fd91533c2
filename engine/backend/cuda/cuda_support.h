#pragma once
// RAII owners of CUDA handles (device buffers, pinned host buffers, streams, events, graphs),
// per-category device-memory accounting, and CUDA errors turned into day0::Status: the CUDA
// backend never aborts; a failed call becomes an error naming what was being done.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "day0/status.h"

namespace day0::cuda {

// "<what>: <CUDA error name> (<description>)" or ok.
Status cuda_status(cudaError_t error, const std::string& what);

#define DAY0_CUDA_RETURN_IF_ERROR(expr, what)                                         \
  do {                                                                                \
    if (const cudaError_t day0_cuda_error_ = (expr); day0_cuda_error_ != cudaSuccess) \
      return ::day0::cuda::cuda_status(day0_cuda_error_, what);                       \
  } while (0)

enum class MemoryCategory { weights, expert_cache, fp8_workspace, kv_cache, activations };
inline constexpr int kMemoryCategories = 5;
const char* memory_category_name(MemoryCategory category);

// Device bytes held per category, now and at peak (all categories together). Shared by a model
// and its sessions; thread-safe.
class MemoryLedger {
 public:
  void add(MemoryCategory category, std::int64_t bytes);
  std::uint64_t bytes(MemoryCategory category) const;
  std::uint64_t total() const;
  std::uint64_t peak() const { return peak_.load(); }

 private:
  std::array<std::atomic<std::int64_t>, kMemoryCategories> bytes_{};
  std::atomic<std::int64_t> total_{0};
  std::atomic<std::uint64_t> peak_{0};
};

// cudaMalloc'd memory, accounted under one category. Move-only; frees itself.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  static Result<DeviceBuffer> allocate(std::size_t bytes, MemoryCategory category, MemoryLedger* ledger,
                                       const std::string& what);
  void reset();
  void* get() const { return pointer_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
  MemoryCategory category_ = MemoryCategory::activations;
  MemoryLedger* ledger_ = nullptr;
};

// cudaMallocHost'd (pinned) memory for fast, asynchronous copies.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : pointer_(std::exchange(other.pointer_, nullptr)),
        device_pointer_(std::exchange(other.device_pointer_, nullptr)),
        bytes_(other.bytes_) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();
  // mapped: also addressable by kernels (device_as()), for small results they write directly.
  static Result<PinnedBuffer> allocate(std::size_t bytes, const std::string& what, bool mapped = false);
  template <typename T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }
  template <typename T>
  T* device_as() const {
    return static_cast<T*>(device_pointer_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* pointer_ = nullptr;
  void* device_pointer_ = nullptr;  // mapped buffers only
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() = default;
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  static Result<Stream> create();
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() = default;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  static Result<Event> create(unsigned flags = cudaEventDefault);
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// An instantiated CUDA graph (the decode step), captured from a stream.
class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&& other) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec();
  // Captures what `record` queues on `stream` and instantiates it. On failure the stream's
  // capture is ended and the error returned.
  template <typename Record>
  static Result<GraphExec> capture(cudaStream_t stream, Record&& record);
  bool valid() const { return exec_ != nullptr; }
  Status launch(cudaStream_t stream) const;

 private:
  static Result<GraphExec> finish(cudaStream_t stream, const Status& recorded);
  cudaGraphExec_t exec_ = nullptr;
};

template <typename Record>
Result<GraphExec> GraphExec::capture(cudaStream_t stream, Record&& record) {
  DAY0_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                            "starting the capture of the decode step");
  const Status recorded = record();
  return finish(stream, recorded);
}

}  // namespace day0::cuda
