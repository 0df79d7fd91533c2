// day0-cli chat: an interactive, streamed conversation in the terminal. In a terminal, input goes
// through a small line editor (cli/line_editor.h) in non-canonical mode with bracketed paste, so
// a long line or a paste of several lines is one message; piped, each line is one. Commands:
// /help, /reset, /system TEXT, /image PATH, /quit; a line of """ starts a multi-line message.
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <sstream>
#include <utility>

#include "cli/data_dir.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/input_history.h"
#include "cli/line_editor.h"
#include "cli/model_args.h"
#include "cli/prefill_status.h"
#include "cli/terminal.h"
#include "day0/chat.h"
#include "day0/engine.h"
#include "day0/model_info.h"
#include "day0/paths.h"
#include "remote/remote_client.h"
#include "storage/history_store.h"

namespace day0::cli {
namespace {

constexpr std::string_view kQuote = "\"\"\"";

constexpr const char* kChatHelp =
    "  /help              this list\n"
    "  /system TEXT       set the system prompt and start over (/system alone removes it)\n"
    "  /reset             start over\n"
    "  /image PATH        attach a PNG or JPEG to the next message (models that read images)\n"
    "  /quit              leave (also Ctrl+D on an empty line, or Ctrl+C twice)\n"
    "  \"\"\"                a line of three quotes starts a message of several lines; another\n"
    "                     such line sends it (a paste with newlines is one message anyway)\n"
    "  //TEXT             send a message that starts with /TEXT\n"
    "  Ctrl+C             stop the reply in progress; at the prompt, clear the line\n"
    "  Left, Right, Home, End, Backspace, Delete edit the line; Ctrl+U clears it\n"
    "  Up, Down           step through the messages sent before (kept in chat_input_history\n"
    "                     beside the history database)\n";

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli chat [--model] DIR [--system TEXT] [--temperature T] [--top-p P] [--top-k K]\n"
               "                     [--seed S] [--max-new-tokens N] [--threads N] [--device cpu]\n"
               "                     [--db PATH | --no-history] [--multiline] [--context N]\n"
               "                     [--expert-cache SIZE] [--direct-io]\n"
               "                     [--context-overflow truncate-middle|rolling-window|stop]\n"
               "       day0-cli chat --remote URL [--api-key KEY] [--remote-model NAME] [options above]\n"
               "  Type a message and press Enter; the reply streams back. A paste arrives whole, newlines\n"
               "  and all, as one message. Commands:\n%s"
               "  When stdin is not a terminal, each line is a message (any length; \"\"\" lines group\n"
               "  several), and the exit status is 1 when a turn failed, 130 when interrupted.\n"
               "  --multiline: every message runs until a line of \"\"\" (or the end of the input), so a\n"
               "  piped file is one message.\n"
               "  The conversation is saved as it streams in the app's history database\n"
               "  (history.db in the app's data folder, as its Settings chose it; else\n"
               "  $XDG_DATA_HOME/day0/history.db) or the one --db names.\n"
               "  --remote URL talks to an OpenAI-compatible server (http://host:port or a base ending in\n"
               "  /v1) instead of a local model: --remote-model names the model (default: the first it lists),\n"
               "  --api-key is sent as a bearer token; --top-k, --threads and --device do not apply.\n"
               "  A conversation longer than the model's context (--context N holds N positions) leaves\n"
               "  earlier turns out of the prompt, keeping room for --max-new-tokens: truncate-middle (the\n"
               "  default) keeps the system prompt and the first turn, rolling-window the system prompt;\n"
               "  both say how many messages they left out. stop fails the turn instead. Nothing is\n"
               "  removed from the history. While a long prompt is read, stderr (a terminal) shows how far.\n"
               "  A model larger than memory reads its experts from disk as tokens are routed to them,\n"
               "  through a cache of the memory left; --expert-cache SIZE (24G, 512M) sets that cache and\n"
               "  streams regardless, --direct-io reads with O_DIRECT.\n",
               kChatHelp);
  return help ? 0 : 2;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// "/word" or "/word rest": a command's name; nullopt for text such as "/usr/bin is..." or "//x".
std::optional<std::string_view> command_word(std::string_view line) {
  if (line.size() < 2 || line[0] != '/') return std::nullopt;
  std::size_t end = 1;
  while (end < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '-' || line[end] == '_'))
    ++end;
  if (end == 1 || (end < line.size() && line[end] != ' ' && line[end] != '\t')) return std::nullopt;
  return line.substr(1, end - 1);
}

// Messages from stdin: through the line editor in a terminal (pastes whole, no length limit),
// else whole lines of any length.
class InputReader {
 public:
  explicit InputReader(bool terminal) : terminal_(terminal) {}

