#pragma once
// Tools on model folders: random-weight checkpoints with the exact tensor shapes of a real
// configuration (for benchmarks), laid out as the family's released checkpoints are, and the
// measured rate of reading a checkpoint's experts from disk.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "day0/status.h"

namespace day0 {

struct RandomCheckpointOptions {
  std::uint64_t seed = 1;
  std::uint64_t shard_bytes = 4ull << 30;  // shards of at most this size
  // When > 0: only the first `layers` decoder layers (num_hidden_layers and every per-layer
  // schedule cut to that length in the written config.json), for benchmarking a model whose
  // whole checkpoint would not fit the disk at its released per-layer shape.
  std::int64_t layers = 0;
  // Experts stored as MXFP4 (quantization_config {"quant_method": "mxfp4"} added to the written
  // config.json when it has none), for a family with an MXFP4 expert form whose released config
  // lists bf16 experts (glm5_next: a quarter of the bytes).
  bool mxfp4_experts = false;
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

namespace day0 {

// What reading routed experts from a checkpoint's shards costs on this machine (the expert
// store's path: pread of each expert's byte ranges on `readers` threads, O_DIRECT with `direct`).
struct ExpertReadFigures {
  std::uint64_t experts = 0;  // experts read whole
  std::uint64_t bytes = 0;
  double seconds = 0;   // wall time
  double gb_per_s = 0;  // bytes / seconds / 1e9
  bool direct = false;  // O_DIRECT was in use (asked for and allowed by the filesystem)
  std::size_t readers = 0;
};

// Reads experts in checkpoint order, batches of `batch` experts at a time, until `max_bytes` (0:
// every expert) have been read.
Result<ExpertReadFigures> measure_expert_reads(const std::filesystem::path& dir, bool direct, std::size_t readers,
                                               std::uint64_t max_bytes, std::size_t batch = 8);

}  // namespace day0

namespace day0 {

// `day0-cli plan`: what loading a model on this machine's CPU will do, and how fast it will run.
struct PlanOptions {
  std::uint64_t memory_bytes = 0;        // what the plan may use (0: as loading decides: MemAvailable less a reserve)
  std::int64_t context = 0;              // 0: as loading decides
  std::uint64_t expert_cache_bytes = 0;  // 0: as loading decides
  bool direct = false;                   // streamed experts read with O_DIRECT
  int threads = 0;                       // 0: one per hardware thread
  std::int64_t prompt_tokens = 512;      // the prompt the prefill prediction is for
  bool measure = true;                   // measure bandwidths and kernels, and predict speeds
  // Plan the GPU program too, for a GPU with this much memory (0: the first usable GPU's free
  // memory, when there is one; no GPU and no size: no GPU plan).
  std::uint64_t gpu_memory_bytes = 0;
};

// What the GPU program would hold on one GPU (the architecture's device footprint against the
// GPU's memory, as loading with --device cuda checks it).
struct GpuPlan {
  bool planned = false;                                 // a GPU (or a size for one) was given
  std::string device;                                   // "cuda:0 (NVIDIA H200)", or "a GPU with 80.0 GiB"
  std::uint64_t memory_bytes = 0;                       // what the plan was made against
  bool fits = false;                                    // resident: Day0 loads it there
  std::uint64_t weights = 0, workspace = 0, state = 0;  // when it fits
  std::int64_t context = 0;                             // when it fits
  std::string reason;                                   // when it does not: why (Day0 then runs it on the CPU)
};

struct ModelPlan {
  // The model.
  std::string model_type;
  std::uint64_t weight_bytes = 0;  // every tensor as stored
  std::uint64_t expert_bytes = 0;  // routed experts as stored
  std::int64_t experts = 0;        // routed experts in all MoE layers
  std::int64_t experts_per_token = 0, routed_per_layer = 0, moe_layers = 0;
  std::uint64_t decode_bytes_per_token = 0;  // weights one decode step reads (experts at top_k / E)
  // What loading does (the memory plan the engine makes and follows).
  std::int64_t context = 0;
  std::uint64_t planned_bytes = 0, available_bytes = 0;
  bool streamed = false;
  std::uint64_t cache_bytes = 0;
  // Measured now (with `measure`).
  bool measured = false;
  int threads = 0;
  double ram_gbps = 0;       // memory read bandwidth
  double disk_gbps = 0;      // routed experts read from the shards
  bool disk_direct = false;  // that figure is O_DIRECT's (else the page cache's may be in it)
  // The kernels on the model's own weights: one token (weight bytes per second) and a prefill
  // chunk's tokens (GFLOP/s), for the dense weights and for the experts (in expert_format).
  double dense_gemv_gbps = 0, dense_gflops = 0, expert_gemv_gbps = 0, expert_gflops = 0;
  std::string expert_format;
  double decode_step_s = 0;  // a decode step's computing, timed on the model (0: not timed)
  // Predicted from the figures above.
  double hit_rate = 1;  // decode: experts found in memory
  double decode_tokens_per_s = 0;
  double prefill_tokens_per_s = 0;
  GpuPlan gpu;
};

Result<ModelPlan> plan_model(const std::filesystem::path& dir, const PlanOptions& options);

}  // namespace day0
