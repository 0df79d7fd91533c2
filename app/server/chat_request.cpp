#include "server/chat_request.h"

#include <filesystem>
#include <nlohmann/json.hpp>

namespace day0::server {
namespace {

using json = nlohmann::json;

std::string type_name(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

ApiError bad(std::string message, std::string param, std::string code = "invalid_value") {
  ApiError e;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError wrong_type(const std::string& param, const char* expected, const json& got) {
  return bad("'" + param + "' must be " + expected + ", not " + type_name(got), param, "invalid_type");
}

// Checks one image part's URL: a data URL, a file:// URL or an absolute path on this machine.
std::optional<ApiError> check_image_url(const std::string& url, const std::string& param, bool server_files) {
  if (url.rfind("data:", 0) == 0) {
    if (auto problem = data_url_problem(url))
      return bad("invalid image data URL: " + *problem, param, "invalid_image_url");
    return std::nullopt;
  }
  if (!server_files && (url.rfind("file://", 0) == 0 || (!url.empty() && url.front() == '/')))
    return bad("image file paths are read only for clients on the server's own machine; send the image as a data URL "
               "(data:image/png;base64,...)",
               param, "invalid_image_url");
  std::string path;
  if (url.rfind("file://", 0) == 0)
    path = url.substr(7);
  else if (!url.empty() && url.front() == '/')
    path = url;
  else
    return bad("image URLs must be data URLs (data:image/png;base64,...) or absolute file paths on the server; '" +
                   url.substr(0, 80) + "' is neither",
               param, "invalid_image_url");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return bad("the image file '" + path + "' does not exist on the server", param, "invalid_image_url");
  return std::nullopt;
}

// content: a string, null, or an array of parts {"type":"text","text"} / {"type":"image_url",
// "image_url": {"url"} or "url"}. Appends the text; each image part is added to `images` with
// the place in the text where it stands, at most `max_images` in all.
std::optional<ApiError> read_content(const json& content, const std::string& param, std::size_t message,
                                     const RequestLimits& limits, std::string* text, std::vector<ImagePart>* images) {
  const std::size_t max_images = limits.max_images;
  if (content.is_null()) return std::nullopt;
  if (content.is_string()) {
    *text = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return wrong_type(param, "a string or an array of content parts", content);
  for (std::size_t j = 0; j < content.size(); ++j) {
    const auto& part = content[j];
    const std::string p = param + "[" + std::to_string(j) + "]";
    if (!part.is_object()) return wrong_type(p, "an object", part);
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string())
      return bad("'" + p + ".type' must be a string", p + ".type", "invalid_type");
    const std::string t = type->get<std::string>();
    if (t == "text") {
      const auto body = part.find("text");
      if (body == part.end() || !body->is_string())
        return bad("'" + p + ".text' must be a string", p + ".text", "invalid_type");
      *text += body->get<std::string>();
    } else if (t == "image_url") {
      const auto image = part.find("image_url");
      std::string url;
      if (image != part.end() && image->is_string())
        url = image->get<std::string>();
      else if (image != part.end() && image->is_object() && image->contains("url") && (*image)["url"].is_string())
        url = (*image)["url"].get<std::string>();
      else
        return bad("'" + p + ".image_url' must be an object with a string 'url'", p + ".image_url", "invalid_type");
      if (images->size() >= max_images)
        return bad("the messages hold more than " + std::to_string(max_images) +
                       " images, the limit of this server; send fewer images (earlier turns' count too)",
                   p, "too_many_images");
      if (auto e = check_image_url(url, p + ".image_url", limits.server_image_files)) return e;
      images->push_back({message, text->size(), std::move(url), p + ".image_url"});
    } else {
      return bad("content part type '" + t.substr(0, 40) + "' is not supported (use text or image_url)", p + ".type");
    }
  }
  return std::nullopt;
}

// The chat completions parameters Day0 reads; other known ones are accepted only with a value
// that asks for nothing (their default), and names OpenAI does not define are refused.
bool is_implemented(const std::string& name) {
  static const char* const kNames[] = {
      "messages", "model", "temperature", "top_p",  "max_tokens",    "max_completion_tokens",
      "seed",     "n",     "stop",        "stream", "stream_options", "context_overflow"};
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

// For the parameters Day0 does not implement: whether `value` leaves behaviour as it is.
// Unknown names return nullopt.
std::optional<bool> is_default(const std::string& name, const json& value) {
  if (value.is_null()) return true;
  // Bookkeeping a local server has no use for: any value is fine.
  if (name == "user" || name == "metadata" || name == "store" || name == "service_tier" || name == "prompt_cache_key" ||
      name == "safety_identifier" || name == "parallel_tool_calls")
    return true;
  if (name == "logprobs") return value == false;
  if (name == "frequency_penalty" || name == "presence_penalty") return value.is_number() && value.get<double>() == 0;
  if (name == "tools" || name == "functions") return value.is_array() && value.empty();
  if (name == "tool_choice" || name == "function_call") return value == "none";
  if (name == "response_format") return value.is_object() && value.size() == 1 && value.value("type", "") == "text";
  if (name == "logit_bias") return value.is_object() && value.empty();
  if (name == "modalities") return value == json::array({"text"});
  if (name == "top_logprobs" || name == "audio" || name == "prediction" || name == "web_search_options" ||
      name == "reasoning_effort" || name == "verbosity")
    return false;
  return std::nullopt;
}

std::optional<ApiError> read_number(const json& body, const char* name, double lo, double hi, double* out) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) return wrong_type(name, "a number", *it);
  const double v = it->get<double>();
  if (!(v >= lo && v <= hi))
    return bad("'" + std::string(name) + "' must be between " + json(lo).dump() + " and " + json(hi).dump(), name);
  *out = v;
  return std::nullopt;
}

}  // namespace

std::string error_json(const ApiError& e) {
  json j = {{"error",
             {{"message", e.message},
              {"type", e.type},
              {"param", e.param.empty() ? json(nullptr) : json(e.param)},
              {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<std::string> data_url_problem(std::string_view url) {
  if (url.rfind("data:", 0) != 0) return "it does not start with 'data:'";
  const std::size_t comma = url.find(',');
  if (comma == std::string_view::npos) return "it has no ',' before the payload";
  const std::string_view header = url.substr(5, comma - 5);
  if (header.rfind("image/", 0) != 0 || header.size() <= 6) return "the media type is not image/*";
  if (header.size() < 7 || header.substr(header.size() - 7) != ";base64") return "the payload is not marked ;base64";
  const std::string_view payload = url.substr(comma + 1);
  if (payload.empty()) return "the payload is empty";
  if (payload.size() % 4 != 0) return "the base64 payload's length is not a multiple of 4";
  std::size_t padding = 0;
  for (std::size_t i = 0; i < payload.size(); ++i) {
    const char c = payload[i];
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c == '=') {
      if (i + 2 < payload.size()) return "'=' padding inside the base64 payload";
      ++padding;
    } else if (padding > 0 || !(alnum || c == '+' || c == '/')) {
      return "the payload has a character outside base64 at offset " + std::to_string(i);
    }
  }
  return std::nullopt;
}

std::optional<ChatCompletionRequest> parse_chat_request(std::string_view text, const RequestLimits& limits,
                                                        ApiError* error) {
  const auto fail = [&](ApiError e) -> std::optional<ChatCompletionRequest> {
    *error = std::move(e);
    return std::nullopt;
  };
  const json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) return fail(bad("the request body is not valid JSON", "", "invalid_json"));
  if (!body.is_object())
    return fail(bad("the request body must be a JSON object, not " + type_name(body), "", "invalid_type"));
  ChatCompletionRequest r;

  // Parameters that would change the reply in ways Day0 does not implement are refused, all
  // named at once, rather than silently ignored.
  std::string unsupported, unknown;
  for (const auto& [name, value] : body.items()) {
    if (is_implemented(name)) continue;
    const auto fine = is_default(name, value);
    std::string& list = fine ? unsupported : unknown;
    if (fine && *fine) continue;
    list += (list.empty() ? "'" : ", '") + name.substr(0, 64) + "'";
  }
  if (!unsupported.empty() || !unknown.empty()) {
    std::string message;
    if (!unsupported.empty())
      message = "this server does not implement " + unsupported +
                " (tools, structured output, log probabilities, penalties and audio are not supported; leave them "
                "out or at their defaults)";
    if (!unknown.empty())
      message += (message.empty() ? "" : "; ") + std::string("unrecognized request argument") +
                 (unknown.find(',') == std::string::npos ? " " : "s ") + unknown;
    const std::string& first = unsupported.empty() ? unknown : unsupported;
    return fail(bad(message, first.substr(1, first.find('\'', 1) - 1),
                    unsupported.empty() ? "unknown_parameter" : "unsupported_parameter"));
  }

  if (const auto it = body.find("model"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return fail(wrong_type("model", "a string", *it));
    r.model = it->get<std::string>();
  }

  const auto messages = body.find("messages");
  if (messages == body.end()) return fail(bad("'messages' is required", "messages", "missing_required_parameter"));
  if (!messages->is_array()) return fail(wrong_type("messages", "an array", *messages));
  if (messages->empty()) return fail(bad("'messages' must hold at least one message", "messages"));
  if (messages->size() > limits.max_messages)
    return fail(bad("'messages' holds " + std::to_string(messages->size()) + " messages; the limit is " +
                        std::to_string(limits.max_messages),
                    "messages"));
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    const std::string p = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return fail(wrong_type(p, "an object", m));
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      return fail(bad("'" + p + ".role' must be a string", p + ".role", "invalid_type"));
    ChatMessage message;
    message.role = role->get<std::string>();
    if (message.role == "developer") message.role = "system";
    if (message.role != "system" && message.role != "user" && message.role != "assistant" && message.role != "tool")
      return fail(bad("'" + p + ".role' must be system, developer, user, assistant or tool", p + ".role"));
    const auto content = m.find("content");
    if (content == m.end() && message.role != "assistant")
      return fail(bad("'" + p + ".content' is required", p + ".content", "missing_required_parameter"));
    if (content != m.end())
      if (auto e = read_content(*content, p + ".content", i, limits, &message.content, &r.images))
        return fail(*e);
    if (const auto reasoning = m.find("reasoning_content"); reasoning != m.end() && !reasoning->is_null()) {
      if (!reasoning->is_string()) return fail(wrong_type(p + ".reasoning_content", "a string", *reasoning));
      message.reasoning = reasoning->get<std::string>();
    }
    r.messages.push_back(std::move(message));
  }

  double v = r.temperature;
  if (auto e = read_number(body, "temperature", 0, 2, &v)) return fail(*e);
  r.temperature = static_cast<float>(v);
  v = r.top_p;
  if (auto e = read_number(body, "top_p", 0, 1, &v)) return fail(*e);
  if (v <= 0) return fail(bad("'top_p' must be greater than 0", "top_p"));
  r.top_p = static_cast<float>(v);

  for (const char* name : {"max_completion_tokens", "max_tokens"}) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null() || r.max_tokens) continue;
    if (!it->is_number_integer()) return fail(wrong_type(name, "an integer", *it));
    const auto n = it->get<std::int64_t>();
    if (n < 1) return fail(bad("'" + std::string(name) + "' must be at least 1", name));
    r.max_tokens = n;
  }
  if (const auto it = body.find("seed"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer()) return fail(wrong_type("seed", "an integer", *it));
    if (it->is_number_unsigned())
      r.seed = it->get<std::uint64_t>();
    else
      r.seed = static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  if (const auto it = body.find("n"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer()) return fail(wrong_type("n", "an integer", *it));
    if (it->get<std::int64_t>() != 1) return fail(bad("only n = 1 is supported", "n"));
  }
  if (const auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    if (it->is_string()) {
      r.stop.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      for (const auto& s : *it) {
        if (!s.is_string()) return fail(wrong_type("stop", "a string or an array of strings", s));
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      return fail(wrong_type("stop", "a string or an array of strings", *it));
    }
    if (r.stop.size() > limits.max_stop_strings)
      return fail(bad("'stop' holds at most " + std::to_string(limits.max_stop_strings) + " strings", "stop"));
    for (const auto& s : r.stop)
      if (s.empty() || s.size() > limits.max_stop_length)
        return fail(
            bad("each 'stop' string must hold 1 to " + std::to_string(limits.max_stop_length) + " bytes", "stop"));
  }
  if (const auto it = body.find("stream"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return fail(wrong_type("stream", "a boolean", *it));
    r.stream = it->get<bool>();
  }
  if (const auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return fail(wrong_type("stream_options", "an object", *it));
    if (const auto u = it->find("include_usage"); u != it->end() && !u->is_null()) {
      if (!u->is_boolean()) return fail(wrong_type("stream_options.include_usage", "a boolean", *u));
      r.include_usage = u->get<bool>();
    }
    if (const auto p = it->find("include_progress"); p != it->end() && !p->is_null()) {
      if (!p->is_boolean()) return fail(wrong_type("stream_options.include_progress", "a boolean", *p));
      r.include_progress = p->get<bool>();
    }
  }
  if (const auto it = body.find("context_overflow"); it != body.end() && !it->is_null()) {
    const auto policy = it->is_string() ? parse_context_overflow(it->get<std::string>()) : std::nullopt;
    if (!policy)
      return fail(bad("'context_overflow' must be \"stop\", \"truncate-middle\" or \"rolling-window\"",
                      "context_overflow"));
    r.context_overflow = *policy;
  }
  return r;
}

}  // namespace day0::server
