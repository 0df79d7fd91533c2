#include "backend/cuda/gpt_oss_cuda.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention.h"
#include "backend/cpu/cpu_ops.h"
#include "backend/cuda/cublaslt_gemm.h"
#include "backend/cuda/cuda_support.h"
#include "backend/cuda/device_model.h"
#include "backend/cuda/weight_upload.h"
#include "blocks/rope.h"
#include "day0/log.h"
#include "decode_trace.h"
#include "elementwise.h"
#include "formats/float_formats.h"
#include "gemv_bf16.h"
#include "limits/memory_plan.h"
#include "models/gpt_oss_manifest.h"
#include "moe_gemm.h"
#include "moe_routing.h"
#include "mxfp4_fp8.h"
#include "mxfp4_gemv.h"
#include "rms_norm.h"
#include "rope.h"

namespace day0::cuda {
namespace {

namespace k = day0::kernels;
using models::ForwardTrace;
using models::SessionState;

constexpr int kDecodeSplits = 32;
constexpr std::int64_t kKvGrain = 256;
using Shape = models::GptOssConfig;

// What the GPU program needs beyond the config's own consistency (models/gpt_oss_manifest.cpp).
Result<Shape> read_shape(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(Shape s, models::read_gpt_oss_config(config));
  if (!s.mxfp4)
    return error(ErrorCode::unsupported, config.origin() +
                                             ": the CUDA backend runs gpt-oss with the MXFP4 experts "
                                             "of the released checkpoint");
  if (s.head_dim % 2 != 0) return error(ErrorCode::corrupt_data, config.origin() + ": head_dim must be even for RoPE");
  if (s.head_dim > k::kAttentionMaxHeadDim || s.top_k > k::kRouterMaxTopK || s.hidden % 8 != 0 || s.q_dim() % 8 != 0)
    return error(ErrorCode::unsupported, config.origin() + ": head_dim above " +
                                             std::to_string(k::kAttentionMaxHeadDim) + ", more than " +
                                             std::to_string(k::kRouterMaxTopK) +
                                             " experts per token or widths not multiples of 8 are not supported "
                                             "by the CUDA backend");
  return s;
}

struct Layer {
  DeviceBuffer input_norm, post_norm;          // [H] bf16
  DeviceBuffer wqkv, wo, router;               // bf16 [(nh + 2 nkv) d, H], [H, nh d], [E, H]
  DeviceBuffer bqkv, bo, sinks, router_bias;   // fp32
  DeviceBuffer gu_blocks, gu_scales, gu_bias;  // MXFP4 [E, 2I, H/32, 16], [E, 2I, H/32]; fp32 [E, 2I]
  DeviceBuffer dn_blocks, dn_scales, dn_bias;  // MXFP4 [E, H, I/32, 16], [E, H, I/32]; fp32 [E, H]
};

// A session's bf16 KV cache [layers, capacity, kv_heads, head_dim] (k and v), grown by doubling.
class GptOssSession final : public DeviceSession {
 public:
  GptOssSession(const Shape& s, MemoryLedger* ledger) : s_(s), ledger_(ledger) {}
  std::int64_t capacity() const override { return capacity_; }
  std::uint64_t bytes() const override { return k_.bytes() + v_.bytes(); }

  Status reserve(std::int64_t positions, cudaStream_t stream) override {
    if (positions <= capacity_) return Status::ok();
    std::int64_t cap = std::max({positions, 2 * capacity_, kKvGrain});
    // Past half the context, the whole of it: growing then never holds more than 1.5 contexts of
    // cache at once (the old buffer and the new), which the memory plan counts.
    if (2 * cap > s_.max_positions) cap = s_.max_positions;
    cap = std::min(cap, s_.max_positions);
    cap = (cap + kKvGrain - 1) / kKvGrain * kKvGrain;
    const std::size_t row = static_cast<std::size_t>(s_.kv_dim()) * 2;
    const std::size_t layer_bytes = row * static_cast<std::size_t>(cap);
    DAY0_ASSIGN_OR_RETURN(DeviceBuffer k, DeviceBuffer::allocate(layer_bytes * s_.layers, MemoryCategory::kv_cache,
                                                                 ledger_, "the KV cache (keys)"));
    DAY0_ASSIGN_OR_RETURN(DeviceBuffer v, DeviceBuffer::allocate(layer_bytes * s_.layers, MemoryCategory::kv_cache,
                                                                 ledger_, "the KV cache (values)"));
    if (length_ > 0) {
      const std::size_t old_layer = row * static_cast<std::size_t>(capacity_);
      const std::size_t used = row * static_cast<std::size_t>(length_);
      DAY0_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(k.get(), layer_bytes, k_.get(), old_layer, used, s_.layers,
                                                  cudaMemcpyDeviceToDevice, stream),
                                "growing the KV cache");
      DAY0_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(v.get(), layer_bytes, v_.get(), old_layer, used, s_.layers,
                                                  cudaMemcpyDeviceToDevice, stream),
                                "growing the KV cache");
      DAY0_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "growing the KV cache");
    }
    k_ = std::move(k);
    v_ = std::move(v);
    capacity_ = cap;
    graphs_.clear();
    return Status::ok();
  }
  std::uint16_t* k_layer(std::int64_t l) const { return k_.as<std::uint16_t>() + l * capacity_ * s_.kv_dim(); }
  std::uint16_t* v_layer(std::int64_t l) const { return v_.as<std::uint16_t>() + l * capacity_ * s_.kv_dim(); }

 private:
  Shape s_;
  MemoryLedger* ledger_;
  DeviceBuffer k_, v_;
  std::int64_t capacity_ = 0;
};

