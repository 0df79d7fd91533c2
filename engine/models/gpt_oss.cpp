// gpt-oss (model_type gpt_oss) on the CPU: GQA attention with sinks, alternating sliding-window
// and full layers, YaRN RoPE, and a top-k MoE whose experts ship in MXFP4. The config and the
// tensors come from the manifest (models/gpt_oss_manifest.h), shared with the GPU program.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backend/cpu/cpu_ops.h"
#include "blocks/rope.h"
#include "memory/kv_cache.h"
#include "models/architecture.h"
#include "models/gpt_oss_manifest.h"
#include "models/loaded_model.h"
#include "models/streamed_experts.h"
#include "models/weights.h"

#ifdef DAY0_HAVE_CUDA
#include "backend/cuda/gpt_oss_cuda.h"
#endif

namespace day0::models {
namespace {

using GptOssShape = GptOssConfig;

Result<MoeLayout> moe_layout(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const GptOssConfig s, read_gpt_oss_config(config));
  return MoeLayout{s.layers, s.layers, s.experts, s.top_k, 0};
}

Result<std::vector<ExpectedTensor>> expected_tensors(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const GptOssConfig s, read_gpt_oss_config(config));
  return gpt_oss_tensors(s);
}

// ---- Running the model ------------------------------------------------------------------------

using GptOssLayer = GptOssLayerWeights;

class GptOssState final : public SessionState {
 public:
  GptOssState(const GptOssShape& s, std::int64_t page_tokens) : kv(s.layers, s.kv_heads, s.head_dim, page_tokens) {}
  std::int64_t length() const override { return kv.length(); }
  std::int64_t truncate(std::int64_t tokens) override {
    kv.truncate(tokens);
    return kv.length();
  }
  std::uint64_t bytes() const override { return kv.bytes(); }
  memory::PagedKvCache kv;
};

// gpt-oss's expert activation: gate and up are interleaved (even, odd) in the gate_up output;
// gate is clamped above at 7, up to [-7, 7]; out = (up + 1) * gate * sigmoid(1.702 * gate).
void clamped_swiglu(const float* gate_up, std::int64_t inter, float* out) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  for (std::int64_t i = 0; i < inter; ++i) {
    const float gate = std::min(gate_up[2 * i], kLimit);
    const float up = std::clamp(gate_up[2 * i + 1], -kLimit, kLimit);
    const float glu = gate / (1.0f + std::exp(-gate * kAlpha));
    out[i] = (up + 1.0f) * glu;
  }
}

class GptOssModel final : public LoadedModel {
 public:
  GptOssModel(GptOssShape shape, std::shared_ptr<const io::Checkpoint> checkpoint, blocks::Rope rope,
              ThreadPool& pool, LoadOptions options)
      : s_(std::move(shape)), checkpoint_(std::move(checkpoint)), rope_(std::move(rope)), pool_(pool), options_(options) {}

  Status bind() {
    DAY0_ASSIGN_OR_RETURN(GptOssWeights w, bind_gpt_oss(s_, checkpoint_));
    embed_ = w.embed;
    final_norm_ = w.final_norm;
    lm_head_ = w.lm_head;
    layers_ = std::move(w.layers);
    decode_bytes_ = decode_weight_bytes(*checkpoint_, s_.experts, s_.top_k, lm_head_.data == embed_.data);
    return Status::ok();
  }

  std::uint64_t decode_bytes_per_token() const override { return decode_bytes_; }

