#include "backend/cuda/glm5_next_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cuda/cublaslt_gemm.h"
#include "blocks/dsa_indexer.h"
#include "backend/cuda/cuda_support.h"
#include "backend/cuda/device_model.h"
#include "backend/cuda/glm5_next_session.h"
#include "backend/cuda/weight_upload.h"
#include "day0/log.h"
#include "dsa_indexer.h"
#include "elementwise.h"
#include "gemv_bf16.h"
#include "glm_moe.h"
#include "glm_moe_gemm.h"
#include "hyper_connection.h"
#include "kda.h"
#include "mla_attention.h"
#include "models/architecture.h"
#include "models/glm5_next_config.h"
#include "models/glm5_next_weights.h"
#include "rms_norm.h"
#include "vision/glm5_vision.h"

namespace day0::cuda {
namespace {

namespace k = day0::kernels;
using glm5::Glm5Session;
using glm5::kGrain;
using glm5::kPromptSnapshots;
using glm5::kStepSnapshots;
using glm5::read_shape;
using glm5::Shape;
using models::ForwardTrace;
using models::SessionState;

#define DAY0_K(expr, what) DAY0_CUDA_RETURN_IF_ERROR(expr, what)

constexpr std::int64_t kGemvMaxRows = 8;  // projections of up to this many rows take the bf16 GEMV

struct HcDev {
  DeviceBuffer fn, base, scale;  // bf16 [(2 + hc) hc, hc H]; fp32 [(2 + hc) hc]; fp32 [3]
};

struct LayerDev {
  HcDev attn_hc, ffn_hc;
  DeviceBuffer input_norm, post_norm;  // bf16 [H]
  std::int64_t slot = -1, index_slot = -1;
  bool kda = false, mla = false, indexer = false, moe = false;
  // KDA: q/k/v stacked [3D, H]; conv taps fp32 [3D, K]; f_a, g_a [d, H]; f_b, g_b [D, d];
  // b [heads, H]; o [H, D]; dt_bias fp32 [D]; A_log fp32 [heads]; o_norm fp32 [d].
  DeviceBuffer wqkv, conv, f_a, f_b, g_a, g_b, b_proj, o_proj, dt_bias, A_log, o_norm;
  // MLA: q_a [q_lora, H], kv_a [R, H], q_b [heads nope, q_lora], kv_b [heads (nope + v), R],
  // o [H, heads v] bf16; norms bf16; optional fp32 biases.
  DeviceBuffer q_a, q_a_bias, q_a_norm, kv_a, kv_a_bias, kv_a_norm, q_b, kv_b, o, o_bias;
  // Indexer: wq_b [ih id, q_lora], wk [id, H], gate [id, H], weights_proj [ih, H] bf16; k_norm
  // weight and bias fp32 [id]; ape fp32 [kpool, id].
  DeviceBuffer wq_b, wk, gate, weights_proj, k_norm_w, k_norm_b, ape;
  // MoE: router bf16 [E, H], correction bias fp32 [E], the experts as stored and the table of
  // pointers to each; the shared experts' gate/up [2 Is, H] and down [H, Is]. A dense MLP
  // uses gate_up/down with its own width.
  DeviceBuffer router, score_bias;
  DeviceBuffer ex_a, ex_b, ex_c, ex_d;  // bf16: gate, up, down; MXFP4: gate_up blocks, scales, down blocks, scales
  DeviceBuffer table;                   // device arrays of E pointers, one array per field the table uses
  k::GlmExpertTable experts{};
  DeviceBuffer gate_up, down;
};

// Images: the vision tower runs on the CPU (its weights stay in the mapped checkpoint) and its
// features enter the GPU layers as input embeddings (vision::ImageInputModel).
class Glm5Cuda final : public DeviceModel, public vision::ImageInputModel {
 public:
  Glm5Cuda(Shape s, int device)
      : DeviceModel(device, s.c.vocab, s.c.max_positions, kGlm5PrefillChunk, "GLM-5.3-Flash"), s_(std::move(s)) {
    // DAY0_GLM_DENSE_ATTENTION=1: MLA attends every position (the indexer still runs), for
    // comparison; =decode: only in decode steps (a long prompt prefills at the sparse speed).
    const std::string dense = std::getenv("DAY0_GLM_DENSE_ATTENTION") ? std::getenv("DAY0_GLM_DENSE_ATTENTION") : "";
    dense_decode_ = dense == "1" || dense == "decode";
    dense_prefill_ = dense == "1";
    // Passes of at least this many tokens run MXFP4 experts on the tensor cores through the
    // workspace (glm_moe_gemm.h); fewer read them in place (glm_moe.h). DAY0_GLM_MOE_GEMM_TOKENS
    // overrides (for tests and the crossover measurement; 0 turns the workspace path off).
    if (const char* v = std::getenv("DAY0_GLM_MOE_GEMM_TOKENS"); v != nullptr && *v != '\0')
      moe_gemm_tokens_ = std::max<std::int64_t>(std::atoll(v), 0);
  }
  ~Glm5Cuda() override { drain(); }

  Status init(const io::ModelConfig& config, const std::shared_ptr<const io::Checkpoint>& checkpoint,
              ThreadPool& pool);

  // The activation buffers of one prefill pass, one row each: init() allocates them and the
  // memory plan adds them up, from the same table.
  struct BufferSpec {
    DeviceBuffer Glm5Cuda::*member;
    std::size_t bytes;
    const char* what;
  };
  static std::vector<BufferSpec> buffers(const Shape& s, std::int64_t chunk);

  std::int64_t hidden_size() const override { return s_.c.hidden; }
  std::unique_ptr<SessionState> new_state() const override {
    return std::make_unique<Glm5Session>(s_, ledger_.get(), stream_.get());
  }
  std::uint64_t decode_bytes_per_token() const override { return decode_bytes_; }

  // A prompt is fed as all but its last token, then the last, with a KDA snapshot after each
  // (regenerating a reply rewinds to the prompt's last-but-one token); decode steps keep a few
  // snapshots too. As the CPU model does.
  Status forward(SessionState& base, std::span<const std::int32_t> tokens, std::int64_t logit_rows, float* logits,
                 ForwardTrace* trace) override {
    return feed_with_snapshots(static_cast<Glm5Session&>(base), static_cast<std::int64_t>(tokens.size()), logit_rows,
                               logits, [&](std::int64_t first, std::int64_t n, std::int64_t rows, float* out) {
                                 return DeviceModel::forward(base, tokens.subspan(static_cast<std::size_t>(first),
                                                                                  static_cast<std::size_t>(n)),
                                                             rows, out, trace);
                               });
  }
  Result<std::int32_t> forward_pick(SessionState& base, std::span<const std::int32_t> tokens) override {
    auto& st = static_cast<Glm5Session&>(base);
    const auto T = static_cast<std::int64_t>(tokens.size());
    const bool split = s_.kda_layers > 0 && T > 1;
    if (split) {
      DAY0_RETURN_IF_ERROR(
          DeviceModel::forward(st, tokens.first(static_cast<std::size_t>(T - 1)), 0, nullptr, nullptr));
      DAY0_RETURN_IF_ERROR(st.snapshot(true));
    }
    DAY0_ASSIGN_OR_RETURN(const std::int32_t picked, DeviceModel::forward_pick(st, split ? tokens.last(1) : tokens));
    DAY0_RETURN_IF_ERROR(st.snapshot(T > 1));
    return picked;
  }

