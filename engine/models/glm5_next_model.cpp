// glm5_next (GLM-5.3-Flash) text generation on the CPU, following transformers'
// Glm5NextForConditionalGeneration (text path; images enter as input embeddings, vision/):
//   streams = embed(token) repeated hc_mult times                      [T, hc, H]
//   per layer: attention site, then MLP site, each wrapped by mHC (blocks/hyper_connection.h):
//     x = RMSNorm(collapse(streams)); y = KDA(x) or MLA(x, indexer selection); streams = expand(y)
//     x = RMSNorm(collapse(streams)); y = MoE(x) or MLP(x);                    streams = expand(y)
//   logits = lm_head(RMSNorm(mean over the streams))
// A "shared" sparse-attention layer attends exactly the positions the layer before it selected.
//
// Session state: per sparse-attention layer the MLA latent cache and (when it has its own
// indexer) the indexer cache; per KDA layer the recurrent and convolution state. The attention
// caches rewind to any position; KDA state cannot, so the state keeps copies of the KDA states
// and truncate() rewinds to the newest one not past the requested position. Copies are taken
// where conversations branch: a call that feeds several tokens (a prompt) is run as all but its
// last token, then the last, with a copy after each (regenerating a reply rewinds to the
// prompt's last-but-one token, as the engine does); single-token calls (decoding) keep a copy
// too, fewer of them.
#include <algorithm>
#include <deque>
#include <optional>

#include "blocks/dsa_indexer.h"
#include "blocks/hyper_connection.h"
#include "blocks/kda.h"
#include "blocks/mla_attention.h"
#include "blocks/moe.h"
#include "models/architecture.h"
#include "models/glm5_next_config.h"
#include "models/glm5_next_model.h"
#include "models/glm5_next_weights.h"
#include "models/streamed_experts.h"
#include "models/weights.h"
#include "vision/glm5_vision.h"
#include "vision/image_input.h"

namespace day0::models {
namespace {

// KDA snapshots kept per session: the newest from multi-token calls (two per call) and from
// single-token calls. Each holds every KDA layer's state (GLM-5.3-Flash: about 140 MB).
constexpr std::size_t kPromptSnapshots = 4;
constexpr std::size_t kStepSnapshots = 2;

class Glm5State final : public SessionState {
 public:
  struct Snapshot {
    std::int64_t length = 0;
    std::vector<blocks::KdaState> kda;
  };

  std::int64_t length() const override { return length_; }

  std::int64_t truncate(std::int64_t tokens) override {
    tokens = std::clamp<std::int64_t>(tokens, 0, length_);
    if (tokens == length_) return length_;
    if (!kda.empty()) {
      // The newest snapshot not past `tokens`, else the empty state.
      for (auto* q : {&prompt_snapshots, &step_snapshots})
        while (!q->empty() && q->back().length > tokens) q->pop_back();
      const Snapshot* best = nullptr;
      for (auto* q : {&prompt_snapshots, &step_snapshots})
        if (!q->empty() && (best == nullptr || q->back().length > best->length)) best = &q->back();
      if (best == nullptr) {
        tokens = 0;
        for (auto& s : kda) s = blocks::new_kda_state(*kda_config);
      } else {
        tokens = best->length;
        kda = best->kda;
      }
    }
    for (auto& c : latent) c.truncate(tokens);
    for (auto& c : index) c.truncate(tokens);
    length_ = tokens;
    return length_;
  }

  std::uint64_t bytes() const override {
    std::uint64_t n = 0;
    for (const auto& c : latent) n += c.bytes();
    for (const auto& c : index) n += c.bytes();
    for (const auto& s : kda) n += s.bytes();
    for (const auto* q : {&prompt_snapshots, &step_snapshots})
      for (const auto& snap : *q)
        for (const auto& s : snap.kda) n += s.bytes();
    return n;
  }

  void snapshot(bool prompt) {
    if (kda.empty()) return;
    auto& q = prompt ? prompt_snapshots : step_snapshots;
    q.push_back({length_, kda});
    while (q.size() > (prompt ? kPromptSnapshots : kStepSnapshots)) q.pop_front();
  }

