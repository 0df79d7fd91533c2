#include "engine/tokenizer/fixtures.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace day0::test {

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string unhex(const std::string& h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<std::uint32_t> ids_of(const nlohmann::json& j) { return j.get<std::vector<std::uint32_t>>(); }

}  // namespace

Fixture load_fixture(const std::string& name) {
  const std::string data = DAY0_TEST_DATA_DIR;
  Fixture f;
  std::string expected_path;
  if (name.rfind("tiny-", 0) == 0) {
    f.tokenizer_path = data + "/models/" + name + "/tokenizer.json";
    expected_path = data + "/tokenizers/" + name + ".expected.json";
  } else {
    f.tokenizer_path = data + "/tokenizers/" + name + "/tokenizer.json";
    expected_path = data + "/tokenizers/" + name + "/expected.json";
  }
  const auto j = nlohmann::json::parse(read_all(expected_path));
  for (const auto& c : j.at("cases"))
    f.cases.push_back({unhex(c.at("input_hex").get<std::string>()), ids_of(c.at("ids")), ids_of(c.at("ids_plain")),
                       c.at("decoded").get<std::string>(), c.at("decoded_skip").get<std::string>()});
  for (const auto& c : j.at("decode_cases"))
    f.decode_cases.push_back(
        {ids_of(c.at("ids")), c.at("decoded").get<std::string>(), c.at("decoded_skip").get<std::string>()});
  return f;
}

std::string join_ids(const std::vector<std::uint32_t>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

}  // namespace day0::test