  // vision::ImageInputModel
  const vision::ImageTokenIds& image_tokens() const override { return vision_.ids; }
  const vision::ProcessorConfig& processor() const override { return vision_.processor; }
  std::int64_t embedding_size() const override { return s_.c.hidden; }
  std::string images_unavailable() const override { return vision_.unavailable; }
  Result<vision::EncodedImage> encode_image(const vision::VisionInput& input, ForwardTrace* trace) override {
    return vision_.encode(input, trace, s_.c.hidden);
  }
  // Text rows from the embedding table as the checkpoint holds it (mapped, on the host).
  Status embed_tokens(std::span<const std::int32_t> tokens, float* out) const override {
    for (const std::int32_t id : tokens)
      if (id < 0 || id >= s_.c.vocab)
        return error(ErrorCode::invalid_argument, "token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                                      std::to_string(s_.c.vocab - 1) + ")");
    for (std::size_t t = 0; t < tokens.size(); ++t)
      cpu::decode_row(embed_host_, tokens[t], out + static_cast<std::int64_t>(t) * s_.c.hidden);
    return Status::ok();
  }
  Status forward_embeddings(SessionState& base, const float* embeddings, std::int64_t T, std::int64_t logit_rows,
                            float* logits, ForwardTrace* trace) override {
    return feed_with_snapshots(static_cast<Glm5Session&>(base), T, logit_rows, logits,
                               [&](std::int64_t first, std::int64_t n, std::int64_t rows, float* out) {
                                 return run_embeddings(base, embeddings + first * s_.c.hidden, n, rows, out, trace);
                               });
  }

 protected:
  Status prefill_pass(DeviceSession& st, std::int64_t T, std::int64_t pos, ForwardTrace* trace) override {
    pt_ = &prefill_timer_;
    pass_pos_ = pos;
    dense_ = dense_prefill_;
    return layers(static_cast<Glm5Session&>(st), T, trace);
  }
  Status record_step(DeviceSession& st) override {
    pt_ = &decode_timer_;
    dense_ = dense_decode_;
    DAY0_RETURN_IF_ERROR(layers(static_cast<Glm5Session&>(st), 1, nullptr));
    DAY0_K(k::gemv_bf16(head(), nullptr, hf_.as<float>(), 1, s_.c.vocab, s_.c.hidden, false, logits_.as<float>(),
                        stream_.get()),
           "lm_head");
    return Status::ok();
  }
  Status pass_logits(std::int64_t first_row, std::int64_t rows) override {
    const std::int64_t H = s_.c.hidden;
    cudaStream_t s = stream_.get();
    DAY0_K(k::split_bf16(hf_.as<float>() + first_row * H, rows * H, xb_.as<std::uint16_t>(), xb_lo_.as<std::uint16_t>(),
                         s),
           "lm_head");
    DAY0_RETURN_IF_ERROR(
        gemm_->linear(head(), xb_.as<std::uint16_t>(), logits_.as<float>(), rows, s_.c.vocab, H, false, s));
    return gemm_->linear(head(), xb_lo_.as<std::uint16_t>(), logits_.as<float>(), rows, s_.c.vocab, H, true, s);
  }

 private:
  const std::uint16_t* head() const { return s_.c.tied ? embed_.as<std::uint16_t>() : lm_head_.as<std::uint16_t>(); }
  // Feeds T rows through feed(first, n, logit_rows, logits) as the CPU model does: with KDA
  // layers, all but the last row, a KDA snapshot, the last row, a snapshot (regenerating a reply
  // rewinds to the prompt's last-but-one token); otherwise at once, with a snapshot after a
  // prompt.
  template <typename Feed>
  Status feed_with_snapshots(Glm5Session& st, std::int64_t T, std::int64_t logit_rows, float* logits, Feed feed) {
    if (s_.kda_layers > 0 && T > 1) {
      const std::int64_t first_rows = std::max<std::int64_t>(logit_rows - 1, 0);
      DAY0_RETURN_IF_ERROR(feed(0, T - 1, std::min(first_rows, T - 1), logits));
      DAY0_RETURN_IF_ERROR(st.snapshot(true));
      DAY0_RETURN_IF_ERROR(
          feed(T - 1, 1, logit_rows > 0 ? 1 : 0, logits != nullptr ? logits + first_rows * vocab_ : nullptr));
      return st.snapshot(true);
    }
    DAY0_RETURN_IF_ERROR(feed(0, T, logit_rows, logits));
    return st.snapshot(T > 1);
  }
  const std::int32_t* position() const { return pos_dev_.as<std::int32_t>(); }
  Status place_layer(WeightPlacer& put, const models::Glm5Layer& src, LayerDev& L, const std::string& p);
  // y [T, N] = x [T, K] W^T (+ bias): the GEMV for a few rows, cuBLASLt on bf16 activations for more.
  Status linear(const DeviceBuffer& W, std::int64_t row0, const DeviceBuffer* bias, const float* x, std::int64_t T,
                std::int64_t N, std::int64_t K, float* y, const char* what);
  // The layers and the final norm for T tokens at the pass's positions (pos_dev_), leaving the
  // normed rows in hf_.
  Status layers(Glm5Session& st, std::int64_t T, ForwardTrace* trace);
  Status kda_layer(Glm5Session& st, const LayerDev& L, std::int64_t T);
  Status mla_layer(Glm5Session& st, const LayerDev& L, std::int64_t T, std::int64_t l, ForwardTrace* trace);
  Status mlp(const LayerDev& L, std::int64_t T, std::int64_t l, ForwardTrace* trace);
  // Traced passes: the pool scores behind layer l's selections, computed on the host from this
  // pass's indexer queries and weights and the session's pooled keys (blocks::indexer_pool_score),
  // as the CPU traces them: for each token the scores of the pools it sees.
  Status trace_pool_scores(Glm5Session& st, std::int64_t T, std::int64_t l, int slot, ForwardTrace* trace);

  // The phase timer of the pass being recorded (DAY0_CUDA_PROFILE): prefill's or decode's.
  void mark(PhaseTimer::Phase phase) { pt_->mark(stream_.get(), phase); }