  // Up and Down also bring back messages of earlier runs, kept in `file`.
  void keep_history(const std::filesystem::path& file) {
    history_.emplace(file, LineEditor::kMaxHistory);
    editor_.set_history(history_->load());
  }

  EditorEvent read(const std::string& prompt) {
    if (terminal_) return read_terminal(prompt);
    while (true) {
      if (auto line = splitter_.next(eof_)) return {EditorEvent::Kind::submit, std::move(*line)};
      if (eof_) return {EditorEvent::Kind::eof, {}};
      std::string bytes;
      switch (terminal::read_some(STDIN_FILENO, &bytes)) {
        case terminal::ReadResult::data:
          splitter_.feed(bytes);
          break;
        case terminal::ReadResult::interrupted:
          return {EditorEvent::Kind::interrupt, {}};
        case terminal::ReadResult::resized:
        case terminal::ReadResult::timeout:
          break;
        default:
          eof_ = true;
      }
    }
  }

 private:
  EditorEvent read_terminal(const std::string& prompt) {
    terminal::enter_raw(STDIN_FILENO);
    editor_.set_width(terminal::columns(STDOUT_FILENO));
    editor_.start(prompt);
    std::optional<EditorEvent> event;
    while (true) {
      event = editor_.next();
      const std::string out = editor_.take_output();
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      if (event) break;
      std::string bytes;
      // A lone Escape key press waits for a following byte no longer than 50 ms.
      const auto r = terminal::read_some(STDIN_FILENO, &bytes, editor_.partial_escape() ? 50 : -1);
      if (r == terminal::ReadResult::data) {
        editor_.feed(bytes);
      } else if (r == terminal::ReadResult::timeout) {
        editor_.drop_partial_escape();
      } else if (r == terminal::ReadResult::resized) {
        editor_.set_width(terminal::columns(STDOUT_FILENO));
      } else if (r == terminal::ReadResult::interrupted) {
        event = EditorEvent{EditorEvent::Kind::interrupt, editor_.line()};
        break;
      } else {
        // The end of the input: what was typed is sent, then the next read ends the chat.
        event = editor_.line().empty() ? EditorEvent{EditorEvent::Kind::eof, {}}
                                       : EditorEvent{EditorEvent::Kind::submit, editor_.line()};
        std::printf("\r\n");
        break;
      }
    }
    terminal::enter_reply_mode();
    if (event->kind == EditorEvent::Kind::submit && history_) history_->append(event->text);
    return *event;
  }

  bool terminal_;
  bool eof_ = false;
  std::optional<InputHistory> history_;
  LineEditor editor_;
  LineSplitter splitter_;
};

