#pragma once
// Test helper: copies a model folder and breaks it in one precise way (a missing file, a tensor
// of the wrong shape or dtype, non-finite weights, a truncated shard, a config field out of
// range, ...). The malformed-model corpus is built from the real fixtures with these.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/safetensors_writer.h"

namespace day0::test {

// Copies every file of `from` into `to` (created).
void copy_model(const std::filesystem::path& from, const std::filesystem::path& to);

// The tensors of one shard, with their bytes, in file order.
std::vector<RawTensor> read_shard(const std::filesystem::path& shard);
void write_shard(const std::filesystem::path& shard, const std::vector<RawTensor>& tensors);
// Applies `edit` to the tensors of `shard` and writes it back.
void edit_shard(const std::filesystem::path& shard, const std::function<void(std::vector<RawTensor>&)>& edit);
// The shard (file name) holding `tensor` in model folder `dir`, from the index or the single file.
std::string shard_of(const std::filesystem::path& dir, const std::string& tensor);
// Applies `edit` to one named tensor wherever it is stored; throws when it is not there.
void edit_tensor(const std::filesystem::path& dir, const std::string& tensor,
                 const std::function<void(RawTensor&)>& edit);
// Removes a tensor from its shard and from the index.
void remove_tensor(const std::filesystem::path& dir, const std::string& tensor);

// Reads, edits and rewrites a JSON file of the folder (config.json, the index, tokenizer.json).
void edit_json(const std::filesystem::path& file, const std::function<void(nlohmann::json&)>& edit);
// config.json's text part: text_config when present (glm5_next), else the root.
nlohmann::json& text_config(nlohmann::json& config);

// Overwrites bytes of a file at `offset`, or cuts it to `size` bytes.
void patch_bytes(const std::filesystem::path& file, std::uint64_t offset, const std::vector<std::uint8_t>& bytes);
void truncate_file(const std::filesystem::path& file, std::uint64_t size);

}  // namespace day0::test
