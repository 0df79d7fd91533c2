#include "day0/verify.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "io/model_config.h"
#include "io/safetensors.h"
#include "models/loaded_model.h"
#include "models/selection_ties.h"

namespace day0 {
namespace {

// A reference tensor as doubles, whatever its stored dtype (F32, I32, I64).
Result<std::vector<double>> read_values(const io::SafetensorsFile& file, const io::TensorInfo& t) {
  const auto bytes = file.data(t);
  std::vector<double> out(static_cast<std::size_t>(t.numel));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (t.dtype == DType::f32) {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out[i] = v;
    } else if (t.dtype == DType::i32) {
      std::int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out[i] = v;
    } else if (t.dtype == DType::i64) {
      std::int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      out[i] = static_cast<double>(v);
    } else {
      return error(ErrorCode::unsupported, "reference tensor " + t.name + " is " + std::string(dtype_name(t.dtype)) +
                                               "; expected F32, I32 or I64");
    }
  }
  return out;
}

Result<std::vector<std::int32_t>> read_ids(const io::SafetensorsFile& file, const std::string& name,
                                           std::int64_t vocab) {
  const io::TensorInfo* t = file.find(name);
  if (t == nullptr) return error(ErrorCode::not_found, "the reference has no tensor " + name);
  DAY0_ASSIGN_OR_RETURN(const auto values, read_values(file, *t));
  std::vector<std::int32_t> ids;
  for (const double v : values) {
    if (v < 0 || v >= static_cast<double>(vocab))
      return error(ErrorCode::corrupt_data, "reference " + name + " holds token id " + fmt::format("{}", v) +
                                                ", outside the model's vocabulary");
    ids.push_back(static_cast<std::int32_t>(v));
  }
  return ids;
}

// Where a dumped tensor sits in the forward pass: the embedding, then per layer the indexer's
// selection, the attention (or KDA) output and state, the router and the layer's output, then
// the head, the logits and the greedy continuation. Names without a layer number go last.
std::tuple<int, std::int64_t, int> pass_order(const std::string& name) {
  if (name == "hidden.embed") return {0, 0, 0};
  if (name == "hidden.final_norm") return {2, 0, 0};
  if (name.rfind("logits", 0) == 0) return {3, 0, 0};
  if (name.rfind("greedy", 0) == 0) return {4, 0, 0};
  const auto dot = name.find('.');
  std::int64_t layer = 0;
  if (dot == std::string::npos) return {2, 0, 0};
  const char* first = name.data() + dot + 1;
  const char* last = name.data() + name.size();
  if (std::from_chars(first, last, layer).ec != std::errc()) return {2, 0, 0};
  const std::string kind = name.substr(0, dot);
  const int stage = kind == "indexer" ? 0 : (kind == "attn" || kind == "kda") ? 1 : kind == "router" ? 2 : 3;
  return {1, layer, stage};
}

VerifyRow compare_rows(const std::string& name, const std::vector<float>& got, const std::vector<double>& want,
                       std::int64_t rows, double fail_above) {
  VerifyRow r;
  r.name = name;
  if (got.size() != want.size() || rows <= 0) {
    r.rel_l2 = INFINITY;
    r.pass = false;
    return r;
  }
  const std::size_t width = got.size() / static_cast<std::size_t>(rows);
  for (std::int64_t t = 0; t < rows; ++t) {
    double num = 0, den = 0;
    for (std::size_t i = static_cast<std::size_t>(t) * width; i < static_cast<std::size_t>(t + 1) * width; ++i) {
      const double d = got[i] - want[i];
      if (!std::isfinite(got[i])) num = INFINITY;
      num += d * d;
      den += want[i] * want[i];
      r.max_abs = std::max(r.max_abs, std::abs(d));
    }
    r.rel_l2 = std::max(r.rel_l2, den > 0 ? std::sqrt(num / den) : std::sqrt(num));
  }
  r.pass = r.rel_l2 <= fail_above;
  return r;
}

// Whether row `row` of a differing selection `name` (router.<l>.topk or indexer.<l>.topk) sits on
// a tie, from the scores both the reference and Day0's trace hold.
Result<bool> selection_tie(const io::SafetensorsFile& ref, const models::ForwardTrace& trace, const std::string& name,
                           std::int64_t row, std::int64_t T, const std::set<std::int64_t>& ours,
                           const std::set<std::int64_t>& theirs, const models::SelectionShape& shape) {
  const std::string stem = name.substr(0, name.size() - std::string(".topk").size());
  const bool router = name.rfind("router.", 0) == 0;
  const std::string scores = stem + (router ? ".logits" : ".scores");
  const io::TensorInfo* info = ref.find(scores);
  const auto mine = trace.tensors.find(scores);
  if (info == nullptr || mine == trace.tensors.end()) return false;
  DAY0_ASSIGN_OR_RETURN(const auto want_d, read_values(ref, *info));
  const std::vector<float> want(want_d.begin(), want_d.end());
  if (want.size() != mine->second.size()) return false;
  if (router) {
    const auto bias = trace.tensors.find(stem + ".bias");
    const std::size_t E = want.size() / static_cast<std::size_t>(T);
    if (bias == trace.tensors.end() || bias->second.size() < E) return false;
    const auto at = static_cast<std::size_t>(row) * E;
    return models::router_choice_tie(std::span<const float>(want).subspan(at, E),
                                     std::span<const float>(mine->second).subspan(at, E),
                                     std::span<const float>(bias->second).first(E), theirs, ours, shape.groups);
  }
  const std::size_t at = models::pool_scores_offset(0, row, shape.kpool),
                    n = models::pool_scores_count(0, row, shape.kpool);
  if (at + n > want.size()) return false;
  return models::indexer_choice_tie(std::span<const float>(want).subspan(at, n),
                                    std::span<const float>(mine->second).subspan(at, n), shape.kpool, theirs, ours);
}

}  // namespace