int run_chat(const std::vector<std::string>& argv) {
  std::string problem;
  std::set<std::string> flags{"help", "no-history", "multiline"};
  flags.insert(model_flag_names().begin(), model_flag_names().end());
  std::set<std::string> options{"model",   "system", "temperature", "top-p",        "top-k",   "seed",
                                "max-new-tokens", "threads", "device", "db", "remote", "api-key",
                                "remote-model",   "context", "context-overflow"};
  options.insert(model_option_names().begin(), model_option_names().end());
  const auto args = Args::parse(argv, flags, options, &problem);
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
  std::int64_t pending_extra = 0;  // positions the pending images take beyond their placeholders
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

  ContextOverflow overflow = ContextOverflow::truncate_middle;
  if (const auto policy = args->option("context-overflow")) {
    const auto parsed = parse_context_overflow(*policy);
    if (!parsed) {
      std::fprintf(stderr, "day0-cli chat: --context-overflow must be truncate-middle, rolling-window or stop\n");
      return 2;
    }
    overflow = *parsed;
  }
  if (args->option("remote") && args->option("context")) {
    std::fprintf(stderr, "day0-cli chat: --context is for a local model\n");
    return 2;
  }

  // One turn: the reply's pieces go to `show` as they stream; returns the done or error event.
  using ShowFn = std::function<void(const std::vector<OutputPiece>&)>;
  std::function<Event(const std::vector<ChatMessage>&, const ShowFn&)> generate;
  std::string dir;  // the model as the history records it: a folder, or a remote model's name
  std::string model_type;
  bool accepts_images = true;  // a remote server decides for itself
  bool vision_needs_cpu = false;  // a vision encoder that runs on the CPU only, the model on a GPU
  std::string image_placeholder;  // what stands for an image in a message, as the model's formatter writes it
  std::optional<ChatFormatter> formatter;
  std::optional<OpenedModel> opened;
  std::shared_ptr<Session> session;
  std::optional<remote::RemoteClient> remote_client;
  if (args->option("remote")) {
    signal(SIGPIPE, SIG_IGN);  // a server that hangs up shows as a failed request
    auto client = remote::RemoteClient::create(
        {*args->option("remote"), args->option("api-key").value_or(""), args->option("remote-model").value_or("")});
    if (!client) {
      std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(client.status().message()).c_str());
      return 2;
    }
    remote_client.emplace(std::move(*client));
    if (!args->option("remote-model")) {
      auto names = remote_client->list_models();
      if (!names || names->empty()) {
        std::fprintf(stderr, "day0-cli chat: %s\n",
                     names ? "the server lists no models; name one with --remote-model"
                           : plain_message(names.status().message()).c_str());
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
      // Ctrl+C (SIGINT) hangs up at once, also while the server is still prefilling.
      const int interrupts = terminal::interrupt_count();
      auto token = std::make_shared<remote::CancelToken>();
      auto pending_reply = std::async(std::launch::async, [&] {
        return remote_client->stream_chat(
            list, sampling,
            [&](const OutputPiece& p) {
              show({p});
              return true;
            },
            token);
      });
      while (pending_reply.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        terminal::wait_interrupt(100);
        if (terminal::interrupt_count() != interrupts) token->cancel();
      }
      auto reply = pending_reply.get();
      Event last;
      if (!reply) {
        last.kind = Event::Kind::error;
        last.reason = DoneReason::error;
        last.status = reply.status();
        return last;
      }
      last.kind = Event::Kind::done;
      last.reason = reply->finish_reason == "length"      ? DoneReason::max_tokens
                    : reply->finish_reason == "cancelled" ? DoneReason::cancelled
                                                          : DoneReason::eos;
      last.stats.context_tokens = std::max<std::int64_t>(0, reply->prompt_tokens);
      last.stats.generated_tokens = std::max<std::int64_t>(0, reply->completion_tokens);
      last.stats.time_to_first_token_ms = reply->time_to_first_token_ms;
      last.stats.decode_tokens_per_second = reply->tokens_per_second;
      return last;
    };
  } else {
    dir = *args->option("model");
    // The folder and its config.json first, with the messages inspect gives, then the tokenizer.
    if (auto info = inspect_model(dir); !info) {
      std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(info.status().message()).c_str());
      return 1;
    }
    auto loaded = ChatFormatter::load(dir);
    if (!loaded) {
      std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(loaded.status().message()).c_str());
      return 1;
    }
    formatter.emplace(std::move(*loaded));
    int exit_code = 0;
    opened = open_model(*args, "chat", &exit_code);
    if (!opened) return exit_code;
    model_type = describe(*opened->model).model_type;
    image_placeholder = formatter->image_placeholder(describe(*opened->model));
    accepts_images = !image_placeholder.empty();
    vision_needs_cpu = describe(*opened->model).vision_needs_cpu;
    session = opened->engine->new_session(opened->model);
    base.stop.extra_stop_ids = formatter->turn_end_ids();
    generate = [&](const std::vector<ChatMessage>& messages, const ShowFn& show) {
      Event last;
      const std::int64_t max_context = describe(*opened->model).max_context;
      auto fitted = formatter->encode_fitting(messages, max_context, base.stop.max_new_tokens, overflow);
      if (fitted && !fitted->fits) {
        fitted = error(ErrorCode::invalid_argument,
                       overflow == ContextOverflow::stop
                           ? "the conversation is " + std::to_string(fitted->full_tokens) +
                                 " tokens long and the model's context holds " + std::to_string(max_context) +
                                 ": /reset starts over, or --context-overflow truncate-middle (or rolling-window) "
                                 "leaves earlier messages out"
                           : "the last message and the system prompt alone take " +
                                 std::to_string(fitted->positions) + " tokens and the model's context holds " +
                                 std::to_string(max_context) + ", with room kept for the reply (--max-new-tokens)");
      }
      if (!fitted) {
        last.kind = Event::Kind::error;
        last.reason = DoneReason::error;
        last.status = fitted.status();
        return last;
      }
      if (fitted->dropped > 0)
        std::fprintf(stderr, "(%zu earlier message%s left out to fit the context)\n", fitted->dropped,
                     fitted->dropped == 1 ? "" : "s");
      Request request = base;
      request.context = std::move(fitted->tokens);
      // The images of the messages kept, in order (each placeholder stands for the next one).
      std::size_t next_image = 0, kept = 0;
      for (std::size_t i = 0; i < messages.size(); ++i) {
        std::size_t count = 0;
        for (std::size_t at = image_placeholder.empty() ? std::string::npos : messages[i].content.find(image_placeholder);
             at != std::string::npos; at = messages[i].content.find(image_placeholder, at + 1))
          ++count;
        const bool keep = kept < fitted->kept.size() && fitted->kept[kept] == i;
        if (keep) ++kept;
        for (std::size_t k = 0; k < count && next_image < images.size(); ++k, ++next_image)
          if (keep) request.images.push_back(images[next_image]);
      }
      PrefillStatus status;
      auto handle = opened->engine->submit(session, request, [&](const Event& e) {
        if (e.kind == Event::Kind::progress) {
          status.update(e.prefill_done, e.prefill_total);
          return;
        }
        status.clear();
        show(e.text);
        if (e.kind != Event::Kind::token) last = e;
      });
      // Ctrl+C (SIGINT) cancels; the engine stops within one step and reports done, cancelled.
      const int interrupts = terminal::interrupt_count();
      while (!handle->finished()) {
        terminal::wait_interrupt(100);
        if (terminal::interrupt_count() != interrupts) handle->cancel();
      }
      handle->wait();
      return last;
    };
  }
  std::string system_prompt = args->option("system").value_or("");
  // The history: every message is committed as it is sent, replies while they stream.
  std::unique_ptr<storage::HistoryStore> history;
  std::filesystem::path history_folder;
  if (!args->flag("no-history")) {
    const std::filesystem::path db_path =
        args->option("db") ? std::filesystem::path(*args->option("db")) : cli::default_data_dir() / "history.db";
    history_folder = db_path.parent_path().empty() ? std::filesystem::path(".") : db_path.parent_path();
    std::error_code ec;
    std::filesystem::create_directories(db_path.parent_path().empty() ? "." : db_path.parent_path(), ec);
    history = std::make_unique<storage::HistoryStore>(db_path);
    auto report = history->open_report().get();
    if (!report.is_ok()) {
      std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(report.error().message).c_str());
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
        std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(created.error().message).c_str());
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
      std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(added.error().message).c_str());
      return false;
    }
    last_message_id = added.value().id;
    return true;
  };

  const bool interactive = isatty(STDIN_FILENO) != 0;
  const bool color = isatty(STDOUT_FILENO) != 0;
  const bool multiline = args->flag("multiline");
  terminal::install_signal_handlers();
  std::vector<ChatMessage> messages;
  const auto reset = [&] {
    messages.clear();
    images.clear();
    pending = 0;
    pending_extra = 0;
    remote_images.clear();
    pending_urls.clear();
    pending_attachments.clear();
    conversation_id = 0;
    if (!system_prompt.empty()) messages.push_back({"system", system_prompt, ""});
  };
  reset();
  if (interactive)
    std::printf("Day0 chat with %s (%s). /help lists the commands; Ctrl+C stops a reply.\n", dir.c_str(),
                model_type.c_str());

  InputReader input(interactive);
  // The messages typed before, beside the history they were saved in (not with --no-history).
  if (interactive && history) input.keep_history(history_folder / "chat_input_history");
  bool failed = false;          // a turn failed: a piped run exits with 1
  bool last_interrupt = false;  // the last thing the user did was Ctrl+C
  int exit_code = 0;
  std::string line;
  while (true) {
    if (interactive) std::printf("\n");
    std::fflush(stdout);
    auto event = input.read("> ");
    if (event.kind == EditorEvent::Kind::interrupt) {
      if (!interactive) {
        exit_code = 130;
        break;
      }
      if (last_interrupt) break;
      last_interrupt = true;
      if (event.text.empty()) std::printf("(Ctrl+C again, Ctrl+D or /quit to leave)\n");
      continue;
    }
    last_interrupt = false;
    if (event.kind == EditorEvent::Kind::eof) break;
    line = std::move(event.text);
    // A line of """ starts a message of several lines, ended by another such line (or by the end
    // of the input); with --multiline every message is read that way.
    const bool quoted = trimmed(line) == kQuote;
    if (quoted || (multiline && !line.starts_with("/"))) {
      std::string text = quoted ? std::string() : line;
      bool first = quoted;  // no line in `text` yet
      bool cancelled = false;
      while (true) {
        auto more = input.read("... ");
        if (more.kind == EditorEvent::Kind::interrupt) {
          cancelled = true;
          break;
        }
        if (more.kind == EditorEvent::Kind::eof || trimmed(more.text) == kQuote) break;
        if (!first) text += '\n';
        text += more.text;
        first = false;
      }
      if (cancelled) {
        if (!interactive) {
          exit_code = 130;
          break;
        }
        std::printf("(multi-line message discarded)\n");
        continue;
      }
      line = std::move(text);
      if (line.empty()) continue;
    } else {
      if (line == "/quit" || line == "/exit") break;
      if (line == "/help" || line == "/?") {
        std::printf("%s", kChatHelp);
        continue;
      }
      if (line == "/reset") {
        reset();
        std::printf("(conversation cleared)\n");
        continue;
      }
      if (line == "/system" || line.rfind("/system ", 0) == 0) {
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
            std::printf("(%s)\n", plain_message(url.status().message()).c_str());
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
        if (!accepts_images && vision_needs_cpu) {
          std::printf("(%s reads images only on the CPU: its vision encoder does not run on the GPU yet; start "
                      "with --device cpu to send images)\n",
                      model_type.c_str());
          continue;
        }
        if (!accepts_images) {
          std::printf("(%s reads text only; /image is for models that take images)\n", model_type.c_str());
          continue;
        }
        if (!std::filesystem::is_regular_file(path, ec)) {
          std::printf("(no such image file: %s)\n", path.c_str());
          continue;
        }
        // Read now: an image the model cannot take is refused here, and its size tells how much
        // of the context it takes.
        auto positions = image_file_token_count(*opened->model, path);
        if (!positions) {
          std::printf("(%s)\n", plain_message(positions.status().message()).c_str());
          continue;
        }
        images.push_back(path);
        ++pending;
        pending_extra += *positions - 1;  // its placeholder holds one image token
        std::printf("(image attached to the next message)\n");
        continue;
      }
      if (line.empty()) continue;
      if (const auto word = command_word(line)) {
        std::printf("unknown command /%s; /help lists them\n", std::string(*word).c_str());
        continue;
      }
      if (line.starts_with("//")) line.erase(0, 1);
    }
    // Each attached image as the model's image markers before the text (GLM: begin, image, end).
    for (; pending > 0; --pending) line = image_placeholder + line;
    messages.push_back({"user", line, "", std::exchange(pending_extra, 0)});
    if (!pending_urls.empty()) remote_images[messages.size() - 1] = std::exchange(pending_urls, {});
    if (!store_message(storage::Role::user, line, std::exchange(pending_attachments, {}))) return 1;
    std::optional<std::int64_t> reply_id;
    if (history) {
      auto begun = history->begin_reply({conversation_id, last_message_id, dir}).get();
      if (!begun.is_ok()) {
        std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(begun.error().message).c_str());
        return 1;
      }
      reply_id = begun.value().id;
    }
    ChatMessage reply{"assistant", "", ""};
    TerminalSanitizer sanitizer;
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
        // On a terminal, control characters in the reply are shown, not obeyed.
        const std::string text = color ? sanitizer.filter(p.text) : p.text;
        std::fwrite(text.data(), 1, text.size(), stdout);
      }
      std::fflush(stdout);
    };
    const int interrupts_before = terminal::interrupt_count();
    terminal::set_in_reply(true);
    const Event last = generate(messages, show);
    terminal::set_in_reply(false);
    terminal::clear_interrupts();
    const int interrupts = terminal::interrupt_count() - interrupts_before;
    if (color) std::printf("%s\x1b[0m", sanitizer.flush().c_str());
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
      if (!finished.is_ok())
        std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(finished.error().message).c_str());
      last_message_id = *reply_id;
    }
    if (last.kind == Event::Kind::error) {
      std::fprintf(stderr, "day0-cli chat: %s\n", plain_message(last.status.message()).c_str());
      remote_images.erase(messages.size() - 1);
      messages.pop_back();
      failed = true;
    } else {
      std::fprintf(stderr, "[%lld tokens, %s, %.1f tok/s, first token %.0f ms]\n",
                   static_cast<long long>(last.stats.generated_tokens), done_reason_name(last.reason),
                   last.stats.decode_tokens_per_second, last.stats.time_to_first_token_ms);
      messages.push_back(reply);
    }
    if (interrupts > 0) {
      // Piped: Ctrl+C ends the run. In a terminal it stops the reply; twice quits.
      if (!interactive) {
        exit_code = 130;
        break;
      }
      if (interrupts > 1) break;
      std::printf("(reply stopped; Ctrl+C again to leave)\n");
      last_interrupt = true;
    }
  }
  terminal::leave_raw();
  std::fflush(stdout);
  if (exit_code != 0) return exit_code;
  return failed && !interactive ? 1 : 0;
}

const Registration kRegistration{"chat", &run_chat, "hold a streamed conversation with a model"};

}  // namespace
}  // namespace day0::cli
