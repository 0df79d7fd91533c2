#pragma once
// safetensors: an 8-byte little-endian header length N, N bytes of UTF-8 JSON describing each
// tensor (dtype, shape, [begin, end) offsets into the data section), then the data section.
// The reader validates what the reference implementation validates (header size limit,
// overflow-safe sizes, contiguous offsets from 0 with no gaps or overlaps, byte size equal to
// shape x dtype, the data ending exactly at end of file, valid UTF-8 JSON, no duplicate names)
// and names the file, the tensor and the bytes in every error.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "day0/status.h"
#include "io/mapped_file.h"

namespace day0::io {

inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct TensorInfo {
  std::string name;
  DType dtype = DType::u8;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // offsets relative to the start of the data section
  std::uint64_t end = 0;
  std::uint64_t numel = 1;

  std::uint64_t nbytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // in offset order
  std::map<std::string, std::string> metadata;
  std::uint64_t header_bytes = 0;   // N
  std::uint64_t data_offset = 0;    // 8 + N: where the data section starts in the file
  std::uint64_t data_bytes = 0;     // size of the data section
};

// Parses and validates a header. `file_prefix` holds at least the first 8 + N bytes of a file
// whose total size is `file_size`; `file_name` is used in messages.
Result<SafetensorsHeader> parse_safetensors_header(std::span<const std::uint8_t> file_prefix,
                                                   std::uint64_t file_size,
                                                   const std::string& file_name);

class SafetensorsFile {
 public:
  // Maps the file read-only and validates its header.
  static Result<SafetensorsFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  const SafetensorsHeader& header() const { return header_; }
  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  const TensorInfo* find(std::string_view name) const;

  // The tensor's bytes in the map. No alignment is promised by the format: read multi-byte
  // elements with memcpy or through the format helpers.
  std::span<const std::uint8_t> data(const TensorInfo& tensor) const;
  // Absolute file offset of the tensor's first byte, for pread-based streaming.
  std::uint64_t file_offset(const TensorInfo& tensor) const { return header_.data_offset + tensor.begin; }

 private:
  MappedFile file_;
  SafetensorsHeader header_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
};

// Reads just the header of a file (no map), for planning and inspection of large shards.
Result<SafetensorsHeader> read_safetensors_header(const std::filesystem::path& path);

}  // namespace day0::io