class GptOssCuda final : public DeviceModel {
 public:
  GptOssCuda(Shape s, blocks::Rope rope, int device, bool fp8)
      : DeviceModel(device, s.vocab, s.max_positions, kGptOssPrefillChunk, "gpt-oss"),
        s_(std::move(s)),
        rope_(std::move(rope)),
        fp8_(fp8) {}

  ~GptOssCuda() override {
    drain();
#ifdef DAY0_DECODE_TRACE
    k::decode_trace_dump(20);
#endif
  }
  Status init(const std::shared_ptr<const io::Checkpoint>& checkpoint);

  // The program's activation and workspace buffers, one row each: init() allocates them and
  // the memory plan adds them up, from the same table.
  struct BufferSpec {
    DeviceBuffer GptOssCuda::*member;
    std::size_t bytes;
    MemoryCategory category;
    const char* what;
  };
  static std::vector<BufferSpec> buffers(const Shape& s, std::int64_t chunk, bool fp8);

  std::int64_t hidden_size() const override { return s_.hidden; }
  std::unique_ptr<SessionState> new_state() const override {
    return std::make_unique<GptOssSession>(s_, ledger_.get());
  }
  std::uint64_t decode_bytes_per_token() const override {
    const std::uint64_t H = static_cast<std::uint64_t>(s_.hidden), I = static_cast<std::uint64_t>(s_.inter);
    const std::uint64_t attention = 2 * H * static_cast<std::uint64_t>((s_.q_dim() + 2 * s_.kv_dim()) + s_.q_dim());
    const std::uint64_t router = 2 * H * static_cast<std::uint64_t>(s_.experts);
    const std::uint64_t experts = static_cast<std::uint64_t>(s_.top_k) * 3 * H * I * 17 / 32;
    return static_cast<std::uint64_t>(s_.layers) * (attention + router + experts) +
           2 * H * static_cast<std::uint64_t>(s_.vocab);
  }

 protected:
  Status prefill_pass(DeviceSession& st, std::int64_t T, std::int64_t pos, ForwardTrace* trace) override {
    return prefill_chunk(static_cast<GptOssSession&>(st), T, pos, trace);
  }
  Status record_step(DeviceSession& st) override { return record_decode(static_cast<GptOssSession&>(st)); }
  Status pass_logits(std::int64_t first_row, std::int64_t rows) override;

 private:
  // One prefill pass of T <= chunk tokens; leaves the final-normed rows in hb_ and hf_.
  Status prefill_chunk(GptOssSession& st, std::int64_t T, std::int64_t pos0, ForwardTrace* trace);
  // Layer l's RoPE (T tokens from the fused q/k/v rows into q_ and the session's cache) and
  // attention arguments, the same for prefill and decode.
  k::RopeQkvArgs rope_args(const GptOssSession& st, std::int64_t l, std::int64_t T) const;
  k::AttentionArgs attention_args(const GptOssSession& st, std::int64_t l) const;
  Status record_decode(GptOssSession& st);

  Shape s_;
  blocks::Rope rope_;
  bool fp8_ = true;
  std::unique_ptr<LtGemm> gemm_;
  std::unique_ptr<WeightUploader> uploader_;  // during init() only

  DeviceBuffer embed_, lm_head_, final_norm_, inv_freq_;
  std::vector<Layer> layers_;

  // Activations for up to kGptOssPrefillChunk tokens.
  DeviceBuffer x_, hb_, hf_, qkv_, q_, attn_, attn_f32_, router_logits_, topk_ids_, topk_w_, partial_;
  DeviceBuffer counts_, sorted_pair_, row_of_pair_, active_experts_, slot_offsets_, active_count_, tile_slot_,
      tile_row_, tile_count_;
  DeviceBuffer xs_, act_, ys_;
  DeviceBuffer xq_decode_, xscale_decode_, actq_decode_, acts_decode_;  // split int8 decode MoE inputs
  DeviceBuffer workspace_, workspace_exp_;
  std::int64_t max_slots_ = 0, max_tiles_ = 0;
};

