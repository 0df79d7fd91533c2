#include "models/selection_ties.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace day0::models {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The elements of `x` the other set lacks.
std::vector<std::int64_t> only_in(const std::set<std::int64_t>& x, const std::set<std::int64_t>& other) {
  std::vector<std::int64_t> out;
  for (const auto v : x)
    if (!other.count(v)) out.push_back(v);
  return out;
}

}  // namespace

SelectionShape selection_shape(const io::ModelConfig& config) {
  SelectionShape s;
  const nlohmann::json& j = config.root().optional_child("text_config") ? config.text().json() : config.json();
  if (j.contains("n_group") && j["n_group"].is_number_integer()) s.groups = std::max(1, j["n_group"].get<int>());
  if (j.contains("index_kpool") && j["index_kpool"].is_number_integer())
    s.kpool = std::max<std::int64_t>(1, j["index_kpool"].get<std::int64_t>());
  return s;
}

bool router_choice_tie(std::span<const float> a, std::span<const float> b, std::span<const float> bias,
                       const std::set<std::int64_t>& ids_a, const std::set<std::int64_t>& ids_b, int groups) {
  const auto E = static_cast<std::int64_t>(a.size());
  if (E == 0 || b.size() != a.size() || bias.size() != a.size()) return false;
  double noise = 0;
  std::vector<double> score(static_cast<std::size_t>(E));
  for (std::int64_t e = 0; e < E; ++e) {
    const auto i = static_cast<std::size_t>(e);
    noise = std::max(noise, std::abs(sigmoid(a[i]) - sigmoid(b[i])));
    score[i] = sigmoid(a[i]) + bias[i];
  }
  const auto in_range = [E](std::int64_t id) { return id >= 0 && id < E; };
  const auto oa = only_in(ids_a, ids_b), ob = only_in(ids_b, ids_a);
  if (!std::all_of(oa.begin(), oa.end(), in_range) || !std::all_of(ob.begin(), ob.end(), in_range)) return false;
  bool experts = true;
  for (const auto x : oa)
    for (const auto y : ob)
      experts = experts && std::abs(score[static_cast<std::size_t>(x)] - score[static_cast<std::size_t>(y)]) <= 2 * noise;
  if (experts) return true;
  if (groups <= 1 || E % groups != 0) return false;
  const std::int64_t per = E / groups;
  const auto group_score = [&](std::int64_t g) {
    std::vector<double> v(score.begin() + g * per, score.begin() + (g + 1) * per);
    std::sort(v.begin(), v.end(), std::greater<>());
    return per >= 2 ? v[0] + v[1] : v[0];
  };
  std::set<std::int64_t> ga, gb;
  for (const auto id : ids_a) ga.insert(id / per);
  for (const auto id : ids_b) gb.insert(id / per);
  if (ga == gb) return false;
  for (const auto x : only_in(ga, gb))
    for (const auto y : only_in(gb, ga))
      if (std::abs(group_score(x) - group_score(y)) > 4 * noise) return false;
  return true;
}

bool indexer_choice_tie(std::span<const float> a, std::span<const float> b, std::int64_t kpool,
                        const std::set<std::int64_t>& tokens_a, const std::set<std::int64_t>& tokens_b) {
  if (kpool <= 0 || a.size() != b.size()) return false;
  const auto visible = static_cast<std::int64_t>(a.size());
  double noise = 0;
  for (std::size_t j = 0; j < a.size(); ++j) noise = std::max(noise, static_cast<double>(std::abs(a[j] - b[j])));
  std::set<std::int64_t> pa, pb;
  for (const auto t : tokens_a)
    if (t >= 0) pa.insert(t / kpool);
  for (const auto t : tokens_b)
    if (t >= 0) pb.insert(t / kpool);
  for (const auto x : only_in(pa, pb))
    for (const auto y : only_in(pb, pa)) {
      if (x >= visible || y >= visible) return false;
      if (std::abs(a[static_cast<std::size_t>(x)] - a[static_cast<std::size_t>(y)]) > 2 * noise) return false;
    }
  return true;
}

std::size_t pool_scores_offset(std::int64_t first, std::int64_t t, std::int64_t kpool) {
  std::size_t at = 0;
  for (std::int64_t r = 0; r < t; ++r) at += pool_scores_count(first, r, kpool);
  return at;
}

}  // namespace day0::models