  Shape s_;
  std::shared_ptr<const io::Checkpoint> checkpoint_;  // keeps embed_host_ and the tower's weights mapped
  cpu::Matrix embed_host_;
  vision::Glm5Vision vision_;
  std::int64_t moe_gemm_tokens_ = kGlm5MoeGemmTokens;
  PhaseTimer* pt_ = &prefill_timer_;
  std::int64_t pass_pos_ = 0;  // the first position of the prefill pass being run
  bool dense_prefill_ = false, dense_decode_ = false;
  bool dense_ = false;  // the pass being recorded attends every position
  std::uint64_t decode_bytes_ = 0;
  std::unique_ptr<LtGemm> gemm_;
  DeviceBuffer embed_, lm_head_, final_norm_;
  std::vector<LayerDev> layers_;

  // Activations for up to kGlm5PrefillChunk tokens.
  DeviceBuffer streams_, x_, h_, y_, post_, comb_, xb_, xb_lo_, hf_;
  DeviceBuffer qkv_, conv_, low_, g_, beta_, core_, gate_;    // KDA
  DeviceBuffer qr_raw_, qr_, lat_raw_, lat_, q_, heads_out_;  // MLA
  DeviceBuffer kraw_, graw_, iq_, iw_, selection_;            // indexer
  DeviceBuffer rlog_, ids_, wts_, gu_, act_, moe_scratch_;    // MoE / MLP
  std::size_t moe_scratch_bytes_ = 0;
  DeviceBuffer moe_gemm_scratch_;  // MXFP4 prefill: routes, activations and the FP8 expert workspace
  std::size_t moe_gemm_scratch_bytes_ = 0;
};

Status Glm5Cuda::place_layer(WeightPlacer& put, const models::Glm5Layer& src, LayerDev& L, const std::string& p) {
  const auto W = MemoryCategory::weights;
  for (auto [hc, dev, name] :
       {std::tuple{&src.attn_hc, &L.attn_hc, "attention mHC"}, std::tuple{&src.ffn_hc, &L.ffn_hc, "MLP mHC"}}) {
    DAY0_RETURN_IF_ERROR(put.bf16({hc->fn}, &dev->fn, W, p + name));
    DAY0_RETURN_IF_ERROR(put.f32({hc->base}, &dev->base, W, p + name));
    DAY0_RETURN_IF_ERROR(put.f32({hc->scale}, &dev->scale, W, p + name));
  }
  DAY0_RETURN_IF_ERROR(put.bf16({src.input_norm}, &L.input_norm, W, p + "input norm"));
  DAY0_RETURN_IF_ERROR(put.bf16({src.post_norm}, &L.post_norm, W, p + "post-attention norm"));
  if (src.kda) {
    const blocks::KdaLayer& a = *src.kda;
    L.kda = true;
    DAY0_RETURN_IF_ERROR(put.bf16({a.q_proj, a.k_proj, a.v_proj}, &L.wqkv, W, p + "KDA q/k/v"));
    DAY0_RETURN_IF_ERROR(put.f32({a.q_conv, a.k_conv, a.v_conv}, &L.conv, W, p + "KDA convolutions"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.f_a_proj}, &L.f_a, W, p + "KDA f_a"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.f_b_proj}, &L.f_b, W, p + "KDA f_b"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.g_a_proj}, &L.g_a, W, p + "KDA g_a"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.g_b_proj}, &L.g_b, W, p + "KDA g_b"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.b_proj}, &L.b_proj, W, p + "KDA b"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.o_proj}, &L.o_proj, W, p + "KDA o"));
    DAY0_RETURN_IF_ERROR(put.f32({a.dt_bias}, &L.dt_bias, W, p + "KDA dt_bias"));
    DAY0_RETURN_IF_ERROR(put.f32({a.A_log}, &L.A_log, W, p + "KDA A_log"));
    DAY0_RETURN_IF_ERROR(put.f32({a.o_norm}, &L.o_norm, W, p + "KDA o_norm"));
  }
  if (src.mla) {
    const blocks::MlaWeights& a = *src.mla;
    L.mla = true;
    DAY0_RETURN_IF_ERROR(put.bf16({a.q_a}, &L.q_a, W, p + "q_a_proj"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.q_a_norm}, &L.q_a_norm, W, p + "q_a_layernorm"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.q_b}, &L.q_b, W, p + "q_b_proj"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.kv_a}, &L.kv_a, W, p + "kv_a_proj_with_mqa"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.kv_a_norm}, &L.kv_a_norm, W, p + "kv_a_layernorm"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.kv_b}, &L.kv_b, W, p + "kv_b_proj"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.o}, &L.o, W, p + "o_proj"));
    if (s_.c.attn_bias) {
      DAY0_RETURN_IF_ERROR(put.f32({a.q_a_bias}, &L.q_a_bias, W, p + "q_a_proj bias"));
      DAY0_RETURN_IF_ERROR(put.f32({a.kv_a_bias}, &L.kv_a_bias, W, p + "kv_a_proj bias"));
      DAY0_RETURN_IF_ERROR(put.f32({a.o_bias}, &L.o_bias, W, p + "o_proj bias"));
    }
  }
  if (src.indexer) {
    const blocks::IndexerWeights& a = *src.indexer;
    L.indexer = true;
    DAY0_RETURN_IF_ERROR(put.bf16({a.wq_b}, &L.wq_b, W, p + "indexer wq_b"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.wk}, &L.wk, W, p + "indexer wk"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.gate}, &L.gate, W, p + "indexer gate"));
    DAY0_RETURN_IF_ERROR(put.bf16({a.weights_proj}, &L.weights_proj, W, p + "indexer weights_proj"));
    DAY0_RETURN_IF_ERROR(put.f32({a.k_norm_w}, &L.k_norm_w, W, p + "indexer k_norm"));
    DAY0_RETURN_IF_ERROR(put.f32({a.k_norm_b}, &L.k_norm_b, W, p + "indexer k_norm"));
    DAY0_RETURN_IF_ERROR(put.f32({a.ape}, &L.ape, W, p + "indexer ape"));
  }
  if (src.moe) {
    const blocks::MoeLayer& m = *src.moe;
    L.moe = true;
    DAY0_RETURN_IF_ERROR(put.bf16({m.router}, &L.router, W, p + "router"));
    DAY0_RETURN_IF_ERROR(put.f32({m.score_bias}, &L.score_bias, W, p + "router correction bias"));
    const std::int64_t E = s_.c.experts, H = s_.c.hidden, I = s_.c.moe_inter;
    std::vector<const void*> pointers;
    if (s_.c.mxfp4) {
      DAY0_RETURN_IF_ERROR(put.mxfp4(m.gate_up_mx, &L.ex_a, &L.ex_b, p + "experts gate_up"));
      DAY0_RETURN_IF_ERROR(put.mxfp4(m.down_mx, &L.ex_c, &L.ex_d, p + "experts down"));
      const std::int64_t gu_blocks = 2 * I * H / 32, dn_blocks = H * I / 32;
      for (std::int64_t e = 0; e < E; ++e) pointers.push_back(L.ex_a.as<std::uint8_t>() + e * gu_blocks * 16);
      for (std::int64_t e = 0; e < E; ++e) pointers.push_back(L.ex_b.as<std::uint8_t>() + e * gu_blocks);
      for (std::int64_t e = 0; e < E; ++e) pointers.push_back(L.ex_c.as<std::uint8_t>() + e * dn_blocks * 16);
      for (std::int64_t e = 0; e < E; ++e) pointers.push_back(L.ex_d.as<std::uint8_t>() + e * dn_blocks);
    } else {
      const auto E_ = MemoryCategory::expert_cache;
      DAY0_RETURN_IF_ERROR(put.bf16(m.gate, &L.ex_a, E_, p + "experts gate"));
      DAY0_RETURN_IF_ERROR(put.bf16(m.up, &L.ex_b, E_, p + "experts up"));
      DAY0_RETURN_IF_ERROR(put.bf16(m.down, &L.ex_c, E_, p + "experts down"));
      for (const DeviceBuffer* b : {&L.ex_a, &L.ex_b, &L.ex_c})
        for (std::int64_t e = 0; e < E; ++e) pointers.push_back(b->as<std::uint16_t>() + e * I * H);
    }
    std::vector<std::uint8_t> bytes(pointers.size() * sizeof(void*));
    std::memcpy(bytes.data(), pointers.data(), bytes.size());
    DAY0_RETURN_IF_ERROR(put.owned(std::move(bytes), &L.table, W, p + "expert table"));
    auto* t = L.table.as<const void*>();
    L.experts.mxfp4 = s_.c.mxfp4;
    if (s_.c.mxfp4) {
      L.experts.gate_up_blocks = reinterpret_cast<const std::uint8_t* const*>(t);
      L.experts.gate_up_scales = reinterpret_cast<const std::uint8_t* const*>(t + E);
      L.experts.down_blocks = reinterpret_cast<const std::uint8_t* const*>(t + 2 * E);
      L.experts.down_scales = reinterpret_cast<const std::uint8_t* const*>(t + 3 * E);
    } else {
      L.experts.gate = reinterpret_cast<const std::uint16_t* const*>(t);
      L.experts.up = reinterpret_cast<const std::uint16_t* const*>(t + E);
      L.experts.down = reinterpret_cast<const std::uint16_t* const*>(t + 2 * E);
    }
    if (m.has_shared) {
      DAY0_RETURN_IF_ERROR(put.bf16({m.shared.gate, m.shared.up}, &L.gate_up, W, p + "shared experts gate/up"));
      DAY0_RETURN_IF_ERROR(put.bf16({m.shared.down}, &L.down, W, p + "shared experts down"));
    }
  }
  if (src.mlp) {
    DAY0_RETURN_IF_ERROR(put.bf16({src.mlp->gate, src.mlp->up}, &L.gate_up, W, p + "MLP gate/up"));
    DAY0_RETURN_IF_ERROR(put.bf16({src.mlp->down}, &L.down, W, p + "MLP down"));
  }
  return Status::ok();
}

