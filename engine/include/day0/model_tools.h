#pragma once
// Writing model folders: random-weight checkpoints with the exact tensor shapes of a real
// configuration (for benchmarks), laid out as the family's released checkpoints are.
#include <cstdint>
#include <filesystem>
#include <functional>

#include "day0/status.h"

namespace day0 {

struct RandomCheckpointOptions {
  std::uint64_t seed = 1;
  std::uint64_t shard_bytes = 4ull << 30;  // shards of at most this size
  // Called with bytes written so far and the total.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};

// Writes config.json (a copy of `config_file`), model-0000i-of-0000n.safetensors shards and
// model.safetensors.index.json into `out_dir`. Float tensors are bf16 N(0, 1/fan_in)-like
// values (norm weights around 1); MXFP4 experts get random codes with scales of the same
// magnitude. The weights are random: the model produces noise, at the speed of the real one.
Status write_random_checkpoint(const std::filesystem::path& config_file, const std::filesystem::path& out_dir,
                               const RandomCheckpointOptions& options = {});

}  // namespace day0
