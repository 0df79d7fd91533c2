// day0-cli history: the conversation history from the command line, through the same
// HistoryStore the app uses (its futures, waited on here).
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/data_dir.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "cli/line_editor.h"
#include "day0/paths.h"
#include "storage/file_util.h"
#include "storage/history_store.h"

namespace day0::cli {

namespace {

using namespace day0::storage;

constexpr const char* kUsage =
    "usage: day0-cli history <command> [--db PATH] ...\n"
    "  list [--all] [--json]              conversations, pinned and newest first (--all: archived too)\n"
    "  show CONVERSATION [--json]         one conversation, every branch (Markdown, or the JSON export)\n"
    "  search WORDS... [--limit N] [--json]\n"
    "                                     titles and messages containing every word (any script, CJK too)\n"
    "  export [CONVERSATION] [--format json|markdown|md] [--out FILE]\n"
    "                                     one or all conversations; JSON is lossless and re-importable\n"
    "  import FILE                        adds what FILE holds and this history lacks (never duplicates)\n"
    "CONVERSATION is a number from 'list', a uuid, or the start of one. The history is\n"
    "history.db in the app's data folder (the one its Settings chose, read from\n"
    "$XDG_CONFIG_HOME/day0/day0.ini; else $XDG_DATA_HOME/day0, ~/.local/share/day0) unless --db is given.\n";

struct Options {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> flags;
};

// Positional words and --options in any order; --name VALUE or --name=VALUE.
bool parse(const std::vector<std::string>& argv, Options* o, std::string* problem) {
  const auto args = Args::parse_with_words(argv, {"all", "json", "help"}, {"db", "format", "out", "limit"}, problem);
  if (!args) return false;
  for (const auto& word : args->words()) (o->command.empty() ? o->command : o->positional.emplace_back()) = word;
  o->values = args->options();
  o->flags = args->flags();
  return true;
}

int usage_error(const std::string& problem) {
  std::fprintf(stderr, "day0-cli history: %s\n%s", problem.c_str(), kUsage);
  return 2;
}

int fail(const StoreError& e) {
  std::fprintf(stderr, "day0-cli history: %s\n", plain_message(e.message).c_str());
  return 1;
}

// On a terminal, control characters in stored messages are shown, not obeyed.
void print(std::string_view text) {
  static const bool terminal = isatty(STDOUT_FILENO) != 0;
  std::string safe;
  if (terminal) {
    TerminalSanitizer sanitizer;
    safe = sanitizer.filter(text) + sanitizer.flush();
    text = safe;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
}

std::string local_time(std::int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
  return text;
}

// Keeps a table on one line per row.
std::string one_line(std::string text, std::size_t max_chars) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';  // line breaks, tabs, ESC and the like
  std::size_t chars = 0, at = 0;
  for (; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xc0) != 0x80 && chars++ == max_chars) break;
  }
  return at < text.size() ? text.substr(0, at) + "\xe2\x80\xa6" : text;
}

int list(HistoryStore& store, const Options& o) {
  ListOptions options;
  options.include_archived = o.flags.contains("all");
  auto conversations = store.list_conversations(options).get();
  if (!conversations) return fail(conversations.error());
  if (o.flags.contains("json")) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& c : *conversations)
      out.push_back({{"id", c.id},
                     {"uuid", c.uuid},
                     {"title", c.title},
                     {"created_at", c.created_at},
                     {"updated_at", c.updated_at},
                     {"model", c.model},
                     {"pinned", c.pinned},
                     {"archived", c.archived},
                     {"messages", c.message_count}});
    print(out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    return 0;
  }
  if (conversations->empty()) {
    std::fprintf(stderr, "day0-cli history: no conversations%s\n",
                 options.include_archived ? "" : " (--all shows archived ones)");
    return 0;
  }
  std::printf("%5s  %-16s  %5s  %-8s  %s\n", "#", "UPDATED", "MSGS", "UUID", "TITLE");
  for (const auto& c : *conversations) {
    std::string title = one_line(c.title.empty() ? "(untitled)" : c.title, 60);
    if (c.pinned) title += "  [pinned]";
    if (c.archived) title += "  [archived]";
    std::printf("%5lld  %-16s  %5lld  %-8s  %s\n", static_cast<long long>(c.id), local_time(c.updated_at).c_str(),
                static_cast<long long>(c.message_count), c.uuid.substr(0, 8).c_str(), title.c_str());
  }
  return 0;
}

// Usage problems are found before the database is opened.
std::string usage_problem(const Options& o) {
  const std::size_t n = o.positional.size();
  if (o.command == "list" && n != 0) return "list takes no arguments";
  if (o.command == "show" && n != 1) return "show takes one CONVERSATION";
  if (o.command == "search" && n == 0) return "search needs words to look for";
  if (o.command == "export" && n > 1) return "export takes at most one CONVERSATION";
  if (o.command == "import" && n != 1) return "import takes one FILE";
  if (const auto limit = o.values.find("limit"); limit != o.values.end()) {
    char* end = nullptr;
    const long v = std::strtol(limit->second.c_str(), &end, 10);
    if (limit->second.empty() || *end != '\0' || v < 1 || v > 100000)
      return "--limit must be a number from 1 to 100000";
  }
  if (const auto format = o.values.find("format");
      format != o.values.end() && format->second != "json" && format->second != "markdown" && format->second != "md")
    return "--format must be json, markdown or md";
  return "";
}

int show(HistoryStore& store, const Options& o) {
  auto c = store.find_conversation(o.positional[0]).get();
  if (!c) return fail(c.error());
  auto text = o.flags.contains("json") ? store.export_json({c->id}).get() : store.export_markdown({c->id}).get();
  if (!text) return fail(text.error());
  print(*text);
  return 0;
}