  std::int64_t length_ = 0;
  std::optional<blocks::KdaConfig> kda_config;
  std::vector<blocks::MlaCache> latent;                   // per sparse-attention layer (slot_ order)
  std::vector<blocks::IndexerCache> index;                // per layer with its own indexer
  std::vector<blocks::KdaState> kda;                      // per KDA layer
  std::deque<Snapshot> prompt_snapshots, step_snapshots;  // oldest first
};

// Images (when the checkpoint has a vision tower): vision::ImageInputModel feeds input
// embeddings in which the image tokens carry the tower's features.
class Glm5Model final : public LoadedModel, public vision::ImageInputModel {
 public:
  Glm5Model(Glm5Config config, std::shared_ptr<const io::Checkpoint> checkpoint, ThreadPool& pool, Glm5RunOptions run)
      : s_(std::move(config)), checkpoint_(std::move(checkpoint)), pool_(pool), dense_(run.dense_attention) {}

  Status bind(const io::ModelConfig& config, const LoadOptions& options) {
    if (const Architecture* arch = find_architecture(config.model_type())) {
      DAY0_ASSIGN_OR_RETURN(manifest_, arch->expected_tensors(config));
    }
    DAY0_ASSIGN_OR_RETURN(
        Glm5Weights g, bind_glm5_weights(config, s_, checkpoint_, {.check_expert_bytes = !options.experts_streamed}));
    hc_ = g.hc;
    mla_ = g.mla;
    indexer_ = g.indexer;
    moe_ = g.moe;
    kda_ = g.kda;
    embed_ = g.embed;
    final_norm_ = g.final_norm;
    lm_head_ = g.lm_head;
    layers_ = std::move(g.layers);
    slot_ = std::move(g.slot);
    index_slot_ = std::move(g.index_slot);
    kda_layers_ = g.kda_layers;
    mla_layers_ = g.mla_layers;
    indexer_layers_ = g.indexer_layers;
    DAY0_ASSIGN_OR_RETURN(vision_, vision::load_glm5_vision(config, checkpoint_, s_.hidden, pool_));
    decode_bytes_ = decode_weight_bytes(*checkpoint_, s_.experts, s_.top_k, s_.tied);
    return Status::ok();
  }

  std::uint64_t decode_bytes_per_token() const override { return decode_bytes_; }

  Status stream_experts(const ExpertStreamingOptions& options) override {
    const std::string root = "model.language_model.layers.";
    std::vector<blocks::ExpertSlotLayout> slots(static_cast<std::size_t>(s_.layers));
    DAY0_ASSIGN_OR_RETURN(streamed_, StreamedExperts::open(*checkpoint_, manifest_, options,
                                                           static_cast<std::size_t>(s_.top_k), nullptr));
    for (std::int64_t l = 0; l < s_.layers; ++l) {
      if (!layers_[static_cast<std::size_t>(l)].moe) continue;
      blocks::ExpertSlotLayout& o = slots[static_cast<std::size_t>(l)];
      const auto layer = static_cast<std::int32_t>(l);
      if (s_.mxfp4) {
        DAY0_ASSIGN_OR_RETURN(o.gate_up_blocks, streamed_->offset(layer, "gate_up_proj_blocks"));
        DAY0_ASSIGN_OR_RETURN(o.gate_up_scales, streamed_->offset(layer, "gate_up_proj_scales"));
        DAY0_ASSIGN_OR_RETURN(o.down_blocks, streamed_->offset(layer, "down_proj_blocks"));
        DAY0_ASSIGN_OR_RETURN(o.down_scales, streamed_->offset(layer, "down_proj_scales"));
      } else {
        DAY0_ASSIGN_OR_RETURN(o.gate, streamed_->offset(layer, "gate_proj.weight"));
        DAY0_ASSIGN_OR_RETURN(o.up, streamed_->offset(layer, "up_proj.weight"));
        DAY0_ASSIGN_OR_RETURN(o.down, streamed_->offset(layer, "down_proj.weight"));
      }
    }
    expert_slots_ = std::move(slots);
    // MXFP4 scales are checked as each expert is read (the resident path checks them at bind).
    streamed_->cache().set_check([this, root](std::int32_t layer, std::int32_t expert, const std::uint8_t* bytes) {
      return blocks::check_expert_scales(moe_, expert_slots_[static_cast<std::size_t>(layer)], bytes,
                                         root + std::to_string(layer) + ".mlp.", expert);
    });
    for (std::int64_t l = 0; l < s_.layers; ++l) {
      auto& L = layers_[static_cast<std::size_t>(l)];
      if (!L.moe) continue;
      L.moe->slot = expert_slots_[static_cast<std::size_t>(l)];
      const auto layer = static_cast<std::int32_t>(l);
      L.moe->fetch = [this, layer](std::span<const std::int32_t> experts, const blocks::ExpertBytesFn& fn) {
        return streamed_->for_each(layer, experts, fn);
      };
    }
    return Status::ok();
  }
  ExpertStreaming expert_streaming() const override { return streamed_ ? streamed_->report() : ExpertStreaming{}; }

