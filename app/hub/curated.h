#pragma once
// Repositories known to work with Day0, for the welcome card and `day0-cli pull --list`. Sizes
// and parameter counts are computed from each release's config.json (the shapes in
// tests/data/configs) with the dtypes Day0 reads: gpt-oss's experts in MXFP4 and the rest in
// BF16; the GLM-5.3-Flash shape in BF16 throughout. test_hub checks them against those shapes.
// The Hub's file list gives the exact bytes before a download starts.
#include <cstdint>
#include <string>
#include <vector>

namespace day0::hub {

struct CuratedModel {
  const char* repo;
  const char* name;
  const char* family;  // model_type
  const char* shape;   // the file in tests/data/configs the figures come from
  std::uint64_t weight_bytes;
  std::uint64_t total_params;
  std::uint64_t active_params;
  const char* note;
};

const std::vector<CuratedModel>& curated_models();

}  // namespace day0::hub
