#pragma once
// What a download would bring, known before any large byte moves: the repository's file list,
// the files a model folder needs, then config.json and the shard index alone, fetched into a
// temporary folder and read by the same `inspect` and memory plan as a folder on disk:
// architecture and support, parameters (total and active), bytes to download, whether it fits
// this machine and the decode speed its memory allows, and whether the disk has room.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "day0/model_info.h"
#include "hub/file_selection.h"
#include "hub/hub_client.h"

namespace day0::hub {

enum class Fit { resident_gpu, resident_cpu, no, unknown };

struct PullPlan {
  RepoRef ref;         // as asked
  RepoRef pinned;      // at the commit the listing resolved (downloads use it)
  std::string commit;  // may be empty when the Hub did not say
  Selection selection;
  std::filesystem::path dir;  // where the files go

  std::optional<ModelInfo> info;  // from config.json and the index
  std::string inspect_problem;    // why there is no info

  std::uint64_t weight_bytes = 0;    // the safetensors shards
  std::uint64_t download_bytes = 0;  // still to fetch (complete files and .part files count as fetched)
  std::uint64_t disk_free = 0;
  std::string disk_problem;  // empty when the disk has room

  Fit fit = Fit::unknown;
  std::string fit_text;               // "resident on cuda:0 (NVIDIA H200): ...", "does not fit: ..."
  std::uint64_t bytes_per_token = 0;  // weights one decode step reads
  double tokens_per_second = 0;       // the memory-bandwidth bound of decode; 0 when unknown
  std::string speed_text;
};

// Lists `ref`, selects its files (`include` replaces the default choice), fetches config.json and
// the index and plans. Fails when the listing fails or the repository holds no config.json; an
// architecture Day0 does not run is a plan with info->supported false.
Result<PullPlan> plan_pull(const HubClient& client, const RepoRef& ref, const std::filesystem::path& dir,
                           const std::vector<std::string>& include, RequestStopper* stopper = nullptr);

// The plan as `day0-cli pull` prints it (lines of "label  value").
std::string format_pull_plan(const PullPlan& plan);

// Where a repository goes by default: $XDG_DATA_HOME/day0/models/<owner>/<name>.
std::filesystem::path default_model_dir(const RepoRef& ref);

// Weights one decode step reads (active parameters at their stored width: MXFP4 experts 17/32
// byte per weight, FP8 1, the rest 2).
std::uint64_t decode_bytes_per_token(const ModelInfo& info);

// "20.9 B"
std::string format_count(std::uint64_t n);

}  // namespace day0::hub
