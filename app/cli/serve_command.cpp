// day0-cli serve: serves a model over the OpenAI chat completions API on this machine.
// Loopback only unless an API key guards it; SIGINT or SIGTERM stop it cleanly.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/chat.h"
#include "day0/engine.h"
#include "day0/model_info.h"
#include "server/openai_server.h"

namespace day0::cli {
namespace {

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli serve [--model] DIR [--host 127.0.0.1] [--port 8080] [--api-key KEY]\n"
               "                      [--model-name NAME] [--device cpu|cuda] [--threads N]\n"
               "                      [--max-body-mb 32] [--max-queue 64] [--cors-origin ORIGINS] [--context N]\n"
               "                      [--expert-cache SIZE] [--direct-io]\n"
               "  Serves DIR over the OpenAI API: GET /v1/models, POST /v1/chat/completions (streaming\n"
               "  or not), GET /health, GET /metrics (Prometheus). --port 0 picks a free port; the URL is\n"
               "  printed. Listening on an address other than loopback needs --api-key (clients then send\n"
               "  'Authorization: Bearer KEY'). The model's name is the folder's name unless --model-name.\n"
               "  --cors-origin lets browser pages on those origins call the API (a comma-separated list such\n"
               "  as http://localhost:3000,https://chat.example; * for any); off by default.\n"
               "  Request parameters the server does not implement (tools, response_format, logprobs, ...)\n"
               "  are refused with a 400 that names them. A model that takes images reads image_url parts:\n"
               "  data:image/png;base64,... (or JPEG) URLs, or absolute paths of image files on this machine.\n");
  return help ? 0 : 2;
}

int run_serve(const std::vector<std::string>& argv) {
  std::string problem;
  std::set<std::string> flags{"help"};
  flags.insert(model_flag_names().begin(), model_flag_names().end());
  std::set<std::string> names{"model",   "host",        "port",      "api-key",     "model-name", "device",
                              "threads", "max-body-mb", "max-queue", "cors-origin", "context"};
  names.insert(model_option_names().begin(), model_option_names().end());
  const auto args = Args::parse(argv, flags, names, &problem);
  if (!args) {
    std::fprintf(stderr, "day0-cli serve: %s\n", problem.c_str());
    return usage(false);
  }
  if (args->flag("help")) return usage(true);
  if (!args->option("model")) return usage(false);

  server::ServerOptions options;
  options.host = args->option("host").value_or("127.0.0.1");
  options.api_key = args->option("api-key").value_or("");
  const auto integer = [&](const char* name, std::int64_t lo, std::int64_t hi, std::int64_t fallback) {
    return integer_option(*args, "serve", name, lo, hi, fallback);
  };
  const auto port = integer("port", 0, 65535, 8080);
  const auto body_mb = integer("max-body-mb", 1, 4096, 32);
  const auto queue = integer("max-queue", 1, 100000, 64);
  if (!port || !body_mb || !queue) return 2;
  options.port = static_cast<int>(*port);
  options.max_body_bytes = static_cast<std::size_t>(*body_mb) << 20;
  options.max_in_flight = *queue;
  if (const auto origins = args->option("cors-origin")) {
    std::string why;
    auto parsed = server::parse_cors_origins(*origins, &why);
    if (!parsed) {
      std::fprintf(stderr, "day0-cli serve: --cors-origin: %s\n", why.c_str());
      return 2;
    }
    options.cors_origins = std::move(*parsed);
  }
  if (!server::is_loopback_host(options.host) && options.api_key.empty()) {
    std::fprintf(stderr,
                 "day0-cli serve: refusing to listen on %s without --api-key: anyone who can reach this machine could "
                 "use the model. Give --api-key KEY, or keep the default --host 127.0.0.1.\n",
                 options.host.c_str());
    return 2;
  }
  const std::filesystem::path dir = *args->option("model");
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(dir, ec);
  options.model_id = args->option("model-name").value_or((ec ? dir : canonical).filename().string());
  if (options.model_id.empty()) options.model_id = "day0";

  // SIGINT and SIGTERM are taken by one thread (sigwait), never by the engine or HTTP threads,
  // which inherit this mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A client that hangs up shows as a failed write (and cancels its generation), not a signal.
  signal(SIGPIPE, SIG_IGN);

  // The folder and its config.json first, with the messages inspect gives, then the tokenizer.
  if (auto info = inspect_model(dir); !info) {
    std::fprintf(stderr, "day0-cli serve: %s\n", plain_message(info.status().message()).c_str());
    return 1;
  }
  auto formatter = ChatFormatter::load(dir);
  if (!formatter) {
    std::fprintf(stderr, "day0-cli serve: %s\n", plain_message(formatter.status().message()).c_str());
    return 1;
  }
  int exit_code = 0;
  auto opened = open_model(*args, "serve", &exit_code);
  if (!opened) return exit_code;
  server::OpenAiServer server(*opened->engine, opened->model, std::move(*formatter), options);
  const auto bound = server.bind();
  if (!bound) {
    std::fprintf(stderr, "day0-cli serve: %s\n", plain_message(bound.status().message()).c_str());
    return 1;
  }
  const bool v6 = options.host.find(':') != std::string::npos && options.host.front() != '[';
  std::printf("Day0 serves '%s' at http://%s%s%s:%d/v1 (Ctrl+C stops)\n", options.model_id.c_str(), v6 ? "[" : "",
              options.host.c_str(), v6 ? "]" : "", *bound);
  std::fflush(stdout);

  std::atomic<bool> serving{true};
  std::thread signals([&] {
    const timespec tick{0, 200'000'000};
    while (serving.load()) {
      const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        std::fprintf(stderr, "day0-cli serve: %s received, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
        server.stop();
        return;
      }
    }
  });
  server.serve();
  serving.store(false);
  signals.join();
  return 0;
}

const Registration kRegistration{"serve", &run_serve, "serve a model over the OpenAI-compatible HTTP API"};

}  // namespace
}  // namespace day0::cli