  Status stream_experts(const ExpertStreamingOptions& options) override {
    const auto manifest = gpt_oss_tensors(s_);
    DAY0_ASSIGN_OR_RETURN(streamed_, StreamedExperts::open(*checkpoint_, manifest, options,
                                                           static_cast<std::size_t>(s_.top_k)));
    slot_.clear();
    for (std::int32_t l = 0; l < s_.layers; ++l) {
      SlotLayout o;
      DAY0_ASSIGN_OR_RETURN(o.gate_up_blocks, streamed_->offset(l, "gate_up_proj_blocks"));
      DAY0_ASSIGN_OR_RETURN(o.gate_up_scales, streamed_->offset(l, "gate_up_proj_scales"));
      DAY0_ASSIGN_OR_RETURN(o.gate_up_bias, streamed_->offset(l, "gate_up_proj_bias"));
      DAY0_ASSIGN_OR_RETURN(o.down_blocks, streamed_->offset(l, "down_proj_blocks"));
      DAY0_ASSIGN_OR_RETURN(o.down_scales, streamed_->offset(l, "down_proj_scales"));
      DAY0_ASSIGN_OR_RETURN(o.down_bias, streamed_->offset(l, "down_proj_bias"));
      slot_.push_back(o);
    }
    return Status::ok();
  }
  ExpertStreaming expert_streaming() const override { return streamed_ ? streamed_->report() : ExpertStreaming{}; }

  std::int64_t vocab_size() const override { return s_.vocab; }
  std::int64_t hidden_size() const override { return s_.hidden; }
  std::int64_t max_context() const override { return s_.max_positions; }
  std::unique_ptr<SessionState> new_state() const override {
    return std::make_unique<GptOssState>(s_, options_.kv_page_tokens);
  }
  std::uint64_t state_bytes(std::int64_t tokens) const override {
    // Keys and values of every layer (sliding ones too), fp32, in whole pages.
    const std::int64_t page = std::max<std::int64_t>(1, options_.kv_page_tokens);
    const std::int64_t positions = (tokens + page - 1) / page * page;
    return static_cast<std::uint64_t>(2 * s_.layers * s_.kv_heads * s_.head_dim * positions) * sizeof(float);
  }

