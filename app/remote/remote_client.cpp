#include "remote/remote_client.h"

#include <httplib.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/base64.h"
#include "remote/sse_parser.h"

namespace day0::remote {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxErrorBody = 1u << 20;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// `read_timeout`: a chat's first byte can be minutes away (a long prefill on the other side);
// a model list answers at once.
std::unique_ptr<httplib::Client> make_client(const std::string& origin, const std::string& api_key,
                                             int read_timeout = 600) {
  auto client = std::make_unique<httplib::Client>(origin);
  client->set_connection_timeout(10);
  client->set_read_timeout(read_timeout);
  client->set_write_timeout(60);
  if (!api_key.empty()) client->set_bearer_token_auth(api_key);
  return client;
}

// The server's own words from an OpenAI error body, or the start of whatever it sent.
std::string error_message(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return body.substr(0, 300);
}

Status http_failure(const Endpoint& endpoint, const httplib::Error err) {
  return error(ErrorCode::io_error, "cannot reach " + endpoint.url + ": " + httplib::to_string(err));
}

Status status_failure(const Endpoint& endpoint, int status, const std::string& body) {
  const ErrorCode code =
      status == 401 || status == 403 || status == 400 || status == 404 || status == 413 || status == 422
          ? ErrorCode::invalid_argument
          : ErrorCode::io_error;
  return error(code, endpoint.url + " answered HTTP " + std::to_string(status) + ": " + error_message(body));
}

// Delta text under any of the names servers use for reasoning.
std::string reasoning_of(const json& delta) {
  for (const char* key : {"reasoning_content", "reasoning"})
    if (const auto it = delta.find(key); it != delta.end() && it->is_string()) return it->get<std::string>();
  return "";
}

}  // namespace

void CancelToken::cancel() {
  cancelled_ = true;
  std::lock_guard lock(mutex_);
  if (abort_) abort_();
}

Result<RemoteClient> RemoteClient::create(Endpoint endpoint) {
  const std::string& url = endpoint.url;
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return error(ErrorCode::invalid_argument, "'" + url + "' is not a URL (expected http://host:port or https://...)");
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return error(ErrorCode::invalid_argument, "'" + url + "' must start with http:// or https://");
  const std::size_t path_start = url.find('/', scheme_end + 3);
  const std::string origin = url.substr(0, path_start);
  if (origin.size() <= scheme_end + 3) return error(ErrorCode::invalid_argument, "'" + url + "' names no host");
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.empty()) path = "/v1";
  return RemoteClient(std::move(endpoint), origin, path);
}

Result<std::vector<std::string>> RemoteClient::list_models() const {
  auto client = make_client(origin_, endpoint_.api_key, 20);
  auto res = client->Get(base_path_ + "/models");
  if (!res) return http_failure(endpoint_, res.error());
  if (res->status != 200) return status_failure(endpoint_, res->status, res->body);
  const json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_array())
    return error(ErrorCode::corrupt_data, endpoint_.url + "/models did not answer with a model list");
  std::vector<std::string> names;
  for (const auto& m : j["data"])
    if (m.is_object() && m.contains("id") && m["id"].is_string()) names.push_back(m["id"].get<std::string>());
  return names;
}

