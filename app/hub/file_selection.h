#pragma once
// Which files of a repository make a Day0 model folder: the configuration, tokenizer and chat
// template files and the safetensors shards with their index, at the top of the repository.
// Sub-folders (gpt-oss's original/ and metal/ copies) and other weight formats (.bin, .pth,
// .gguf, ...) are left out. Patterns given by the person replace that choice.
#include <string>
#include <string_view>
#include <vector>

#include "hub/hub_client.h"

namespace day0::hub {

struct Selection {
  std::vector<RemoteFile> files;     // to download, in the listing's order
  std::vector<std::string> skipped;  // the others
  std::uint64_t bytes() const;
};

// `include`: glob patterns ('*', '?', '[...]'; '*' also crosses '/'), any of which selects a
// file; empty: the default choice above.
Selection select_files(const std::vector<RemoteFile>& listed, const std::vector<std::string>& include = {});

// "a,b, c" -> {"a", "b", "c"}
std::vector<std::string> split_patterns(std::string_view text);

// Whether the default choice takes `path`.
bool is_model_file(std::string_view path);

}  // namespace day0::hub
