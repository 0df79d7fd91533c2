#pragma once
// Reading an OpenAI /v1/chat/completions request body into what the engine needs, with the
// checks a public endpoint needs: types, ranges, counts. Knows nothing about the loaded model;
// the server checks the model name, images and the context length against it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "day0/chat.h"

namespace day0::server {

// An error in OpenAI's shape: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null
};
std::string error_json(const ApiError& e);

struct RequestLimits {
  std::size_t max_messages = 1024;
  std::size_t max_stop_strings = 4;
  std::size_t max_stop_length = 512;
  // Image parts in the whole conversation (earlier turns' included): each is decoded and run
  // through the model's vision encoder, so a request may not ask for an unbounded number.
  std::size_t max_images = 32;
  // Whether image parts may name files on the server (absolute paths, file:// URLs). The server
  // allows it for clients on this machine only: a remote client could otherwise have any image
  // the server process can read described to it, or learn which files exist.
  bool server_image_files = true;
};

// An image_url content part, in the order the conversation holds them: the message it belongs
// to, where in that message's text it stands (a byte offset: the text parts before it), its URL
// (checked: a data:image/...;base64 URL, or an absolute path or file:// URL of an existing file)
// and its parameter name for errors ("messages[1].content[2].image_url").
struct ImagePart {
  std::size_t message = 0;
  std::size_t offset = 0;
  std::string url;
  std::string param;
};

struct ChatCompletionRequest {
  std::optional<std::string> model;
  std::vector<ChatMessage> messages;
  std::vector<ImagePart> images;  // image parts of all messages, in order
  float temperature = 1.0f;       // OpenAI's default
  float top_p = 1.0f;
  std::optional<std::int64_t> max_tokens;  // max_completion_tokens or max_tokens
  std::optional<std::uint64_t> seed;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // Day0's extensions, which other servers do not know:
  // stream_options.include_progress: chunks with no choices and "prefill": {"done", "total"}
  // while the prompt is read.
  bool include_progress = false;
  // "context_overflow": "stop" (the default: a conversation too long for the context is a 400
  // context_length_exceeded), "truncate-middle" or "rolling-window" (earlier turns are left out
  // of the prompt; the response says how many messages in "context_overflow": {"dropped_messages"}).
  ContextOverflow context_overflow = ContextOverflow::stop;
};

// On failure returns nullopt and fills *error (status 400).
std::optional<ChatCompletionRequest> parse_chat_request(std::string_view body, const RequestLimits& limits,
                                                        ApiError* error);

// Checks a "data:image/<type>;base64,<payload>" URL: an image media type and a payload that is
// well-formed base64 (RFC 4648, padded). Returns the reason it is not, or nullopt when it is.
std::optional<std::string> data_url_problem(std::string_view url);

}  // namespace day0::server
