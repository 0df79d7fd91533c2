#pragma once
// A paged key/value cache for one session on the CPU: per layer, pages of `page_tokens`
// positions, each holding [page_tokens, kv_heads, head_dim] keys and the same for values, in
// fp32. Pages are allocated as the conversation grows; nothing is copied when it does.
#include <cstdint>
#include <memory>
#include <vector>

namespace day0::memory {

class PagedKvCache {
 public:
  PagedKvCache(std::int64_t layers, std::int64_t kv_heads, std::int64_t head_dim, std::int64_t page_tokens);

  // Makes room for positions [0, tokens).
  void reserve(std::int64_t tokens);
  // Forgets positions >= tokens (their pages are kept for reuse).
  void truncate(std::int64_t tokens) { length_ = std::min(length_, tokens); }
  std::int64_t length() const { return length_; }
  void set_length(std::int64_t tokens) { length_ = tokens; }

  // [kv_heads * head_dim] floats for `position` of `layer`; the position must be reserved.
  float* key(std::int64_t layer, std::int64_t position) { return slot(keys_, layer, position); }
  float* value(std::int64_t layer, std::int64_t position) { return slot(values_, layer, position); }

  std::int64_t page_tokens() const { return page_tokens_; }
  std::uint64_t bytes() const;

 private:
  using Pages = std::vector<std::vector<std::unique_ptr<float[]>>>;  // [layer][page]
  float* slot(Pages& pages, std::int64_t layer, std::int64_t position) {
    return pages[static_cast<std::size_t>(layer)][static_cast<std::size_t>(position / page_tokens_)].get() +
           (position % page_tokens_) * row_;
  }

  std::int64_t layers_, row_, page_tokens_;
  std::int64_t length_ = 0;
  std::int64_t capacity_ = 0;
  Pages keys_, values_;
};

}  // namespace day0::memory
