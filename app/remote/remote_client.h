#pragma once
// A client for any OpenAI-compatible chat endpoint (vLLM, SGLang, a llama.cpp server, another
// Day0): streams a reply over server-sent events, split into reasoning and answer like the local
// engine's output. No Qt; HTTP and HTTPS through cpp-httplib.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "day0/engine.h"
#include "day0/status.h"

namespace day0::remote {

struct Endpoint {
  // The API's base: "http://host:port" (then /v1 is assumed) or one ending in its own version
  // path, e.g. "https://example.com/openai/v1".
  std::string url;
  std::string api_key;  // sent as "Authorization: Bearer <key>" when not empty
  std::string model;    // the name the server knows the model by
};

struct RemoteMessage {
  std::string role;  // system, user, assistant, tool
  std::string content;
  std::string reasoning;                // an assistant's earlier reasoning, sent as reasoning_content
  std::vector<std::string> image_urls;  // data URLs (see image_data_url)
};

struct RemoteSampling {
  std::optional<float> temperature;
  std::optional<float> top_p;
  std::optional<std::int64_t> max_tokens;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> stop;
};

struct RemoteReply {
  std::string content;
  std::string reasoning;
  std::string finish_reason;        // as the server said: stop, length, ...; "cancelled" when on_piece stopped it
  std::int64_t prompt_tokens = -1;  // -1: the server sent no usage
  std::int64_t completion_tokens = -1;
  double time_to_first_token_ms = 0;
  double tokens_per_second = 0;
};

// Called for each piece of streamed text (reasoning or answer); returning false cancels the
// request (the connection is closed, which a Day0 server takes as a cancel).
using PieceCallback = std::function<bool(const OutputPiece& piece)>;

// Lets another thread end a stream_chat at once, also while it still waits for the server's first
// byte (a long prefill on the other side): the connection is shut down under the request.
class CancelToken {
 public:
  void cancel();
  bool cancelled() const { return cancelled_.load(); }

 private:
  friend class RemoteClient;
  std::mutex mutex_;
  std::function<void()> abort_;  // set while a request is in flight
  std::atomic<bool> cancelled_{false};
};

class RemoteClient {
 public:
  // Checks the URL's shape (http or https, a host); connects nothing yet.
  static Result<RemoteClient> create(Endpoint endpoint);

  // GET /models: the model names the server lists.
  Result<std::vector<std::string>> list_models() const;
  // POST /chat/completions with stream=true (and usage requested); a server that answers with
  // one JSON body instead is understood too. A cancelled `cancel` ends it with finish_reason
  // "cancelled", like on_piece returning false.
  Result<RemoteReply> stream_chat(const std::vector<RemoteMessage>& messages, const RemoteSampling& sampling,
                                  const PieceCallback& on_piece,
                                  const std::shared_ptr<CancelToken>& cancel = nullptr) const;

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  RemoteClient(Endpoint endpoint, std::string origin, std::string base_path)
      : endpoint_(std::move(endpoint)), origin_(std::move(origin)), base_path_(std::move(base_path)) {}
  Endpoint endpoint_;
  std::string origin_;     // scheme://host[:port]
  std::string base_path_;  // "/v1"
};

// "data:image/png;base64,..." for an image file (PNG, JPEG, GIF or WebP, told by its first bytes).
Result<std::string> image_data_url(const std::filesystem::path& file);

}  // namespace day0::remote
