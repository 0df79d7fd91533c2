// plan_model (day0/model_tools.h): the memory plan loading makes for a model on this machine's
// CPU (the engine loads it, maps and binds it, and reports what it planned; nothing is
// generated), the rates that bound its speed measured now, and the speeds they predict.
//
// Decode, per token: the weights other than the routed experts go through the bf16 kernel once;
// the top_k experts of each MoE layer through the MXFP4 kernel, and those not in the expert
// cache are first read from disk (the cache's share of the experts is the expected hit rate:
// routing that favours some experts does better). Prefill, per chunk of up to 256 prompt tokens:
// the multiply-adds at the measured block rate; streamed, each layer's experts the chunk reaches
// are read again (a prompt walks every layer's experts in turn, more than the cache holds) while
// the previous group computes, so the slower of the two counts. Attention over the context and
// the small operators are left out: the figures hold for short contexts.
#include <algorithm>
#include <cmath>
#include <thread>

#include "backend/cpu/kernel_rates.h"
#include "core/thread_pool.h"
#include "day0/devices.h"
#include "day0/engine.h"
#include "day0/model_tools.h"
#include "io/checkpoint.h"
#include "io/model_config.h"
#include "models/architecture.h"

namespace day0 {

Result<ModelPlan> plan_model(const std::filesystem::path& dir, const PlanOptions& options) {
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
  const models::Architecture* arch = models::find_architecture(config.model_type());
  if (arch == nullptr) return error(ErrorCode::unsupported, "Day0 cannot run model_type \"" + config.model_type() + "\"");
  ModelPlan plan;
  plan.model_type = config.model_type();
  {
    DAY0_ASSIGN_OR_RETURN(const auto checkpoint, io::Checkpoint::open(dir));
    for (const auto& shard : checkpoint->shards()) plan.weight_bytes += shard.header().data_bytes;
    DAY0_ASSIGN_OR_RETURN(const auto manifest, arch->expected_tensors(config));
    for (const auto& t : manifest)
      if (t.role == models::TensorRole::routed_experts)
        if (const auto ref = checkpoint->find(t.name)) plan.expert_bytes += ref->info->nbytes();
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
  if (!options.measure) return plan;

  plan.measured = true;
  plan.threads = threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  plan.ram_gbps = measure_cpu_read_gbps(plan.threads);
  {
    ThreadPool pool(static_cast<std::size_t>(plan.threads));
    const std::int64_t chunk = std::clamp<std::int64_t>(options.prompt_tokens, 1, 256);
    const cpu::KernelRates rates = cpu::measure_kernel_rates(pool, chunk);
    plan.bf16_gemv_gbps = rates.bf16_gemv_gbps;
    plan.mxfp4_gemv_gbps = rates.mxfp4_gemv_gbps;
    plan.bf16_gflops = rates.bf16_gflops;
    plan.mxfp4_gflops = rates.mxfp4_gflops;
  }
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
  const double active_experts = static_cast<double>(plan.expert_bytes) * k / experts_per_layer;
  const double dense = std::max(0.0, static_cast<double>(plan.decode_bytes_per_token) - active_experts);
  const double bf16_rate = std::max(plan.bf16_gemv_gbps, 1e-3) * 1e9;
  const double mx_rate = std::max(plan.mxfp4_gemv_gbps, 1e-3) * 1e9;
  const double disk = std::max(plan.disk_gbps, 1e-3) * 1e9;
  plan.hit_rate = plan.streamed && plan.expert_bytes > 0
                      ? std::min(1.0, static_cast<double>(plan.cache_bytes) / static_cast<double>(plan.expert_bytes))
                      : 1.0;
  const double decode_s = dense / bf16_rate + active_experts / mx_rate + (1 - plan.hit_rate) * active_experts / disk;
  plan.decode_tokens_per_s = decode_s > 0 ? 1.0 / decode_s : 0.0;

  const double chunk = static_cast<double>(std::clamp<std::int64_t>(options.prompt_tokens, 1, 256));
  // Parameters: bf16 two bytes each; MXFP4 32 per 17 bytes (16 of codes, 1 of scale).
  const double dense_flops = 2.0 * dense / 2.0;
  const double expert_flops = 2.0 * active_experts * 32.0 / 17.0;
  const double dense_s = chunk * dense_flops / (std::max(plan.bf16_gflops, 1e-3) * 1e9);
  const double expert_s = chunk * expert_flops / (std::max(plan.mxfp4_gflops, 1e-3) * 1e9);
  double read_s = 0;
  if (plan.streamed) {
    // The experts a chunk reaches in each layer: E (1 - (1 - k/E)^chunk).
    const double reached = 1.0 - std::pow(1.0 - std::min(1.0, k / experts_per_layer), chunk);
    read_s = reached * static_cast<double>(plan.expert_bytes) / disk;
  }
  const double chunk_s = dense_s + std::max(expert_s, read_s);
  plan.prefill_tokens_per_s = chunk_s > 0 ? chunk / chunk_s : 0.0;
  return plan;
}

}  // namespace day0
