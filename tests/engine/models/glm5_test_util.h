#pragma once
// Helpers of the glm5_next tests: reference dumps (tools/reference/make_glm5_fixtures.py),
// model folders copied to a temporary folder and edited, relative errors.
#include <QTemporaryDir>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/safetensors.h"

namespace day0::test {

namespace fs = std::filesystem;

inline fs::path data_dir() { return fs::path(DAY0_TEST_DATA_DIR); }
inline fs::path glm5_model(const std::string& name) { return data_dir() / "models" / name; }
inline fs::path glm5_reference(const std::string& name) {
  return data_dir() / "reference" / "glm5_next" / (name + ".safetensors");
}

// A tensor of a reference dump as floats (F32 or I32), empty when absent.
inline std::vector<float> read_tensor(const fs::path& file, const std::string& name,
                                      std::vector<std::uint64_t>* shape = nullptr) {
  std::vector<float> out;
  auto f = io::SafetensorsFile::open(file);
  if (!f.is_ok()) return out;
  const io::TensorInfo* t = f->find(name);
  if (t == nullptr) return out;
  if (shape) *shape = t->shape;
  out.resize(static_cast<std::size_t>(t->numel));
  const auto bytes = f->data(*t);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (t->dtype == DType::i32) {
      std::int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out[i] = static_cast<float>(v);
    } else {
      std::memcpy(&out[i], bytes.data() + 4 * i, 4);
    }
  }
  return out;
}

inline std::vector<std::int32_t> read_ids(const fs::path& file, const std::string& name) {
  const auto v = read_tensor(file, name);
  return std::vector<std::int32_t>(v.begin(), v.end());
}

// Worst per-row ||a - b|| / ||b|| over rows of `width`.
inline double max_rel_l2(const float* a, const float* b, std::size_t rows, std::size_t width) {
  double worst = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double num = 0, den = 0;
    for (std::size_t i = r * width; i < (r + 1) * width; ++i) {
      const double d = static_cast<double>(a[i]) - b[i];
      num += d * d;
      den += static_cast<double>(b[i]) * b[i];
      if (!std::isfinite(a[i])) num = INFINITY;
    }
    worst = std::max(worst, std::sqrt(num / std::max(den, 1e-300)));
  }
  return worst;
}

// A copy of a model folder in a temporary folder, to edit.
inline fs::path copy_model(const QTemporaryDir& tmp, const std::string& name, const std::string& as = "") {
  const fs::path dst = fs::path(tmp.path().toStdString()) / (as.empty() ? name : as);
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(glm5_model(name)))
    fs::copy_file(e.path(), dst / e.path().filename(), fs::copy_options::overwrite_existing);
  return dst;
}

inline nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

inline void write_json(const fs::path& p, const nlohmann::json& j) {
  std::ofstream out(p, std::ios::trunc);
  out << j.dump(2);
}

// Overwrites `n` bytes of tensor `name` at byte `offset` of its data in a single-file checkpoint.
inline bool poke_tensor(const fs::path& dir, const std::string& name, std::uint64_t offset, const void* bytes,
                        std::size_t n) {
  std::uint64_t at = 0;
  {
    auto f = io::SafetensorsFile::open(dir / "model.safetensors");
    if (!f.is_ok()) return false;
    const io::TensorInfo* t = f->find(name);
    if (t == nullptr || offset + n > t->nbytes()) return false;
    at = f->file_offset(*t) + offset;
  }
  std::fstream io(dir / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  io.seekp(static_cast<std::streamoff>(at));
  io.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
  return static_cast<bool>(io);
}

}  // namespace day0::test
