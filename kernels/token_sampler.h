#pragma once
// Token sampling on the GPU with the CPU sampler's rules (engine/runtime/sampler.cpp), so a
// sampled decode step keeps its logits on the device and fits in the step's CUDA graph:
//   penalties on the tokens seen so far (repetition: divide positive logits, multiply negative;
//   presence: subtract), then greedy (arg max, lowest id among equals), or a draw at temperature
//   T from the tokens that survive top-k, top-p (over the top-k set's probabilities) and min-p
//   (probability >= min_p x the top token's).
// Every filter keeps a prefix of the tokens ordered by logit (highest first, lower id first
// among equals). The kernels find each prefix by a radix select over the logits' ordered bits
// (three passes of 11, 11 and 10 bits, counting tokens for top-k and summing exp((l - max) / T)
// for top-p), resolve a cut inside a run of equal logits by token id, and draw by the Gumbel-max
// trick over the kept tokens: arg max of l / T + g_i, g_i = -log(-log(u_i)), u_i from a
// counter-based hash of (seed, draw number, i). That is exactly a draw from softmax(l / T)
// restricted to the kept set; the same seed, draw number and logits give the same token.
//
// The settings live in device memory (SamplerConfig), written between requests, so one captured
// graph serves every request with the same mode (the set of filters in use decides which
// kernels a step launches). The draw number advances on the device after each draw.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "sampling.h"

namespace day0::kernels {

struct SamplerConfig {
  float inv_temperature = 1.0f;  // 1 / T; unused when greedy
  int32_t top_k = 0;             // used when the mode has kSampleTopK
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  uint64_t seed = 0;
  uint32_t draws = 0;  // draws made since the host last wrote the config
  uint32_t pad = 0;
};

// Which kernels run: a combination of these bits (0 = plain arg max, for which argmax_wide() in
// sampling.h is the cheaper call).
enum SamplerMode : unsigned {
  kSamplePenalties = 1u,  // repetition and/or presence penalty over `seen`
  kSampleDraw = 2u,       // temperature > 0 (else greedy)
  kSampleTopK = 4u,       // 0 < top_k < vocabulary
  kSampleTopP = 8u,       // top_p < 1
  kSampleMinP = 16u,      // min_p > 0
};

// The config for a set of settings (the draws counted from zero).
SamplerConfig sampler_config(float temperature, int top_k, float top_p, float min_p, float repetition_penalty,
                             float presence_penalty, uint64_t seed);

// The mode a set of settings needs (temperature <= 0 is greedy; filters only matter when drawing).
unsigned sampler_mode(float temperature, int top_k, float top_p, float min_p, float repetition_penalty,
                      float presence_penalty, int64_t vocab);

// Device memory of one sampler for vocabularies up to `vocab`: carve it with
// sampler_workspace() from one allocation of sampler_workspace_bytes(vocab) bytes, zeroed once
// before the first use (every call leaves its counters and histograms zero again).
std::size_t sampler_workspace_bytes(int64_t vocab);

struct SamplerSelection;  // the selection's running state (token_sampler.cu)
struct SamplerWorkspace {
  SamplerConfig* config = nullptr;  // written by the host between requests
  uint8_t* seen = nullptr;          // [vocab]: 1 for tokens the penalties apply to
  SamplerSelection* selection = nullptr;
  float* cta_max = nullptr;  // per CTA: max, sum of exp((l - max) / T), best index, tie count
  float* cta_sum = nullptr;
  int32_t* cta_best = nullptr;
  uint32_t* cta_count = nullptr;
  uint32_t* hist_count = nullptr;  // [2048] the radix pass's histogram, summed over the CTAs
  float* hist_mass = nullptr;      // [2048]
  unsigned* done = nullptr;        // CTAs finished in the running kernel
};
SamplerWorkspace sampler_workspace(void* memory, int64_t vocab);

// Picks one token from logits[0..n) (n <= the workspace's vocabulary) under `mode` and the
// device config: out[0] = the token. With kSamplePenalties the logits are penalised in place,
// and `fed` (when given: the token the step fed, which counts as seen) is marked in `seen` once
// the penalties are applied. step_end as for argmax_wide(): the pick also to the mapped host
// slot and the positions advanced. Launches 1 to 9 kernels, all capturable.
cudaError_t sample_token(float* logits, int64_t n, unsigned mode, const SamplerWorkspace& ws, const int32_t* fed,
                         int32_t* out, cudaStream_t stream, const StepEnd& step_end = StepEnd{});

}  // namespace day0::kernels
