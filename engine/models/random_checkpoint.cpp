#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/thread_pool.h"
#include "day0/model_tools.h"
#include "formats/float_formats.h"
#include "io/model_config.h"
#include "models/architecture.h"

namespace day0 {
namespace {

// splitmix64: seeds a piece's generator from (checkpoint seed, tensor, piece).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  // Approximately normal: the sum of four uniforms, scaled to unit variance.
  float normal() {
    float acc = 0;
    for (int i = 0; i < 4; ++i) acc += static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
    return (acc - 2.0f) * 1.7320508f;
  }
};

std::uint64_t tensor_bytes(const models::ExpectedTensor& t) {
  std::uint64_t n = static_cast<std::uint64_t>(dtype_bits(t.dtype)) / 8;
  for (auto d : t.shape) n *= d;
  return n;
}

// Every 64 KiB piece of a tensor has its own generator, seeded from the checkpoint's seed, the
// tensor's index and the piece's index, so the pieces fill in parallel and the bytes do not
// depend on the number of threads.
constexpr std::size_t kPieceBytes = 64 << 10;

void fill_piece(const models::ExpectedTensor& t, std::uint8_t* out, std::size_t n, std::uint64_t seed, float sd,
                bool is_norm, std::uint8_t scale_byte) {
  Rng rng{mix(seed) | 1};
  if (t.dtype == DType::bf16) {
    for (std::size_t i = 0; i + 1 < n; i += 2) {
      const float v = is_norm ? 1.0f + 0.1f * rng.normal() : sd * rng.normal();
      const std::uint16_t b = formats::f32_to_bf16(v);
      out[i] = static_cast<std::uint8_t>(b & 0xff);
      out[i + 1] = static_cast<std::uint8_t>(b >> 8);
    }
  } else if (t.name.ends_with("_scales")) {
    std::fill_n(out, n, scale_byte);
  } else {
    for (std::size_t i = 0; i < n; i += 8) {
      const std::uint64_t r = rng.next();
      std::memcpy(out + i, &r, std::min<std::size_t>(8, n - i));
    }
  }
}

// Fills a tensor's bytes in chunks so multi-gigabyte tensors never sit in memory whole.
Status write_tensor(std::ofstream& out, const models::ExpectedTensor& t, std::uint64_t tensor_seed, ThreadPool& pool) {
  const std::uint64_t total = tensor_bytes(t);
  const bool is_norm = t.name.find("norm") != std::string::npos && t.shape.size() == 1;
  const bool is_bias = t.name.ends_with("bias") || t.name.ends_with("sinks");
  const float fan_in = t.shape.size() >= 2 ? static_cast<float>(t.shape.back()) : 1.0f;
  const float sd = is_bias ? 0.02f : 1.0f / std::sqrt(fan_in);
  // MXFP4 scales: 2^(e-127) times E2M1 values (|v| ~ 2 on average) near the float tensors' size.
  const auto scale_byte =
      static_cast<std::uint8_t>(std::clamp(127.0f + std::round(std::log2(sd / 2.0f)), 1.0f, 254.0f));
  std::vector<std::uint8_t> chunk(std::min<std::uint64_t>(total, 16ull << 20));
  for (std::uint64_t done = 0; done < total;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), total - done));
    const std::size_t pieces = (n + kPieceBytes - 1) / kPieceBytes;
    pool.parallel_for(pieces, 1, [&](std::size_t begin, std::size_t end) {
      for (std::size_t p = begin; p < end; ++p) {
        const std::size_t at = p * kPieceBytes;
        fill_piece(t, chunk.data() + at, std::min(kPieceBytes, n - at), tensor_seed + done / kPieceBytes + p, sd,
                   is_norm, scale_byte);
      }
    });
    out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(n));
    done += n;
  }
  if (!out) return error(ErrorCode::io_error, "cannot write tensor " + t.name + " (disk full?)");
  return Status::ok();
}

}  // namespace

