#include "hardening/malformed_cases.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <stdexcept>

#include "hardening/model_mutations.h"

namespace day0::test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kGptOss = fs::path(DAY0_TEST_DATA_DIR) / "models/tiny-gpt-oss";
const fs::path kGlm = fs::path(DAY0_TEST_DATA_DIR) / "models/tiny-glm5-next";
const fs::path kGlmMxfp4 = fs::path(DAY0_TEST_DATA_DIR) / "models/tiny-glm5-hc4-mxfp4";

constexpr auto kFails = MalformedCase::Inspect::fails;
constexpr auto kReports = MalformedCase::Inspect::reports;
constexpr auto kPasses = MalformedCase::Inspect::passes;

constexpr const char* kShard1 = "model-00001-of-00002.safetensors";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

void set_text_field(const fs::path& dir, const std::string& key, const json& value) {
  edit_json(dir / "config.json", [&](json& j) { text_config(j)[key] = value; });
}

void make_fifo(const fs::path& path) {
  fs::remove(path);
  if (::mkfifo(path.c_str(), 0600) != 0)
    throw std::runtime_error("mkfifo " + path.string() + ": " + std::strerror(errno));
}

// Every element of a bf16 tensor set to one bit pattern (0x7fc0 NaN, 0x7f80 +inf).
void fill_bf16(RawTensor& t, std::uint16_t bits) {
  for (std::size_t i = 0; i + 1 < t.bytes.size(); i += 2) {
    t.bytes[i] = static_cast<std::uint8_t>(bits & 0xff);
    t.bytes[i + 1] = static_cast<std::uint8_t>(bits >> 8);
  }
}

// Rewrites a shard so that its second tensor's data starts inside the first one's.
void overlap_offsets(const fs::path& shard) {
  auto tensors = read_shard(shard);
  std::vector<std::uint8_t> data;
  for (const auto& t : tensors) data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  json header = json::object();
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    const std::uint64_t begin = i == 1 ? offset - 2 : offset;  // two bytes shared with tensor 0
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, begin + t.bytes.size()}}};
    offset = begin + t.bytes.size();
  }
  data.resize(offset);
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';
  write_file(shard, safetensors_bytes(text, data));
}

std::string first_tensor_containing(const fs::path& dir, const std::string& part) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".safetensors") continue;
    for (const auto& t : read_shard(entry.path()))
      if (t.name.find(part) != std::string::npos) return t.name;
  }
  throw std::runtime_error("no tensor containing " + part + " in " + dir.string());
}

}  // namespace