  // vision::ImageInputModel
  const vision::ImageTokenIds& image_tokens() const override { return vision_.ids; }
  const vision::ProcessorConfig& processor() const override { return vision_.processor; }
  std::int64_t embedding_size() const override { return s_.hidden; }
  std::string images_unavailable() const override { return vision_.unavailable; }
  Result<vision::EncodedImage> encode_image(const vision::VisionInput& input, ForwardTrace* trace) override {
    return vision_.encode(input, trace, s_.hidden);
  }
  Status embed_tokens(std::span<const std::int32_t> tokens, float* out) const override {
    for (const std::int32_t id : tokens)
      if (id < 0 || id >= s_.vocab)
        return error(ErrorCode::invalid_argument, "token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                                      std::to_string(s_.vocab - 1) + ")");
    for (std::size_t t = 0; t < tokens.size(); ++t)
      cpu::decode_row(embed_, tokens[t], out + static_cast<std::int64_t>(t) * s_.hidden);
    return Status::ok();
  }
  Status forward_embeddings(SessionState& state, const float* embeddings, std::int64_t T, std::int64_t logit_rows,
                            float* logits, ForwardTrace* trace) override {
    return feed(static_cast<Glm5State&>(state), embeddings, T, logit_rows, logits, trace);
  }

  std::int64_t vocab_size() const override { return s_.vocab; }
  std::int64_t hidden_size() const override { return s_.hidden; }
  std::int64_t max_context() const override { return s_.max_positions; }

  std::unique_ptr<SessionState> new_state() const override {
    auto state = std::make_unique<Glm5State>();
    state->kda_config = kda_;
    for (std::int64_t i = 0; i < mla_layers_; ++i) state->latent.emplace_back(s_.kv_lora);
    for (std::int64_t i = 0; i < indexer_layers_; ++i) state->index.emplace_back(indexer_);
    for (std::int64_t i = 0; i < kda_layers_; ++i) state->kda.push_back(blocks::new_kda_state(*kda_));
    return state;
  }
  std::uint64_t state_bytes(std::int64_t tokens) const override {
    // Per position: the MLA latent of each DSA layer, the indexer's key and gate rows and its
    // pooled keys. Fixed: the KDA state of each KDA layer, kept with its snapshots.
    const std::int64_t pooled = indexer_.head_dim / std::max<std::int64_t>(1, indexer_.kpool);
    const std::int64_t per_token = mla_layers_ * s_.kv_lora + indexer_layers_ * (2 * indexer_.head_dim + pooled);
    std::uint64_t fixed = 0;
    if (kda_layers_ > 0)
      fixed = static_cast<std::uint64_t>(kda_layers_) * blocks::new_kda_state(*kda_).bytes() *
              (1 + kPromptSnapshots + kStepSnapshots);
    return fixed + static_cast<std::uint64_t>(per_token * tokens) * sizeof(float);
  }