Status Glm5Cuda::init(const io::ModelConfig& config, const std::shared_ptr<const io::Checkpoint>& checkpoint,
                      ThreadPool& pool) {
  DAY0_RETURN_IF_ERROR(open_device());
  DAY0_ASSIGN_OR_RETURN(gemm_, LtGemm::create(ledger_.get()));
  DAY0_ASSIGN_OR_RETURN(const models::Glm5Weights w, models::bind_glm5_weights(config, s_.c, checkpoint, {}));
  checkpoint_ = checkpoint;
  embed_host_ = w.embed;
  DAY0_ASSIGN_OR_RETURN(vision_, vision::load_glm5_vision(config, checkpoint, s_.c.hidden, pool));
  WeightUploader uploader(device_);
  WeightPlacer put(uploader, ledger_.get());
  const auto W = MemoryCategory::weights;
  DAY0_RETURN_IF_ERROR(put.bf16({w.embed}, &embed_, W, "the embedding"));
  if (!s_.c.tied) DAY0_RETURN_IF_ERROR(put.bf16({w.lm_head}, &lm_head_, W, "lm_head"));
  DAY0_RETURN_IF_ERROR(put.bf16({w.final_norm}, &final_norm_, W, "model.norm"));
  layers_.resize(static_cast<std::size_t>(s_.c.layers));
  for (std::int64_t l = 0; l < s_.c.layers; ++l) {
    LayerDev& L = layers_[static_cast<std::size_t>(l)];
    L.slot = w.slot[static_cast<std::size_t>(l)];
    L.index_slot = w.index_slot[static_cast<std::size_t>(l)];
    DAY0_RETURN_IF_ERROR(
        place_layer(put, w.layers[static_cast<std::size_t>(l)], L, "layer " + std::to_string(l) + " "));
  }
  const double gb = static_cast<double>(uploader.bytes_queued()) / 1e9;
  DAY0_RETURN_IF_ERROR(uploader.finish("the weights"));
  for (const BufferSpec& b : buffers(s_, chunk_))
    DAY0_RETURN_IF_ERROR(
        alloc(std::max<std::size_t>(b.bytes, 16), &(this->*b.member), MemoryCategory::activations, b.what));
  moe_scratch_bytes_ = k::glm_moe_scratch_bytes(chunk_, static_cast<int>(s_.c.top_k), static_cast<int>(s_.c.experts),
                                                s_.c.hidden, s_.c.moe_inter);
  DAY0_RETURN_IF_ERROR(alloc(std::max<std::size_t>(moe_scratch_bytes_, 16), &moe_scratch_, MemoryCategory::activations,
                             "expert scratch"));
  if (s_.c.mxfp4 && s_.c.experts > 0 && moe_gemm_tokens_ > 0) {
    moe_gemm_scratch_bytes_ = k::glm_moe_gemm_scratch_bytes(chunk_, static_cast<int>(s_.c.top_k),
                                                            static_cast<int>(s_.c.experts), s_.c.hidden, s_.c.moe_inter);
    DAY0_RETURN_IF_ERROR(alloc(std::max<std::size_t>(moe_gemm_scratch_bytes_, 256), &moe_gemm_scratch_,
                               MemoryCategory::fp8_workspace, "the expert workspace"));
  }
  DAY0_RETURN_IF_ERROR(allocate_step_buffers());
  decode_bytes_ = models::decode_weight_bytes(*checkpoint, s_.c.experts, s_.c.top_k, s_.c.tied);
  DAY0_LOG_INFO("GLM-5.3-Flash on cuda:{}: {:.2f} GB of weights, experts {:.2f} GiB, {}{}", device_, gb,
                ledger_->bytes(MemoryCategory::expert_cache) / 1073741824.0, s_.c.mxfp4 ? "MXFP4" : "bf16",
                dense_ ? ", dense attention" : "");
  return Status::ok();
}

