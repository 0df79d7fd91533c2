#pragma once
// Test helper: writes safetensors files, well-formed or deliberately broken.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace day0::test {

struct RawTensor {
  std::string name;
  std::string dtype;                  // safetensors spelling
  std::vector<std::uint64_t> shape;
  std::vector<std::uint8_t> bytes;
};

// The JSON header a correct writer produces for `tensors` laid out in order.
std::string safetensors_header(const std::vector<RawTensor>& tensors, const std::string& metadata_json = "");
// header length (8 bytes LE) + header + data.
std::vector<std::uint8_t> safetensors_bytes(const std::string& header, const std::vector<std::uint8_t>& data);
std::vector<std::uint8_t> safetensors_bytes(const std::vector<RawTensor>& tensors);
void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);
void write_text(const std::filesystem::path& path, const std::string& text);
std::vector<std::uint8_t> pattern_bytes(std::size_t n, std::uint8_t seed);

}  // namespace day0::test
