#include "io/checkpoint.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "common/json_error.h"
#include "io/json_util.h"

namespace day0::io {
namespace {

using nlohmann::json;

Status corrupt(const std::string& file, const std::string& message) {
  return error(ErrorCode::corrupt_data, file + ": " + message);
}

bool is_safe_file_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos) return false;
  return name.find('\0') == std::string_view::npos;
}

}  // namespace

Result<CheckpointIndex> parse_checkpoint_index(std::string_view text, const std::string& file) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    return error(ErrorCode::corrupt_data, common::json_parse_problem(file, e));
  }
  if (!root.is_object()) return corrupt(file, "not a JSON object");
  CheckpointIndex index;
  if (root.contains("metadata")) {
    const json& metadata = root["metadata"];
    if (!metadata.is_object()) return corrupt(file, "metadata is not an object");
    if (metadata.contains("total_size")) {
      const json& total = metadata["total_size"];
      // Some writers store the number as a float or a string; accept exact integers only.
      if (total.is_number_unsigned()) {
        index.total_size = total.get<std::uint64_t>();
      } else if (total.is_number_float() && total.get<double>() >= 0 &&
                 total.get<double>() < 18446744073709551616.0 &&  // 2^64: the cast below is defined
                 total.get<double>() == static_cast<double>(static_cast<std::uint64_t>(total.get<double>()))) {
        index.total_size = static_cast<std::uint64_t>(total.get<double>());
      } else if (!total.is_null()) {
        return corrupt(file, "metadata.total_size must be a non-negative integer, got " + total.dump());
      }
    }
  }
  if (!root.contains("weight_map") || !root["weight_map"].is_object())
    return corrupt(file, "has no weight_map object");
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : root["weight_map"].items()) {
    if (!shard.is_string()) return corrupt(file, "weight_map[\"" + tensor + "\"] is not a file name");
    const auto name = shard.get<std::string>();
    if (!is_safe_file_name(name))
      return corrupt(file, "weight_map[\"" + tensor + "\"] names \"" + name +
                               "\", which is not a plain file name inside the model folder");
    index.weight_map[tensor] = name;
    shards.insert(name);
  }
  if (index.weight_map.empty()) return corrupt(file, "weight_map lists no tensors");
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

Result<CheckpointIndex> read_checkpoint_index(const std::filesystem::path& path) {
  DAY0_ASSIGN_OR_RETURN(const std::string text, read_text_file(path, 256ull << 20));
  return parse_checkpoint_index(text, path.string());
}

Result<std::unique_ptr<Checkpoint>> Checkpoint::open(const std::filesystem::path& dir) {
  auto checkpoint = std::make_unique<Checkpoint>();
  checkpoint->dir_ = dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return error(ErrorCode::not_found, dir.string() + " is not a folder");

  const auto index_path = dir / kIndexFileName;
  std::optional<CheckpointIndex> index;
  std::vector<std::string> shard_names;
  if (std::filesystem::exists(index_path, ec)) {
    DAY0_ASSIGN_OR_RETURN(index, read_checkpoint_index(index_path));
    shard_names = index->shards;
  } else if (std::filesystem::exists(dir / kSingleFileName, ec)) {
    shard_names.emplace_back(kSingleFileName);
  } else {
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".safetensors" && entry.is_regular_file())
        shard_names.push_back(entry.path().filename().string());
    }
    std::sort(shard_names.begin(), shard_names.end());
    if (shard_names.empty())
      return error(ErrorCode::not_found, dir.string() + " holds no " + std::string(kIndexFileName) +
                                             " and no .safetensors files: the weights are not there");
  }

  checkpoint->shards_.reserve(shard_names.size());
  for (const auto& name : shard_names) {
    const auto path = dir / name;
    if (!std::filesystem::exists(path, ec))
      return error(ErrorCode::not_found, "shard " + name + " listed in " + std::string(kIndexFileName) +
                                             " is missing from " + dir.string());
    DAY0_ASSIGN_OR_RETURN(SafetensorsFile shard, SafetensorsFile::open(path));
    checkpoint->shards_.push_back(std::move(shard));
  }

  std::uint64_t data_bytes = 0;
  for (const auto& shard : checkpoint->shards_) {
    const std::string shard_name = shard.path().filename().string();
    data_bytes += shard.header().data_bytes;
    for (const auto& tensor : shard.tensors()) {
      if (index) {
        const auto it = index->weight_map.find(tensor.name);
        if (it == index->weight_map.end()) {
          checkpoint->warnings_.push_back("tensor " + tensor.name + " in " + shard_name +
                                          " is not listed in the index; it is ignored");
          continue;
        }
        if (it->second != shard_name) continue;  // the index places it in another shard
      }
      const auto [pos, inserted] = checkpoint->tensors_.emplace(tensor.name, TensorRef{&shard, &tensor});
      if (!inserted)
        return corrupt(dir.string(), "tensor " + tensor.name + " appears in both " +
                                         pos->second.file->path().filename().string() + " and " + shard_name);
    }
  }
  if (index) {
    for (const auto& [tensor, shard] : index->weight_map) {
      if (!checkpoint->tensors_.contains(tensor))
        return corrupt(dir.string(), "the index places tensor " + tensor + " in " + shard +
                                         ", but that shard does not hold it");
    }
    if (index->total_size && *index->total_size != data_bytes)
      checkpoint->warnings_.push_back("the index gives total_size " + std::to_string(*index->total_size) +
                                      " but the shards hold " + std::to_string(data_bytes) + " bytes of tensors");
  }
  return checkpoint;
}

std::optional<TensorRef> Checkpoint::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) return std::nullopt;
  return it->second;
}

}  // namespace day0::io