std::vector<Glm5Cuda::BufferSpec> Glm5Cuda::buffers(const Shape& s, std::int64_t chunk) {
  const auto& c = s.c;
  const auto C = static_cast<std::size_t>(chunk);
  const auto n = [](std::int64_t v) { return static_cast<std::size_t>(std::max<std::int64_t>(v, 1)); };
  const std::size_t H = n(c.hidden), D = n(s.D()), d = n(s.kda_d);
  const std::size_t widest = std::max({H, D, n(c.heads * c.v_dim), n(c.q_lora), n(c.inter), n(c.moe_inter * c.shared)});
  const std::size_t ffn = std::max(n(c.inter), n(c.moe_inter * c.shared));
  return {
      {&Glm5Cuda::streams_, C * n(c.hc) * H * 4, "the hyper-connection streams"},
      {&Glm5Cuda::x_, C * H * 4, "the sublayer inputs"},
      {&Glm5Cuda::h_, C * H * 4, "normed activations"},
      {&Glm5Cuda::y_, C * H * 4, "sublayer outputs"},
      {&Glm5Cuda::post_, C * n(c.hc) * 4, "hyper-connection weights"},
      {&Glm5Cuda::comb_, C * n(c.hc * c.hc) * 4, "hyper-connection weights"},
      {&Glm5Cuda::xb_, C * widest * 2, "bf16 activations"},
      {&Glm5Cuda::xb_lo_, C * widest * 2, "bf16 activations"},
      {&Glm5Cuda::hf_, C * H * 4, "normed activations"},
      {&Glm5Cuda::qkv_, 3 * C * D * 4, "KDA projections"},
      {&Glm5Cuda::conv_, 3 * C * D * 4, "KDA q, k, v"},
      {&Glm5Cuda::low_, C * d * 4, "KDA low-rank gates"},
      {&Glm5Cuda::g_, C * D * 4, "KDA decays"},
      {&Glm5Cuda::beta_, C * n(s.kda_heads) * 4, "KDA beta"},
      {&Glm5Cuda::core_, C * D * 4, "KDA outputs"},
      {&Glm5Cuda::gate_, C * D * 4, "KDA output gates"},
      {&Glm5Cuda::qr_raw_, C * n(c.q_lora) * 4, "MLA query latents"},
      {&Glm5Cuda::qr_, C * n(c.q_lora) * 4, "MLA query latents"},
      {&Glm5Cuda::lat_raw_, C * n(c.kv_lora) * 4, "MLA latents"},
      {&Glm5Cuda::lat_, C * n(c.kv_lora) * 4, "MLA latents"},
      {&Glm5Cuda::q_, C * n(c.heads * c.nope) * 4, "MLA queries"},
      {&Glm5Cuda::heads_out_, C * n(c.heads * c.v_dim) * 4, "MLA head outputs"},
      {&Glm5Cuda::kraw_, C * n(c.index_dim) * 4, "indexer keys"},
      {&Glm5Cuda::graw_, C * n(c.index_dim) * 4, "indexer gates"},
      {&Glm5Cuda::iq_, C * n(c.index_heads * c.index_dim) * 4, "indexer queries"},
      {&Glm5Cuda::iw_, C * n(c.index_heads) * 4, "indexer head weights"},
      {&Glm5Cuda::selection_, C * n(s.width()) * 4, "the indexer's selection"},
      {&Glm5Cuda::rlog_, C * n(c.experts) * 4, "router logits"},
      {&Glm5Cuda::ids_, C * n(c.top_k) * 4, "routes"},
      {&Glm5Cuda::wts_, C * n(c.top_k) * 4, "routes"},
      {&Glm5Cuda::gu_, C * 2 * ffn * 4, "MLP gate/up"},
      {&Glm5Cuda::act_, C * ffn * 4, "MLP activations"},
  };
}

Status Glm5Cuda::linear(const DeviceBuffer& W, std::int64_t row0, const DeviceBuffer* bias, const float* x,
                        std::int64_t T, std::int64_t N, std::int64_t K, float* y, const char* what) {
  cudaStream_t s = stream_.get();
  const std::uint16_t* w = W.as<std::uint16_t>() + row0 * K;
  const float* b = bias != nullptr && bias->get() != nullptr ? bias->as<float>() : nullptr;
  if (T <= kGemvMaxRows) {
    DAY0_K(k::gemv_bf16(w, b, x, T, N, K, false, y, s), what);
    return Status::ok();
  }
  // fp32 activations as two bf16 parts on the tensor cores: x W^T = hi W^T + lo W^T.
  DAY0_K(k::split_bf16(x, T * K, xb_.as<std::uint16_t>(), xb_lo_.as<std::uint16_t>(), s), what);
  DAY0_RETURN_IF_ERROR(gemm_->linear(w, xb_.as<std::uint16_t>(), y, T, N, K, false, s));
  DAY0_RETURN_IF_ERROR(gemm_->linear(w, xb_lo_.as<std::uint16_t>(), y, T, N, K, true, s));
  if (b != nullptr) DAY0_K(k::add_bias_rows(y, b, T, N, s), what);
  return Status::ok();
}