Status GptOssCuda::init(const std::shared_ptr<const io::Checkpoint>& checkpoint) {
#ifdef DAY0_DECODE_TRACE
  if (!k::decode_trace_init()) return error(ErrorCode::device_error, "allocating the decode trace buffer");
#endif
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const auto t_start = Clock::now();
  DAY0_RETURN_IF_ERROR(open_device());
  DAY0_ASSIGN_OR_RETURN(gemm_, LtGemm::create(ledger_.get()));
  const auto t_gpu = Clock::now();
  DAY0_ASSIGN_OR_RETURN(const models::GptOssWeights w, models::bind_gpt_oss(s_, checkpoint));
  // Every upload below only queues its copies (the checkpoint stays mapped through init()); they
  // run on several threads through pinned buffers once every tensor is placed.
  uploader_ = std::make_unique<WeightUploader>(device_);
  WeightPlacer put(*uploader_, ledger_.get());
  const auto W = MemoryCategory::weights;
  DAY0_RETURN_IF_ERROR(put.bf16({w.embed}, &embed_, W, "the embedding"));
  if (!s_.tied) DAY0_RETURN_IF_ERROR(put.bf16({w.lm_head}, &lm_head_, W, "lm_head"));
  DAY0_RETURN_IF_ERROR(put.bf16({w.final_norm}, &final_norm_, W, "model.norm"));
  DAY0_RETURN_IF_ERROR(put.raw(rope_.inv_freq.data(), rope_.inv_freq.size() * sizeof(float), &inv_freq_, W, "RoPE"));
  for (std::int64_t l = 0; l < s_.layers; ++l) {
    const models::GptOssLayerWeights& src = w.layers[static_cast<std::size_t>(l)];
    const std::string p = "layer " + std::to_string(l) + " ";
    Layer L;
    DAY0_RETURN_IF_ERROR(put.bf16({src.input_norm}, &L.input_norm, W, p + "input norm"));
    DAY0_RETURN_IF_ERROR(put.bf16({src.post_norm}, &L.post_norm, W, p + "post-attention norm"));
    DAY0_RETURN_IF_ERROR(put.bf16({src.q, src.k, src.v}, &L.wqkv, W, p + "q/k/v projections"));
    DAY0_RETURN_IF_ERROR(put.bf16({src.o}, &L.wo, W, p + "o projection"));
    DAY0_RETURN_IF_ERROR(put.bf16({src.router}, &L.router, W, p + "router"));
    DAY0_RETURN_IF_ERROR(put.f32({src.q_bias, src.k_bias, src.v_bias}, &L.bqkv, W, p + "q/k/v biases"));
    DAY0_RETURN_IF_ERROR(put.f32({src.o_bias}, &L.bo, W, p + "o projection bias"));
    DAY0_RETURN_IF_ERROR(put.f32({src.sinks}, &L.sinks, W, p + "attention sinks"));
    DAY0_RETURN_IF_ERROR(put.f32({src.router_bias}, &L.router_bias, W, p + "router bias"));
    DAY0_RETURN_IF_ERROR(put.mxfp4(src.gate_up, &L.gu_blocks, &L.gu_scales, p + "expert gate_up"));
    DAY0_RETURN_IF_ERROR(put.mxfp4(src.down, &L.dn_blocks, &L.dn_scales, p + "expert down"));
    DAY0_RETURN_IF_ERROR(
        put.f32(src.gate_up_bias, &L.gu_bias, MemoryCategory::expert_cache, p + "expert gate_up bias"));
    DAY0_RETURN_IF_ERROR(put.f32(src.down_bias, &L.dn_bias, MemoryCategory::expert_cache, p + "expert down bias"));
    layers_.push_back(std::move(L));
  }
  const std::int64_t E = s_.experts;
  const auto t_read = Clock::now();
  const double upload_gb = static_cast<double>(uploader_->bytes_queued()) / 1e9;
  DAY0_RETURN_IF_ERROR(uploader_->finish("the weights"));
  uploader_.reset();
  const auto t_upload = Clock::now();

  // Activations for one prefill pass and the shared expert workspace.
  max_slots_ = std::min<std::int64_t>(E, chunk_ * s_.top_k);
  max_tiles_ = k::moe_max_tiles(chunk_ * s_.top_k, E, k::kMoeGemmTileRows);
  for (const BufferSpec& b : buffers(s_, chunk_, fp8_))
    DAY0_RETURN_IF_ERROR(alloc(b.bytes, &(this->*b.member), b.category, b.what));
  DAY0_RETURN_IF_ERROR(allocate_step_buffers());
  DAY0_LOG_INFO("gpt-oss on cuda:{}: weights {:.2f} GiB, experts {:.2f} GiB, {} workspace {:.1f} MiB ({} experts)",
                device_, ledger_->bytes(MemoryCategory::weights) / 1073741824.0,
                ledger_->bytes(MemoryCategory::expert_cache) / 1073741824.0, fp8_ ? "FP8" : "bf16",
                ledger_->bytes(MemoryCategory::fp8_workspace) / 1048576.0, max_slots_);
  const auto t_end = Clock::now();
  DAY0_LOG_INFO(
      "gpt-oss on cuda:{} ready in {:.2f} s: GPU start {:.2f} s, tensors read and placed {:.2f} s, "
      "{:.2f} GB copied in {:.2f} s ({:.1f} GB/s), buffers {:.2f} s",
      device_, seconds(t_start, t_end), seconds(t_start, t_gpu), seconds(t_gpu, t_read), upload_gb,
      seconds(t_read, t_upload), upload_gb / std::max(1e-9, seconds(t_read, t_upload)), seconds(t_upload, t_end));
  return Status::ok();
}

