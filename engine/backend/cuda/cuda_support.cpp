#include "backend/cuda/cuda_support.h"

#include <algorithm>

namespace day0::cuda {

Status cuda_status(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return Status::ok();
  const ErrorCode code = error == cudaErrorMemoryAllocation ? ErrorCode::out_of_memory : ErrorCode::device_error;
  return day0::error(code, what + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

const char* memory_category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::weights:
      return "weights";
    case MemoryCategory::expert_cache:
      return "expert_cache";
    case MemoryCategory::fp8_workspace:
      return "fp8_workspace";
    case MemoryCategory::kv_cache:
      return "kv_cache";
    case MemoryCategory::activations:
      return "activations";
  }
  return "other";
}

void MemoryLedger::add(MemoryCategory category, std::int64_t bytes) {
  bytes_[static_cast<std::size_t>(category)] += bytes;
  const std::int64_t total = total_ += bytes;
  std::uint64_t peak = peak_.load();
  while (total > 0 && static_cast<std::uint64_t>(total) > peak &&
         !peak_.compare_exchange_weak(peak, static_cast<std::uint64_t>(total))) {
  }
}

std::uint64_t MemoryLedger::bytes(MemoryCategory category) const {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, bytes_[static_cast<std::size_t>(category)].load()));
}

std::uint64_t MemoryLedger::total() const {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, total_.load()));
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    pointer_ = std::exchange(other.pointer_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    category_ = other.category_;
    ledger_ = std::exchange(other.ledger_, nullptr);
  }
  return *this;
}

Result<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes, MemoryCategory category, MemoryLedger* ledger,
                                            const std::string& what) {
  DeviceBuffer buffer;
  const cudaError_t e = cudaMalloc(&buffer.pointer_, std::max<std::size_t>(bytes, 16));
  if (e != cudaSuccess) {
    buffer.pointer_ = nullptr;
    return cuda_status(e, "allocating " + std::to_string(bytes) + " bytes of GPU memory for " + what);
  }
  buffer.bytes_ = bytes;
  buffer.category_ = category;
  buffer.ledger_ = ledger;
  if (ledger != nullptr) ledger->add(category, static_cast<std::int64_t>(bytes));
  return buffer;
}

void DeviceBuffer::reset() {
  if (pointer_ == nullptr) return;
  cudaFree(pointer_);
  if (ledger_ != nullptr) ledger_->add(category_, -static_cast<std::int64_t>(bytes_));
  pointer_ = nullptr;
  bytes_ = 0;
  ledger_ = nullptr;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != nullptr) cudaFreeHost(pointer_);
    pointer_ = std::exchange(other.pointer_, nullptr);
    device_pointer_ = std::exchange(other.device_pointer_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  if (pointer_ != nullptr) cudaFreeHost(pointer_);
}

Result<PinnedBuffer> PinnedBuffer::allocate(std::size_t bytes, const std::string& what, bool mapped) {
  PinnedBuffer buffer;
  DAY0_CUDA_RETURN_IF_ERROR(
      cudaHostAlloc(&buffer.pointer_, std::max<std::size_t>(bytes, 16), mapped ? cudaHostAllocMapped : 0),
      "allocating pinned host memory for " + what);
  buffer.bytes_ = bytes;
  if (mapped)
    DAY0_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&buffer.device_pointer_, buffer.pointer_, 0),
                              "mapping pinned host memory for " + what);
  return buffer;
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Result<Stream> Stream::create() {
  Stream s;
  DAY0_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking), "creating a CUDA stream");
  return s;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) cudaEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

Result<Event> Event::create(unsigned flags) {
  Event e;
  DAY0_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e.event_, flags), "creating a CUDA event");
  return e;
}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

GraphExec::~GraphExec() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
}

Result<GraphExec> GraphExec::finish(cudaStream_t stream, const Status& recorded) {
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!recorded.is_ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    return recorded;
  }
  DAY0_CUDA_RETURN_IF_ERROR(ended, "capturing the decode step");
  GraphExec exec;
  const cudaError_t made = cudaGraphInstantiate(&exec.exec_, graph, 0);
  cudaGraphDestroy(graph);
  DAY0_CUDA_RETURN_IF_ERROR(made, "instantiating the decode step's graph");
  return exec;
}

Status GraphExec::launch(cudaStream_t stream) const {
  DAY0_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, stream), "launching the decode step's graph");
  return Status::ok();
}

}  // namespace day0::cuda
