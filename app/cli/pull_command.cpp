// day0-cli pull: downloads a model folder from the Hugging Face Hub by repository name. The plan
// (what inspect and the memory plan say, from config.json and the index alone) comes first, then
// the files: several at a time, resumable, verified. Ctrl+C stops and keeps the .part files.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "cli/terminal.h"
#include "day0/model_info.h"
#include "hub/curated.h"
#include "hub/downloader.h"
#include "hub/hub_client.h"
#include "hub/hub_token.h"
#include "hub/pull_plan.h"

namespace day0::cli {
namespace {

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli pull REPO[@REVISION] [--dir DIR] [--include PATTERNS] [--parallel 4]\n"
               "                     [--retries 5] [--plan-only]\n"
               "       day0-cli pull --list\n"
               "       day0-cli pull --save-token          (reads the token from standard input)\n"
               "  Downloads a model from the Hugging Face Hub (e.g. openai/gpt-oss-20b@main) into DIR\n"
               "  (default: ~/.local/share/day0/models/OWNER/NAME). First it fetches config.json and the\n"
               "  shard index alone and prints what Day0 knows: architecture and support, parameters, bytes\n"
               "  to download, whether it fits this machine and the speed its memory allows; it stops there\n"
               "  with --plan-only, or when the disk lacks room. Then the files a model folder needs\n"
               "  (config, tokenizer, chat template, *.safetensors and the index; not original/ or other\n"
               "  formats) download several at a time into NAME.part files, resumed after a dropped\n"
               "  connection and checked against the Hub's size and SHA-256. --include 'a,b*' downloads the\n"
               "  files matching these patterns instead. Ctrl+C stops and keeps the .part files: the same\n"
               "  command resumes. --list shows repositories known to work.\n"
               "  Gated repositories need a token: HF_TOKEN, the one saved by --save-token or the app's\n"
               "  Settings, or huggingface-cli login's. HF_ENDPOINT names a mirror; HF_HUB_OFFLINE=1 refuses.\n");
  return help ? 0 : 2;
}

int list_curated() {
  for (const auto& m : hub::curated_models())
    std::printf("%-24s %-10s %9s  %s parameters, %s active  %s\n", m.repo, m.family,
                hub::format_size(static_cast<double>(m.weight_bytes)).c_str(),
                hub::format_count(m.total_params).c_str(), hub::format_count(m.active_params).c_str(), m.note);
  return 0;
}

