#include "hardening/model_mutations.h"

#include <fstream>
#include <stdexcept>

#include "io/safetensors.h"

namespace day0::test {

namespace fs = std::filesystem;

void copy_model(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from))
    if (entry.is_regular_file()) fs::copy_file(entry.path(), to / entry.path().filename());
}

std::vector<RawTensor> read_shard(const fs::path& shard) {
  auto file = io::SafetensorsFile::open(shard);
  if (!file) throw std::runtime_error(file.status().message());
  std::vector<RawTensor> out;
  for (const auto& t : file->tensors()) {
    const auto bytes = file->data(t);
    out.push_back({t.name, std::string(dtype_name(t.dtype)), t.shape, {bytes.begin(), bytes.end()}});
  }
  return out;
}

void write_shard(const fs::path& shard, const std::vector<RawTensor>& tensors) {
  write_file(shard, safetensors_bytes(tensors));
}

void edit_shard(const fs::path& shard, const std::function<void(std::vector<RawTensor>&)>& edit) {
  auto tensors = read_shard(shard);
  edit(tensors);
  write_shard(shard, tensors);
}

std::string shard_of(const fs::path& dir, const std::string& tensor) {
  const auto index = dir / "model.safetensors.index.json";
  if (!fs::exists(index)) return "model.safetensors";
  std::ifstream in(index);
  const auto j = nlohmann::json::parse(in);
  return j.at("weight_map").at(tensor).get<std::string>();
}

void edit_tensor(const fs::path& dir, const std::string& tensor, const std::function<void(RawTensor&)>& edit) {
  edit_shard(dir / shard_of(dir, tensor), [&](std::vector<RawTensor>& tensors) {
    for (auto& t : tensors)
      if (t.name == tensor) return edit(t);
    throw std::runtime_error("no tensor " + tensor + " in " + dir.string());
  });
}

void remove_tensor(const fs::path& dir, const std::string& tensor) {
  edit_shard(dir / shard_of(dir, tensor), [&](std::vector<RawTensor>& tensors) {
    std::erase_if(tensors, [&](const RawTensor& t) { return t.name == tensor; });
  });
  const auto index = dir / "model.safetensors.index.json";
  if (fs::exists(index)) edit_json(index, [&](nlohmann::json& j) { j["weight_map"].erase(tensor); });
}

void edit_json(const fs::path& file, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j;
  {
    std::ifstream in(file);
    j = nlohmann::json::parse(in);
  }
  edit(j);
  write_text(file, j.dump(2));
}

nlohmann::json& text_config(nlohmann::json& config) {
  return config.contains("text_config") ? config["text_config"] : config;
}

void patch_bytes(const fs::path& file, std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot patch " + file.string());
}

void truncate_file(const fs::path& file, std::uint64_t size) { fs::resize_file(file, size); }

}  // namespace day0::test
