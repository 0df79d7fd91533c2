// day0-cli docs: folders as knowledge from the command line: index a folder into the
// knowledge index (SQLite FTS5), search it, list and remove folders.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "cli/data_dir.h"
#include "cli/cli_args.h"
#include "cli/commands.h"
#include "day0/paths.h"
#include "knowledge/index.h"

namespace day0::cli {

namespace {

using namespace day0::knowledge;

constexpr const char* kUsage =
    "usage: day0-cli docs <command> [--db PATH] ...\n"
    "  index FOLDER                       adds FOLDER and brings its index up to date (only changed\n"
    "                                     files are read again); prints skipped files and a summary\n"
    "  search QUESTION... [--top N] [--folder FOLDER]\n"
    "                                     the best passages, best first: a line\n"
    "                                     PATH:FIRST_LINE-LAST_LINE SCORE (PATH relative to the folder\n"
    "                                     when one folder is searched, absolute otherwise), then the\n"
    "                                     passage's words around the question's, indented by 4 spaces\n"
    "  folders                            the indexed folders with their files and chunks\n"
    "  remove FOLDER                      drops FOLDER from the index (the files are not touched)\n"
    "The index is knowledge.db in the app's data folder (the one its Settings chose, else\n"
    "$XDG_DATA_HOME/day0, ~/.local/share/day0) unless --db is given.\n";

struct Options {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  bool help = false;
};

bool parse(std::vector<std::string> argv, Options* o, std::string* problem) {
  for (auto& arg : argv)
    if (arg == "-h") arg = "--help";
  const auto args = Args::parse_with_words(argv, {"help"}, {"db", "top", "folder"}, problem);
  if (!args) return false;
  o->help = args->flag("help");
  for (const auto& word : args->words()) (o->command.empty() ? o->command : o->positional.emplace_back()) = word;
  o->values = args->options();
  return true;
}

int usage_error(const std::string& problem) {
  std::fprintf(stderr, "day0-cli docs: %s\n%s", problem.c_str(), kUsage);
  return 2;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "day0-cli docs: %s\n", plain_message(message).c_str());
  return 1;
}

std::string usage_problem(const Options& o, int* top) {
  const std::size_t n = o.positional.size();
  if (o.command == "index" && n != 1) return "index takes one FOLDER";
  if (o.command == "search" && n == 0) return "search needs a question";
  if (o.command == "folders" && n != 0) return "folders takes no arguments";
  if (o.command == "remove" && n != 1) return "remove takes one FOLDER";
  if (o.command != "search" && (o.values.contains("top") || o.values.contains("folder")))
    return "--top and --folder go with search";
  if (const auto it = o.values.find("top"); it != o.values.end()) {
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || v < 1 || v > 10000) return "--top must be a number from 1 to 10000";
    *top = static_cast<int>(v);
  }
  return "";
}

// About 160 bytes of the passage on one line, where most of the question's words (whole words of
// three or more letters, any case) are.
std::string snippet(const std::string& text, const std::string& question) {
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80); };
  const std::string haystack = lower(text);
  std::vector<std::string> words;
  std::string word;
  for (std::size_t i = 0; i <= question.size(); ++i) {
    if (i < question.size() && word_char(question[i])) {
      word += question[i];
      continue;
    }
    if (word.size() >= 3) words.push_back(lower(word));
    word.clear();
  }
  // Every whole-word occurrence: (offset, which word).
  std::vector<std::pair<std::size_t, std::size_t>> found;
  for (std::size_t w = 0; w < words.size(); ++w)
    for (auto at = haystack.find(words[w]); at != std::string::npos; at = haystack.find(words[w], at + 1))
      if ((at == 0 || !word_char(haystack[at - 1])) &&
          (at + words[w].size() >= haystack.size() || !word_char(haystack[at + words[w].size()])))
        found.push_back({at, w});
  std::size_t at = std::string::npos, best = 0;
  for (const auto& [offset, w] : found) {
    std::vector<bool> seen(words.size());
    std::size_t distinct = 0;
    for (const auto& [other, v] : found)
      if (other >= offset && other < offset + 100 && !seen[v]) {
        seen[v] = true;
        ++distinct;
      }
    if (distinct > best) {
      best = distinct;
      at = offset;
    }
  }
  constexpr std::size_t kWidth = 160;
  std::size_t start = at == std::string::npos || at < 30 ? 0 : at - 30;
  std::size_t end = std::min(text.size(), start + kWidth);
  const auto continuation = [&](std::size_t i) { return i < text.size() && (text[i] & 0xC0) == 0x80; };
  while (continuation(start)) ++start;
  while (end > start && continuation(end)) --end;
  std::string out = start > 0 ? "..." : "";
  bool space = false;
  for (std::size_t i = start; i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c <= 0x20 || c == 0x7f) {
      space = !out.empty() && out != "...";
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(c);
  }
  if (end < text.size()) out += "...";
  return out;
}

// The folder a path names, by its canonical path.
const Folder* find_folder(const std::vector<Folder>& folders, const std::string& given) {
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(given, ec);
  const std::string path = ec ? given : canonical.string();
  for (const Folder& f : folders)
    if (f.path == path || f.path == given) return &f;
  return nullptr;
}