#define DAY0_K(expr, what) DAY0_CUDA_RETURN_IF_ERROR(expr, what)

k::RopeQkvArgs GptOssCuda::rope_args(const GptOssSession& st, std::int64_t l, std::int64_t T) const {
  k::RopeQkvArgs r;
  r.qkv = qkv_.as<float>();
  r.T = T;
  r.heads = static_cast<int>(s_.heads);
  r.kv_heads = static_cast<int>(s_.kv_heads);
  r.head_dim = static_cast<int>(s_.head_dim);
  r.inv_freq = inv_freq_.as<float>();
  r.attention_factor = rope_.attention_factor;
  r.position = pos_dev_.as<std::int32_t>();
  r.q_out = q_.as<std::uint16_t>();
  r.k_cache = st.k_layer(l);
  r.v_cache = st.v_layer(l);
  return r;
}

k::AttentionArgs GptOssCuda::attention_args(const GptOssSession& st, std::int64_t l) const {
  k::AttentionArgs a;
  a.heads = static_cast<int>(s_.heads);
  a.kv_heads = static_cast<int>(s_.kv_heads);
  a.head_dim = static_cast<int>(s_.head_dim);
  a.window = s_.sliding[static_cast<std::size_t>(l)] ? s_.sliding_window : 0;
  a.scale = 1.0f / std::sqrt(static_cast<float>(s_.head_dim));
  a.sinks = layers_[static_cast<std::size_t>(l)].sinks.as<float>();
  a.k_cache = st.k_layer(l);
  a.v_cache = st.v_layer(l);
  return a;
}