Status Glm5Cuda::kda_layer(Glm5Session& st, const LayerDev& L, std::int64_t T) {
  cudaStream_t s = stream_.get();
  const std::int64_t H = s_.c.hidden, D = s_.D(), d = s_.kda_d, heads = s_.kda_heads, K = s_.kda_conv;
  const float* h = h_.as<float>();
  float* state = st.kda_state(L.slot);
  float* history = state + heads * d * d;
  // q, k, v projections [3, T, D] (one GEMV for a decode step, where [T, 3D] is the same), then
  // each one's causal convolution and SiLU with its history.
  if (T == 1) {
    DAY0_RETURN_IF_ERROR(linear(L.wqkv, 0, nullptr, h, 1, 3 * D, H, qkv_.as<float>(), "KDA q/k/v"));
  } else {
    for (std::int64_t p = 0; p < 3; ++p)
      DAY0_RETURN_IF_ERROR(linear(L.wqkv, p * D, nullptr, h, T, D, H, qkv_.as<float>() + p * T * D, "KDA q/k/v"));
  }
  mark(PhaseTimer::kda_proj);
  float* q = conv_.as<float>();
  float* kk = q + T * D;
  float* v = kk + T * D;
  for (std::int64_t p = 0; p < 3; ++p)
    DAY0_K(k::kda_conv_silu(qkv_.as<float>() + p * T * D, T, D, static_cast<int>(K), L.conv.as<float>() + p * D * K,
                            history + p * (K - 1) * D, conv_.as<float>() + p * T * D, s),
           "KDA convolution");
  // Decay gates g = f_b(f_a(h)), beta = b(h); q, k normalised.
  mark(PhaseTimer::kda);
  DAY0_RETURN_IF_ERROR(linear(L.f_a, 0, nullptr, h, T, d, H, low_.as<float>(), "KDA f_a"));
  DAY0_RETURN_IF_ERROR(linear(L.f_b, 0, nullptr, low_.as<float>(), T, D, d, g_.as<float>(), "KDA f_b"));
  DAY0_RETURN_IF_ERROR(linear(L.b_proj, 0, nullptr, h, T, heads, H, beta_.as<float>(), "KDA b"));
  mark(PhaseTimer::kda_proj);
  const k::KdaGateParams gp{L.dt_bias.as<float>(), L.A_log.as<float>(), s_.has_lower_bound, s_.lower_bound, s_.l2_eps};
  DAY0_K(
      k::kda_prepare(q, kk, g_.as<float>(), beta_.as<float>(), T, static_cast<int>(heads), static_cast<int>(d), gp, s),
      "KDA gates");
  DAY0_K(k::kda_recurrent(q, kk, v, g_.as<float>(), beta_.as<float>(), T, static_cast<int>(heads), static_cast<int>(d),
                          state, core_.as<float>(), s),
         "KDA recurrence");
  mark(PhaseTimer::kda);
  // Output gate, gated norm, o_proj.
  DAY0_RETURN_IF_ERROR(linear(L.g_a, 0, nullptr, h, T, d, H, low_.as<float>(), "KDA g_a"));
  DAY0_RETURN_IF_ERROR(linear(L.g_b, 0, nullptr, low_.as<float>(), T, D, d, gate_.as<float>(), "KDA g_b"));
  mark(PhaseTimer::kda_proj);
  DAY0_K(k::kda_gated_norm(core_.as<float>(), gate_.as<float>(), L.o_norm.as<float>(), T, static_cast<int>(heads),
                           static_cast<int>(d), s_.kda_norm_eps, s),
         "KDA output norm");
  mark(PhaseTimer::kda);
  DAY0_RETURN_IF_ERROR(linear(L.o_proj, 0, nullptr, core_.as<float>(), T, H, D, y_.as<float>(), "KDA o_proj"));
  mark(PhaseTimer::o_proj);
  return Status::ok();
}

Status Glm5Cuda::mla_layer(Glm5Session& st, const LayerDev& L, std::int64_t T, std::int64_t l, ForwardTrace* trace) {
  cudaStream_t s = stream_.get();
  const auto& c = s_.c;
  const std::int64_t H = c.hidden, R = c.kv_lora;
  const auto eps = static_cast<float>(c.rms_eps);
  const float* h = h_.as<float>();
  // Query latent and the cached latent, each RMS-normed.
  DAY0_RETURN_IF_ERROR(linear(L.q_a, 0, &L.q_a_bias, h, T, c.q_lora, H, qr_raw_.as<float>(), "q_a_proj"));
  DAY0_K(
      k::rms_norm(qr_raw_.as<float>(), T, c.q_lora, L.q_a_norm.as<std::uint16_t>(), eps, nullptr, qr_.as<float>(), s),
      "q_a_layernorm");
  DAY0_RETURN_IF_ERROR(linear(L.kv_a, 0, &L.kv_a_bias, h, T, R, H, lat_raw_.as<float>(), "kv_a_proj"));
  DAY0_K(k::rms_norm(lat_raw_.as<float>(), T, R, L.kv_a_norm.as<std::uint16_t>(), eps, nullptr, lat_.as<float>(), s),
         "kv_a_layernorm");
  DAY0_K(k::store_rows_bf16(lat_.as<float>(), T, R, position(), st.capacity(), st.latent(L.slot), s),
         "caching the latent");
  mark(PhaseTimer::mla_proj);
  const std::int64_t width = s_.width();
  if (L.indexer) {
    const std::int64_t id = c.index_dim, ih = c.index_heads;
    const int slot = static_cast<int>(L.index_slot);
    DAY0_RETURN_IF_ERROR(linear(L.wk, 0, nullptr, h, T, id, H, kraw_.as<float>(), "indexer wk"));
    DAY0_RETURN_IF_ERROR(linear(L.gate, 0, nullptr, h, T, id, H, graw_.as<float>(), "indexer gate"));
    DAY0_K(k::indexer_append(kraw_.as<float>(), graw_.as<float>(), T, static_cast<int>(id), L.k_norm_w.as<float>(),
                             L.k_norm_b.as<float>(), position(), st.keys(slot), st.gates(slot), s),
           "indexer keys");
    DAY0_K(k::indexer_pool(st.keys(slot), st.gates(slot), L.ape.as<float>(), T, static_cast<int>(id),
                           static_cast<int>(c.kpool), position(), st.pooled(slot), s),
           "indexer pools");
    DAY0_RETURN_IF_ERROR(
        linear(L.wq_b, 0, nullptr, qr_.as<float>(), T, ih * id, c.q_lora, iq_.as<float>(), "indexer wq_b"));
    DAY0_RETURN_IF_ERROR(linear(L.weights_proj, 0, nullptr, h, T, ih, H, iw_.as<float>(), "indexer weights"));
    DAY0_K(k::indexer_select(iq_.as<float>(), iw_.as<float>(), st.pooled(slot), T, static_cast<int>(ih),
                             static_cast<int>(id), static_cast<int>(c.kpool), c.index_topk, position(), st.capacity(),
                             selection_.as<std::int32_t>(), width, st.select_scratch(), st.select_scratch_bytes(), s),
           "indexer selection");
    mark(PhaseTimer::indexer);
    if (trace != nullptr) DAY0_RETURN_IF_ERROR(trace_pool_scores(st, T, l, slot, trace));
  }
  // (A shared layer attends the selection the layer before it left in selection_.)
  if (trace != nullptr)
    DAY0_RETURN_IF_ERROR(trace_copy(trace, "indexer." + std::to_string(l) + ".topk", selection_.get(),
                                    static_cast<std::size_t>(T * width), true));
  DAY0_RETURN_IF_ERROR(
      linear(L.q_b, 0, nullptr, qr_.as<float>(), T, c.heads * c.nope, c.q_lora, q_.as<float>(), "q_b_proj"));
  mark(PhaseTimer::mla_proj);
  k::MlaAttendArgs a{};
  a.q = q_.as<float>();
  a.kv_b = L.kv_b.as<std::uint16_t>();
  a.latent = st.latent(L.slot);
  a.selection = dense_ ? nullptr : selection_.as<std::int32_t>();
  a.width = width;
  a.T = T;
  a.position = position();
  a.capacity = st.capacity();
  a.heads = static_cast<int>(c.heads);
  a.nope = static_cast<int>(c.nope);
  a.v_dim = static_cast<int>(c.v_dim);
  a.R = static_cast<int>(R);
  a.scaling = 1.0f / std::sqrt(static_cast<float>(c.nope));
  a.out = heads_out_.as<float>();
  a.scratch = st.mla_scratch();
  a.scratch_floats = static_cast<std::int64_t>(st.mla_scratch_floats());
  DAY0_K(k::mla_attend(a, s), "MLA attention");
  mark(PhaseTimer::attention);
  DAY0_RETURN_IF_ERROR(
      linear(L.o, 0, &L.o_bias, heads_out_.as<float>(), T, H, c.heads * c.v_dim, y_.as<float>(), "o_proj"));
  mark(PhaseTimer::o_proj);
  return Status::ok();
}

