#pragma once
// The malformed-model corpus: each case copies a real fixture (tiny gpt-oss, tiny glm5_next with
// its vision tower, the MXFP4 glm5_next, the demo model) and breaks it in one way. `fragment` is
// what a person needs to read in the error: the file, tensor or field at fault.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace day0::test {

struct MalformedCase {
  std::string name;
  std::filesystem::path base;  // the fixture copied first (empty: start from an empty folder)
  std::function<void(const std::filesystem::path& dir)> mutate;
  std::string fragment;
  // What `day0-cli inspect` does: refuse the folder, or describe it and name the problem in its
  // report (a tensor of the wrong shape), or describe it without noticing (inspect reads headers
  // only, so NaN weights pass it).
  enum class Inspect { fails, reports, passes };
  Inspect inspect = Inspect::fails;
  // generate takes token ids and so needs no tokenizer or chat template; chat (and the app) needs
  // the model, tokenizer.json and a chat template. Whatever may succeed must still exit cleanly.
  bool generate_fails = true;
  bool chat_fails = true;
  // The folder loads and the problem shows at the first step (non-finite weights).
  bool fails_at_generation = false;
  std::string open_path;  // what to open, relative to the case's folder (empty: the folder)
};

std::vector<MalformedCase> malformed_cases();
// The good demo model, for loading after a refusal.
std::filesystem::path demo_model();

}  // namespace day0::test