// One prefill pass of T <= chunk tokens at positions pos0..; tokens already in tokens_dev_ and
// pos0 in pos_dev_. Leaves the final-normed rows in hb_ (bf16) and hf_ (fp32).
Status GptOssCuda::prefill_chunk(GptOssSession& st, std::int64_t T, std::int64_t pos0, ForwardTrace* trace) {
  cudaStream_t s = stream_.get();
  PhaseTimer& pt = prefill_timer_;
  pt.mark(s, PhaseTimer::embed);
  const std::int64_t H = s_.hidden, E = s_.experts, I = s_.inter, K = s_.top_k;
  const float eps = static_cast<float>(s_.rms_eps);
  float* x = x_.as<float>();
  auto* hb = hb_.as<std::uint16_t>();
  DAY0_K(k::embedding_lookup(embed_.as<std::uint16_t>(), H, tokens_dev_.as<std::int32_t>(), T, x, s), "embedding");
  pt.mark(s, PhaseTimer::embed);
  if (trace) DAY0_RETURN_IF_ERROR(trace_copy(trace, "hidden.embed", x, static_cast<std::size_t>(T * H), false));
  std::vector<float> before;
  for (std::int64_t l = 0; l < s_.layers; ++l) {
    const Layer& L = layers_[static_cast<std::size_t>(l)];
    const std::string ls = std::to_string(l);
    DAY0_K(k::rms_norm(x, T, H, L.input_norm.as<std::uint16_t>(), eps, hb, nullptr, s), "input norm");
    pt.mark(s, PhaseTimer::norm);
    DAY0_RETURN_IF_ERROR(gemm_->linear(L.wqkv.as<std::uint16_t>(), hb, qkv_.as<float>(), T,
                                       (s_.q_dim() + 2 * s_.kv_dim()), H, false, s));
    DAY0_K(k::add_bias_rows(qkv_.as<float>(), L.bqkv.as<float>(), T, (s_.q_dim() + 2 * s_.kv_dim()), s), "qkv bias");
    pt.mark(s, PhaseTimer::qkv);
    DAY0_K(k::rope_qkv(rope_args(st, l, T), s), "RoPE");
    pt.mark(s, PhaseTimer::rope);
    const k::AttentionArgs a = attention_args(st, l);
    DAY0_K(k::attention_prefill(a, q_.as<std::uint16_t>(), T, pos0, attn_.as<std::uint16_t>(), s), "attention");
    pt.mark(s, PhaseTimer::attention);
    if (trace) {
      before.resize(static_cast<std::size_t>(T * H));
      DAY0_K(cudaMemcpyAsync(before.data(), x, before.size() * 4, cudaMemcpyDeviceToHost, s), "trace");
      DAY0_K(cudaStreamSynchronize(s), "trace");
    }
    DAY0_RETURN_IF_ERROR(
        gemm_->linear(L.wo.as<std::uint16_t>(), attn_.as<std::uint16_t>(), x, T, H, s_.q_dim(), true, s));
    DAY0_K(k::add_bias_rows(x, L.bo.as<float>(), T, H, s), "o_proj bias");
    pt.mark(s, PhaseTimer::o_proj);
    if (trace) {
      std::vector<float> after(before.size());
      DAY0_K(cudaMemcpyAsync(after.data(), x, after.size() * 4, cudaMemcpyDeviceToHost, s), "trace");
      DAY0_K(cudaStreamSynchronize(s), "trace");
      for (std::size_t i = 0; i < after.size(); ++i) after[i] -= before[i];
      trace->append("attn." + ls + ".out", after.data(), after.size());
    }
    DAY0_K(k::rms_norm(x, T, H, L.post_norm.as<std::uint16_t>(), eps, hb, hf_.as<float>(), s), "post-attention norm");
    pt.mark(s, PhaseTimer::norm);
    // The router reads the fp32 normed rows, as the CPU does: bf16 inputs would flip near-tied
    // top-k choices that the CPU makes the other way.
    DAY0_K(k::gemv_bf16(L.router.as<std::uint16_t>(), L.router_bias.as<float>(), hf_.as<float>(), T, E, H, false,
                        router_logits_.as<float>(), s),
           "router");
    DAY0_K(k::router_topk(router_logits_.as<float>(), T, static_cast<int>(E), static_cast<int>(K),
                          topk_ids_.as<std::int32_t>(), topk_w_.as<float>(), s),
           "router top-k");
    pt.mark(s, PhaseTimer::router);
    if (trace) {
      DAY0_RETURN_IF_ERROR(
          trace_copy(trace, "router." + ls + ".topk", topk_ids_.get(), static_cast<std::size_t>(T * K), true));
      DAY0_RETURN_IF_ERROR(
          trace_copy(trace, "router." + ls + ".weights", topk_w_.get(), static_cast<std::size_t>(T * K), false));
    }
    k::MoeRoutes routes;
    routes.counts = counts_.as<std::int32_t>();
    routes.sorted_pair = sorted_pair_.as<std::int32_t>();
    routes.row_of_pair = row_of_pair_.as<std::int32_t>();
    routes.active_experts = active_experts_.as<std::int32_t>();
    routes.slot_offsets = slot_offsets_.as<std::int32_t>();
    routes.active_count = active_count_.as<std::int32_t>();
    routes.tile_slot = tile_slot_.as<std::int32_t>();
    routes.tile_row = tile_row_.as<std::int32_t>();
    routes.tile_count = tile_count_.as<std::int32_t>();
    DAY0_K(k::moe_build_routes(topk_ids_.as<std::int32_t>(), T, static_cast<int>(K), static_cast<int>(E),
                               k::kMoeGemmTileRows, routes, s),
           "MoE routes");
    pt.mark(s, PhaseTimer::routes);
    DAY0_K(k::moe_gather_rows(hb, routes.sorted_pair, T, static_cast<int>(K), H, xs_.as<std::uint16_t>(), s),
           "MoE gather");
    pt.mark(s, PhaseTimer::routes);
    const int slots = static_cast<int>(std::min<std::int64_t>(max_slots_, T * K));
    k::MoeGemmArgs g;
    g.active_experts = routes.active_experts;
    g.slot_offsets = routes.slot_offsets;
    g.tile_slot = routes.tile_slot;
    g.tile_row = routes.tile_row;
    g.tile_count = routes.tile_count;
    g.max_tiles = k::moe_max_tiles(T * K, E, k::kMoeGemmTileRows);
    // gate_up: workspace <- routed experts' [2I, H]; act = activation(xs . W^T + b).
    if (fp8_) {
      DAY0_K(k::mxfp4_experts_to_fp8_e4m3(L.gu_blocks.as<std::uint8_t>(), L.gu_scales.as<std::uint8_t>(),
                                          2 * I * H / 32, routes.active_experts, routes.active_count, slots,
                                          workspace_.as<std::uint8_t>(), workspace_exp_.as<std::int16_t>(), s),
             "expert conversion");
      pt.mark(s, PhaseTimer::convert);
      g.w_fp8 = workspace_.as<std::uint8_t>();
      g.w_exponent = workspace_exp_.as<std::int16_t>();
    } else {
      DAY0_K(k::mxfp4_experts_to_bf16(L.gu_blocks.as<std::uint8_t>(), L.gu_scales.as<std::uint8_t>(), 2 * I * H / 32,
                                      routes.active_experts, routes.active_count, slots, workspace_.as<std::uint16_t>(),
                                      s),
             "expert conversion");
      pt.mark(s, PhaseTimer::convert);
      g.w_bf16 = workspace_.as<std::uint16_t>();
    }
    g.x = xs_.as<std::uint16_t>();
    g.N = static_cast<int>(2 * I);
    g.K = static_cast<int>(H);
    g.bias = L.gu_bias.as<float>();
    g.epilogue = k::MoeEpilogue::swiglu;
    g.act_out = act_.as<std::uint16_t>();
    DAY0_K(k::moe_grouped_gemm(g, s), "expert gate_up GEMM");
    pt.mark(s, PhaseTimer::expert_gemm);
    // down: workspace <- routed experts' [H, I]; ys = (act . W^T + b) * routing weight.
    if (fp8_) {
      DAY0_K(k::mxfp4_experts_to_fp8_e4m3(L.dn_blocks.as<std::uint8_t>(), L.dn_scales.as<std::uint8_t>(), H * I / 32,
                                          routes.active_experts, routes.active_count, slots,
                                          workspace_.as<std::uint8_t>(), workspace_exp_.as<std::int16_t>(), s),
             "expert conversion");
      pt.mark(s, PhaseTimer::convert);
    } else {
      DAY0_K(k::mxfp4_experts_to_bf16(L.dn_blocks.as<std::uint8_t>(), L.dn_scales.as<std::uint8_t>(), H * I / 32,
                                      routes.active_experts, routes.active_count, slots, workspace_.as<std::uint16_t>(),
                                      s),
             "expert conversion");
      pt.mark(s, PhaseTimer::convert);
    }
    g.x = act_.as<std::uint16_t>();
    g.N = static_cast<int>(H);
    g.K = static_cast<int>(I);
    g.bias = L.dn_bias.as<float>();
    g.epilogue = k::MoeEpilogue::weighted;
    g.y_out = ys_.as<float>();
    g.sorted_pair = routes.sorted_pair;
    g.pair_weights = topk_w_.as<float>();
    DAY0_K(k::moe_grouped_gemm(g, s), "expert down GEMM");
    pt.mark(s, PhaseTimer::expert_gemm);
    DAY0_K(k::moe_combine(ys_.as<float>(), routes.row_of_pair, T, static_cast<int>(K), H, x, s), "MoE combine");
    pt.mark(s, PhaseTimer::combine);
    if (trace) DAY0_RETURN_IF_ERROR(trace_copy(trace, "hidden." + ls, x, static_cast<std::size_t>(T * H), false));
  }
  DAY0_K(k::rms_norm(x, T, H, final_norm_.as<std::uint16_t>(), eps, hb, hf_.as<float>(), s), "final norm");
  pt.mark(s, PhaseTimer::norm);
  if (trace)
    DAY0_RETURN_IF_ERROR(trace_copy(trace, "hidden.final_norm", hf_.get(), static_cast<std::size_t>(T * H), false));
  return Status::ok();
}

