// plan_model (day0/model_tools.h): the memory plan loading makes for a model on this machine's
// CPU (the engine loads it, maps and binds it, and reports what it planned), the rates that bound
// its speed measured now, and the speeds they predict.
//
// Decode: a step is timed on the model itself (a one-token prompt and a few steps, its experts
// through a small cache, their reads subtracted): what a step computes, attention and every small
// operator included. To that come the reads of the experts not in the cache (the cache's share
// of the experts is the expected hit rate: routing that favours some experts does better). Where
// the model cannot be timed, the kernel rates stand in: its weights other than the routed experts
// once, one token at a time, and the top_k experts of each MoE layer.
//
// Prefill, per chunk of up to 256 prompt tokens, from the kernels timed on the model's own
// tensors (dense weights through the memory map, experts through the map or copied into ordinary
// memory as the expert cache holds them): the dense weights for the chunk's tokens at once; each
// expert the chunk reaches for its share of the tokens (chunk x top_k / experts); streamed, those
// experts are read again (a prompt walks every layer's experts in turn, more than the cache
// holds), each layer's first group before it runs, the rest while the previous group computes.
// Attention over the context and the small operators are left out there: the prefill figure holds
// for short prompts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "backend/cpu/kernel_rates.h"
#include "core/thread_pool.h"
#include "day0/devices.h"
#include "day0/engine.h"
#include "day0/model_tools.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "limits/memory_plan.h"
#include "models/architecture.h"
#include "models/streamed_experts.h"

