#include "engine/safetensors_writer.h"

#include <fstream>
#include <stdexcept>

namespace day0::test {

std::string safetensors_header(const std::vector<RawTensor>& tensors, const std::string& metadata_json) {
  std::string h = "{";
  if (!metadata_json.empty()) h += "\"__metadata__\":" + metadata_json;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (h.size() > 1) h += ",";
    h += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) h += (i ? "," : "") + std::to_string(t.shape[i]);
    h += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.bytes.size()) + "]}";
    offset += t.bytes.size();
  }
  h += "}";
  while (h.size() % 8 != 0) h += ' ';  // the reference writer pads with spaces
  return h;
}

std::vector<std::uint8_t> safetensors_bytes(const std::string& header, const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> out(8);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::vector<std::uint8_t> safetensors_bytes(const std::vector<RawTensor>& tensors) {
  std::vector<std::uint8_t> data;
  for (const auto& t : tensors) data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  return safetensors_bytes(safetensors_header(tensors), data);
}

void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_file(path, std::vector<std::uint8_t>(text.begin(), text.end()));
}

std::vector<std::uint8_t> pattern_bytes(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = 0x9e3779b9u ^ seed;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  return v;
}

}  // namespace day0::test