// The decode step for one token (tokens_dev_[0] at pos_dev_[0], pos_dev_[1] = position + 1), as a
// sequence of launches that a graph can capture: 7 per layer (the RMSNorms fused into the
// projections that read them, RoPE and the cache writes into the qkv projection, the router's
// top-k into the expert GEMVs; a model with more than kDecodeRouteMaxExperts experts adds a top-k
// launch), 170 for gpt-oss-20b. Ends with the logits in logits_ row 0; the executor's token
// pick follows in the same graph.
Status GptOssCuda::record_decode(GptOssSession& st) {
  cudaStream_t s = stream_.get();
  PhaseTimer& pt = decode_timer_;
  pt.mark(s, PhaseTimer::embed);
  const std::int64_t H = s_.hidden, E = s_.experts, K = s_.top_k;
  const float eps = static_cast<float>(s_.rms_eps);
  float* x = x_.as<float>();
  DAY0_K(k::embedding_lookup(embed_.as<std::uint16_t>(), H, tokens_dev_.as<std::int32_t>(), 1, x, s), "embedding");
  pt.mark(s, PhaseTimer::embed);
  k::MoeDecodeArgs m;
  m.T = 1;
  m.hidden = static_cast<int>(H);
  m.inter = static_cast<int>(s_.inter);
  m.top_k = static_cast<int>(K);
  // The expert GEMVs take the routes from the logits themselves, up to kDecodeRouteMaxExperts.
  const bool routes_from_logits = E <= k::kDecodeRouteMaxExperts;
  if (routes_from_logits) {
    m.logits = router_logits_.as<float>();
    m.experts = static_cast<int>(E);
  } else {
    m.ids = topk_ids_.as<std::int32_t>();
    m.weights = topk_w_.as<float>();
  }
  auto* xq = xq_decode_.as<std::int8_t>();
  auto* actq = actq_decode_.as<std::int8_t>();
  for (std::int64_t l = 0; l < s_.layers; ++l) {
    const Layer& L = layers_[static_cast<std::size_t>(l)];
    DAY0_K(k::gemv_bf16_qkv_rope(L.wqkv.as<std::uint16_t>(), L.bqkv.as<float>(), x, L.input_norm.as<std::uint16_t>(),
                                 eps, H, rope_args(st, l, 1), s),
           "qkv");
    pt.mark(s, PhaseTimer::qkv);
    const k::AttentionArgs a = attention_args(st, l);
    DAY0_K(k::attention_decode(a, q_.as<std::uint16_t>(), pos_dev_.as<std::int32_t>() + 1, kDecodeSplits,
                               partial_.as<float>(), attn_f32_.as<float>(), s),
           "attention");
    pt.mark(s, PhaseTimer::attention);
    DAY0_K(
        k::gemv_bf16(L.wo.as<std::uint16_t>(), L.bo.as<float>(), attn_f32_.as<float>(), 1, H, s_.q_dim(), true, x, s),
        "o_proj");
    pt.mark(s, PhaseTimer::o_proj);
    DAY0_K(k::router_decode(x, L.post_norm.as<std::uint16_t>(), eps, L.router.as<std::uint16_t>(),
                            L.router_bias.as<float>(), 1, static_cast<int>(E), static_cast<int>(H), xq,
                            xscale_decode_.as<float>(), router_logits_.as<float>(), s),
           "router");
    if (!routes_from_logits)
      DAY0_K(k::router_topk(router_logits_.as<float>(), 1, static_cast<int>(E), static_cast<int>(K),
                            topk_ids_.as<std::int32_t>(), topk_w_.as<float>(), s),
             "router top-k");
    pt.mark(s, PhaseTimer::router);
    m.gate_up_blocks = L.gu_blocks.as<std::uint8_t>();
    m.gate_up_scales = L.gu_scales.as<std::uint8_t>();
    m.gate_up_bias = L.gu_bias.as<float>();
    m.down_blocks = L.dn_blocks.as<std::uint8_t>();
    m.down_scales = L.dn_scales.as<std::uint8_t>();
    m.down_bias = L.dn_bias.as<float>();
    DAY0_K(k::moe_decode_gate_up(m, xq, xscale_decode_.as<float>(), actq, acts_decode_.as<float>(), s),
           "expert gate_up");
    pt.mark(s, PhaseTimer::decode_moe);
    DAY0_K(k::moe_decode_down(m, actq, acts_decode_.as<float>(), x, s), "expert down");
    pt.mark(s, PhaseTimer::decode_moe);
  }
  const std::uint16_t* head = s_.tied ? embed_.as<std::uint16_t>() : lm_head_.as<std::uint16_t>();
  DAY0_K(k::gemv_bf16_rms_normed(head, nullptr, x, final_norm_.as<std::uint16_t>(), eps, 1, s_.vocab, H,
                                 logits_.as<float>(), s),
         "lm_head");
  pt.mark(s, PhaseTimer::lm_head);
  return Status::ok();
}

