// day0-cli chat: an interactive, streamed conversation in the terminal. Reads prompts line by
// line from stdin when stdin is not a terminal. Commands: /reset, /system TEXT, /image PATH, /quit.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <utility>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "day0/chat.h"
#include "day0/engine.h"
#include "day0/paths.h"
#include "remote/remote_client.h"
#include "storage/history_store.h"

namespace day0::cli {
namespace {

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli chat (--model DIR | --remote URL [--api-key KEY] [--remote-model NAME])\n"
               "                     [--system TEXT] [--temperature T] [--top-p P] [--top-k K]\n"
               "                     [--seed S] [--max-new-tokens N] [--threads N] [--device cpu]\n"
               "                     [--db PATH | --no-history]\n"
               "  Type a message and press Enter; the reply streams back. /system TEXT sets the system\n"
               "  prompt (and starts over), /reset starts over, /quit ends. /image PATH (PNG or JPEG; for a\n"
               "  remote server also GIF or WebP, sent as a data URL) attaches\n"
               "  an image to the next message (models that take images). Reads stdin line by line when\n"
               "  it is not a terminal. The conversation is saved as it streams in the app's history\n"
               "  database ($XDG_DATA_HOME/day0/history.db) or the one --db names.\n"
               "  --remote URL talks to an OpenAI-compatible server (http://host:port or a base ending in\n"
               "  /v1) instead of a local model: --remote-model names the model (default: the first it lists),\n"
               "  --api-key is sent as a bearer token; --top-k, --threads and --device do not apply.\n");
  return help ? 0 : 2;
}

