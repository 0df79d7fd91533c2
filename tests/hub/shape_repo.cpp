#include "hub/shape_repo.h"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/dtype.h"
#include "day0/model_info.h"
#include "io/model_config.h"
#include "models/architecture.h"

namespace day0::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempFolder {
  fs::path path = fs::temp_directory_path() / ("day0-shape-" + std::to_string(::getpid()));
  TempFolder() { fs::create_directories(path); }
  ~TempFolder() { fs::remove_all(path); }
};

std::vector<models::ExpectedTensor> expected(const fs::path& config_file) {
  TempFolder dir;
  fs::copy_file(config_file, dir.path / "config.json");
  auto config = io::ModelConfig::load(dir.path);
  if (!config) return {};
  const auto* arch = models::find_architecture(config->model_type());
  if (arch == nullptr) return {};
  auto tensors = arch->expected_tensors(*config);
  return tensors ? *tensors : std::vector<models::ExpectedTensor>{};
}

std::uint64_t tensor_bytes(const models::ExpectedTensor& t) {
  std::uint64_t numel = 1;
  for (auto d : t.shape) numel *= d;
  return numel * static_cast<std::uint64_t>(dtype_bits(t.dtype)) / 8;
}

}  // namespace

ShapeFigures shape_figures(const fs::path& config_file) {
  ShapeFigures f;
  for (const auto& t : expected(config_file)) f.bytes += tensor_bytes(t);
  TempFolder dir;
  fs::copy_file(config_file, dir.path / "config.json");
  if (auto info = inspect_model(dir.path)) {
    f.params = info->total_params;
    f.active = info->active_params_per_token;
  }
  return f;
}

FakeRepo shape_repo(const std::string& id, const fs::path& config_file, int shards) {
  const auto tensors = expected(config_file);
  std::uint64_t total = 0;
  for (const auto& t : tensors) total += tensor_bytes(t);
  nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", nlohmann::json::object()}};
  std::vector<std::uint64_t> shard_bytes(static_cast<std::size_t>(shards), 0);
  std::uint64_t running = 0;
  const auto shard_name = [&](int i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", i + 1, shards);
    return std::string(name);
  };
  for (const auto& t : tensors) {
    const int shard =
        static_cast<int>(std::min<std::uint64_t>(shards - 1, running * shards / std::max<std::uint64_t>(1, total)));
    index["weight_map"][t.name] = shard_name(shard);
    shard_bytes[static_cast<std::size_t>(shard)] += tensor_bytes(t);
    running += tensor_bytes(t);
  }
  FakeRepo repo;
  repo.id = id;
  repo.files.push_back({"config.json", read_file(config_file), false, "", 0});
  repo.files.push_back({"model.safetensors.index.json", index.dump(1), false, "", 0});
  for (int i = 0; i < shards; ++i)
    repo.files.push_back(
        {shard_name(i), "shard " + std::to_string(i), true, "", shard_bytes[static_cast<std::size_t>(i)] + 8});
  return repo;
}

}  // namespace day0::test