  Status forward(SessionState& base_state, std::span<const std::int32_t> tokens, std::int64_t logit_rows, float* logits,
                 ForwardTrace* trace) override {
    auto& state = static_cast<Glm5State&>(base_state);
    const auto T = static_cast<std::int64_t>(tokens.size());
    if (T == 0) return error(ErrorCode::invalid_argument, "nothing to feed: the token list is empty");
    if (state.length() + T > s_.max_positions)
      return error(ErrorCode::invalid_argument, "the context would hold " + std::to_string(state.length() + T) +
                                                    " tokens; this model allows " + std::to_string(s_.max_positions));
    std::vector<float> embedded(static_cast<std::size_t>(T * s_.hidden));
    DAY0_RETURN_IF_ERROR(embed_tokens(tokens, embedded.data()));
    return feed(state, embedded.data(), T, logit_rows, logits, trace);
  }

 private:
  // Checks and feeds T input embeddings [T, H] (token rows or image features).
  Status feed(Glm5State& state, const float* embedded, std::int64_t T, std::int64_t logit_rows, float* logits,
              ForwardTrace* trace) {
    const std::int64_t pos0 = state.length();
    if (T <= 0) return error(ErrorCode::invalid_argument, "nothing to feed: the token list is empty");
    if (logit_rows < 0 || logit_rows > T) return error(ErrorCode::invalid_argument, "more logit rows than tokens");
    if (pos0 + T > s_.max_positions)
      return error(ErrorCode::invalid_argument, "the context would hold " + std::to_string(pos0 + T) +
                                                    " tokens; this model allows " + std::to_string(s_.max_positions));
    if (kda_layers_ > 0 && T > 1) {
      const std::int64_t first_rows = std::max<std::int64_t>(logit_rows - 1, 0);
      DAY0_RETURN_IF_ERROR(run(state, embedded, T - 1, first_rows, logits, trace));
      state.snapshot(true);
      DAY0_RETURN_IF_ERROR(
          run(state, embedded + (T - 1) * s_.hidden, 1, logit_rows > 0 ? 1 : 0, logits + first_rows * s_.vocab, trace));
      state.snapshot(true);
      return Status::ok();
    }
    DAY0_RETURN_IF_ERROR(run(state, embedded, T, logit_rows, logits, trace));
    state.snapshot(T > 1);
    return Status::ok();
  }

  // The forward pass proper over checked input embeddings [T, H].
  Status run(Glm5State& state, const float* embedded, std::int64_t T, std::int64_t logit_rows, float* logits,
             ForwardTrace* trace) {
    const std::int64_t H = s_.hidden, m = s_.hc, pos0 = state.length();
    // streams: [T, hc, H], every stream starting as the embedding.
    std::vector<float> x(embedded, embedded + T * H);
    if (trace) trace->append("hidden.embed", x.data(), x.size());
    std::vector<float> streams(static_cast<std::size_t>(T * m * H));
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t i = 0; i < m; ++i) std::copy_n(x.data() + t * H, H, streams.data() + (t * m + i) * H);