Result<VerifyReport> verify_model(const std::filesystem::path& model_dir, const std::filesystem::path& reference,
                                  const VerifyOptions& options) {
  DAY0_ASSIGN_OR_RETURN(const io::SafetensorsFile ref, io::SafetensorsFile::open(reference));
  ThreadPool pool(static_cast<std::size_t>(std::max(0, options.threads)));
  DAY0_ASSIGN_OR_RETURN(auto model, models::load_model(model_dir, pool));
  const std::int64_t vocab = model->vocab_size();
  DAY0_ASSIGN_OR_RETURN(const auto ids, read_ids(ref, "input_ids", vocab));
  const auto T = static_cast<std::int64_t>(ids.size());
  if (T == 0) return error(ErrorCode::corrupt_data, "the reference's input_ids is empty");

  VerifyReport report;
  report.tokens = T;
  DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(model_dir));
  const models::SelectionShape shape = models::selection_shape(config);
  models::ForwardTrace trace;
  std::vector<float> logits(static_cast<std::size_t>(T * vocab));
  auto state = model->new_state();
  DAY0_RETURN_IF_ERROR(model->forward(*state, ids, T, logits.data(), &trace));
  trace.tensors["logits"] = logits;

  // Every reference tensor Day0 traces, in the reference's order.
  for (const auto& t : ref.tensors()) {
    if (t.name == "input_ids" || t.name.rfind("greedy", 0) == 0) continue;
    std::string ours = t.name == "logits_prefill" ? "logits" : t.name;
    const auto it = trace.tensors.find(ours);
    if (it == trace.tensors.end()) continue;
    DAY0_ASSIGN_OR_RETURN(const auto want, read_values(ref, t));
    if (t.name.find(".topk") != std::string::npos) {
      // Router and indexer choices: the set per token must agree, or differ on a tie.
      VerifyRow r;
      r.name = t.name;
      const std::size_t k = want.size() / static_cast<std::size_t>(T);
      std::size_t same = 0;
      for (std::int64_t row = 0; row < T && it->second.size() == want.size(); ++row) {
        std::multiset<int> a, b;
        for (std::size_t j = 0; j < k; ++j) {
          a.insert(static_cast<int>(it->second[static_cast<std::size_t>(row) * k + j]));
          b.insert(static_cast<int>(want[static_cast<std::size_t>(row) * k + j]));
        }
        if (a == b) {
          ++same;
          continue;
        }
        const std::set<std::int64_t> ours(a.begin(), a.end()), theirs(b.begin(), b.end());
        DAY0_ASSIGN_OR_RETURN(const bool tie, selection_tie(ref, trace, t.name, row, T, ours, theirs, shape));
        r.ties += tie ? 1 : 0;
      }
      r.agreement = static_cast<double>(same + static_cast<std::size_t>(r.ties)) / static_cast<double>(T);
      r.pass = r.agreement >= options.min_agreement;
      report.rows.push_back(r);
      continue;
    }
    // Pool scores: each token's row is as long as the pools it sees; compared as one row.
    const bool ragged = t.name.ends_with(".scores");
    report.rows.push_back(compare_rows(t.name, it->second, want, ragged ? 1 : T, options.fail_above));
  }

  // The decode path: greedy continuation with the cache, token by token.
  if (ref.find("greedy_prompt") && ref.find("greedy_ids")) {
    DAY0_ASSIGN_OR_RETURN(const auto prompt, read_ids(ref, "greedy_prompt", vocab));
    DAY0_ASSIGN_OR_RETURN(const auto expected, read_ids(ref, "greedy_ids", vocab));
    auto greedy_state = model->new_state();
    std::vector<float> row(static_cast<std::size_t>(vocab));
    DAY0_RETURN_IF_ERROR(model->forward(*greedy_state, prompt, 1, row.data(), nullptr));
    std::size_t same = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto best = static_cast<std::int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
      if (best != expected[i]) break;  // after a divergence the contexts differ
      ++same;
      const std::int32_t next[1] = {expected[i]};
      DAY0_RETURN_IF_ERROR(model->forward(*greedy_state, next, 1, row.data(), nullptr));
    }
    VerifyRow r;
    r.name = fmt::format("greedy ({} tokens)", expected.size());
    r.agreement = expected.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(expected.size());
    r.pass = r.agreement >= options.min_agreement;
    report.rows.push_back(r);
  }
  if (report.rows.empty())
    return error(ErrorCode::corrupt_data, reference.string() + " holds no tensor Day0 can compare (logits, hidden.*)");
  std::stable_sort(report.rows.begin(), report.rows.end(),
                   [](const VerifyRow& a, const VerifyRow& b) { return pass_order(a.name) < pass_order(b.name); });
  for (const auto& r : report.rows) {
    report.passed = report.passed && r.pass;
    const bool atypical = !r.pass || (r.agreement < 0 ? r.rel_l2 > options.typical : r.agreement < 1.0);
    if (atypical && report.first_divergence.empty()) report.first_divergence = r.name;
  }
  return report;
}

std::string format_verify_report(const VerifyReport& report) {
  std::string out = fmt::format("{:<28}{:>14}{:>14}{:>12}  {}\n", "tensor", "rel L2", "max |diff|", "agree", "");
  for (const auto& r : report.rows) {
    const std::string agree = r.agreement < 0 ? "-" : fmt::format("{:.1f}%", 100.0 * r.agreement);
    const std::string ties = r.ties > 0 ? fmt::format(" ({} on {})", r.ties, r.ties == 1 ? "a tie" : "ties") : "";
    const std::string l2 = r.agreement >= 0 ? "-" : fmt::format("{:.3e}", r.rel_l2);
    const std::string mx = r.agreement >= 0 ? "-" : fmt::format("{:.3e}", r.max_abs);
    out += fmt::format("{:<28}{:>14}{:>14}{:>12}  {}{}\n", r.name, l2, mx, agree, r.pass ? "ok" : "FAIL", ties);
  }
  if (!report.first_divergence.empty())
    out += fmt::format("first tensor above the typical bound (forward order): {}\n", report.first_divergence);
  out += fmt::format("{} tokens: {}\n", report.tokens, report.passed ? "all within thresholds" : "FAILED");
  return out;
}

}  // namespace day0