Result<RemoteReply> RemoteClient::stream_chat(const std::vector<RemoteMessage>& messages,
                                              const RemoteSampling& sampling, const PieceCallback& on_piece,
                                              const std::shared_ptr<CancelToken>& cancel) const {
  json body = {{"model", endpoint_.model}, {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  json list = json::array();
  for (const auto& m : messages) {
    json message = {{"role", m.role}};
    if (m.image_urls.empty()) {
      message["content"] = m.content;
    } else {
      json parts = json::array();
      if (!m.content.empty()) parts.push_back({{"type", "text"}, {"text", m.content}});
      for (const auto& url : m.image_urls) parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
      message["content"] = parts;
    }
    if (!m.reasoning.empty()) message["reasoning_content"] = m.reasoning;
    list.push_back(message);
  }
  body["messages"] = list;
  if (sampling.temperature) body["temperature"] = *sampling.temperature;
  if (sampling.top_p) body["top_p"] = *sampling.top_p;
  if (sampling.max_tokens) body["max_tokens"] = *sampling.max_tokens;
  if (sampling.seed) body["seed"] = *sampling.seed;
  if (!sampling.stop.empty()) body["stop"] = sampling.stop;

  RemoteReply reply;
  int status = 0;
  bool event_stream = false;
  bool cancelled = false;
  bool done = false;
  std::optional<Status> failure;
  std::string raw;  // an error body, or a whole non-streamed reply
  SseParser parser;
  const auto start = Clock::now();
  std::optional<Clock::time_point> first, last;
  std::int64_t pieces = 0;

  const auto deliver = [&](OutputChannel channel, const std::string& text) {
    if (text.empty()) return true;
    const auto now = Clock::now();
    if (!first) first = now;
    last = now;
    ++pieces;
    (channel == OutputChannel::reasoning ? reply.reasoning : reply.content) += text;
    if ((cancel && cancel->cancelled()) || (on_piece && !on_piece(OutputPiece{channel, text, ""}))) {
      cancelled = true;
      return false;
    }
    return true;
  };
  const auto read_usage = [&](const json& j) {
    if (const auto u = j.find("usage"); u != j.end() && u->is_object()) {
      if (u->contains("prompt_tokens") && (*u)["prompt_tokens"].is_number_integer())
        reply.prompt_tokens = (*u)["prompt_tokens"].get<std::int64_t>();
      if (u->contains("completion_tokens") && (*u)["completion_tokens"].is_number_integer())
        reply.completion_tokens = (*u)["completion_tokens"].get<std::int64_t>();
    }
  };
  const auto on_data = [&](const std::string& data) {
    if (data == "[DONE]") {
      done = true;
      return false;
    }
    const json j = json::parse(data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      failure =
          error(ErrorCode::corrupt_data, endpoint_.url + " streamed an event that is not JSON: " + data.substr(0, 200));
      return false;
    }
    if (j.contains("error")) {
      failure = error(ErrorCode::io_error, endpoint_.url + " reported an error: " + error_message(data));
      return false;
    }
    read_usage(j);
    if (const auto choices = j.find("choices"); choices != j.end() && choices->is_array() && !choices->empty()) {
      const json& choice = (*choices)[0];
      if (choice.is_object()) {
        if (const auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string())
          reply.finish_reason = fr->get<std::string>();
        if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
          if (!deliver(OutputChannel::reasoning, reasoning_of(*delta))) return false;
          if (const auto c = delta->find("content"); c != delta->end() && c->is_string())
            if (!deliver(OutputChannel::answer, c->get<std::string>())) return false;
        }
      }
    }
    return true;
  };

  httplib::Request req;
  req.method = "POST";
  req.path = base_path_ + "/chat/completions";
  req.set_header("Accept", "text/event-stream");
  req.set_header("Content-Type", "application/json");
  if (!endpoint_.api_key.empty()) req.set_header("Authorization", "Bearer " + endpoint_.api_key);
  req.body = dump(body);
  const auto stopped = [&]() {
    if (cancel && cancel->cancelled()) cancelled = true;
    return cancelled;
  };
  req.response_handler = [&](const httplib::Response& r) {
    if (stopped()) return false;
    status = r.status;
    event_stream = r.get_header_value("Content-Type").rfind("text/event-stream", 0) == 0;
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    if (stopped()) return false;
    if (status != 200 || !event_stream) {
      raw.append(data, n);
      return raw.size() <= (status == 200 ? (256u << 20) : kMaxErrorBody);
    }
    return parser.feed(std::string_view(data, n), on_data);
  };
  auto client = make_client(origin_, "");
  // The token may stop the client from another thread only while the client lives.
  struct AbortHook {
    CancelToken* token;
    ~AbortHook() {
      if (!token) return;
      std::lock_guard lock(token->mutex_);
      token->abort_ = nullptr;
    }
  } hook{cancel.get()};
  if (cancel) {
    std::lock_guard lock(cancel->mutex_);
    cancel->abort_ = [c = client.get()]() { c->stop(); };
  }
  if (stopped()) {
    reply.finish_reason = "cancelled";
    return reply;
  }
  auto res = client->send(req);
  stopped();
  if (failure) return *failure;
  if (cancelled) {
    reply.finish_reason = "cancelled";
    return reply;
  }
  if (!res && !done) {
    if (!parser.error().empty() && parser.error() != "stopped")
      return error(ErrorCode::corrupt_data, endpoint_.url + ": " + parser.error());
    return http_failure(endpoint_, res.error());
  }
  if (status != 200) return status_failure(endpoint_, status, raw);
  if (!event_stream) {
    // A server that ignored stream=true: one chat.completion object.
    const json j = json::parse(raw, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("choices") || !j["choices"].is_array() ||
        j["choices"].empty())
      return error(ErrorCode::corrupt_data,
                   endpoint_.url + " answered with neither an event stream nor a chat completion");
    const json& choice = j["choices"][0];
    if (choice.is_object() && choice.contains("message") && choice["message"].is_object()) {
      const json& m = choice["message"];
      if (!deliver(OutputChannel::reasoning, reasoning_of(m))) cancelled = true;
      if (!cancelled && m.contains("content") && m["content"].is_string())
        deliver(OutputChannel::answer, m["content"].get<std::string>());
    }
    if (choice.is_object() && choice.contains("finish_reason") && choice["finish_reason"].is_string())
      reply.finish_reason = choice["finish_reason"].get<std::string>();
    read_usage(j);
    done = true;
  }
  if (!done)
    return error(ErrorCode::io_error, endpoint_.url + " closed the stream before it finished ([DONE] missing)");
  if (first) reply.time_to_first_token_ms = std::chrono::duration<double, std::milli>(*first - start).count();
  const std::int64_t generated = reply.completion_tokens >= 0 ? reply.completion_tokens : pieces;
  if (first && last && *last > *first && generated > 1)
    reply.tokens_per_second =
        static_cast<double>(generated - 1) / std::chrono::duration<double>(*last - *first).count();
  return reply;
}

Result<std::string> image_data_url(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return error(ErrorCode::not_found, "cannot open the image " + file.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  const auto starts = [&](std::string_view magic, std::size_t at = 0) {
    return bytes.compare(at, magic.size(), magic) == 0;
  };
  std::string mime;
  if (starts("\x89PNG\r\n\x1a\n"))
    mime = "image/png";
  else if (starts("\xff\xd8\xff"))
    mime = "image/jpeg";
  else if (starts("GIF87a") || starts("GIF89a"))
    mime = "image/gif";
  else if (bytes.size() >= 12 && starts("RIFF") && starts("WEBP", 8))
    mime = "image/webp";
  else
    return error(ErrorCode::unsupported, file.string() + " is not a PNG, JPEG, GIF or WebP image");
  return "data:" + mime + ";base64," + base64_encode(bytes);
}

}  // namespace day0::remote
