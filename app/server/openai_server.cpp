#include "server/openai_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "day0/log.h"
#include "server/request_images.h"

namespace day0::server {
namespace {

using json = nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Reasoning and commentary preambles go to reasoning_content, the rest to content (as day0-cli
// chat and the app show them).
bool is_reasoning(OutputChannel c) { return c == OutputChannel::reasoning || c == OutputChannel::commentary; }

// The metrics' label for how a generation ended: stop, length, cancelled or error.
const char* metrics_reason(const Event& last) {
  if (last.kind == Event::Kind::error) return "error";
  switch (last.reason) {
    case DoneReason::eos:
    case DoneReason::stop_string:
      return "stop";
    case DoneReason::max_tokens:
      return "length";
    case DoneReason::cancelled:
      return "cancelled";
    case DoneReason::error:
      return "error";
  }
  return "error";
}

// OpenAI's finish_reason for a generation that completed: "stop" (end of turn, a stop string)
// or "length" (max_tokens). Day0 does not call tools or filter content, so never "tool_calls" or
// "content_filter"; errors and cancels are reported as errors, not finish reasons.
const char* finish_reason(const Event& last) { return last.reason == DoneReason::max_tokens ? "length" : "stop"; }

bool origin_allowed(const std::vector<std::string>& allowed, const std::string& origin) {
  if (origin.empty()) return false;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return a == "*" || a == origin; });
}

json usage_json(const Event& last) {
  const auto prompt = last.stats.context_tokens, completion = last.stats.generated_tokens;
  return {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
}

// One generation: the engine thread fills it, an HTTP thread drains it.
struct Generation {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<OutputPiece> pending;
  bool started = false;
  bool finished = false;
  // The prefill's latest progress, not yet streamed (when the client asked for it).
  bool progress_pending = false;
  std::int64_t prefill_done = 0, prefill_total = 0;
  Event last;
  std::shared_ptr<Session> session;
  std::shared_ptr<RequestHandle> handle;
  // The request's images; the files written for it are removed once the engine is done with it.
  std::unique_ptr<RequestImages> images;
};

// Consecutive pieces of one kind merged: [(reasoning?, text)].
std::vector<std::pair<bool, std::string>> merge(const std::vector<OutputPiece>& pieces) {
  std::vector<std::pair<bool, std::string>> out;
  for (const auto& p : pieces) {
    if (p.text.empty()) continue;
    const bool r = is_reasoning(p.channel);
    if (out.empty() || out.back().first != r) out.push_back({r, ""});
    out.back().second += p.text;
  }
  return out;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0 ||
         host.rfind("::ffff:127.", 0) == 0;  // an IPv4 loopback client of a dual-stack socket
}

std::optional<std::vector<std::string>> parse_cors_origins(std::string_view text, std::string* problem) {
  std::vector<std::string> origins;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view origin = text.substr(start, comma - start);
    start = comma + 1;
    while (!origin.empty() && std::isspace(static_cast<unsigned char>(origin.back()))) origin.remove_suffix(1);
    while (!origin.empty() && std::isspace(static_cast<unsigned char>(origin.front()))) origin.remove_prefix(1);
    while (!origin.empty() && origin.back() == '/') origin.remove_suffix(1);  // origins have no path
    if (origin.empty()) continue;
    const bool scheme = origin.rfind("http://", 0) == 0 || origin.rfind("https://", 0) == 0;
    if (origin != "*" && (!scheme || origin.find('/', origin.find("//") + 2) != std::string_view::npos)) {
      if (problem)
        *problem = "allowed origins are such as http://localhost:3000 (or *), not '" +
                   std::string(origin.substr(0, 200)) + "'";
      return std::nullopt;
    }
    origins.emplace_back(origin);
  }
  return origins;
}

struct OpenAiServer::Impl {
  Engine& engine;
  std::shared_ptr<Model> model;
  ChatFormatter formatter;
  ServerOptions options;
  ModelSummary summary;
  // What stands for one image in a message (empty: the model takes no images), and the image
  // token in it, which the engine expands to the image's positions.
  std::string image_placeholder;
  std::int32_t image_token = -1;
  ImageFolder image_folder;  // decoded data-URL images while their requests run
  Metrics metrics;
  httplib::Server http;
  std::mutex formatter_mutex;
  std::mutex handles_mutex;
  std::vector<std::shared_ptr<RequestHandle>> handles;  // unfinished ones, for stop()
  std::atomic<std::uint64_t> next_id{1};
  std::int64_t started_at = std::time(nullptr);

