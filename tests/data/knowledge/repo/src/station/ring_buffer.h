#pragma once
// A fixed-capacity ring buffer that keeps the newest readings when the database is busy or the
// radio link is down. Once full, pushing overwrites the oldest element.
#include <array>
#include <cstddef>
#include <optional>

namespace tidepool {

template <typename T, std::size_t Capacity>
class RingBuffer {
 public:
  void push(const T& value) {
    items_[(head_ + size_) % Capacity] = value;
    if (size_ == Capacity) head_ = (head_ + 1) % Capacity;
    else ++size_;
  }

  std::optional<T> pop() {
    if (size_ == 0) return std::nullopt;
    T value = items_[head_];
    head_ = (head_ + 1) % Capacity;
    --size_;
    return value;
  }

  std::size_t size() const { return size_; }
  bool full() const { return size_ == Capacity; }

 private:
  std::array<T, Capacity> items_{};
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace tidepool