int save_token_from_stdin() {
  std::string token;
  if (isatty(STDIN_FILENO)) std::fprintf(stderr, "Hugging Face token (hf_...): ");
  std::getline(std::cin, token);
  if (const Status s = hub::save_token(token); !s) {
    std::fprintf(stderr, "day0-cli pull: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("%s %s\n", token.find_first_not_of(" \t\r\n") == std::string::npos ? "removed" : "saved to",
              hub::token_file().c_str());
  return 0;
}

// One line of progress: "  42%  5.80 GB of 13.8 GB  112 MB/s  1 min 10 s left  3/12 files".
std::string progress_line(const hub::Progress& p) {
  const double fraction = p.total_bytes > 0 ? double(p.done_bytes) / double(p.total_bytes) : 1.0;
  char text[200];
  std::snprintf(text, sizeof text, "%4d%%  %s of %s  %s/s  %s left  %d/%d files", static_cast<int>(fraction * 100),
                hub::format_size(double(p.done_bytes)).c_str(), hub::format_size(double(p.total_bytes)).c_str(),
                hub::format_size(p.bytes_per_second).c_str(),
                p.seconds_left < 0 ? "?" : hub::format_duration(p.seconds_left).c_str(), p.files_done, p.files_total);
  return text;
}

int run_pull(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse_with_words(argv, {"help", "plan-only", "list", "save-token"},
                                           {"dir", "include", "parallel", "retries"}, &problem);
  if (!args) {
    std::fprintf(stderr, "day0-cli pull: %s\n", problem.c_str());
    return usage(false);
  }
  if (args->flag("help")) return usage(true);
  if (args->flag("list")) return list_curated();
  if (args->flag("save-token")) return save_token_from_stdin();
  if (args->words().size() != 1) return usage(false);
  const auto ref = hub::parse_repo_ref(args->words()[0]);
  if (!ref) {
    std::fprintf(stderr, "day0-cli pull: %s\n", ref.status().message().c_str());
    return 2;
  }
  hub::DownloadOptions options;
  const auto parallel = integer_option(*args, "pull", "parallel", 1, 16, options.parallel);
  const auto retries = integer_option(*args, "pull", "retries", 0, 100, options.retries);
  if (!parallel || !retries) return 2;
  options.parallel = static_cast<int>(*parallel);
  options.retries = static_cast<int>(*retries);

  const hub::HubConfig config = hub::config_from_environment();
  if (config.offline) {
    std::fprintf(stderr,
                 "day0-cli pull: offline mode (HF_HUB_OFFLINE) is on, so nothing is downloaded. Unset HF_HUB_OFFLINE "
                 "to pull %s.\n",
                 ref->text().c_str());
    return 1;
  }
  auto client = hub::HubClient::create(config);
  if (!client) {
    std::fprintf(stderr, "day0-cli pull: HF_ENDPOINT: %s\n", client.status().message().c_str());
    return 2;
  }
  const std::filesystem::path dir =
      args->option("dir") ? std::filesystem::path(*args->option("dir")) : hub::default_model_dir(*ref);
  signal(SIGPIPE, SIG_IGN);
  terminal::install_signal_handlers();

  std::fprintf(stderr, "Reading %s from %s ...\n", ref->text().c_str(), config.endpoint.c_str());
  const auto plan = hub::plan_pull(*client, *ref, dir, hub::split_patterns(args->option("include").value_or("")));
  if (!plan) {
    std::fprintf(stderr, "day0-cli pull: %s\n", plain_message(plan.status().message()).c_str());
    return 1;
  }
  std::fputs(hub::format_pull_plan(*plan).c_str(), stdout);
  std::fflush(stdout);
  if (!plan->disk_problem.empty()) {
    std::fprintf(stderr, "day0-cli pull: %s\n", plan->disk_problem.c_str());
    return 1;
  }
  if (plan->info && !plan->info->supported)
    std::fprintf(stderr, "day0-cli pull: warning: %s\n", plan->info->support_note.c_str());
  if (args->flag("plan-only")) return 0;

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "day0-cli pull: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  hub::DownloadControl control;
  hub::Downloader downloader(*client, plan->pinned, dir, options);
  int last_done = -1;
  double last_print = -1e9;
  double elapsed = 0;
  const auto report = downloader.run(
      plan->selection.files,
      [&](const hub::Progress& p) {
        if (terminal::interrupt_count() > 0 && !control.cancelled()) control.cancel();
        elapsed += options.progress_interval_s;
        const std::string text = progress_line(p);
        if (tty) {
          std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
        } else if (p.files_done != last_done || elapsed - last_print >= 5) {
          std::fprintf(stderr, "%s\n", text.c_str());
          last_print = elapsed;
        }
        last_done = p.files_done;
      },
      &control);
  if (tty) std::fprintf(stderr, "\n");
  for (const auto& f : report.failures) std::fprintf(stderr, "day0-cli pull: %s\n", f.c_str());
  if (report.cancelled) {
    std::fprintf(stderr, "day0-cli pull: stopped. The .part files are kept in %s: run the same command to resume.\n",
                 dir.c_str());
    return 1;
  }
  if (!report.failures.empty()) {
    std::fprintf(stderr,
                 "day0-cli pull: %zu of %zu files failed; the %d good ones are kept in %s. Run the same "
                 "command to fetch the rest.\n",
                 report.failures.size(), plan->selection.files.size(), report.files_done + report.files_reused,
                 dir.c_str());
    return 1;
  }
  // The shards' headers are read and checked as a load would.
  const auto info = inspect_model(dir);
  if (!info) {
    std::fprintf(stderr, "day0-cli pull: the files arrived, but %s\n", plain_message(info.status().message()).c_str());
    return 1;
  }
  std::printf(
      "Downloaded %s to %s (%d files, %s fetched now%s).\nChat with it: day0-cli chat --model %s, or open it "
      "in Day0 (day0 --model %s).\n",
      ref->text().c_str(), dir.c_str(), report.files_done + report.files_reused,
      hub::format_size(double(report.bytes_downloaded)).c_str(),
      report.files_reused > 0 ? (", " + std::to_string(report.files_reused) + " already there").c_str() : "",
      dir.c_str(), dir.c_str());
  return 0;
}

const Registration kRegistration{"pull", &run_pull, "download a model from the Hugging Face Hub (resumable, verified)"};

}  // namespace
}  // namespace day0::cli
