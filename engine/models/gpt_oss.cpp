// gpt-oss (model_type gpt_oss): GQA attention with sinks, alternating sliding-window and full
// layers, YaRN RoPE, and a top-k MoE whose experts ship in MXFP4.
//
// Released checkpoint layout per layer N (H hidden, I expert width, E experts):
//   model.layers.N.self_attn.{q,k,v,o}_proj.{weight,bias}, self_attn.sinks [heads]
//   model.layers.N.mlp.router.{weight [E, H], bias [E]}
//   model.layers.N.mlp.experts.gate_up_proj_blocks [E, 2I, H/32, 16] u8  (gate/up interleaved)
//   model.layers.N.mlp.experts.gate_up_proj_scales [E, 2I, H/32] u8 (E8M0)
//   model.layers.N.mlp.experts.gate_up_proj_bias   [E, 2I]
//   model.layers.N.mlp.experts.down_proj_blocks    [E, H, I/32, 16] u8, _scales [E, H, I/32]
//   model.layers.N.mlp.experts.down_proj_bias      [E, H]
// Without quantization_config (a bf16 re-save) the experts are gate_up_proj [E, H, 2I] and
// down_proj [E, I, H].
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backend/cpu/cpu_ops.h"
#include "blocks/rope.h"
#include "memory/kv_cache.h"
#include "models/architecture.h"
#include "models/loaded_model.h"
#include "models/weights.h"

#ifdef DAY0_HAVE_CUDA
#include "backend/cuda/gpt_oss_cuda.h"
#endif