    std::vector<float> h(x.size()), y(x.size()), post(static_cast<std::size_t>(T * m)),
        comb(static_cast<std::size_t>(T * m * m));
    std::vector<std::int32_t> selection;  // the last indexer's [T, width] selection
    for (std::int64_t l = 0; l < s_.layers; ++l) {
      const Glm5Layer& L = layers_[static_cast<std::size_t>(l)];
      const std::string tag = std::to_string(l);
      blocks::hc_collapse(pool_, hc_, L.attn_hc, streams.data(), T, x.data(), post.data(), comb.data());
      cpu::rms_norm(x.data(), T, H, L.input_norm, static_cast<float>(s_.rms_eps), h.data());
      if (L.kda) {
        blocks::KdaState& ks = state.kda[static_cast<std::size_t>(slot_[static_cast<std::size_t>(l)])];
        blocks::KdaTrace kt;
        DAY0_RETURN_IF_ERROR(
            blocks::kda_forward(pool_, *kda_, *L.kda, ks, h.data(), T, y.data(), trace ? &kt : nullptr));
        // The state after the last token fed, not one row per token: named apart from the
        // reference's kda.<l>.state so that per-token-row comparisons leave it alone.
        if (trace) trace->tensors["kda." + tag + ".final_state"] = kt.state;
      } else {
        DAY0_RETURN_IF_ERROR(attention(L, l, state, h.data(), T, pos0, selection, y.data(), trace));
      }
      if (trace) trace->append("attn." + tag + ".out", y.data(), y.size());
      blocks::hc_expand(hc_, y.data(), post.data(), comb.data(), T, streams.data());

      blocks::hc_collapse(pool_, hc_, L.ffn_hc, streams.data(), T, x.data(), post.data(), comb.data());
      cpu::rms_norm(x.data(), T, H, L.post_norm, static_cast<float>(s_.rms_eps), h.data());
      if (L.moe) {
        std::vector<std::int32_t> ids;
        std::vector<float> weights;
        DAY0_RETURN_IF_ERROR(blocks::moe_forward(pool_, moe_, *L.moe, h.data(), T, y.data(), trace ? &ids : nullptr,
                                                 trace ? &weights : nullptr));
        if (trace) {
          const std::vector<float> as_float(ids.begin(), ids.end());
          trace->append("router." + tag + ".topk", as_float.data(), as_float.size());
          trace->append("router." + tag + ".weights", weights.data(), weights.size());
          // The logits behind the choice, so a differing choice elsewhere can be shown to sit on a tie.
          std::vector<float> logits(static_cast<std::size_t>(T * moe_.experts));
          cpu::linear(pool_, h.data(), T, L.moe->router, nullptr, logits.data());
          trace->append("router." + tag + ".logits", logits.data(), logits.size());
          std::vector<float> bias(static_cast<std::size_t>(moe_.experts));
          cpu::decode_row(L.moe->score_bias, 0, bias.data());
          trace->append("router." + tag + ".bias", bias.data(), bias.size());
        }
      } else {
        blocks::dense_mlp_forward(pool_, *L.mlp, static_cast<float>(s_.swiglu_limit), h.data(), T, y.data());
      }
      blocks::hc_expand(hc_, y.data(), post.data(), comb.data(), T, streams.data());
      if (trace) trace->append("hidden." + tag, streams.data(), streams.size());
    }
    state.length_ = pos0 + T;

    // The head: mean of the streams, RMSNorm, lm_head.
    for (std::int64_t t = 0; t < T; ++t) {
      float* o = x.data() + t * H;
      std::fill_n(o, H, 0.0f);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t k = 0; k < H; ++k) o[k] += streams[static_cast<std::size_t>((t * m + i) * H + k)];
      for (std::int64_t k = 0; k < H; ++k) o[k] /= static_cast<float>(m);
    }
    cpu::rms_norm(x.data(), T, H, final_norm_, static_cast<float>(s_.rms_eps), h.data());
    if (trace) trace->append("hidden.final_norm", h.data(), h.size());
    if (logit_rows > 0) cpu::linear(pool_, h.data() + (T - logit_rows) * H, logit_rows, lm_head_, nullptr, logits);
    return Status::ok();
  }

