#pragma once
// A released model's shape as the Hub would list it, from its config.json alone: the shard index
// (every tensor the architecture expects, spread over shards) and the shards' sizes, computed from
// the tensors' shapes and stored dtypes. The shards are listed, never served.
#include <cstdint>
#include <filesystem>
#include <string>

#include "hub/fake_hub.h"

namespace day0::test {

struct ShapeFigures {
  std::uint64_t bytes = 0;   // all tensors at their stored dtypes
  std::uint64_t params = 0;  // as inspect counts them
  std::uint64_t active = 0;
};

ShapeFigures shape_figures(const std::filesystem::path& config_file);
// config.json, model.safetensors.index.json and `shards` listed shards of `config_file`'s shape.
FakeRepo shape_repo(const std::string& id, const std::filesystem::path& config_file, int shards);

}  // namespace day0::test