int run_chat(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help", "no-history"},
                                {"model", "system", "temperature", "top-p", "top-k", "seed", "max-new-tokens",
                                 "threads", "device", "db", "remote", "api-key", "remote-model"},
                                &problem);
  if (!args) {
    std::fprintf(stderr, "day0-cli chat: %s\n", problem.c_str());
    return usage(false);
  }
  if (args->flag("help")) return usage(true);
  if (!args->option("model") == !args->option("remote")) return usage(false);

  Request base;
  // The conversation's images in order (earlier turns' stay); `pending` go with the next message.
  std::vector<std::filesystem::path> images;
  std::size_t pending = 0;
  // For a remote server: each user message's images as data URLs (by message index), and those
  // waiting for the next message with their bytes for the history.
  std::map<std::size_t, std::vector<std::string>> remote_images;
  std::vector<std::string> pending_urls;
  std::vector<storage::NewAttachment> pending_attachments;
  base.sampling.temperature = 0.7f;
  base.sampling.top_p = 0.95f;
  base.stop.max_new_tokens = 1024;
  struct NumberOption {
    const char* name;
    double min, max;
    std::function<void(double)> set;
  };
  const NumberOption numbers[] = {
      {"temperature", 0, 100, [&](double v) { base.sampling.temperature = static_cast<float>(v); }},
      {"top-p", 0, 1, [&](double v) { base.sampling.top_p = static_cast<float>(v); }},
      {"top-k", 0, 1 << 24, [&](double v) { base.sampling.top_k = static_cast<int>(v); }},
      {"seed", 0, 9.0e15, [&](double v) { base.sampling.seed = static_cast<std::uint64_t>(v); }},
      {"max-new-tokens", 1, 1 << 24, [&](double v) { base.stop.max_new_tokens = static_cast<std::int64_t>(v); }},
  };
  for (const auto& n : numbers) {
    const auto text = args->option(n.name);
    if (!text) continue;
    const auto v = parse_number(*text);
    if (!v || *v < n.min || *v > n.max) {
      std::fprintf(stderr, "day0-cli chat: --%s must be a number between %g and %g\n", n.name, n.min, n.max);
      return 2;
    }
    n.set(*v);
  }

  // One turn: the reply's pieces go to `show` as they stream; returns the done or error event.
  using ShowFn = std::function<void(const std::vector<OutputPiece>&)>;
  std::function<Event(const std::vector<ChatMessage>&, const ShowFn&)> generate;
  std::string dir;  // the model as the history records it: a folder, or a remote model's name
  std::string model_type;
  std::optional<ChatFormatter> formatter;
  std::optional<OpenedModel> opened;
  std::shared_ptr<Session> session;
  std::optional<remote::RemoteClient> remote_client;
  if (args->option("remote")) {
    signal(SIGPIPE, SIG_IGN);  // a server that hangs up shows as a failed request
    auto client = remote::RemoteClient::create(
        {*args->option("remote"), args->option("api-key").value_or(""), args->option("remote-model").value_or("")});
    if (!client) {
      std::fprintf(stderr, "day0-cli chat: %s\n", client.status().message().c_str());
      return 2;
    }
    remote_client.emplace(std::move(*client));
    if (!args->option("remote-model")) {
      auto names = remote_client->list_models();
      if (!names || names->empty()) {
        std::fprintf(
            stderr, "day0-cli chat: %s\n",
            names ? "the server lists no models; name one with --remote-model" : names.status().message().c_str());
        return 1;
      }
      remote_client = *remote::RemoteClient::create(
          {*args->option("remote"), args->option("api-key").value_or(""), names->front()});
    }
    dir = remote_client->endpoint().model;
    model_type = "remote, " + remote_client->endpoint().url;
    generate = [&](const std::vector<ChatMessage>& messages, const ShowFn& show) {
      std::vector<remote::RemoteMessage> list;
      for (std::size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i];
        const auto it = remote_images.find(i);
        list.push_back(
            {m.role, m.content, m.reasoning, it == remote_images.end() ? std::vector<std::string>{} : it->second});
      }
      remote::RemoteSampling sampling;
      sampling.temperature = base.sampling.temperature;
      sampling.top_p = base.sampling.top_p;
      sampling.max_tokens = base.stop.max_new_tokens;
      if (args->option("seed")) sampling.seed = base.sampling.seed;
      auto reply = remote_client->stream_chat(list, sampling, [&](const OutputPiece& p) {
        show({p});
        return true;
      });
      Event last;
      if (!reply) {
        last.kind = Event::Kind::error;
        last.reason = DoneReason::error;
        last.status = reply.status();
        return last;
      }
      last.kind = Event::Kind::done;
      last.reason = reply->finish_reason == "length" ? DoneReason::max_tokens : DoneReason::eos;
      last.stats.context_tokens = std::max<std::int64_t>(0, reply->prompt_tokens);
      last.stats.generated_tokens = std::max<std::int64_t>(0, reply->completion_tokens);
      last.stats.time_to_first_token_ms = reply->time_to_first_token_ms;
      last.stats.decode_tokens_per_second = reply->tokens_per_second;
      return last;
    };
  } else {
    dir = *args->option("model");
    auto loaded = ChatFormatter::load(dir);
    if (!loaded) {
      std::fprintf(stderr, "day0-cli chat: %s\n", loaded.status().message().c_str());
      return 1;
    }
    formatter.emplace(std::move(*loaded));
    int exit_code = 0;
    opened = open_model(*args, "chat", &exit_code);
    if (!opened) return exit_code;
    model_type = describe(*opened->model).model_type;
    session = opened->engine->new_session(opened->model);
    base.stop.extra_stop_ids = formatter->turn_end_ids();
    generate = [&](const std::vector<ChatMessage>& messages, const ShowFn& show) {
      Event last;
      auto context = formatter->encode(messages, true);
      if (!context) {
        last.kind = Event::Kind::error;
        last.reason = DoneReason::error;
        last.status = context.status();
        return last;
      }
      Request request = base;
      request.context = *context;
      request.images = images;
      auto handle = opened->engine->submit(session, request, [&](const Event& e) {
        show(e.text);
        if (e.kind != Event::Kind::token) last = e;
      });
      handle->wait();
      return last;
    };
  }
  std::string system_prompt = args->option("system").value_or("");
  // The history: every message is committed as it is sent, replies while they stream.
  std::unique_ptr<storage::HistoryStore> history;
  if (!args->flag("no-history")) {
    const std::filesystem::path db_path =
        args->option("db") ? std::filesystem::path(*args->option("db")) : user_data_dir() / "history.db";
    std::error_code ec;
    std::filesystem::create_directories(db_path.parent_path().empty() ? "." : db_path.parent_path(), ec);
    history = std::make_unique<storage::HistoryStore>(db_path);
    auto report = history->open_report().get();
    if (!report.is_ok()) {
      std::fprintf(stderr, "day0-cli chat: %s\n", report.error().message.c_str());
      return 1;
    }
    for (const auto& notice : report.value().notices) std::fprintf(stderr, "day0-cli chat: %s\n", notice.c_str());
  }
  std::int64_t conversation_id = 0;
  std::optional<std::int64_t> last_message_id;
  const auto store_message = [&](storage::Role role, const std::string& text,
                                 std::vector<storage::NewAttachment> attachments = {}) -> bool {
    if (!history) return true;
    if (conversation_id == 0) {
      storage::NewConversation c;
      c.title = text.substr(0, 60);
      c.model = dir;
      auto created = history->create_conversation(c).get();
      if (!created.is_ok()) {
        std::fprintf(stderr, "day0-cli chat: %s\n", created.error().message.c_str());
        return false;
      }
      conversation_id = created.value().id;
      last_message_id.reset();
      if (!system_prompt.empty() && role != storage::Role::system) {
        storage::NewMessage m{conversation_id, std::nullopt, storage::Role::system, system_prompt, "", dir, {}};
        auto added = history->add_message(m).get();
        if (added.is_ok()) last_message_id = added.value().id;
      }
    }
    storage::NewMessage m{conversation_id, last_message_id, role, text, "", dir, std::move(attachments)};
    auto added = history->add_message(m).get();
    if (!added.is_ok()) {
      std::fprintf(stderr, "day0-cli chat: %s\n", added.error().message.c_str());
      return false;
    }
    last_message_id = added.value().id;
    return true;
  };

  const bool interactive = isatty(STDIN_FILENO) != 0;
  const bool color = isatty(STDOUT_FILENO) != 0;
  std::vector<ChatMessage> messages;
  const auto reset = [&] {
    messages.clear();
    images.clear();
    pending = 0;
    remote_images.clear();
    pending_urls.clear();
    pending_attachments.clear();
    conversation_id = 0;
    if (!system_prompt.empty()) messages.push_back({"system", system_prompt, ""});
  };
  reset();
  if (interactive)
    std::printf("Day0 chat with %s (%s). /system TEXT, /reset, /quit.\n", dir.c_str(), model_type.c_str());

  std::string line;
  while (true) {
    if (interactive) {
      std::printf("\n> ");
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;
    if (line == "/quit" || line == "/exit") break;
    if (line == "/reset") {
      reset();
      std::printf("(conversation cleared)\n");
      continue;
    }
    if (line.rfind("/system", 0) == 0) {
      system_prompt = line.size() > 8 ? line.substr(8) : "";
      reset();
      std::printf("(system prompt %s; conversation cleared)\n", system_prompt.empty() ? "removed" : "set");
      continue;
    }
    if (line.rfind("/image ", 0) == 0) {
      std::error_code ec;
      const std::filesystem::path path = line.substr(7);
      if (args->option("remote")) {
        // Sent as a data URL; the server says whether its model reads images.
        auto url = remote::image_data_url(path);
        if (!url) {
          std::printf("(%s)\n", url.status().message().c_str());
          continue;
        }
        std::ifstream in(path, std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        pending_attachments.push_back({url->substr(5, url->find(';') - 5), path.filename().string(), bytes.str()});
        pending_urls.push_back(std::move(*url));
        std::printf("(image attached to the next message)\n");
        continue;
      }
      if (!std::filesystem::is_regular_file(path, ec)) {
        std::printf("(no such image file)\n");
        continue;
      }
      images.push_back(path);
      ++pending;
      std::printf("(image attached to the next message)\n");
      continue;
    }
    if (line.empty()) continue;
    // Each attached image as the model's image markers before the text (GLM: begin, image, end).
    for (; pending > 0; --pending) line = "<|begin_of_image|><|image|><|end_of_image|>" + line;
    messages.push_back({"user", line, ""});
    if (!pending_urls.empty()) remote_images[messages.size() - 1] = std::exchange(pending_urls, {});
    if (!store_message(storage::Role::user, line, std::exchange(pending_attachments, {}))) return 1;
    std::optional<std::int64_t> reply_id;
    if (history) {
      auto begun = history->begin_reply({conversation_id, last_message_id, dir}).get();
      if (!begun.is_ok()) {
        std::fprintf(stderr, "day0-cli chat: %s\n", begun.error().message.c_str());
        return 1;
      }
      reply_id = begun.value().id;
    }
    ChatMessage reply{"assistant", "", ""};
    OutputChannel shown = OutputChannel::answer;
    bool any = false;
    const auto show = [&](const std::vector<OutputPiece>& pieces) {
      for (const auto& p : pieces) {
        if (p.text.empty()) continue;
        const bool thinking = p.channel == OutputChannel::reasoning || p.channel == OutputChannel::commentary;
        if (thinking)
          reply.reasoning += p.text;
        else
          reply.content += p.text;
        if (reply_id) {
          if (thinking)
            history->append_reply(*reply_id, "", p.text);
          else
            history->append_reply(*reply_id, p.text, "");
        }
        if (!any || p.channel != shown) {
          if (any) std::printf("\n");
          std::printf(thinking ? (color ? "\x1b[2mthinking: " : "thinking: ") : (color ? "\x1b[0m" : ""));
          shown = p.channel;
          any = true;
        }
        std::fwrite(p.text.data(), 1, p.text.size(), stdout);
      }
      std::fflush(stdout);
    };
    const Event last = generate(messages, show);
    if (color) std::printf("\x1b[0m");
    std::printf("\n");
    if (reply_id) {
      storage::ReplyEnd end;
      end.state = last.kind == Event::Kind::error        ? storage::MessageState::error
                  : last.reason == DoneReason::cancelled ? storage::MessageState::incomplete
                                                         : storage::MessageState::complete;
      if (last.kind == Event::Kind::error) end.error = last.status.message();
      end.stats.prompt_tokens = last.stats.context_tokens;
      end.stats.completion_tokens = last.stats.generated_tokens;
      end.stats.ttft_ms = last.stats.time_to_first_token_ms;
      end.stats.tokens_per_second = last.stats.decode_tokens_per_second;
      auto finished = history->finish_reply(*reply_id, end).get();
      if (!finished.is_ok()) std::fprintf(stderr, "day0-cli chat: %s\n", finished.error().message.c_str());
      last_message_id = *reply_id;
    }
    if (last.kind == Event::Kind::error) {
      std::fprintf(stderr, "day0-cli chat: %s\n", last.status.message().c_str());
      remote_images.erase(messages.size() - 1);
      messages.pop_back();
      continue;
    }
    std::fprintf(stderr, "[%lld tokens, %s, %.1f tok/s, first token %.0f ms]\n",
                 static_cast<long long>(last.stats.generated_tokens), done_reason_name(last.reason),
                 last.stats.decode_tokens_per_second, last.stats.time_to_first_token_ms);
    messages.push_back(reply);
  }
  return 0;
}

const Registration kRegistration{"chat", &run_chat, "hold a streamed conversation with a model"};

}  // namespace
}  // namespace day0::cli
