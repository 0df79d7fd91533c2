#pragma once
// Numerical verification of a model against a reference dump (made by
// tools/reference/make_*_fixtures.py from Hugging Face transformers): per-layer hidden states,
// attention outputs, router and indexer choices (a differing choice on a tie reported as such
// where the dump holds the scores behind it), logits and a greedy continuation.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "day0/status.h"

namespace day0 {

struct VerifyRow {
  std::string name;   // "hidden.3", "logits", "router.1.topk", "greedy", ...
  double rel_l2 = 0;  // worst row: ||a - b|| / ||b||
  double max_abs = 0;
  double agreement = -1;  // fraction of equal choices (router top-k sets, greedy ids); -1 if n/a
  // Selections (router, indexer) that differ but sit on a tie: the experts or pools only one side
  // chose score within the noise between the two sides' scores of that token (the reference dump
  // has the scores: router.<l>.logits, indexer.<l>.scores). Counted as agreeing.
  std::int64_t ties = 0;
  bool pass = true;
};

struct VerifyReport {
  std::vector<VerifyRow> rows;  // in forward-pass order: embedding, per layer, head, greedy
  std::int64_t tokens = 0;
  bool passed = true;
  // The first row, in forward-pass order, above `VerifyOptions::typical` (or disagreeing in
  // its choices): where a wrong result starts. Empty when every row is typical.
  std::string first_divergence;
};

struct VerifyOptions {
  double fail_above = 1e-3;    // VERIFY.md: CPU fp32 vs HF fp32 fails above 1e-3
  double typical = 1e-4;       // VERIFY.md: ... and is typically within 1e-4
  double min_agreement = 1.0;  // router sets and greedy ids must agree exactly on the CPU
  int threads = 0;
};

Result<VerifyReport> verify_model(const std::filesystem::path& model_dir, const std::filesystem::path& reference,
                                  const VerifyOptions& options = {});
std::string format_verify_report(const VerifyReport& report);

}  // namespace day0