  Impl(Engine& e, std::shared_ptr<Model> m, ChatFormatter f, ServerOptions o)
      : engine(e), model(std::move(m)), formatter(std::move(f)), options(std::move(o)), summary(describe(*model)) {
    image_placeholder = formatter.image_placeholder(summary);
    if (!image_placeholder.empty()) image_token = summary.image_token_id;
    http.set_payload_max_length(options.max_body_bytes);
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      // CORS: an allowed origin's requests carry its name back; a preflight is answered here,
      // before authentication (browsers send no Authorization header with it).
      const std::string origin = req.get_header_value("Origin");
      const bool allowed = origin_allowed(options.cors_origins, origin);
      if (allowed) {
        res.set_header("Access-Control-Allow-Origin", origin);
        res.set_header("Vary", "Origin");
      }
      if (req.method == "OPTIONS") {
        if (!allowed) {
          reply_error(res, {403,
                            options.cors_origins.empty()
                                ? "cross-origin requests are not enabled on this server (day0-cli serve --cors-origin, or the "
                                  "allowed origins in the app's server settings)"
                                : "the origin '" + origin.substr(0, 200) + "' is not allowed",
                            "invalid_request_error", "", "cors_not_allowed"});
          return httplib::Server::HandlerResponse::Handled;
        }
        res.status = 204;
        res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        const std::string asked = req.get_header_value("Access-Control-Request-Headers");
        res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked);
        res.set_header("Access-Control-Max-Age", "600");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (options.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
      const std::string expected = "Bearer " + options.api_key;
      const std::string given = req.get_header_value("Authorization");
      // Compared in constant time so the key cannot be guessed byte by byte from timings.
      unsigned diff = given.size() == expected.size() ? 0u : 1u;
      for (std::size_t i = 0; i < given.size() && i < expected.size(); ++i)
        diff |= static_cast<unsigned>(given[i] ^ expected[i]);
      if (diff == 0) return httplib::Server::HandlerResponse::Unhandled;
      ApiError e{401, given.empty() ? "missing 'Authorization: Bearer <key>' header" : "the API key is not valid",
                 "invalid_request_error", "", "invalid_api_key"};
      res.set_header("Connection", "close");
      reply_error(res, e);
      return httplib::Server::HandlerResponse::Handled;
    });
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          ApiError e;
          e.status = res.status;
          if (res.status == 404) {
            e.message = "no route " + req.method + " " + req.path.substr(0, 200);
            e.code = "not_found";
          } else if (res.status == 413) {
            e.message = "the request body exceeds the limit of " + std::to_string(options.max_body_bytes) + " bytes";
            e.code = "request_too_large";
          } else {
            e.message = "the request could not be handled (HTTP " + std::to_string(res.status) + ")";
            if (res.status >= 500) e.type = "server_error";
          }
          res.set_content(error_json(e), "application/json");
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      res.status = 500;
      res.set_content(error_json({500, "internal error: " + what, "server_error", "", ""}), "application/json");
    });
    http.set_logger(
        [this](const httplib::Request&, const httplib::Response& res) { metrics.http_response(res.status); });

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(dump({{"status", "ok"}, {"model", options.model_id}}), "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.render(summary.device_memory), "text/plain; version=0.0.4");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(dump({{"object", "list"}, {"data", json::array({model_json()})}}), "application/json");
    });
    http.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.matches[1] != options.model_id) return reply_error(res, model_not_found(req.matches[1]));
      res.set_content(dump(model_json()), "application/json");
    });
    http.Post("/v1/chat/completions",
              [this](const httplib::Request& req, httplib::Response& res) { chat_completions(req, res); });
  }

  json model_json() const {
    return {{"id", options.model_id}, {"object", "model"}, {"created", started_at}, {"owned_by", "day0"}};
  }

  ApiError model_not_found(const std::string& name) const {
    return {404,
            "the model '" + name.substr(0, 200) + "' does not exist; this server serves '" + options.model_id + "'",
            "invalid_request_error", "model", "model_not_found"};
  }

  // The 400 for image parts sent to a model that takes none (`param`: the first part).
  ApiError images_refused(const std::string& param) const {
    if (summary.vision_needs_cpu)
      return {400,
              "the model '" + options.model_id +
                  "' does not accept images on this server: its vision encoder runs on the CPU only and the model "
                  "is loaded on " +
                  summary.device + "; load the model with --device cpu (in the app, Device: CPU) to send it images",
              "invalid_request_error", param, "model_does_not_accept_images"};
    return {400,
            "the model '" + options.model_id +
                "' does not accept images (it reads text only); send the message without image parts",
            "invalid_request_error", param, "model_does_not_accept_images"};
  }

  static void reply_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(error_json(e), "application/json");
  }

  void on_event(Generation& g, const Event& e) {
    // The engine has read the images once the generation ends (done or error): their files go
    // before the reply does.
    if (e.kind != Event::Kind::token && e.kind != Event::Kind::progress && g.images) g.images->remove();
    {
      std::lock_guard lock(g.mutex);
      if (e.kind == Event::Kind::progress) {
        g.progress_pending = true;
        g.prefill_done = e.prefill_done;
        g.prefill_total = e.prefill_total;
        return g.cv.notify_all();
      }
      if (!g.started && e.kind == Event::Kind::token) {
        g.started = true;
        metrics.generation_started();
      }
      g.pending.insert(g.pending.end(), e.text.begin(), e.text.end());
      if (e.kind != Event::Kind::token) {
        g.finished = true;
        g.last = e;
        metrics.generation_finished(metrics_reason(e), g.started, e.stats.context_tokens, e.stats.generated_tokens,
                                    e.stats.time_to_first_token_ms, e.stats.decode_tokens_per_second);
      }
    }
    g.cv.notify_all();
  }

  std::shared_ptr<Generation> start(Request request, std::unique_ptr<RequestImages> images) {
    auto g = std::make_shared<Generation>();
    g->images = std::move(images);
    g->session = engine.new_session(model);
    metrics.generation_queued();
    // The callback holds the generation until the engine has delivered its last event.
    g->handle = engine.submit(g->session, std::move(request), [this, g](const Event& e) { on_event(*g, e); });
    std::lock_guard lock(handles_mutex);
    std::erase_if(handles, [](const auto& h) { return h->finished(); });
    handles.push_back(g->handle);
    return g;
  }

  void chat_completions(const httplib::Request& req, httplib::Response& res) {
    ApiError err;
    RequestLimits limits = options.limits;
    limits.server_image_files = limits.server_image_files && is_loopback_host(req.remote_addr);
    auto parsed = parse_chat_request(req.body, limits, &err);
    if (!parsed) return reply_error(res, err);
    if (parsed->model && *parsed->model != options.model_id) return reply_error(res, model_not_found(*parsed->model));
    // Image parts: each decoded (data URLs into files of the server's temporary folder) and
    // measured, then written into its message as the model's placeholder. The files go when the
    // generation has finished, or with `images` on any return before it starts.
    auto images = std::make_unique<RequestImages>();
    if (!parsed->images.empty()) {
      if (image_placeholder.empty()) return reply_error(res, images_refused(parsed->images.front().param));
      if (auto e = prepare_images(parsed->images, *model, image_folder, images.get())) return reply_error(res, *e);
      place_images(parsed->images, images->positions, image_placeholder, &parsed->messages);
    }
    // Under stop (the default) the whole conversation goes in, and one that is too long is refused
    // below; the other policies leave earlier turns out, keeping room for max_tokens.
    Result<FittedPrompt> fitted = [&] {
      std::lock_guard lock(formatter_mutex);
      return formatter.encode_fitting(parsed->messages, summary.max_context,
                                      parsed->max_tokens.value_or(options.default_max_tokens),
                                      parsed->context_overflow);
    }();
    if (!fitted)
      return reply_error(res, {400, "the messages cannot be formatted for this model: " + fitted.status().message(),
                               "invalid_request_error", "messages", "invalid_value"});
    const std::size_t dropped = fitted->dropped;
    // The positions the prompt takes: its tokens, each image token expanded to its image's.
    const std::int64_t prompt_tokens = fitted->positions;
    const std::int64_t room = summary.max_context - prompt_tokens;
    if (room < 1 || (parsed->max_tokens && *parsed->max_tokens > room))
      return reply_error(
          res, {400,
                "this model's context holds " + std::to_string(summary.max_context) + " tokens; the messages take " +
                    std::to_string(prompt_tokens) + " and max_tokens asks for " +
                    std::to_string(parsed->max_tokens.value_or(1)),
                "invalid_request_error", parsed->max_tokens ? "max_tokens" : "messages", "context_length_exceeded"});
    // The images of the messages kept, in order: each image token of the prompt stands for the
    // next, so image markers typed into the text would stand for images that are not there.
    std::vector<std::filesystem::path> files;
    if (!parsed->images.empty()) {
      std::vector<bool> kept(parsed->messages.size(), false);
      for (const std::size_t i : fitted->kept) kept[i] = true;
      for (std::size_t k = 0; k < parsed->images.size(); ++k)
        if (kept[parsed->images[k].message]) files.push_back(images->files[k]);
      const auto marks = std::count(fitted->tokens.begin(), fitted->tokens.end(), image_token);
      if (image_token >= 0 && static_cast<std::size_t>(marks) != files.size())
        return reply_error(res, {400,
                                 "the messages' text holds the model's image markers (" + image_placeholder +
                                     "); images go in image_url parts",
                                 "invalid_request_error", "messages", "invalid_value"});
    }
    if (metrics.in_flight() >= options.max_in_flight)
      return reply_error(res, {503,
                               "the server is busy: " + std::to_string(options.max_in_flight) +
                                   " requests are already queued or running; retry later",
                               "server_error", "", "server_busy"});

    Request request;
    request.context = std::move(fitted->tokens);
    request.images = std::move(files);
    request.sampling.temperature = parsed->temperature;
    request.sampling.top_p = parsed->top_p;
    request.sampling.seed = parsed->seed ? *parsed->seed : std::random_device{}();
    request.stop.max_new_tokens = parsed->max_tokens.value_or(std::min(options.default_max_tokens, room));
    request.stop.extra_stop_ids = formatter.turn_end_ids();
    request.stop.stop_strings = parsed->stop;
    auto g = start(std::move(request), std::move(images));

    char id_text[40];
    std::snprintf(id_text, sizeof id_text, "chatcmpl-%llx%06llx", static_cast<unsigned long long>(std::time(nullptr)),
                  static_cast<unsigned long long>(next_id.fetch_add(1)));
    const std::string id = id_text;
    const std::int64_t created = std::time(nullptr);
    if (dropped > 0) res.set_header("X-Day0-Dropped-Messages", std::to_string(dropped));
    if (parsed->stream) return stream(res, g, id, created, parsed->include_usage, parsed->include_progress, dropped);

    std::string content, reasoning;
    {
      std::unique_lock lock(g->mutex);
      g->cv.wait(lock, [&] { return g->finished; });
      for (const auto& [r, text] : merge(g->pending)) (r ? reasoning : content) += text;
    }
    const Event& last = g->last;
    if (last.kind == Event::Kind::error)
      return reply_error(res,
                         {500, "generation failed: " + last.status.message(), "server_error", "", "generation_failed"});
    if (last.reason == DoneReason::cancelled)
      return reply_error(
          res, {503, "the generation was cancelled because the server is stopping", "server_error", "", "cancelled"});
    json message = {{"role", "assistant"}, {"content", content}};
    if (!reasoning.empty()) message["reasoning_content"] = reasoning;
    json body = {
        {"id", id},
        {"object", "chat.completion"},
        {"created", created},
        {"model", options.model_id},
        {"choices", json::array({{{"index", 0}, {"message", message}, {"finish_reason", finish_reason(last)}}})},
        {"usage", usage_json(last)}};
    if (parsed->context_overflow != ContextOverflow::stop) body["context_overflow"] = {{"dropped_messages", dropped}};
    res.set_content(dump(body), "application/json");
  }

  void stream(httplib::Response& res, const std::shared_ptr<Generation>& g, const std::string& id, std::int64_t created,
              bool include_usage, bool include_progress, std::size_t dropped) {
    const json head = {
        {"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", options.model_id}};
    const auto chunk = [head](const json& delta, const json& finish) {
      json c = head;
      c["choices"] = json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}});
      return "data: " + dump(c) + "\n\n";
    };
    auto role_sent = std::make_shared<bool>(false);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [g, chunk, head, role_sent, include_usage, include_progress, dropped](std::size_t, httplib::DataSink& sink) {
          std::vector<OutputPiece> pieces;
          bool finished = false;
          std::optional<std::pair<std::int64_t, std::int64_t>> progress;
          {
            std::unique_lock lock(g->mutex);
            g->cv.wait_for(lock, std::chrono::seconds(1), [&] {
              return !g->pending.empty() || g->finished || (include_progress && g->progress_pending);
            });
            pieces.swap(g->pending);
            finished = g->finished;
            if (include_progress && g->progress_pending) progress.emplace(g->prefill_done, g->prefill_total);
            g->progress_pending = false;
          }
          std::string out;
          if (!*role_sent) {
            out += chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
            *role_sent = true;
            if (dropped > 0) {
              json c = head;
              c["choices"] = json::array();
              c["context_overflow"] = {{"dropped_messages", dropped}};
              out += "data: " + dump(c) + "\n\n";
            }
          }
          if (progress) {
            json c = head;
            c["choices"] = json::array();
            c["prefill"] = {{"done", progress->first}, {"total", progress->second}};
            out += "data: " + dump(c) + "\n\n";
          }
          for (const auto& [r, text] : merge(pieces))
            out += chunk({{r ? "reasoning_content" : "content", text}}, nullptr);
          if (finished) {
            const Event& last = g->last;
            if (last.kind == Event::Kind::error) {
              out += "data: " +
                     error_json({500, "generation failed: " + last.status.message(), "server_error", "",
                                 "generation_failed"}) +
                     "\n\n";
            } else if (last.reason == DoneReason::cancelled) {
              out += "data: " +
                     error_json({503, "the generation was cancelled because the server is stopping", "server_error", "",
                                 "cancelled"}) +
                     "\n\n";
            } else {
              out += chunk(json::object(), finish_reason(last));
              if (include_usage) {
                json u = head;
                u["choices"] = json::array();
                u["usage"] = usage_json(last);
                out += "data: " + dump(u) + "\n\n";
              }
            }
            out += "data: [DONE]\n\n";
          }
          // A comment line keeps proxies from timing out and finds out whether the client is
          // still there while the request waits in the queue.
          if (out.empty()) out = ": keep-alive\n\n";
          if (!sink.write(out.data(), out.size())) {
            g->handle->cancel();
            return false;
          }
          if (finished) sink.done();
          return true;
        },
        [g](bool success) {
          if (!success) g->handle->cancel();
        });
  }

  void cancel_all() {
    std::lock_guard lock(handles_mutex);
    for (const auto& h : handles) h->cancel();
  }
};

OpenAiServer::OpenAiServer(Engine& engine, std::shared_ptr<Model> model, ChatFormatter formatter, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(model), std::move(formatter), std::move(options))) {}

OpenAiServer::~OpenAiServer() {
  stop();
  // Engine callbacks refer to this server: wait until none is pending.
  std::lock_guard lock(impl_->handles_mutex);
  for (const auto& h : impl_->handles) h->wait();
}

Result<int> OpenAiServer::bind() {
  const auto& o = impl_->options;
  const std::string host = o.host == "[::1]" ? "::1" : o.host;
  const int port =
      o.port == 0 ? impl_->http.bind_to_any_port(host) : (impl_->http.bind_to_port(host, o.port) ? o.port : -1);
  if (port < 0)
    return error(ErrorCode::io_error, "cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                          " (is the port in use, or the address not on this machine?)");
  return port;
}

void OpenAiServer::serve() { impl_->http.listen_after_bind(); }

void OpenAiServer::stop() {
  impl_->cancel_all();
  impl_->http.stop();
}

const Metrics& OpenAiServer::metrics() const { return impl_->metrics; }

}  // namespace day0::server
