#include "memory/kv_cache.h"

namespace day0::memory {

PagedKvCache::PagedKvCache(std::int64_t layers, std::int64_t kv_heads, std::int64_t head_dim,
                           std::int64_t page_tokens)
    : layers_(layers),
      row_(kv_heads * head_dim),
      page_tokens_(std::max<std::int64_t>(page_tokens, 1)),
      keys_(static_cast<std::size_t>(layers)),
      values_(static_cast<std::size_t>(layers)) {}

void PagedKvCache::reserve(std::int64_t tokens) {
  while (capacity_ < tokens) {
    const auto page_floats = static_cast<std::size_t>(page_tokens_ * row_);
    for (std::int64_t l = 0; l < layers_; ++l) {
      keys_[static_cast<std::size_t>(l)].push_back(std::make_unique<float[]>(page_floats));
      values_[static_cast<std::size_t>(l)].push_back(std::make_unique<float[]>(page_floats));
    }
    capacity_ += page_tokens_;
  }
}

std::uint64_t PagedKvCache::bytes() const {
  return static_cast<std::uint64_t>(capacity_) * static_cast<std::uint64_t>(row_) * 2 * sizeof(float) *
         static_cast<std::uint64_t>(layers_);
}

}  // namespace day0::memory