  Status forward(SessionState& base_state, std::span<const std::int32_t> tokens, std::int64_t logit_rows,
                 float* logits, ForwardTrace* trace) override {
    auto& state = static_cast<GptOssState&>(base_state);
    const auto T = static_cast<std::int64_t>(tokens.size());
    const std::int64_t H = s_.hidden, pos0 = state.length();
    if (T == 0) return error(ErrorCode::invalid_argument, "nothing to feed: the token list is empty");
    if (logit_rows < 0 || logit_rows > T) return error(ErrorCode::invalid_argument, "more logit rows than tokens");
    if (pos0 + T > s_.max_positions)
      return error(ErrorCode::invalid_argument, "the context would hold " + std::to_string(pos0 + T) +
                                                    " tokens; this model allows " + std::to_string(s_.max_positions));
    for (std::int64_t t = 0; t < T; ++t)
      if (tokens[static_cast<std::size_t>(t)] < 0 || tokens[static_cast<std::size_t>(t)] >= s_.vocab)
        return error(ErrorCode::invalid_argument, "token id " + std::to_string(tokens[static_cast<std::size_t>(t)]) +
                                                      " is outside the vocabulary (0.." + std::to_string(s_.vocab - 1) + ")");

    // x: [T, H] residual stream.
    std::vector<float> x(static_cast<std::size_t>(T * H)), h(x.size());
    for (std::int64_t t = 0; t < T; ++t) cpu::decode_row(embed_, tokens[static_cast<std::size_t>(t)], x.data() + t * H);
    if (trace) trace->append("hidden.embed", x.data(), x.size());

    const std::int64_t half = s_.head_dim / 2;
    std::vector<float> cos(static_cast<std::size_t>(T * half)), sin(cos.size());
    rope_.tables(pos0, T, cos.data(), sin.data());
    state.kv.reserve(pos0 + T);

    for (std::int64_t l = 0; l < s_.layers; ++l) {
      const GptOssLayer& L = layers_[static_cast<std::size_t>(l)];
      cpu::rms_norm(x.data(), T, H, L.input_norm, static_cast<float>(s_.rms_eps), h.data());
      std::vector<float> attn = attention(L, l, state, h.data(), T, pos0, cos.data(), sin.data());
      if (trace) trace->append("attn." + std::to_string(l) + ".out", attn.data(), attn.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += attn[i];
      cpu::rms_norm(x.data(), T, H, L.post_norm, static_cast<float>(s_.rms_eps), h.data());
      DAY0_RETURN_IF_ERROR(moe(L, l, h.data(), T, x.data(), trace));
      if (trace) trace->append("hidden." + std::to_string(l), x.data(), x.size());
    }
    state.kv.set_length(pos0 + T);

    const std::int64_t first = T - logit_rows;
    cpu::rms_norm(x.data(), T, H, final_norm_, static_cast<float>(s_.rms_eps), h.data());
    if (trace) trace->append("hidden.final_norm", h.data(), h.size());
    if (logit_rows > 0) cpu::linear(pool_, h.data() + first * H, logit_rows, lm_head_, nullptr, logits);
    return Status::ok();
  }

 private:
  // Grouped-query attention with learned sinks over the cache; sliding layers see the last
  // `sliding_window` positions including the current one. Returns o_proj's output [T, H].
  std::vector<float> attention(const GptOssLayer& L, std::int64_t layer, GptOssState& state, const float* h,
                               std::int64_t T, std::int64_t pos0, const float* cos, const float* sin) {
    const std::int64_t nh = s_.heads, nkv = s_.kv_heads, d = s_.head_dim, H = s_.hidden;
    const std::int64_t group = nh / nkv;
    std::vector<float> q(static_cast<std::size_t>(T * nh * d)), k(static_cast<std::size_t>(T * nkv * d)), v(k.size());
    cpu::linear(pool_, h, T, L.q, &L.q_bias, q.data());
    cpu::linear(pool_, h, T, L.k, &L.k_bias, k.data());
    cpu::linear(pool_, h, T, L.v, &L.v_bias, v.data());
    cpu::rope_halves(q.data(), T, nh, d, cos, sin);
    cpu::rope_halves(k.data(), T, nkv, d, cos, sin);
    for (std::int64_t t = 0; t < T; ++t) {
      std::copy_n(k.data() + t * nkv * d, nkv * d, state.kv.key(layer, pos0 + t));
      std::copy_n(v.data() + t * nkv * d, nkv * d, state.kv.value(layer, pos0 + t));
    }
    std::vector<float> sinks(static_cast<std::size_t>(nh));
    cpu::decode_row(L.sinks, 0, sinks.data());
    const float scaling = 1.0f / std::sqrt(static_cast<float>(d));
    const std::int64_t window = s_.sliding[static_cast<std::size_t>(layer)] ? s_.sliding_window : 0;

    std::vector<float> out(static_cast<std::size_t>(T * nh * d));
    pool_.parallel_for(static_cast<std::size_t>(T * nh), 1, [&](std::size_t begin, std::size_t end) {
      std::vector<float> scores;
      for (std::size_t job = begin; job < end; ++job) {
        const std::int64_t t = static_cast<std::int64_t>(job) / nh, head = static_cast<std::int64_t>(job) % nh;
        const std::int64_t pos = pos0 + t, kvh = head / group;
        const std::int64_t lo = window > 0 ? std::max<std::int64_t>(0, pos - window + 1) : 0;
        const float* qv = q.data() + (t * nh + head) * d;
        scores.resize(static_cast<std::size_t>(pos - lo + 1));
        float m = sinks[static_cast<std::size_t>(head)];
        for (std::int64_t j = lo; j <= pos; ++j) {
          const float sc = cpu::dot(qv, state.kv.key(layer, j) + kvh * d, d) * scaling;
          scores[static_cast<std::size_t>(j - lo)] = sc;
          m = std::max(m, sc);
        }
        // The sink is one more logit in the softmax, with no value vector.
        float z = std::exp(sinks[static_cast<std::size_t>(head)] - m);
        for (auto& sc : scores) {
          sc = std::exp(sc - m);
          z += sc;
        }
        float* o = out.data() + (t * nh + head) * d;
        std::fill_n(o, d, 0.0f);
        for (std::int64_t j = lo; j <= pos; ++j) {
          const float p = scores[static_cast<std::size_t>(j - lo)] / z;
          cpu::axpy(p, state.kv.value(layer, j) + kvh * d, o, d);
        }
      }
    });
    std::vector<float> projected(static_cast<std::size_t>(T * H));
    cpu::linear(pool_, out.data(), T, L.o, &L.o_bias, projected.data());
    return projected;
  }

  // Router (top-k of the logits, softmax over the selected) and the selected experts, added to
  // the residual x. Tokens are grouped by expert so each expert's weights are decoded once.
  Status moe(const GptOssLayer& L, std::int64_t layer, const float* h, std::int64_t T, float* x, ForwardTrace* trace) {
    const std::int64_t E = s_.experts, K = s_.top_k, H = s_.hidden, I = s_.inter;
    std::vector<float> router_logits(static_cast<std::size_t>(T * E));
    cpu::linear(pool_, h, T, L.router, &L.router_bias, router_logits.data());
    std::vector<std::int32_t> chosen(static_cast<std::size_t>(T * K));
    std::vector<float> weights(static_cast<std::size_t>(T * K));
    std::vector<std::vector<std::pair<std::int64_t, float>>> by_expert(static_cast<std::size_t>(E));
    for (std::int64_t t = 0; t < T; ++t) {
      const float* r = router_logits.data() + t * E;
      std::vector<std::int32_t> order(static_cast<std::size_t>(E));
      std::iota(order.begin(), order.end(), 0);
      // Highest first; equal logits keep the lower expert id first.
      std::partial_sort(order.begin(), order.begin() + K, order.end(), [&](std::int32_t a, std::int32_t b) {
        return r[a] > r[b] || (r[a] == r[b] && a < b);
      });
      const float top = r[order[0]];
      float z = 0;
      for (std::int64_t j = 0; j < K; ++j) z += std::exp(r[order[static_cast<std::size_t>(j)]] - top);
      for (std::int64_t j = 0; j < K; ++j) {
        const std::int32_t e = order[static_cast<std::size_t>(j)];
        chosen[static_cast<std::size_t>(t * K + j)] = e;
        weights[static_cast<std::size_t>(t * K + j)] = std::exp(r[e] - top) / z;
        by_expert[static_cast<std::size_t>(e)].push_back({t, weights[static_cast<std::size_t>(t * K + j)]});
      }
    }
    if (trace) {
      std::vector<float> ids(chosen.begin(), chosen.end());
      trace->append("router." + std::to_string(layer) + ".topk", ids.data(), ids.size());
      trace->append("router." + std::to_string(layer) + ".weights", weights.data(), weights.size());
    }
    std::vector<float> moe_out(static_cast<std::size_t>(T * H), 0.0f);
    const auto run_expert = [&](std::int32_t e, const cpu::Mxfp4Matrix& gate_up, const cpu::Matrix& gate_up_bias,
                                const cpu::Mxfp4Matrix& down, const cpu::Matrix& down_bias) {
      const auto& routed = by_expert[static_cast<std::size_t>(e)];
      const auto n = static_cast<std::int64_t>(routed.size());
      std::vector<float> xs(static_cast<std::size_t>(n * H)), gu(static_cast<std::size_t>(n * 2 * I)),
          act(static_cast<std::size_t>(n * I)), dn(static_cast<std::size_t>(n * H));
      for (std::int64_t i = 0; i < n; ++i) std::copy_n(h + routed[static_cast<std::size_t>(i)].first * H, H, xs.data() + i * H);
      cpu::linear(pool_, xs.data(), n, gate_up, &gate_up_bias, gu.data());
      for (std::int64_t i = 0; i < n; ++i) clamped_swiglu(gu.data() + i * 2 * I, I, act.data() + i * I);
      cpu::linear(pool_, act.data(), n, down, &down_bias, dn.data());
      for (std::int64_t i = 0; i < n; ++i) {
        const auto [t, w] = routed[static_cast<std::size_t>(i)];
        for (std::int64_t c = 0; c < H; ++c) moe_out[static_cast<std::size_t>(t * H + c)] += w * dn[static_cast<std::size_t>(i * H + c)];
      }
    };
    std::vector<std::int32_t> used;
    for (std::int32_t e = 0; e < E; ++e)
      if (!by_expert[static_cast<std::size_t>(e)].empty()) used.push_back(e);
    if (!streamed_) {
      for (const std::int32_t e : used) {
        const auto ue = static_cast<std::size_t>(e);
        run_expert(e, L.gate_up[ue], L.gate_up_bias[ue], L.down[ue], L.down_bias[ue]);
      }
    } else {
      // The same views, pointing into the cache slot that holds the expert.
      const SlotLayout& o = slot_[static_cast<std::size_t>(layer)];
      DAY0_RETURN_IF_ERROR(streamed_->for_each(static_cast<std::int32_t>(layer), used,
                                               [&](std::size_t i, const std::uint8_t* p) {
                                                 const auto ue = static_cast<std::size_t>(used[i]);
                                                 cpu::Mxfp4Matrix gate_up = L.gate_up[ue], down = L.down[ue];
                                                 cpu::Matrix gate_up_bias = L.gate_up_bias[ue],
                                                             down_bias = L.down_bias[ue];
                                                 gate_up.blocks = p + o.gate_up_blocks;
                                                 gate_up.scales = p + o.gate_up_scales;
                                                 down.blocks = p + o.down_blocks;
                                                 down.scales = p + o.down_scales;
                                                 gate_up_bias.data = p + o.gate_up_bias;
                                                 down_bias.data = p + o.down_bias;
                                                 run_expert(used[i], gate_up, gate_up_bias, down, down_bias);
                                                 return Status::ok();
                                               }));
    }
    for (std::size_t i = 0; i < moe_out.size(); ++i) x[i] += moe_out[i];
    return Status::ok();
  }

  // Where each of an expert's tensors starts in its cache slot (streamed experts).
  struct SlotLayout {
    std::uint64_t gate_up_blocks = 0, gate_up_scales = 0, gate_up_bias = 0, down_blocks = 0, down_scales = 0,
                  down_bias = 0;
  };

  GptOssShape s_;
  std::shared_ptr<const io::Checkpoint> checkpoint_;
  blocks::Rope rope_;
  ThreadPool& pool_;
  LoadOptions options_;
  cpu::Matrix embed_, final_norm_, lm_head_;
  std::vector<GptOssLayer> layers_;
  std::uint64_t decode_bytes_ = 0;
  std::unique_ptr<StreamedExperts> streamed_;  // null: the experts are read through the memory map
  std::vector<SlotLayout> slot_;               // per layer, with streamed_
};

Result<std::unique_ptr<LoadedModel>> load(const io::ModelConfig& config, std::shared_ptr<const io::Checkpoint> checkpoint,
                                          ThreadPool& pool, const LoadOptions& options) {
  DAY0_ASSIGN_OR_RETURN(GptOssShape s, read_gpt_oss_config(config));
  if (s.head_dim % 2 != 0) return error(ErrorCode::corrupt_data, config.origin() + ": head_dim must be even for RoPE");
  DAY0_ASSIGN_OR_RETURN(blocks::Rope rope, blocks::make_rope(config.text(), s.head_dim, s.max_positions));
  auto model = std::make_unique<GptOssModel>(std::move(s), std::move(checkpoint), std::move(rope), pool, options);
  DAY0_RETURN_IF_ERROR(model->bind());
  return std::unique_ptr<LoadedModel>(std::move(model));
}

}  // namespace

extern const Architecture kGptOss;
const Architecture kGptOss{
    "gpt_oss",
    "gpt-oss",
    "MXFP4 experts, attention sinks, sliding-window and full attention layers",
    &moe_layout,
    &expected_tensors,
    &load,
#ifdef DAY0_HAVE_CUDA
    &cuda::load_gpt_oss,
    &cuda::gpt_oss_device_footprint,
#else
    nullptr,     nullptr,
#endif
};

}  // namespace day0::models