int search(HistoryStore& store, const Options& o) {
  std::string query;
  for (const auto& w : o.positional) query += (query.empty() ? "" : " ") + w;
  SearchOptions options;
  if (auto limit = o.values.find("limit"); limit != o.values.end()) options.limit = std::stoi(limit->second);
  auto hits = store.search(query, options).get();
  if (!hits) return fail(hits.error());
  if (o.flags.contains("json")) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& h : *hits)
      out.push_back(
          {{"conversation", h.conversation_id},
           {"conversation_uuid", h.conversation_uuid},
           {"title", h.conversation_title},
           {"message", h.message_id == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(h.message_id)},
           {"message_uuid", h.message_uuid},
           {"role", h.role ? to_string(*h.role) : ""},
           {"snippet", h.snippet},
           {"match", h.snippet.substr(h.match_offset, h.match_length)}});
    print(out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    return 0;
  }
  if (hits->empty()) {
    std::fprintf(stderr, "day0-cli history: nothing matches '%s'\n", query.c_str());
    return 0;
  }
  // The match in bold on a terminal.
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  for (const auto& h : *hits) {
    const std::string title = one_line(h.conversation_title.empty() ? "(untitled)" : h.conversation_title, 40);
    if (h.message_id == 0) {
      std::printf("%5lld  %s  (title)\n", static_cast<long long>(h.conversation_id), title.c_str());
      continue;
    }
    std::string snippet = h.snippet;
    if (tty && h.match_length > 0) {
      snippet.insert(h.match_offset + h.match_length, "\x1b[0m");
      snippet.insert(h.match_offset, "\x1b[1m");
    }
    std::printf("%5lld  %s  #%lld %s: %s\n", static_cast<long long>(h.conversation_id), title.c_str(),
                static_cast<long long>(h.message_id), h.role ? to_string(*h.role) : "?", snippet.c_str());
  }
  return 0;
}

int export_history(HistoryStore& store, const Options& o) {
  const auto out = o.values.contains("out") ? o.values.at("out") : std::string("-");
  std::string format = o.values.contains("format") ? o.values.at("format") : "";
  if (format == "md") format = "markdown";
  if (format.empty()) {
    const auto ext = std::filesystem::path(out).extension().string();
    format = ext == ".md" || ext == ".markdown" ? "markdown" : "json";
  }
  std::vector<std::int64_t> ids;
  if (!o.positional.empty()) {
    auto c = store.find_conversation(o.positional[0]).get();
    if (!c) return fail(c.error());
    ids.push_back(c->id);
  }
  auto text = format == "json" ? store.export_json(ids).get() : store.export_markdown(ids).get();
  if (!text) return fail(text.error());
  if (out == "-") {
    print(*text);
    return 0;
  }
  if (auto s = write_file_durably(out, *text); !s) return fail(s.error());
  std::size_t n = ids.size();
  if (ids.empty()) {
    auto all = store.list_conversations({true, -1, 0}).get();
    n = all ? all->size() : 0;
  }
  std::fprintf(stderr, "day0-cli history: wrote %s (%s, %zu conversation%s)\n", out.c_str(), format.c_str(), n,
               n == 1 ? "" : "s");
  return 0;
}

int import_history(HistoryStore& store, const Options& o) {
  const std::string& file = o.positional[0];
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return fail(store_error("cannot read " + file + ": " + ec.message()));
  if (size > kMaxImportBytes) return fail(store_error(file + " is larger than the 2 GiB an import may be"));
  std::ifstream in(file, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (!in && !in.eof()) return fail(store_error("cannot read " + file));
  auto report = store.import_json(std::move(buffer).str()).get();
  if (!report) return fail(store_error(file + ": " + report.error().message));
  std::printf(
      "imported %s: %d conversation%s added, %d merged; %d message%s added, %d already present; %d attachment%s\n",
      file.c_str(), report->conversations_added, report->conversations_added == 1 ? "" : "s",
      report->conversations_merged, report->messages_added, report->messages_added == 1 ? "" : "s",
      report->messages_skipped, report->attachments_added, report->attachments_added == 1 ? "" : "s");
  return 0;
}

int run_history(const std::vector<std::string>& argv) {
  Options o;
  std::string problem;
  if (!parse(argv, &o, &problem)) return usage_error(problem);
  if (o.flags.contains("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  static const std::map<std::string, int (*)(HistoryStore&, const Options&)> kCommands = {
      {"list", &list}, {"show", &show}, {"search", &search}, {"export", &export_history}, {"import", &import_history}};
  const auto command = kCommands.find(o.command);
  if (command == kCommands.end())
    return usage_error(o.command.empty() ? "which command?" : "unknown command '" + o.command + "'");
  if (const auto problem = usage_problem(o); !problem.empty()) return usage_error(problem);
  const std::filesystem::path db =
      o.values.contains("db") ? std::filesystem::path(o.values.at("db")) : day0::cli::default_data_dir() / "history.db";
  std::error_code ec;
  if (o.command != "import" && !std::filesystem::exists(db, ec)) {
    std::fprintf(stderr, "day0-cli history: there is no history at %s yet\n", db.c_str());
    return o.command == "list" || o.command == "search" ? 0 : 1;
  }
  HistoryStore store(db);
  auto opened = store.open_report().get();
  if (!opened) return fail(opened.error());
  for (const auto& notice : opened->notices) std::fprintf(stderr, "day0-cli history: %s\n", notice.c_str());
  return command->second(store, o);
}

const Registration kRegistration{"history", &run_history, "list, show, search, export and import conversations"};

}  // namespace

}  // namespace day0::cli