fs::path demo_model() { return fs::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random"; }

std::vector<MalformedCase> malformed_cases() {
  const fs::path demo = demo_model();
  std::vector<MalformedCase> c;
  const auto add = [&](MalformedCase m) { c.push_back(std::move(m)); };

  // config.json
  add({"config_missing", demo, [](const fs::path& d) { fs::remove(d / "config.json"); }, "config.json"});
  add({"config_is_directory", demo,
       [](const fs::path& d) {
         fs::remove(d / "config.json");
         fs::create_directory(d / "config.json");
       },
       "config.json"});
  add({"config_truncated", demo, [](const fs::path& d) { truncate_file(d / "config.json", 40); }, "config.json"});
  add({"config_fifo", demo, [](const fs::path& d) { make_fifo(d / "config.json"); }, "config.json"});
  add({"config_not_an_object", kGptOss, [](const fs::path& d) { write_text(d / "config.json", "[1, 2, 3]"); },
       "config.json"});
  add({"unknown_architecture", demo,
       [](const fs::path& d) { edit_json(d / "config.json", [](json& j) { j["model_type"] = "llama9000"; }); },
       "llama9000", kReports});
  add({"model_type_missing", kGptOss,
       [](const fs::path& d) { edit_json(d / "config.json", [](json& j) { j.erase("model_type"); }); }, "model_type"});
  add({"hidden_size_2pow40", kGptOss, [](const fs::path& d) { set_text_field(d, "hidden_size", 1ll << 40); },
       "hidden_size"});
  add({"layers_1e9", kGptOss, [](const fs::path& d) { set_text_field(d, "num_hidden_layers", 1000000000); },
       "num_hidden_layers"});
  add({"hidden_size_negative", kGptOss, [](const fs::path& d) { set_text_field(d, "hidden_size", -64); },
       "hidden_size"});
  add({"attention_heads_zero", kGptOss, [](const fs::path& d) { set_text_field(d, "num_attention_heads", 0); },
       "num_attention_heads"});
  add({"vocab_zero", kGptOss, [](const fs::path& d) { set_text_field(d, "vocab_size", 0); }, "vocab_size"});
  add({"hidden_size_float", kGptOss, [](const fs::path& d) { set_text_field(d, "hidden_size", 64.5); }, "hidden_size"});
  add({"max_positions_zero", kGptOss, [](const fs::path& d) { set_text_field(d, "max_position_embeddings", 0); },
       "max_position_embeddings"});
  add({"glm_kv_lora_string", kGlm, [](const fs::path& d) { set_text_field(d, "kv_lora_rank", "32"); }, "kv_lora_rank"});
  add({"glm_layers_absurd", kGlm, [](const fs::path& d) { set_text_field(d, "num_hidden_layers", 1ll << 40); },
       "num_hidden_layers"});
  add({"glm_experts_zero", kGlm, [](const fs::path& d) { set_text_field(d, "n_routed_experts", 0); },
       "n_routed_experts"});
  add({"glm_vision_depth_absurd", kGlm,
       [](const fs::path& d) { edit_json(d / "config.json", [](json& j) { j["vision_config"]["depth"] = 1 << 30; }); },
       "depth"});

  // The index and the shards.
  add({"shard_missing", kGptOss, [](const fs::path& d) { fs::remove(d / kShard2); }, kShard2, kPasses});
  add({"index_names_missing_shard", kGptOss,
       [](const fs::path& d) {
         edit_json(d / "model.safetensors.index.json",
                   [](json& j) { j["weight_map"]["lm_head.weight"] = "model-00003-of-00002.safetensors"; });
       },
       "model-00003-of-00002.safetensors", kPasses});
  add({"index_unsafe_shard_name", kGptOss,
       [](const fs::path& d) {
         edit_json(d / "model.safetensors.index.json",
                   [](json& j) { j["weight_map"]["lm_head.weight"] = "../outside.safetensors"; });
       },
       "../outside.safetensors"});
  add({"index_not_json", kGptOss,
       [](const fs::path& d) { write_text(d / "model.safetensors.index.json", "{\"weight_map\": {"); },
       "model.safetensors.index.json"});
  add({"index_lists_absent_tensor", kGptOss,
       [](const fs::path& d) {
         edit_shard(d / kShard2, [](std::vector<RawTensor>& t) {
           std::erase_if(t, [](const RawTensor& x) { return x.name == "model.norm.weight"; });
         });
       },
       "model.norm.weight"});
  add({"weights_missing", demo,
       [](const fs::path& d) {
         fs::remove(d / kShard1);
         fs::remove(d / kShard2);
         fs::remove(d / "model.safetensors.index.json");
       },
       ".safetensors", kPasses});
  add({"duplicate_tensor_across_shards", kGptOss,
       [](const fs::path& d) {
         RawTensor norm;
         for (const auto& t : read_shard(d / kShard2))
           if (t.name == "model.norm.weight") norm = t;
         edit_shard(d / kShard1, [&](std::vector<RawTensor>& t) { t.push_back(norm); });
         fs::remove(d / "model.safetensors.index.json");
       },
       "model.norm.weight"});
  add({"truncated_shard", kGptOss,
       [](const fs::path& d) { truncate_file(d / kShard2, fs::file_size(d / kShard2) - 100); }, kShard2});
  add({"shard_empty", demo, [](const fs::path& d) { truncate_file(d / kShard1, 0); }, kShard1});
  add({"header_length_past_end", kGptOss,
       [](const fs::path& d) {
         const std::uint64_t n = fs::file_size(d / kShard1) + 1000;
         std::vector<std::uint8_t> le(8);
         for (int i = 0; i < 8; ++i) le[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
         patch_bytes(d / kShard1, 0, le);
       },
       kShard1});
  add({"header_not_json", kGptOss,
       [](const fs::path& d) {
         patch_bytes(d / kShard2, 8, {'{', '"', 0xff, ':'});
       },
       kShard2});
  add({"overlapping_offsets", kGptOss, [](const fs::path& d) { overlap_offsets(d / kShard2); }, kShard2});
  add({"shard_symlink_dev_zero", demo,
       [](const fs::path& d) {
         fs::remove(d / kShard2);
         fs::create_symlink("/dev/zero", d / kShard2);
       },
       kShard2, kFails});
  add({"shard_fifo", demo, [](const fs::path& d) { make_fifo(d / kShard1); }, kShard1});

  // Tensors that disagree with config.json.
  add({"tensor_missing", kGptOss, [](const fs::path& d) { remove_tensor(d, "model.layers.1.self_attn.q_proj.weight"); },
       "model.layers.1.self_attn.q_proj.weight", kReports});
  add({"tensor_shape_mismatch", kGptOss,
       [](const fs::path& d) {
         edit_tensor(d, "model.layers.0.self_attn.q_proj.weight", [](RawTensor& t) {
           t.shape = {32, 64};
           t.bytes.resize(32 * 64 * 2);
         });
       },
       "model.layers.0.self_attn.q_proj.weight", kReports});
  add({"tensor_dtype_f64", kGptOss,
       [](const fs::path& d) {
         edit_tensor(d, "model.embed_tokens.weight", [](RawTensor& t) {
           t.dtype = "F64";
           t.bytes.resize(t.bytes.size() * 4);
         });
       },
       "model.embed_tokens.weight", kReports});
  add({"tensor_dtype_i8", kGptOss,
       [](const fs::path& d) {
         edit_tensor(d, "model.layers.2.self_attn.k_proj.weight", [](RawTensor& t) {
           t.dtype = "I8";
           t.bytes.resize(t.bytes.size() / 2);
         });
       },
       "model.layers.2.self_attn.k_proj.weight", kReports});
  add({"mxfp4_blocks_as_bf16", demo,
       [](const fs::path& d) {
         edit_tensor(d, "model.layers.0.mlp.experts.down_proj_blocks", [](RawTensor& t) {
           t.dtype = "BF16";
           t.shape.back() = 8;
         });
       },
       "model.layers.0.mlp.experts.down_proj_blocks", kReports});
  add({"glm_expert_shape_mismatch", kGlm,
       [](const fs::path& d) {
         edit_tensor(d, "model.language_model.layers.1.mlp.experts.0.gate_proj.weight", [](RawTensor& t) {
           t.shape = {64, 32};
         });
       },
       "model.language_model.layers.1.mlp.experts.0.gate_proj.weight", kReports});
  add({"glm_vision_tensor_missing", kGlm,
       [](const fs::path& d) { remove_tensor(d, "model.visual.blocks.0.attn.qkv.weight"); },
       "model.visual.blocks.0.attn.qkv.weight", kReports});
  add({"glm_mxfp4_scales_wrong_shape", kGlmMxfp4,
       [](const fs::path& d) {
         edit_tensor(d, "model.language_model.layers.1.mlp.experts.gate_up_proj_scales", [](RawTensor& t) {
           t.shape = {8, 32, 4};
         });
       },
       "model.language_model.layers.1.mlp.experts.gate_up_proj_scales", kReports});
  add({"glm_mxfp4_nan_scale", kGlmMxfp4,
       [](const fs::path& d) {
         edit_tensor(d, "model.language_model.layers.2.mlp.experts.down_proj_scales",
                     [](RawTensor& t) { t.bytes[5] = 0xff; });
       },
       "model.language_model.layers.2.mlp.experts.down_proj_scales", kPasses});

  // Values: weights that hold NaN or infinity pass every structural check; the first step
  // that meets them must say so instead of sampling from garbage.
  add({"nan_weights", demo,
       [](const fs::path& d) { edit_tensor(d, "lm_head.weight", [](RawTensor& t) { fill_bf16(t, 0x7fc0); }); },
       "non-finite", kPasses, true, true, true});
  add({"inf_weights", demo,
       [](const fs::path& d) { edit_tensor(d, "model.norm.weight", [](RawTensor& t) { fill_bf16(t, 0x7f80); }); },
       "non-finite", kPasses, true, true, true});

  // Tokenizer and chat template.
  add({"tokenizer_beyond_vocab", demo,
       [](const fs::path& d) {
         edit_json(d / "tokenizer.json", [](json& j) {
           j["added_tokens"].push_back({{"id", 5000},
                                        {"content", "<|far_away|>"},
                                        {"single_word", false},
                                        {"lstrip", false},
                                        {"rstrip", false},
                                        {"normalized", false},
                                        {"special", true}});
         });
       },
       "tokenizer.json", kPasses});
  add({"tokenizer_not_json", demo, [](const fs::path& d) { truncate_file(d / "tokenizer.json", 100); },
       "tokenizer.json", kPasses});
  add({"tokenizer_missing", demo, [](const fs::path& d) { fs::remove(d / "tokenizer.json"); }, "tokenizer.json",
       kPasses, /*generate_fails=*/false});
  add({"chat_template_unparsable", demo,
       [](const fs::path& d) { write_text(d / "chat_template.jinja", "{% for message in messages %}{{ message"); },
       "chat_template.jinja", kPasses, /*generate_fails=*/false});

  // The folder itself.
  add({"not_a_folder",
       {},
       [](const fs::path& d) { write_text(d / "weights.bin", "x"); },
       "weights.bin is not a folder",
       kFails,
       true,
       true,
       false,
       "weights.bin"});
  if (::geteuid() != 0) {
    // root reads files whatever their mode; the FIFO cases above cover unreadable files there.
    add({"config_unreadable", demo, [](const fs::path& d) { fs::permissions(d / "config.json", fs::perms::none); },
         "config.json"});
  }
  return c;
}

}  // namespace day0::test