std::vector<GptOssCuda::BufferSpec> GptOssCuda::buffers(const Shape& s, std::int64_t chunk, bool fp8) {
  const auto A = MemoryCategory::activations, W = MemoryCategory::fp8_workspace;
  const std::size_t C = static_cast<std::size_t>(chunk), H = static_cast<std::size_t>(s.hidden),
                    I = static_cast<std::size_t>(s.inter), E = static_cast<std::size_t>(s.experts),
                    K = static_cast<std::size_t>(s.top_k), pairs = C * K, q = static_cast<std::size_t>(s.q_dim()),
                    qkv = q + 2 * static_cast<std::size_t>(s.kv_dim());
  const auto slots = static_cast<std::size_t>(std::min<std::int64_t>(s.experts, chunk * s.top_k));
  const auto tiles = static_cast<std::size_t>(k::moe_max_tiles(chunk * s.top_k, s.experts, k::kMoeGemmTileRows));
  const auto partials = static_cast<std::size_t>(
      k::attention_decode_partial_floats(static_cast<int>(s.heads), static_cast<int>(s.head_dim), kDecodeSplits));
  // The shared expert workspace: one layer's routed experts, one matrix kind at a time.
  const std::size_t values = slots * 2 * I * H;
  std::vector<BufferSpec> b{
      {&GptOssCuda::x_, C * H * 4, A, "the residual stream"},
      {&GptOssCuda::hb_, C * H * 2, A, "normed activations"},
      {&GptOssCuda::hf_, C * H * 4, A, "normed activations"},
      {&GptOssCuda::qkv_, C * qkv * 4, A, "q, k, v"},
      {&GptOssCuda::q_, C * q * 2, A, "rotated queries"},
      {&GptOssCuda::attn_, C * q * 2, A, "attention outputs"},
      {&GptOssCuda::attn_f32_, q * 4, A, "attention outputs"},
      {&GptOssCuda::router_logits_, C * E * 4, A, "router logits"},
      {&GptOssCuda::topk_ids_, pairs * 4, A, "routes"},
      {&GptOssCuda::topk_w_, pairs * 4, A, "routes"},
      {&GptOssCuda::partial_, partials * 4, A, "attention partials"},
      {&GptOssCuda::counts_, E * 4, A, "routes"},
      {&GptOssCuda::sorted_pair_, pairs * 4, A, "routes"},
      {&GptOssCuda::row_of_pair_, pairs * 4, A, "routes"},
      {&GptOssCuda::active_experts_, slots * 4, A, "routes"},
      {&GptOssCuda::slot_offsets_, (slots + 1) * 4, A, "routes"},
      {&GptOssCuda::active_count_, 4, A, "routes"},
      {&GptOssCuda::tile_slot_, tiles * 4, A, "routes"},
      {&GptOssCuda::tile_row_, tiles * 4, A, "routes"},
      {&GptOssCuda::tile_count_, 4, A, "routes"},
      {&GptOssCuda::xs_, pairs * H * 2, A, "expert inputs"},
      {&GptOssCuda::act_, pairs * I * 2, A, "expert activations"},
      {&GptOssCuda::ys_, pairs * H * 4, A, "expert outputs"},
      {&GptOssCuda::xq_decode_, H / 32 * k::kSplitInt8BlockBytes, A, "expert inputs"},
      {&GptOssCuda::xscale_decode_, H / 32 * 4, A, "expert inputs"},
      {&GptOssCuda::actq_decode_, K * I / 32 * k::kSplitInt8BlockBytes, A, "expert activations"},
      {&GptOssCuda::acts_decode_, K * I / 32 * 4, A, "expert activations"},
  };
  if (fp8) {
    b.push_back({&GptOssCuda::workspace_, values, W, "the FP8 expert workspace"});
    b.push_back({&GptOssCuda::workspace_exp_, values / 32 * 2, W, "the FP8 workspace's block exponents"});
  } else {
    b.push_back({&GptOssCuda::workspace_, values * 2, W, "the bf16 expert workspace"});
  }
  return b;
}