namespace {

// The config.json written beside the shards when it differs from the source: with only the
// first `layers` decoder layers (num_hidden_layers and every per-layer list of the text config,
// layer_types, mlp_layer_types, indexer_types, ..., cut to that length), and with MXFP4 experts.
Result<std::filesystem::path> write_config_variant(const std::filesystem::path& source, const std::filesystem::path& out,
                                                   const RandomCheckpointOptions& options) {
  nlohmann::json root;
  try {
    std::ifstream in(source);
    root = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return error(ErrorCode::corrupt_data, source.string() + ": " + e.what());
  }
  if (!root.is_object()) return error(ErrorCode::corrupt_data, source.string() + ": not a JSON object");
  nlohmann::json& text = root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;
  if (options.layers > 0) {
    const auto total = text.value("num_hidden_layers", std::int64_t{0});
    if (total <= 0) return error(ErrorCode::corrupt_data, source.string() + ": no num_hidden_layers");
    if (options.layers > total)
      return error(ErrorCode::invalid_argument,
                   fmt::format("--layers {}: the configuration has {} layers", options.layers, total));
    text["num_hidden_layers"] = options.layers;
    for (auto& [key, value] : text.items())
      if (value.is_array() && static_cast<std::int64_t>(value.size()) == total)
        value.erase(value.begin() + options.layers, value.end());
  }
  if (options.mxfp4_experts) {
    const auto q = root.find("quantization_config");
    if (q == root.end()) {
      root["quantization_config"] = {{"quant_method", "mxfp4"}};
    } else if (!q->is_object() || q->value("quant_method", std::string()) != "mxfp4") {
      return error(ErrorCode::invalid_argument,
                   source.string() + ": --mxfp4-experts, but the configuration is already quantized otherwise");
    }
  }
  std::ofstream(out) << root.dump(2);
  return out;
}

}  // namespace

Status write_random_checkpoint(const std::filesystem::path& config_file, const std::filesystem::path& out_dir,
                               const RandomCheckpointOptions& options) {
  std::error_code ec;
  auto source = std::filesystem::is_directory(config_file, ec) ? config_file / "config.json" : config_file;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return error(ErrorCode::io_error, "cannot create " + out_dir.string() + ": " + ec.message());
  if (options.layers > 0 || options.mxfp4_experts) {
    DAY0_ASSIGN_OR_RETURN(source, write_config_variant(source, out_dir / "config.json", options));
  }
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(source));
  const models::Architecture* arch = models::find_architecture(config.model_type());
  if (arch == nullptr)
    return error(ErrorCode::unsupported, "Day0 cannot write a model of type \"" + config.model_type() + "\"");
  DAY0_ASSIGN_OR_RETURN(const auto tensors, arch->expected_tensors(config));

  // Split into shards in order, each at most shard_bytes (a tensor larger than that gets its own).
  std::vector<std::vector<const models::ExpectedTensor*>> shards(1);
  std::uint64_t in_shard = 0, total = 0;
  for (const auto& t : tensors) {
    const std::uint64_t b = tensor_bytes(t);
    if (in_shard > 0 && in_shard + b > options.shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(&t);
    in_shard += b;
    total += b;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  ThreadPool pool;
  std::uint64_t written = 0, tensor_index = 0;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::string name = fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, shards.size());
    nlohmann::json header = nlohmann::json::object();
    std::uint64_t offset = 0;
    for (const auto* t : shards[s]) {
      header[t->name] = {{"dtype", std::string(dtype_name(t->dtype))},
                         {"shape", t->shape},
                         {"data_offsets", {offset, offset + tensor_bytes(*t)}}};
      offset += tensor_bytes(*t);
      weight_map[t->name] = name;
    }
    std::string text = header.dump();
    while (text.size() % 8 != 0) text += ' ';
    std::ofstream out(out_dir / name, std::ios::binary | std::ios::trunc);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto* t : shards[s]) {
      // Seeds: the checkpoint's seed and the tensor's index in the high bits, the piece below.
      const std::uint64_t tensor_seed = mix(options.seed) ^ (++tensor_index << 40);
      DAY0_RETURN_IF_ERROR(write_tensor(out, *t, tensor_seed, pool));
      written += tensor_bytes(*t);
      if (options.progress) options.progress(written, total);
    }
    out.close();
    if (!out) return error(ErrorCode::io_error, "cannot write " + (out_dir / name).string());
  }
  nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  std::ofstream(out_dir / "model.safetensors.index.json") << index.dump(2);
  if (std::filesystem::equivalent(source, out_dir / "config.json", ec)) return Status::ok();
  std::filesystem::copy_file(source, out_dir / "config.json", std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return error(ErrorCode::io_error, "cannot copy config.json: " + ec.message());
  return Status::ok();
}

}  // namespace day0
