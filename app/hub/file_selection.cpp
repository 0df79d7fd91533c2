#include "hub/file_selection.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>

namespace day0::hub {

std::uint64_t Selection::bytes() const {
  std::uint64_t total = 0;
  for (const auto& f : files) total += f.size;
  return total;
}

bool is_model_file(std::string_view path) {
  if (path.find('/') != std::string_view::npos) return false;  // original/, metal/, onnx/, ...
  static constexpr std::array<std::string_view, 10> kExact = {"config.json",
                                                              "generation_config.json",
                                                              "preprocessor_config.json",
                                                              "processor_config.json",
                                                              "special_tokens_map.json",
                                                              "added_tokens.json",
                                                              "vocab.json",
                                                              "merges.txt",
                                                              "video_preprocessor_config.json",
                                                              "model.safetensors.index.json"};
  if (std::find(kExact.begin(), kExact.end(), path) != kExact.end()) return true;
  if (path.starts_with("tokenizer") && !path.ends_with(".bin")) return true;  // tokenizer.json, _config.json, .model
  if (path.starts_with("chat_template")) return true;                         // .jinja, .json
  if (path.ends_with(".safetensors") || path.ends_with(".safetensors.index.json")) return true;
  return false;
}

std::vector<std::string> split_patterns(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view part = text.substr(start, comma - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
    start = comma + 1;
  }
  return out;
}

Selection select_files(const std::vector<RemoteFile>& listed, const std::vector<std::string>& include) {
  Selection s;
  for (const auto& f : listed) {
    const bool take = include.empty() ? is_model_file(f.path)
                                      : std::any_of(include.begin(), include.end(), [&](const std::string& p) {
                                          return fnmatch(p.c_str(), f.path.c_str(), 0) == 0;
                                        });
    if (take)
      s.files.push_back(f);
    else
      s.skipped.push_back(f.path);
  }
  return s;
}

}  // namespace day0::hub