namespace day0 {
namespace {

constexpr std::uint64_t kSampleBytes = 256ull << 20;

// Tensors to time the kernels on: the model's dense 2-D float weights (not the embedding, which a
// token reads one row of), and its routed experts, up to kSampleBytes of each, spread over the
// layers. Views into the memory map; experts that will be streamed are copied into ordinary
// memory, as the expert cache holds them.
struct Samples {
  std::vector<cpu::Matrix> dense;
  std::vector<cpu::Mxfp4Matrix> mxfp4;
  std::vector<cpu::Matrix> float_experts;
  std::vector<std::unique_ptr<std::uint8_t[]>> copies;
};

Samples sample_tensors(const io::Checkpoint& checkpoint, std::span<const models::ExpectedTensor> manifest,
                       bool copy_experts) {
  Samples out;
  std::uint64_t dense_bytes = 0, expert_bytes = 0;
  const auto hold = [&](std::span<const std::uint8_t> bytes) -> const std::uint8_t* {
    if (!copy_experts) return bytes.data();
    out.copies.emplace_back(new std::uint8_t[bytes.size()]);
    std::memcpy(out.copies.back().get(), bytes.data(), bytes.size());
    return out.copies.back().get();
  };
  // Every expert matrix the manifest names, as (rows, cols, bytes of codes, bytes of scales).
  for (const models::ExpectedTensor& t : manifest) {
    const auto ref = checkpoint.find(t.name);
    if (!ref) continue;
    const io::TensorInfo& info = *ref->info;
    const auto data = ref->file->data(info);
    const bool is_float = info.dtype == DType::bf16 || info.dtype == DType::f16 || info.dtype == DType::f32;
    if (t.role == models::TensorRole::routed_experts) {
      if (expert_bytes >= kSampleBytes) continue;
      const std::string_view name = t.name;
      if (info.dtype == DType::u8 && name.ends_with("_blocks") && info.shape.size() == 4) {
        // [E, rows, cols/32, 16]: the scales are the same name with _scales, [E, rows, cols/32].
        const auto scales = checkpoint.find(std::string(name.substr(0, name.size() - 7)) + "_scales");
        if (!scales) continue;
        const std::uint64_t rows = info.shape[1], cols = info.shape[2] * 32;
        // One expert per layer and matrix (the layer's middle one), so the sample spans the layers.
        const std::uint64_t e = info.shape[0] / 2;
        const auto blocks = data.subspan(e * rows * cols / 2, rows * cols / 2);
        const auto scale_bytes = scales->file->data(*scales->info).subspan(e * rows * cols / 32, rows * cols / 32);
        out.mxfp4.push_back(
            {hold(blocks), hold(scale_bytes), static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols)});
        expert_bytes += blocks.size() + scale_bytes.size();
      } else if (is_float && info.shape.size() == 2 && t.expert >= 0) {
        out.float_experts.push_back({info.dtype, hold(data), static_cast<std::int64_t>(info.shape[0]),
                                     static_cast<std::int64_t>(info.shape[1])});
        expert_bytes += data.size();
      }
      continue;
    }
    if (!is_float || info.shape.size() != 2 || t.role == models::TensorRole::embedding ||
        t.role == models::TensorRole::vision || t.role == models::TensorRole::mtp || dense_bytes >= kSampleBytes)
      continue;
    out.dense.push_back(
        {info.dtype, data.data(), static_cast<std::int64_t>(info.shape[0]), static_cast<std::int64_t>(info.shape[1])});
    dense_bytes += data.size();
  }
  return out;
}

// The seconds one decode step computes, timed on the model: a one-token prompt, then kSteps
// steps, its experts (if any) through a small cache read with O_DIRECT, their reads subtracted.
// Attention, routing, the small operators and the thread pool's hand-offs are in it, and it does
// not depend on where the experts come from. 0 when the model produced too few tokens to time.
constexpr std::int64_t kSteps = 4;

Result<double> time_decode_step(const std::filesystem::path& dir, ModelOptions options, const ModelPlan& plan,
                                int threads) {
  options.max_context = std::min<std::int64_t>(plan.context > 0 ? plan.context : 256, 256);
  if (plan.expert_bytes > 0) {
    const models::MoeLayout moe{0, plan.moe_layers, plan.routed_per_layer, plan.experts_per_token, 0};
    options.expert_cache_bytes = models::expert_cache_for_tokens(plan.expert_bytes, moe, 4);
    options.direct_expert_reads = true;
  }
  auto engine = Engine::create({.threads = threads});
  DAY0_ASSIGN_OR_RETURN(const auto model, engine->load_model(dir, options));
  Request request;
  request.context = {0};
  request.stop.max_new_tokens = kSteps + 1;
  request.stop.stop_at_eos = false;
  ExpertStreaming at_first, at_end;
  Event last;
  bool first = true;
  engine
      ->submit(engine->new_session(model), std::move(request),
               [&](const Event& e) {
                 if (e.kind == Event::Kind::token && first) {
                   at_first = describe(*model).experts;
                   first = false;
                 } else if (e.kind == Event::Kind::done || e.kind == Event::Kind::error) {
                   at_end = describe(*model).experts;
                   last = e;
                 }
               })
      ->wait();
  if (last.kind == Event::Kind::error) return last.status;
  const GenerationStats& s = last.stats;
  if (s.generated_tokens < 2 || s.decode_tokens_per_second <= 0) return 0.0;
  const double steps = static_cast<double>(s.generated_tokens - 1);
  const double reads = at_end.read_seconds - at_first.read_seconds;
  return std::max(0.0, (steps / s.decode_tokens_per_second - reads) / steps);
}

}  // namespace

namespace {

// The GPU program's footprint against a GPU's memory: the one given, or the first usable GPU's.
GpuPlan plan_gpu(const models::Architecture& arch, const io::ModelConfig& config, const PlanOptions& options) {
  GpuPlan g;
  bool fp8 = true;
  if (options.gpu_memory_bytes > 0) {
    g.memory_bytes = options.gpu_memory_bytes;
    g.device = "a GPU with " + limits::format_bytes(g.memory_bytes);
  } else {
    const DeviceReport devices = discover_devices();
    if (devices.gpus.empty()) return g;
    const GpuInfo& gpu = devices.gpus.front();
    g.memory_bytes = gpu.free_memory;
    g.device =
        "cuda:" + std::to_string(gpu.index) + " (" + gpu.name + ", " + limits::format_bytes(gpu.free_memory) + " free)";
    fp8 = gpu.fp8;
  }
  g.planned = true;
  if (arch.device_footprint == nullptr) {
    g.reason = std::string(arch.family) + " has no GPU path in this build";
    return g;
  }
  auto footprint = arch.device_footprint(config, fp8);
  if (!footprint) {
    g.reason = footprint.status().message();
    return g;
  }
  auto fitted = limits::plan_device_memory(*footprint, g.memory_bytes, options.context, g.device);
  if (!fitted) {
    g.reason = fitted.status().message();
    return g;
  }
  g.fits = true;
  g.weights = fitted->weights;
  g.workspace = fitted->workspace;
  g.state = fitted->state;
  g.context = fitted->context;
  return g;
}

}  // namespace

