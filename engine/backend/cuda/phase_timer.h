#pragma once
// Development timing of a GPU program's phases (not for use: it turns the decode graph off).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

namespace day0::cuda {

// With DAY0_CUDA_PROFILE set, the forward passes run without graphs and time their phases with
// events; the totals go to stderr when the model is released (for benchmarks, not for use).
class PhaseTimer {
 public:
  enum Phase {
    embed,
    norm,
    qkv,
    rope,
    attention,
    o_proj,
    router,
    routes,
    convert,
    expert_gemm,
    combine,
    decode_moe,
    lm_head,
    copy,
    mhc,
    kda_proj,
    kda,
    mla_proj,
    indexer,
    mlp,
    experts,
    phases
  };
  PhaseTimer() : on_(std::getenv("DAY0_CUDA_PROFILE") != nullptr) {}
  ~PhaseTimer() {
    for (auto& [e, p] : marks_) cudaEventDestroy(e);
    for (auto e : pool_) cudaEventDestroy(e);
  }
  bool on() const { return on_; }
  // Time from the previous mark to now goes to `phase`.
  void mark(cudaStream_t stream, Phase phase) {
    if (!on_) return;
    cudaEvent_t e = nullptr;
    if (!pool_.empty()) {
      e = pool_.back();
      pool_.pop_back();
    } else if (cudaEventCreate(&e) != cudaSuccess) {
      return;
    }
    cudaEventRecord(e, stream);
    marks_.emplace_back(e, phase);
  }
  void flush() {
    if (!on_ || marks_.empty()) return;
    cudaEventSynchronize(marks_.back().first);
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, marks_[i - 1].first, marks_[i].first) == cudaSuccess)
        total_[marks_[i].second] += ms;
    }
    for (auto& [e, p] : marks_) pool_.push_back(e);
    marks_.clear();
  }
  void report(const char* what) {
    if (!on_) return;
    flush();
    static const char* names[phases] = {"embed",   "norm",       "qkv",     "rope",    "attention",
                                        "o_proj",  "router",     "routes",  "convert", "expert_gemm",
                                        "combine", "decode_moe", "lm_head", "copy",        "mhc",
                                        "kda_proj", "kda",        "mla_proj", "indexer",     "mlp",
                                        "experts"};
    double sum = 0;
    for (double t : total_) sum += t;
    std::fprintf(stderr, "profile %s: %.1f ms:", what, sum);
    for (int i = 0; i < phases; ++i)
      if (total_[i] > 0) std::fprintf(stderr, " %s %.2f", names[i], total_[i]);
    std::fprintf(stderr, "\n");
    total_.fill(0);
  }

 private:
  bool on_;
  std::vector<std::pair<cudaEvent_t, Phase>> marks_;
  std::vector<cudaEvent_t> pool_;
  std::array<double, phases> total_{};
};

}  // namespace day0::cuda