int index(KnowledgeIndex& kb, const std::string& folder) {
  auto added = kb.add_folder(folder);
  if (!added.ok()) return fail(added.error.message);
  auto report = kb.index_folder(added.value->id);
  if (!report.ok()) return fail(report.error.message);
  const IndexReport& r = *report.value;
  for (const auto& s : r.skipped) std::printf("skipped %s: %s\n", s.path.c_str(), s.reason.c_str());
  std::int64_t files = 0;
  if (auto folders = kb.folders(); folders.ok())
    for (const Folder& f : *folders.value)
      if (f.id == added.value->id) files = f.files;
  std::printf(
      "%s: %lld files, %lld chunks (%lld read, %lld unchanged, %lld renamed, %lld removed, %lld skipped, "
      "%lld ignored)\n",
      added.value->path.c_str(), static_cast<long long>(files), static_cast<long long>(r.chunks_total),
      static_cast<long long>(r.files_indexed), static_cast<long long>(r.files_unchanged),
      static_cast<long long>(r.files_renamed), static_cast<long long>(r.files_removed),
      static_cast<long long>(r.skipped.size()), static_cast<long long>(r.files_ignored));
  return 0;
}

int search(KnowledgeIndex& kb, const Options& o, int top) {
  std::string question;
  for (const auto& w : o.positional) question += (question.empty() ? "" : " ") + w;
  auto folders = kb.folders();
  if (!folders.ok()) return fail(folders.error.message);
  SearchOptions options;
  options.top = top;
  if (const auto it = o.values.find("folder"); it != o.values.end()) {
    const Folder* f = find_folder(*folders.value, it->second);
    if (!f) return fail(it->second + " is not in the index (add it with: day0-cli docs index FOLDER)");
    options.folders.push_back(f->id);
  }
  const bool relative = options.folders.size() == 1 || folders.value->size() == 1;
  auto hits = kb.search(question, options);
  if (!hits.ok()) return fail(hits.error.message);
  if (hits.value->empty()) std::fprintf(stderr, "day0-cli docs: nothing matches '%s'\n", question.c_str());
  for (const Hit& h : *hits.value) {
    std::printf("%s:%d-%d %.3f\n", (relative ? h.relative_path : h.path).c_str(), h.first_line, h.last_line, h.score);
    std::printf("    %s\n", snippet(h.text, question).c_str());
  }
  return 0;
}

int list(KnowledgeIndex& kb) {
  auto folders = kb.folders();
  if (!folders.ok()) return fail(folders.error.message);
  if (folders.value->empty()) {
    std::fprintf(stderr, "day0-cli docs: no folders (add one with: day0-cli docs index FOLDER)\n");
    return 0;
  }
  std::printf("%4s  %7s  %7s  %10s  %s\n", "ID", "FILES", "CHUNKS", "TEXT", "FOLDER");
  for (const Folder& f : *folders.value)
    std::printf("%4lld  %7lld  %7lld  %10lld  %s%s\n", static_cast<long long>(f.id), static_cast<long long>(f.files),
                static_cast<long long>(f.chunks), static_cast<long long>(f.text_bytes), f.path.c_str(),
                f.indexed_at == 0 ? "  (not indexed yet)" : "");
  return 0;
}

int remove(KnowledgeIndex& kb, const std::string& given) {
  auto folders = kb.folders();
  if (!folders.ok()) return fail(folders.error.message);
  const Folder* f = find_folder(*folders.value, given);
  if (!f) return fail(given + " is not in the index");
  auto removed = kb.remove_folder(f->id);
  if (!removed.ok()) return fail(removed.error.message);
  std::printf("removed %s (%lld files, %lld chunks)\n", f->path.c_str(), static_cast<long long>(f->files),
              static_cast<long long>(f->chunks));
  return 0;
}

int run_docs(const std::vector<std::string>& argv) {
  Options o;
  std::string problem;
  if (!parse(argv, &o, &problem)) return usage_error(problem);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (o.command.empty()) return usage_error("a command is needed");
  if (o.command != "index" && o.command != "search" && o.command != "folders" && o.command != "remove")
    return usage_error("unknown command '" + o.command + "'");
  int top = 10;
  if (problem = usage_problem(o, &top); !problem.empty()) return usage_error(problem);
  std::filesystem::path db;
  if (const auto it = o.values.find("db"); it != o.values.end()) {
    db = it->second;
  } else {
    db = day0::cli::default_data_dir() / "knowledge.db";
    std::error_code ec;
    std::filesystem::create_directories(db.parent_path(), ec);
  }
  auto kb = KnowledgeIndex::open(db);
  if (!kb.ok()) return fail(kb.error.message);
  if (o.command == "index") return index(**kb.value, o.positional[0]);
  if (o.command == "search") return search(**kb.value, o, top);
  if (o.command == "folders") return list(**kb.value);
  return remove(**kb.value, o.positional[0]);
}

const Registration kRegistration{"docs", &run_docs, "index folders of documents and code, and search them"};

}  // namespace

}  // namespace day0::cli