Status GptOssCuda::pass_logits(std::int64_t first_row, std::int64_t rows) {
  const std::uint16_t* head = s_.tied ? embed_.as<std::uint16_t>() : lm_head_.as<std::uint16_t>();
  return gemm_->linear(head, hb_.as<std::uint16_t>() + first_row * s_.hidden, logits_.as<float>(), rows, s_.vocab,
                       s_.hidden, false, stream_.get());
}

}  // namespace

std::uint64_t gpt_oss_expert_workspace_bytes(std::int64_t experts, std::int64_t top_k, std::int64_t hidden,
                                             std::int64_t inter, std::int64_t chunk, bool fp8) {
  const auto slots = static_cast<std::uint64_t>(std::min(experts, chunk * top_k));
  const auto values = slots * static_cast<std::uint64_t>(2 * inter * hidden);
  return fp8 ? values + values / 32 * 2 : values * 2;
}

Result<limits::DeviceFootprint> gpt_oss_device_footprint(const io::ModelConfig& config, bool fp8) {
  DAY0_ASSIGN_OR_RETURN(const Shape s, read_shape(config));
  using u = std::uint64_t;
  const u H = static_cast<u>(s.hidden), I = static_cast<u>(s.inter), E = static_cast<u>(s.experts),
          V = static_cast<u>(s.vocab), L = static_cast<u>(s.layers), q = static_cast<u>(s.q_dim()),
          kv = static_cast<u>(s.kv_dim()), heads = static_cast<u>(s.heads);
  // As init() uploads them: bf16 matrices and norms, fp32 biases and sinks, MXFP4 experts as
  // stored (16 bytes of codes and 1 scale byte per 32 values), fp32 expert biases.
  const u dense = V * H * 2 * (s.tied ? 1 : 2) + H * 2 + static_cast<u>(s.head_dim / 2) * 4 +
                  L * (2 * H * 2 + (q + 2 * kv) * H * 2 + H * q * 2 + E * H * 2 + (q + 2 * kv + H + heads + E) * 4);
  const u experts = L * (E * 2 * I * H / 32 * 17 + E * H * I / 32 * 17 + E * (2 * I + H) * 4);
  limits::DeviceFootprint f;
  f.weights = dense + experts;
  f.workspace = DeviceModel::step_buffer_bytes(s.vocab, kGptOssPrefillChunk) + kLtGemmWorkspaceBytes;
  for (const auto& b : GptOssCuda::buffers(s, kGptOssPrefillChunk, fp8)) f.workspace += b.bytes;
  const u per_position = L * 2 * kv * 2;  // bf16 keys and values of every layer
  f.state_bytes = [per_position](std::int64_t context) {
    const auto c = static_cast<u>((std::max<std::int64_t>(context, 1) + kKvGrain - 1) / kKvGrain * kKvGrain);
    return per_position * (c + c / 2 + static_cast<u>(kKvGrain));
  };
  f.max_context = s.max_positions;
  return f;
}

Result<std::unique_ptr<models::LoadedModel>> load_gpt_oss(const io::ModelConfig& config,
                                                          std::shared_ptr<const io::Checkpoint> checkpoint,
                                                          ThreadPool& /*pool*/, const models::LoadOptions& options) {
  DAY0_ASSIGN_OR_RETURN(Shape s, read_shape(config));
  DAY0_ASSIGN_OR_RETURN(blocks::Rope rope, blocks::make_rope(config.text(), s.head_dim, s.max_positions));
  int device = 0;
  if (options.device.rfind("cuda:", 0) == 0) device = std::atoi(options.device.c_str() + 5);
  cudaDeviceProp prop{};
  DAY0_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device), "querying GPU " + std::to_string(device));
  const bool fp8 = prop.major * 10 + prop.minor >= 89 && !options.bf16_workspace;
  // The context the memory plan granted (LoadOptions::max_context) bounds the caches.
  if (options.max_context > 0) s.max_positions = std::min(s.max_positions, options.max_context);
  auto model = std::make_unique<GptOssCuda>(std::move(s), std::move(rope), device, fp8);
  DAY0_RETURN_IF_ERROR(model->init(checkpoint));
  return std::unique_ptr<models::LoadedModel>(std::move(model));
}

}  // namespace day0::cuda
