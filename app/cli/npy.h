#pragma once
// Writes float32 arrays in NumPy's .npy format (version 1.0, little-endian, C order).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace day0::cli {

inline bool write_npy(const std::filesystem::path& path, const float* data, const std::vector<std::int64_t>& shape,
                      std::string* problem) {
  std::string dims;
  std::size_t count = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    if (i + 1 < shape.size()) dims += " ";
    count *= static_cast<std::size_t>(shape[i]);
  }
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + header length (2) + header + '\n' must be a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    *problem = "cannot write " + path.string();
    return false;
  }
  const char magic[] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, 8);
  const auto length = static_cast<std::uint16_t>(header.size());
  const char length_bytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(length_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(float)));
  if (!out) {
    *problem = "cannot write " + path.string();
    return false;
  }
  return true;
}

}  // namespace day0::cli