  // One MLA layer: caches the latent, selects (own indexer or the previous layer's selection)
  // and attends. selection: in/out, the [T, width] selection handed from layer to layer.
  Status attention(const Glm5Layer& L, std::int64_t l, Glm5State& state, const float* h, std::int64_t T,
                   std::int64_t pos0, std::vector<std::int32_t>& selection, float* out, ForwardTrace* trace) {
    blocks::MlaCache& cache = state.latent[static_cast<std::size_t>(slot_[static_cast<std::size_t>(l)])];
    if (cache.length() != pos0)
      return error(ErrorCode::internal, "layer " + std::to_string(l) + " caches " + std::to_string(cache.length()) +
                                            " positions but the session holds " + std::to_string(pos0));
    std::vector<float> q_resid(static_cast<std::size_t>(T * s_.q_lora)),
        latent(static_cast<std::size_t>(T * s_.kv_lora));
    blocks::mla_project(pool_, mla_, *L.mla, h, T, q_resid.data(), latent.data());
    cache.append(latent.data(), T);
    const std::int64_t width = indexer_.width(pos0 + T);
    if (L.indexer) {
      selection.assign(static_cast<std::size_t>(T * width), -1);
      std::vector<float> scores;
      blocks::indexer_select(pool_, indexer_, *L.indexer,
                             state.index[static_cast<std::size_t>(index_slot_[static_cast<std::size_t>(l)])], h,
                             q_resid.data(), T, selection.data(), width, trace ? &scores : nullptr);
      if (trace) trace->append("indexer." + std::to_string(l) + ".scores", scores.data(), scores.size());
    }
    // (A shared layer keeps the selection the previous layer left: config reading guarantees
    // that layer is a sparse-attention layer with its own indexer.)
    if (trace) {
      // Rows as wide as the reference's (index_topk + kpool - 1) where that is a sane size.
      const std::int64_t full = indexer_.topk + indexer_.kpool - 1;
      const std::int64_t traced = full <= (1 << 16) ? std::max(full, width) : width;
      std::vector<float> as_float(static_cast<std::size_t>(T * traced), -1.0f);
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t i = 0; i < width; ++i)
          as_float[static_cast<std::size_t>(t * traced + i)] =
              static_cast<float>(selection[static_cast<std::size_t>(t * width + i)]);
      trace->append("indexer." + std::to_string(l) + ".topk", as_float.data(), as_float.size());
    }
    blocks::mla_attend(pool_, mla_, *L.mla, cache, q_resid.data(), T, pos0, dense_ ? nullptr : selection.data(), width,
                       out);
    return Status::ok();
  }

  Glm5Config s_;
  std::shared_ptr<const io::Checkpoint> checkpoint_;
  ThreadPool& pool_;
  blocks::HcConfig hc_;
  blocks::MlaConfig mla_;
  blocks::IndexerConfig indexer_;
  blocks::MoeConfig moe_;
  std::optional<blocks::KdaConfig> kda_;
  cpu::Matrix embed_, final_norm_, lm_head_;
  vision::Glm5Vision vision_;
  std::vector<Glm5Layer> layers_;
  std::vector<std::int64_t> slot_;        // per layer: index into the session's KDA or MLA caches
  std::vector<std::int64_t> index_slot_;  // per layer: index into the indexer caches, or -1
  std::int64_t kda_layers_ = 0, mla_layers_ = 0, indexer_layers_ = 0;
  bool dense_;
  std::uint64_t decode_bytes_ = 0;
  std::vector<ExpectedTensor> manifest_;
  std::unique_ptr<StreamedExperts> streamed_;           // null: the experts are read through the memory map
  std::vector<blocks::ExpertSlotLayout> expert_slots_;  // per layer, with streamed_
};

}  // namespace

Result<std::unique_ptr<LoadedModel>> load_glm5_next(const io::ModelConfig& config,
                                                    std::shared_ptr<const io::Checkpoint> checkpoint, ThreadPool& pool,
                                                    const LoadOptions& options) {
  return load_glm5_next(config, std::move(checkpoint), pool, options, Glm5RunOptions{});
}

Result<std::unique_ptr<LoadedModel>> load_glm5_next(const io::ModelConfig& config,
                                                    std::shared_ptr<const io::Checkpoint> checkpoint, ThreadPool& pool,
                                                    const LoadOptions& options, const Glm5RunOptions& run) {
  // glm5_next's caches are per-layer vectors; kv_page_tokens does not apply.
  DAY0_ASSIGN_OR_RETURN(Glm5Config s, read_glm5_config(config));
  DAY0_RETURN_IF_ERROR(check_glm5_runnable(config, s));
  auto model = std::make_unique<Glm5Model>(std::move(s), std::move(checkpoint), pool, run);
  DAY0_RETURN_IF_ERROR(model->bind(config, options));
  return std::unique_ptr<LoadedModel>(std::move(model));
}

}  // namespace day0::models