Status Glm5Cuda::trace_pool_scores(Glm5Session& st, std::int64_t T, std::int64_t l, int slot, ForwardTrace* trace) {
  const auto& c = s_.c;
  const std::int64_t id = c.index_dim, ih = c.index_heads, kp = c.kpool, pools = (pass_pos_ + T) / kp;
  std::vector<float> q(static_cast<std::size_t>(T * ih * id)), w(static_cast<std::size_t>(T * ih)),
      pooled(static_cast<std::size_t>(pools * id)), scores;
  cudaStream_t s = stream_.get();
  DAY0_K(cudaMemcpyAsync(q.data(), iq_.get(), q.size() * 4, cudaMemcpyDeviceToHost, s), "tracing the indexer");
  DAY0_K(cudaMemcpyAsync(w.data(), iw_.get(), w.size() * 4, cudaMemcpyDeviceToHost, s), "tracing the indexer");
  if (pools > 0)
    DAY0_K(cudaMemcpyAsync(pooled.data(), st.pooled(slot), pooled.size() * 4, cudaMemcpyDeviceToHost, s),
           "tracing the indexer");
  DAY0_K(cudaStreamSynchronize(s), "tracing the indexer");
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < (pass_pos_ + t + 1) / kp; ++j)
      scores.push_back(blocks::indexer_pool_score(q.data() + t * ih * id, w.data() + t * ih, pooled.data() + j * id,
                                                  ih, id));
  trace->append("indexer." + std::to_string(l) + ".scores", scores.data(), scores.size());
  return Status::ok();
}

Status Glm5Cuda::mlp(const LayerDev& L, std::int64_t T, std::int64_t l, ForwardTrace* trace) {
  cudaStream_t s = stream_.get();
  const auto& c = s_.c;
  const std::int64_t H = c.hidden;
  const auto limit = static_cast<float>(c.swiglu_limit);
  const float* h = h_.as<float>();
  // The dense MLP, or the shared experts (the same form at their width) into y_ first.
  const std::int64_t I = L.moe ? c.moe_inter * c.shared : c.inter;
  const bool dense_part = L.gate_up.get() != nullptr;
  if (dense_part) {
    DAY0_RETURN_IF_ERROR(linear(L.gate_up, 0, nullptr, h, T, 2 * I, H, gu_.as<float>(), "MLP gate/up"));
    DAY0_K(k::clamped_swiglu(gu_.as<float>(), T, I, limit, act_.as<float>(), s), "MLP activation");
    DAY0_RETURN_IF_ERROR(linear(L.down, 0, nullptr, act_.as<float>(), T, H, I, y_.as<float>(), "MLP down"));
    mark(PhaseTimer::mlp);
  }
  if (!L.moe) return Status::ok();
  const int E = static_cast<int>(c.experts), K = static_cast<int>(c.top_k);
  DAY0_RETURN_IF_ERROR(linear(L.router, 0, nullptr, h, T, E, H, rlog_.as<float>(), "router"));
  DAY0_K(k::grouped_sigmoid_topk(rlog_.as<float>(), L.score_bias.as<float>(), T, E, K, static_cast<int>(c.n_group),
                                 static_cast<int>(c.topk_group), c.norm_topk_prob, static_cast<float>(c.routed_scaling),
                                 ids_.as<std::int32_t>(), wts_.as<float>(), s),
         "router top-k");
  mark(PhaseTimer::router);
  if (trace != nullptr) {
    DAY0_RETURN_IF_ERROR(
        trace_copy(trace, "router." + std::to_string(l) + ".topk", ids_.get(), static_cast<std::size_t>(T * K), true));
    DAY0_RETURN_IF_ERROR(trace_copy(trace, "router." + std::to_string(l) + ".logits", rlog_.get(),
                                    static_cast<std::size_t>(T * E), false));
  }
  if (moe_gemm_scratch_.get() != nullptr && T >= moe_gemm_tokens_) {
    DAY0_K(k::glm_moe_experts_gemm(L.experts, h, T, H, c.moe_inter, E, K, ids_.as<std::int32_t>(), wts_.as<float>(),
                                   limit, dense_part, y_.as<float>(), moe_gemm_scratch_.get(), moe_gemm_scratch_bytes_,
                                   s),
           "experts");
  } else {
    DAY0_K(k::glm_moe_experts(L.experts, h, T, H, c.moe_inter, E, K, ids_.as<std::int32_t>(), wts_.as<float>(),
                              limit, dense_part, y_.as<float>(), moe_scratch_.get(), moe_scratch_bytes_, s),
           "experts");
  }
  mark(PhaseTimer::experts);
  return Status::ok();
}

