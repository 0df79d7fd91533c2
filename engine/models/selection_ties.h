#pragma once
// Whether two runs' different selections of one token sit on a tie: the router's experts or the
// DSA indexer's pools that only one run chose score, in the first run, within the noise between
// the two runs' scores of that token. Used by `verify` (Day0 against a reference dump) and by the
// GPU tests (the GPU against the CPU), from the traces both keep: router.<l>.logits [T, E] with
// router.<l>.bias [E] (the choice score is sigmoid(logit) + bias), and indexer.<l>.scores (for
// each token in order, the scores of the (p + 1) / kpool pools it sees).
#include <cstdint>
#include <set>
#include <span>

#include "io/model_config.h"

namespace day0::models {

// What the tie rules need from a model's config: the routing groups (n_group, 1 when not set)
// and the indexer's pool size (index_kpool, 16 when not set, as the config reader).
struct SelectionShape {
  int groups = 1;
  std::int64_t kpool = 16;
};
SelectionShape selection_shape(const io::ModelConfig& config);

// Router: a = the first run's logits of the token [E], b = the second's; ids_a / ids_b the
// experts each chose. The noise is the largest |sigmoid(a) - sigmoid(b)| over the row. A tie when
// every expert only one run chose is within 2 x noise (in choice score) of every expert only the
// other chose, or, with grouped routing (groups > 1) where the chosen groups differ, when the
// groups' scores (the sum of their two best choice scores) are within 4 x noise.
bool router_choice_tie(std::span<const float> a, std::span<const float> b, std::span<const float> bias,
                       const std::set<std::int64_t>& ids_a, const std::set<std::int64_t>& ids_b, int groups);

// Indexer: a / b = the two runs' scores of the token's visible pools; tokens_a / tokens_b the
// positions each selected (pool = position / kpool; the incomplete tail pool, chosen by both, is
// ignored). The noise is the largest |a - b| over the row; a tie when every pool only one run
// chose is within 2 x noise of every pool only the other chose.
bool indexer_choice_tie(std::span<const float> a, std::span<const float> b, std::int64_t kpool,
                        const std::set<std::int64_t>& tokens_a, const std::set<std::int64_t>& tokens_b);

// Where token t's pool scores start in an indexer.<l>.scores trace of a prompt fed from position
// `first` (p = first + t), and how many there are.
std::size_t pool_scores_offset(std::int64_t first, std::int64_t t, std::int64_t kpool);
inline std::size_t pool_scores_count(std::int64_t first, std::int64_t t, std::int64_t kpool) {
  return static_cast<std::size_t>((first + t + 1) / kpool);
}

}  // namespace day0::models