Result<ModelPlan> plan_model(const std::filesystem::path& dir, const PlanOptions& options) {
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
  const models::Architecture* arch = models::find_architecture(config.model_type());
  if (arch == nullptr)
    return error(ErrorCode::unsupported, "Day0 cannot run model_type \"" + config.model_type() + "\"");
  ModelPlan plan;
  plan.model_type = config.model_type();
  {
    DAY0_ASSIGN_OR_RETURN(const auto checkpoint, io::Checkpoint::open(dir));
    for (const auto& shard : checkpoint->shards()) plan.weight_bytes += shard.header().data_bytes;
    DAY0_ASSIGN_OR_RETURN(const auto manifest, arch->expected_tensors(config));
    plan.expert_bytes = models::routed_expert_bytes(*checkpoint, manifest);
    DAY0_ASSIGN_OR_RETURN(const models::MoeLayout moe, arch->moe_layout(config));
    plan.moe_layers = moe.moe_layers;
    plan.routed_per_layer = moe.routed_experts;
    plan.experts_per_token = moe.experts_per_token;
    plan.experts = moe.moe_layers * moe.routed_experts;
  }

  const int threads = options.threads > 0 ? options.threads : 0;
  auto engine = Engine::create({.threads = threads});
  ModelOptions model_options;
  model_options.max_context = options.context;
  model_options.memory_limit_bytes = options.memory_bytes;
  model_options.expert_cache_bytes = options.expert_cache_bytes;
  model_options.direct_expert_reads = options.direct;
  {
    DAY0_ASSIGN_OR_RETURN(const auto model, engine->load_model(dir, model_options));
    const ModelSummary s = describe(*model);
    plan.context = s.max_context;
    plan.planned_bytes = s.planned_bytes;
    plan.available_bytes = s.available_bytes;
    plan.streamed = s.experts.streamed;
    plan.cache_bytes = s.experts.cache_bytes;
    plan.decode_bytes_per_token = s.decode_bytes_per_token;
  }
  engine.reset();
  plan.gpu = plan_gpu(*arch, config, options);
  if (!options.measure) return plan;

  plan.measured = true;
  plan.threads = threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  plan.ram_gbps = measure_cpu_read_gbps(plan.threads);
  if (plan.expert_bytes > 0) {
    // A few seconds of reads at most; O_DIRECT where the filesystem allows it (the disk's own rate,
    // which a model larger than memory mostly gets), else the page cache's.
    auto reads = measure_expert_reads(dir, true, 4, 1'000'000'000ull);
    if (!reads) return reads.status();
    plan.disk_gbps = reads->gb_per_s;
    plan.disk_direct = reads->direct;
  }

  const double experts_per_layer = static_cast<double>(std::max<std::int64_t>(1, plan.routed_per_layer));
  const double k = static_cast<double>(plan.experts_per_token);
  const double chunk = static_cast<double>(std::clamp<std::int64_t>(options.prompt_tokens, 1, 256));
  const auto expert_tokens = static_cast<std::int64_t>(std::max(1.0, std::round(chunk * k / experts_per_layer)));
  double dense_block = 0, expert_block = 0;  // weight bytes per second with a chunk's tokens
  {
    DAY0_ASSIGN_OR_RETURN(const auto checkpoint, io::Checkpoint::open(dir));
    DAY0_ASSIGN_OR_RETURN(const auto manifest, arch->expected_tensors(config));
    const Samples samples = sample_tensors(*checkpoint, manifest, plan.streamed);
    ThreadPool pool(static_cast<std::size_t>(plan.threads));
    plan.dense_gemv_gbps = cpu::linear_rate(pool, samples.dense, 1) / 1e9;
    dense_block = cpu::linear_rate(pool, samples.dense, static_cast<std::int64_t>(chunk));
    plan.dense_gflops = dense_block * chunk / 1e9;  // 2 bytes and 2 flops per weight and token
    if (!samples.mxfp4.empty()) {
      plan.expert_format = "MXFP4";
      plan.expert_gemv_gbps = cpu::linear_rate(pool, samples.mxfp4, 1) / 1e9;
      expert_block = cpu::linear_rate(pool, samples.mxfp4, expert_tokens);
      plan.expert_gflops = expert_block * static_cast<double>(expert_tokens) * 2.0 * 32.0 / 17.0 / 1e9;
    } else if (!samples.float_experts.empty()) {
      plan.expert_format = "bf16";
      plan.expert_gemv_gbps = cpu::linear_rate(pool, samples.float_experts, 1) / 1e9;
      expert_block = cpu::linear_rate(pool, samples.float_experts, expert_tokens);
      plan.expert_gflops = expert_block * static_cast<double>(expert_tokens) / 1e9;
    }
  }

  const double active_experts = static_cast<double>(plan.expert_bytes) * k / experts_per_layer;
  const double dense = std::max(0.0, static_cast<double>(plan.decode_bytes_per_token) - active_experts);
  const double dense_rate = std::max(plan.dense_gemv_gbps, 1e-3) * 1e9;
  const double expert_rate = std::max(plan.expert_gemv_gbps, 1e-3) * 1e9;
  const double disk = std::max(plan.disk_gbps, 1e-3) * 1e9;
  plan.hit_rate = plan.streamed && plan.expert_bytes > 0
                      ? std::min(1.0, static_cast<double>(plan.cache_bytes) / static_cast<double>(plan.expert_bytes))
                      : 1.0;
  // Decode: what a step computes, timed on the model itself (below), plus the misses' reads; the
  // kernel rates alone where that timing could not run.
  DAY0_ASSIGN_OR_RETURN(const double step_s, time_decode_step(dir, model_options, plan, threads));
  plan.decode_step_s = step_s;
  const double compute_s = step_s > 0 ? step_s : dense / dense_rate + active_experts / expert_rate;
  const double decode_s = compute_s + (1 - plan.hit_rate) * active_experts / disk;
  plan.decode_tokens_per_s = decode_s > 0 ? 1.0 / decode_s : 0.0;

  // Prefill of one chunk: the dense weights once for all its tokens, each reached expert once for
  // its share of them: E (1 - (1 - k/E)^chunk) experts per layer.
  const double reached = 1.0 - std::pow(1.0 - std::min(1.0, k / experts_per_layer), chunk);
  const double dense_s = dense / std::max(dense_block, 1.0);
  const double expert_s = reached * static_cast<double>(plan.expert_bytes) / std::max(expert_block, 1.0);
  // Streamed: a prompt walks every layer's experts in turn, more than the cache holds, so they are
  // read again; a layer's first group of 8 is read before anything runs, the rest while the
  // previous group computes.
  const double read_s =
      plan.streamed && plan.hit_rate < 1 ? reached * static_cast<double>(plan.expert_bytes) / disk : 0.0;
  const double first_group = std::min(1.0, 8.0 / std::max(1.0, reached * experts_per_layer));
  const double chunk_s = dense_s + first_group * read_s + std::max(expert_s, (1 - first_group) * read_s);
  plan.prefill_tokens_per_s = chunk_s > 0 ? chunk / chunk_s : 0.0;
  return plan;
}

}  // namespace day0