Status Glm5Cuda::layers(Glm5Session& st, std::int64_t T, ForwardTrace* trace) {
  cudaStream_t s = stream_.get();
  const auto& c = s_.c;
  const std::int64_t H = c.hidden;
  const int hc = static_cast<int>(c.hc);
  const auto eps = static_cast<float>(c.rms_eps), hc_eps = static_cast<float>(c.hc_eps);
  const int iters = static_cast<int>(c.hc_iters);
  float* streams = streams_.as<float>();
  if (pass_embeddings_ != nullptr) {
    DAY0_K(cudaMemcpyAsync(x_.get(), pass_embeddings_, static_cast<std::size_t>(T * H) * 4, cudaMemcpyDeviceToDevice, s),
           "input embeddings");
  } else {
    DAY0_K(k::embedding_lookup(embed_.as<std::uint16_t>(), H, tokens_dev_.as<std::int32_t>(), T, x_.as<float>(), s),
           "embedding");
  }
  if (trace != nullptr) DAY0_RETURN_IF_ERROR(trace_copy(trace, "hidden.embed", x_.get(), T * H, false));
  DAY0_K(k::repeat_rows(x_.as<float>(), T, H, hc, streams, s), "hyper-connection streams");
  mark(PhaseTimer::embed);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const LayerDev& L = layers_[static_cast<std::size_t>(l)];
    const std::string tag = std::to_string(l);
    // Attention site.
    DAY0_K(k::hc_collapse(streams, T, hc, H, L.attn_hc.fn.as<std::uint16_t>(), L.attn_hc.base.as<float>(),
                          L.attn_hc.scale.as<float>(), iters, eps, hc_eps, x_.as<float>(), post_.as<float>(),
                          comb_.as<float>(), s),
           "mHC collapse");
    mark(PhaseTimer::mhc);
    DAY0_K(k::rms_norm(x_.as<float>(), T, H, L.input_norm.as<std::uint16_t>(), eps, nullptr, h_.as<float>(), s),
           "input norm");
    mark(PhaseTimer::norm);
    if (L.kda) {
      DAY0_RETURN_IF_ERROR(kda_layer(st, L, T));
    } else {
      DAY0_RETURN_IF_ERROR(mla_layer(st, L, T, l, trace));
    }
    if (trace != nullptr) DAY0_RETURN_IF_ERROR(trace_copy(trace, "attn." + tag + ".out", y_.get(), T * H, false));
    DAY0_K(k::hc_expand(y_.as<float>(), post_.as<float>(), comb_.as<float>(), T, hc, H, streams, s), "mHC expand");
    mark(PhaseTimer::mhc);
    // MLP site.
    DAY0_K(k::hc_collapse(streams, T, hc, H, L.ffn_hc.fn.as<std::uint16_t>(), L.ffn_hc.base.as<float>(),
                          L.ffn_hc.scale.as<float>(), iters, eps, hc_eps, x_.as<float>(), post_.as<float>(),
                          comb_.as<float>(), s),
           "mHC collapse");
    mark(PhaseTimer::mhc);
    DAY0_K(k::rms_norm(x_.as<float>(), T, H, L.post_norm.as<std::uint16_t>(), eps, nullptr, h_.as<float>(), s),
           "post-attention norm");
    mark(PhaseTimer::norm);
    DAY0_RETURN_IF_ERROR(mlp(L, T, l, trace));
    DAY0_K(k::hc_expand(y_.as<float>(), post_.as<float>(), comb_.as<float>(), T, hc, H, streams, s), "mHC expand");
    mark(PhaseTimer::mhc);
    if (trace != nullptr)
      DAY0_RETURN_IF_ERROR(trace_copy(trace, "hidden." + tag, streams, static_cast<std::size_t>(T * hc * H), false));
  }
  // The head's input: the streams' mean, RMS-normed.
  DAY0_K(k::hc_mean(streams, T, hc, H, x_.as<float>(), s), "stream mean");
  DAY0_K(k::rms_norm(x_.as<float>(), T, H, final_norm_.as<std::uint16_t>(), eps, nullptr, hf_.as<float>(), s),
         "final norm");
  mark(PhaseTimer::norm);
  if (trace != nullptr) DAY0_RETURN_IF_ERROR(trace_copy(trace, "hidden.final_norm", hf_.get(), T * H, false));
  return Status::ok();
}

}  // namespace

Result<limits::DeviceFootprint> glm5_next_device_footprint(const io::ModelConfig& config, bool /*fp8*/) {
  DAY0_ASSIGN_OR_RETURN(const Shape s, read_shape(config));
  using u = std::uint64_t;
  // The weights as init() places them: every text tensor at 2 bytes per value (bf16 matrices;
  // the few fp32 vectors are rounding), MXFP4 experts as stored.
  const models::Architecture* arch = models::find_architecture(config.model_type());
  if (arch == nullptr) return error(ErrorCode::internal, "glm5_next is not registered");
  DAY0_ASSIGN_OR_RETURN(const std::vector<models::ExpectedTensor> tensors, arch->expected_tensors(config));
  limits::DeviceFootprint f;
  for (const auto& t : tensors) {
    if (t.role == models::TensorRole::vision || t.role == models::TensorRole::mtp) continue;
    u numel = 1;
    for (const u d : t.shape) numel *= d;
    f.weights += t.dtype == DType::u8 ? numel : numel * 2;
  }
  f.workspace = DeviceModel::step_buffer_bytes(s.c.vocab, kGlm5PrefillChunk) + kLtGemmWorkspaceBytes +
                kernels::glm_moe_scratch_bytes(kGlm5PrefillChunk, static_cast<int>(s.c.top_k),
                                               static_cast<int>(s.c.experts), s.c.hidden, s.c.moe_inter);
  if (s.c.mxfp4 && s.c.experts > 0)
    f.workspace += kernels::glm_moe_gemm_scratch_bytes(kGlm5PrefillChunk, static_cast<int>(s.c.top_k),
                                                       static_cast<int>(s.c.experts), s.c.hidden, s.c.moe_inter);
  for (const auto& b : Glm5Cuda::buffers(s, kGlm5PrefillChunk)) f.workspace += b.bytes;
  const auto& c = s.c;
  const u per_position = static_cast<u>(s.mla_layers * c.kv_lora * 2) +
                         static_cast<u>(s.indexer_layers * (2 * c.index_dim + c.index_dim / c.kpool + 1) * 4);
  const u kda = static_cast<u>(s.kda_layers * s.kda_floats()) * 4 * (1 + kPromptSnapshots + kStepSnapshots);
  f.state_bytes = [per_position, kda, s](std::int64_t context) {
    const auto cap = (std::max<std::int64_t>(context, 1) + kGrain - 1) / kGrain * kGrain;
    const u scratch = (s.mla_layers > 0 ? glm5::attention_scratch_floats(s, cap) * 4 : 0) +
                      (s.indexer_layers > 0 ? glm5::selection_scratch_bytes(s, cap) : 0);
    const u c2 = static_cast<u>(cap);
    return per_position * (c2 + c2 / 2 + static_cast<u>(kGrain)) + kda + scratch;
  };
  f.max_context = c.max_positions;
  return f;
}

Result<std::unique_ptr<models::LoadedModel>> load_glm5_next(const io::ModelConfig& config,
                                                            std::shared_ptr<const io::Checkpoint> checkpoint,
                                                            ThreadPool& pool, const models::LoadOptions& options) {
  DAY0_ASSIGN_OR_RETURN(Shape s, read_shape(config));
  int device = 0;
  if (options.device.rfind("cuda:", 0) == 0) device = std::atoi(options.device.c_str() + 5);
  if (options.max_context > 0) s.c.max_positions = std::min(s.c.max_positions, options.max_context);
  auto model = std::make_unique<Glm5Cuda>(std::move(s), device);
  DAY0_RETURN_IF_ERROR(model->init(config, checkpoint, pool));
  return std::unique_ptr<models::LoadedModel>(std::move(model));
}

}  // namespace day0::cuda
