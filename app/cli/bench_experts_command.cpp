// day0-cli bench-experts: how fast this machine reads a checkpoint's routed experts from disk,
// the way the expert store does (pread of each expert's byte ranges on several threads), with
// the page cache and with O_DIRECT.
#include <cstdio>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/model_tools.h"

namespace day0::cli {
namespace {

int run_bench_experts(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help", "direct", "json"}, {"model", "readers", "gb"}, &problem);
  if (!args || args->flag("help") || !args->option("model")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli bench-experts: %s\n", problem.c_str());
    std::fprintf(args && args->flag("help") ? stdout : stderr,
                 "usage: day0-cli bench-experts [--model] DIR [--direct] [--readers N] [--gb G] [--json]\n"
                 "  Reads the checkpoint's routed experts (each one's byte ranges in the shards, with pread on\n"
                 "  N threads, default 4) until G GB (default: all of them) and reports GB/s. --direct reads\n"
                 "  with O_DIRECT, past the page cache: the disk's own rate. Without it a second run\n"
                 "  measures the page cache.\n");
    return args && args->flag("help") ? 0 : 2;
  }
  std::size_t readers = 4;
  if (const auto r = args->option("readers")) {
    const auto v = parse_integer(*r);
    if (!v || *v < 1 || *v > 64) {
      std::fprintf(stderr, "day0-cli bench-experts: --readers takes 1 to 64\n");
      return 2;
    }
    readers = static_cast<std::size_t>(*v);
  }
  std::uint64_t max_bytes = 0;
  if (const auto g = args->option("gb")) {
    const auto v = parse_integer(*g);
    if (!v || *v < 1) {
      std::fprintf(stderr, "day0-cli bench-experts: --gb takes a whole number of gigabytes, at least 1\n");
      return 2;
    }
    max_bytes = static_cast<std::uint64_t>(*v) * 1'000'000'000ull;
  }
  const auto f = measure_expert_reads(*args->option("model"), args->flag("direct"), readers, max_bytes);
  if (!f) {
    std::fprintf(stderr, "day0-cli bench-experts: %s\n", plain_message(f.status().message()).c_str());
    return 1;
  }
  if (args->flag("json")) {
    std::printf("{\"experts\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"gb_per_s\":%.4f,\"direct\":%s,\"readers\":%zu}\n",
                static_cast<unsigned long long>(f->experts), static_cast<unsigned long long>(f->bytes), f->seconds,
                f->gb_per_s, f->direct ? "true" : "false", f->readers);
  } else {
    std::printf("%llu experts, %.2f GB in %.3f s: %.2f GB/s (%s, %zu readers)\n",
                static_cast<unsigned long long>(f->experts), static_cast<double>(f->bytes) / 1e9, f->seconds,
                f->gb_per_s, f->direct ? "O_DIRECT" : args->flag("direct") ? "page cache: O_DIRECT refused here"
                                                                        : "page cache",
                f->readers);
  }
  return 0;
}

const Registration kRegistration{"bench-experts", &run_bench_experts,
                                 "measure how fast the checkpoint's experts are read from disk"};

}  // namespace
}  // namespace day0::cli
