#pragma once
// Serves one loaded model over the OpenAI chat completions API (cpp-httplib, no Qt):
//   GET  /v1/models, POST /v1/chat/completions (JSON or server-sent events), GET /health,
//   GET  /metrics (Prometheus text).
// Requests queue on the engine's thread; each gets its own session (the API is stateless).
// A streaming client that goes away cancels its generation at the next token or keep-alive.
// With an API key every route but /health needs "Authorization: Bearer <key>".
// Image parts go to a model that takes images (request_images.h); others refuse them with a 400.
// Parameters it does not implement (tools, response_format, logprobs, ...) get a 400 naming them;
// finish_reason is "stop" or "length" as OpenAI defines them (a failed or cancelled generation
// is an error, not a finish reason).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "day0/chat.h"
#include "day0/engine.h"
#include "day0/status.h"
#include "server/chat_request.h"
#include "server/metrics.h"

namespace day0::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                            // 0: any free port
  std::string api_key;                     // empty: no authentication
  std::string model_id;                    // the name /v1/models lists and requests may name
  std::size_t max_body_bytes = 32u << 20;  // room for a few data-URL images
  std::int64_t max_in_flight = 64;         // queued plus running generations; more get 503
  std::int64_t default_max_tokens = 4096;  // when a request sets none (still bounded by the context)
  RequestLimits limits;
  // Browser front ends on these origins ("http://localhost:3000"; "*" for any) may call the API:
  // their requests get Access-Control-Allow-Origin and OPTIONS preflights are answered. Empty
  // (the default): no CORS headers, and preflights are refused, so browsers keep pages on other
  // origins out.
  std::vector<std::string> cors_origins;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

// A comma-separated list of origins ("http://localhost:3000, https://example.org", or "*") as
// ServerOptions::cors_origins: trimmed, without a trailing slash, empty entries skipped. nullopt
// with *problem naming the first entry that is not an http(s) origin.
std::optional<std::vector<std::string>> parse_cors_origins(std::string_view text, std::string* problem);

class OpenAiServer {
 public:
  OpenAiServer(Engine& engine, std::shared_ptr<Model> model, ChatFormatter formatter, ServerOptions options);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  // Binds the listening socket; returns the port (the chosen one when options.port is 0).
  Result<int> bind();
  // Serves until stop(); call after bind().
  void serve();
  // Thread-safe; in-flight generations are cancelled and serve() returns.
  void stop();

  const Metrics& metrics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace day0::server
