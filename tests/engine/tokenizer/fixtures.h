#pragma once
// Loading the reference fixtures written by tools/reference/make_tokenizer_fixtures.py
// (tokenizers 0.23): tests/data/tokenizers/<name>/{tokenizer.json,expected.json}.
#include <cstdint>
#include <string>
#include <vector>

namespace day0::test {

// Test tokenizers (folders under tests/data/tokenizers) and the tiny models' tokenizers.
inline const std::vector<std::string>& fixture_names() {
  static const std::vector<std::string> names = {"bytelevel_gpt2",  "o200k",        "glm",         "llama_legacy",
                                                 "metaspace_first", "words_suffix", "words_prefix"};
  return names;
}

struct EncodeCase {
  std::string input;  // raw bytes, possibly not UTF-8
  std::vector<std::uint32_t> ids, ids_plain;
  std::string decoded, decoded_skip;
};

struct DecodeCase {
  std::vector<std::uint32_t> ids;
  std::string decoded, decoded_skip;
};

struct Fixture {
  std::string tokenizer_path;
  std::vector<EncodeCase> cases;
  std::vector<DecodeCase> decode_cases;
};

// `name` is a folder of tests/data/tokenizers or "tiny-gpt-oss" / "tiny-glm5-next".
Fixture load_fixture(const std::string& name);

// "1,2,3" style for failure messages.
std::string join_ids(const std::vector<std::uint32_t>& ids);
std::string hex(const std::string& bytes);

}  // namespace day0::test