namespace day0::models {
namespace {

struct GptOssShape {
  std::int64_t hidden, layers, experts, top_k, inter, heads, kv_heads, head_dim, vocab;
  bool tied, mxfp4;
  std::int64_t sliding_window = 0, max_positions = 0;
  double rms_eps = 1e-5;
  std::vector<bool> sliding;  // per layer
};

Result<GptOssShape> read_shape(const io::ModelConfig& config) {
  const io::ConfigView c = config.text();
  GptOssShape s{};
  DAY0_ASSIGN_OR_RETURN(s.hidden, c.get_int("hidden_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.layers, c.get_int("num_hidden_layers", kLayerRange));
  DAY0_ASSIGN_OR_RETURN(s.experts, c.get_int("num_local_experts", kExpertRange));
  DAY0_ASSIGN_OR_RETURN(s.top_k, c.get_int("num_experts_per_tok", {1, s.experts}));
  DAY0_ASSIGN_OR_RETURN(s.inter, c.get_int("intermediate_size", kDimRange));
  DAY0_ASSIGN_OR_RETURN(s.heads, c.get_int("num_attention_heads", {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.kv_heads, c.get_int("num_key_value_heads", {1, s.heads}));
  DAY0_ASSIGN_OR_RETURN(s.head_dim, c.get_int_or("head_dim", s.hidden / s.heads, {1, 4096}));
  DAY0_ASSIGN_OR_RETURN(s.vocab, c.get_int("vocab_size", kVocabRange));
  DAY0_ASSIGN_OR_RETURN(s.tied, c.get_bool_or("tie_word_embeddings", false));
  if (s.heads % s.kv_heads != 0)
    return error(ErrorCode::corrupt_data, config.origin() + ": num_attention_heads (" + std::to_string(s.heads) +
                                              ") is not a multiple of num_key_value_heads (" +
                                              std::to_string(s.kv_heads) + ")");
  s.mxfp4 = false;
  if (const auto q = config.root().optional_child("quantization_config")) {
    DAY0_ASSIGN_OR_RETURN(const std::string method, q->get_string_or("quant_method", ""));
    if (method == "mxfp4") {
      s.mxfp4 = true;
    } else if (!method.empty()) {
      return error(ErrorCode::unsupported, config.origin() + ": quantization method \"" + method +
                                               "\" is not supported for gpt-oss (MXFP4 or unquantized only)");
    }
  }
  if (s.mxfp4 && (s.hidden % 32 != 0 || s.inter % 32 != 0))
    return error(ErrorCode::corrupt_data, config.origin() + ": MXFP4 experts need hidden_size and " +
                                              "intermediate_size to be multiples of 32");
  DAY0_ASSIGN_OR_RETURN(s.max_positions, c.get_int_or("max_position_embeddings", 131072, {1, 1ll << 40}));
  DAY0_ASSIGN_OR_RETURN(s.rms_eps, c.get_float_or("rms_norm_eps", 1e-5));
  DAY0_ASSIGN_OR_RETURN(s.sliding_window, c.get_int_or("sliding_window", 0, {0, 1ll << 40}));
  s.sliding.assign(static_cast<std::size_t>(s.layers), false);
  if (c.has("layer_types")) {
    DAY0_ASSIGN_OR_RETURN(const auto types, c.get_string_list("layer_types"));
    if (static_cast<std::int64_t>(types.size()) != s.layers)
      return error(ErrorCode::corrupt_data, config.origin() + ": layer_types lists " + std::to_string(types.size()) +
                                                " layers but num_hidden_layers is " + std::to_string(s.layers));
    for (std::size_t l = 0; l < types.size(); ++l) {
      if (types[l] != "sliding_attention" && types[l] != "full_attention")
        return error(ErrorCode::corrupt_data, config.origin() + ": layer_types[" + std::to_string(l) + "] is \"" +
                                                  types[l] + "\"; expected sliding_attention or full_attention");
      s.sliding[l] = types[l] == "sliding_attention" && s.sliding_window > 0;
    }
  }
  return s;
}

Result<MoeLayout> moe_layout(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const GptOssShape s, read_shape(config));
  return MoeLayout{s.layers, s.layers, s.experts, s.top_k, 0};
}

Result<std::vector<ExpectedTensor>> expected_tensors(const io::ModelConfig& config) {
  DAY0_ASSIGN_OR_RETURN(const GptOssShape s, read_shape(config));
  using u = std::uint64_t;
  const u H = static_cast<u>(s.hidden), E = static_cast<u>(s.experts), I = static_cast<u>(s.inter);
  const u q = static_cast<u>(s.heads * s.head_dim), kv = static_cast<u>(s.kv_heads * s.head_dim);
  const DType b = DType::bf16;
  std::vector<ExpectedTensor> t;
  t.push_back({"model.embed_tokens.weight", b, {static_cast<u>(s.vocab), H}});
  for (std::int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", b, {H}});
    t.push_back({p + "post_attention_layernorm.weight", b, {H}});
    t.push_back({p + "self_attn.q_proj.weight", b, {q, H}});
    t.push_back({p + "self_attn.q_proj.bias", b, {q}});
    t.push_back({p + "self_attn.k_proj.weight", b, {kv, H}});
    t.push_back({p + "self_attn.k_proj.bias", b, {kv}});
    t.push_back({p + "self_attn.v_proj.weight", b, {kv, H}});
    t.push_back({p + "self_attn.v_proj.bias", b, {kv}});
    t.push_back({p + "self_attn.o_proj.weight", b, {H, q}});
    t.push_back({p + "self_attn.o_proj.bias", b, {H}});
    t.push_back({p + "self_attn.sinks", b, {static_cast<u>(s.heads)}});
    t.push_back({p + "mlp.router.weight", b, {E, H}});
    t.push_back({p + "mlp.router.bias", b, {E}});
    const std::string e = p + "mlp.experts.";
    if (s.mxfp4) {
      t.push_back({e + "gate_up_proj_blocks", DType::u8, {E, 2 * I, H / 32, 16}});
      t.push_back({e + "gate_up_proj_scales", DType::u8, {E, 2 * I, H / 32}});
      t.push_back({e + "down_proj_blocks", DType::u8, {E, H, I / 32, 16}});
      t.push_back({e + "down_proj_scales", DType::u8, {E, H, I / 32}});
    } else {
      t.push_back({e + "gate_up_proj", b, {E, H, 2 * I}});
      t.push_back({e + "down_proj", b, {E, I, H}});
    }
    t.push_back({e + "gate_up_proj_bias", b, {E, 2 * I}});
    t.push_back({e + "down_proj_bias", b, {E, H}});
  }
  t.push_back({"model.norm.weight", b, {H}});
  if (!s.tied) t.push_back({"lm_head.weight", b, {static_cast<u>(s.vocab), H}});
  for (auto& tensor : t) tensor.role = classify_by_name(tensor.name);
  return t;
}


// ---- Running the model ------------------------------------------------------------------------

struct GptOssLayer {
  cpu::Matrix input_norm, post_norm;
  cpu::Matrix q, k, v, o, q_bias, k_bias, v_bias, o_bias, sinks;
  cpu::Matrix router, router_bias;
  std::vector<cpu::Mxfp4Matrix> gate_up_mx, down_mx;  // per expert, MXFP4 checkpoints
  std::vector<cpu::Matrix> gate_up, down;              // per expert, unquantized checkpoints
  std::vector<cpu::Matrix> gate_up_bias, down_bias;    // per expert, [1, 2I] and [1, H]
};

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
    const WeightSource w(checkpoint_);
    const std::int64_t H = s_.hidden, E = s_.experts, I = s_.inter, q_dim = s_.heads * s_.head_dim,
                       kv_dim = s_.kv_heads * s_.head_dim;
    DAY0_ASSIGN_OR_RETURN(embed_, w.matrix("model.embed_tokens.weight", s_.vocab, H));
    DAY0_ASSIGN_OR_RETURN(final_norm_, w.vector("model.norm.weight", H));
    DAY0_ASSIGN_OR_RETURN(lm_head_, w.matrix(s_.tied ? "model.embed_tokens.weight" : "lm_head.weight", s_.vocab, H));
    for (std::int64_t l = 0; l < s_.layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      GptOssLayer L;
      DAY0_ASSIGN_OR_RETURN(L.input_norm, w.vector(p + "input_layernorm.weight", H));
      DAY0_ASSIGN_OR_RETURN(L.post_norm, w.vector(p + "post_attention_layernorm.weight", H));
      DAY0_ASSIGN_OR_RETURN(L.q, w.matrix(p + "self_attn.q_proj.weight", q_dim, H));
      DAY0_ASSIGN_OR_RETURN(L.k, w.matrix(p + "self_attn.k_proj.weight", kv_dim, H));
      DAY0_ASSIGN_OR_RETURN(L.v, w.matrix(p + "self_attn.v_proj.weight", kv_dim, H));
      DAY0_ASSIGN_OR_RETURN(L.o, w.matrix(p + "self_attn.o_proj.weight", H, q_dim));
      DAY0_ASSIGN_OR_RETURN(L.q_bias, w.vector(p + "self_attn.q_proj.bias", q_dim));
      DAY0_ASSIGN_OR_RETURN(L.k_bias, w.vector(p + "self_attn.k_proj.bias", kv_dim));
      DAY0_ASSIGN_OR_RETURN(L.v_bias, w.vector(p + "self_attn.v_proj.bias", kv_dim));
      DAY0_ASSIGN_OR_RETURN(L.o_bias, w.vector(p + "self_attn.o_proj.bias", H));
      DAY0_ASSIGN_OR_RETURN(L.sinks, w.vector(p + "self_attn.sinks", s_.heads));
      DAY0_ASSIGN_OR_RETURN(L.router, w.matrix(p + "mlp.router.weight", E, H));
      DAY0_ASSIGN_OR_RETURN(L.router_bias, w.vector(p + "mlp.router.bias", E));
      const std::string e = p + "mlp.experts.";
      if (s_.mxfp4) {
        DAY0_ASSIGN_OR_RETURN(L.gate_up_mx, w.stacked_mxfp4(e + "gate_up_proj", E, 2 * I, H));
        DAY0_ASSIGN_OR_RETURN(L.down_mx, w.stacked_mxfp4(e + "down_proj", E, H, I));
      } else {
        // Unquantized re-saves store the transposed parameters [E, H, 2I] and [E, I, H]; the
        // CPU linear wants [out, in] rows, so these are read through a transposed copy.
        return error(ErrorCode::unsupported,
                     "this gpt-oss checkpoint stores its experts unquantized (gate_up_proj [E, H, 2I]); Day0 "
                     "runs gpt-oss with the MXFP4 experts of the released checkpoint");
      }
      DAY0_ASSIGN_OR_RETURN(L.gate_up_bias, w.stacked(e + "gate_up_proj_bias", E, 0, 2 * I));
      DAY0_ASSIGN_OR_RETURN(L.down_bias, w.stacked(e + "down_proj_bias", E, 0, H));
      layers_.push_back(std::move(L));
    }
    return Status::ok();
  }

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
      moe(L, l, h.data(), T, x.data(), trace);
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
          const float* vv = state.kv.value(layer, j) + kvh * d;
          for (std::int64_t i = 0; i < d; ++i) o[i] += p * vv[i];
        }
      }
    });
    std::vector<float> projected(static_cast<std::size_t>(T * H));
    cpu::linear(pool_, out.data(), T, L.o, &L.o_bias, projected.data());
    return projected;
  }

  // Router (top-k of the logits, softmax over the selected) and the selected experts, added to
  // the residual x. Tokens are grouped by expert so each expert's weights are decoded once.
  void moe(const GptOssLayer& L, std::int64_t layer, const float* h, std::int64_t T, float* x, ForwardTrace* trace) {
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
    for (std::int64_t e = 0; e < E; ++e) {
      const auto& routed = by_expert[static_cast<std::size_t>(e)];
      if (routed.empty()) continue;
      const auto n = static_cast<std::int64_t>(routed.size());
      std::vector<float> xs(static_cast<std::size_t>(n * H)), gate_up(static_cast<std::size_t>(n * 2 * I)),
          act(static_cast<std::size_t>(n * I)), down(static_cast<std::size_t>(n * H));
      for (std::int64_t i = 0; i < n; ++i) std::copy_n(h + routed[static_cast<std::size_t>(i)].first * H, H, xs.data() + i * H);
      const auto ue = static_cast<std::size_t>(e);
      cpu::linear(pool_, xs.data(), n, L.gate_up_mx[ue], &L.gate_up_bias[ue], gate_up.data());
      for (std::int64_t i = 0; i < n; ++i) clamped_swiglu(gate_up.data() + i * 2 * I, I, act.data() + i * I);
      cpu::linear(pool_, act.data(), n, L.down_mx[ue], &L.down_bias[ue], down.data());
      for (std::int64_t i = 0; i < n; ++i) {
        const auto [t, w] = routed[static_cast<std::size_t>(i)];
        for (std::int64_t c = 0; c < H; ++c) moe_out[static_cast<std::size_t>(t * H + c)] += w * down[static_cast<std::size_t>(i * H + c)];
      }
    }
    for (std::size_t i = 0; i < moe_out.size(); ++i) x[i] += moe_out[i];
  }

  GptOssShape s_;
  std::shared_ptr<const io::Checkpoint> checkpoint_;
  blocks::Rope rope_;
  ThreadPool& pool_;
  LoadOptions options_;
  cpu::Matrix embed_, final_norm_, lm_head_;
  std::vector<GptOssLayer> layers_;
};

Result<std::unique_ptr<LoadedModel>> load(const io::ModelConfig& config, std::shared_ptr<const io::Checkpoint> checkpoint,
                                          ThreadPool& pool, const LoadOptions& options) {
  DAY0_ASSIGN_OR_RETURN(GptOssShape s, read_shape(config));
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
#else
    nullptr,
#endif
};

}  // namespace day0::models
