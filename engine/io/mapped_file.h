#pragma once
// A read-only memory map of a whole file. Weights are read straight from the map (the page
// cache holds them), so the engine never keeps a second copy of a checkpoint in RAM.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

#include "day0/status.h"

namespace day0::io {

class MappedFile {
 public:
  static Result<MappedFile> open(const std::filesystem::path& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void reset() noexcept;

  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace day0::io
