// Packing excerpts into a token budget. Every excerpt is measured with the caller's tokenizer
// on its own; the sum is close to, but not exactly, the count of the joined text (tokens may
// merge across the blank lines between excerpts), so the joined text is measured at the end
// and the last excerpts are dropped until it fits.
#include "knowledge/context.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace day0::knowledge {
namespace {

constexpr std::string_view kIntro = "Sources for the question below. Cite them as [n] where you use them.\n\n";
constexpr std::string_view kOutro = "Question:\n";
// A token rarely covers more than this many bytes; text longer than budget x this cannot fit,
// so it is not measured whole (measuring megabytes would take seconds).
constexpr std::int64_t kMaxBytesPerToken = 16;

struct Excerpt {
  std::string path;
  std::string name;  // as the label shows it
  std::string title;
  std::string language;
  std::string text;
  int first_line = 1;
  int last_line = 1;
  int page = 0;
  int last_page = 0;
  bool attachment = false;
  bool whole = false;  // a whole attached document: labelled by name only
  std::int64_t first_char = 0;  // see Citation
  std::int64_t last_char = 0;
  std::int64_t folder = 0;
  std::int64_t tokens = 0;
};

std::string label_of(const Excerpt& e) {
  std::string label = e.name;
  if (e.page > 0) {
    label += e.last_page > e.page ? " pp. " + std::to_string(e.page) + "-" + std::to_string(e.last_page)
                                  : " p. " + std::to_string(e.page);
  } else if (!e.whole) {
    label += ":" + std::to_string(e.first_line);
    if (e.last_line > e.first_line) label += "-" + std::to_string(e.last_line);
  }
  return label;
}

// A fence longer than any run of backticks inside, so the excerpt cannot close it early.
std::string fence_for(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

std::string block_text(const Excerpt& e, int number) {
  std::string header = "[" + std::to_string(number) + "] " + label_of(e);
  if (e.attachment) header += " (attached)";
  if (!e.title.empty()) header += " (" + e.title + ")";
  const std::string fence = fence_for(e.text);
  std::string out = header + "\n" + fence + e.language + "\n" + e.text;
  if (!e.text.empty() && e.text.back() != '\n') out += "\n";
  return out + fence + "\n\n";
}

std::string extension_language(std::string_view path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Only plain names go after the fence.
  for (const char c : ext)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+') return {};
  if (ext == "md" || ext == "markdown") return "markdown";
  if (ext == "pdf" || ext == "txt") return {};
  return ext.size() <= 12 ? ext : std::string();
}

std::string base_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Lower-case words of three or more letters or digits: what a question asks about.
std::set<std::string> terms_of(std::string_view text) {
  static const std::set<std::string> kCommon = {"the",  "and",  "for",  "are",  "was",  "what", "how",   "why",
                                                "who",  "with", "this", "that", "does", "from", "which", "where",
                                                "when", "can",  "you",  "not",  "its",  "into", "about", "there"};
  std::set<std::string> out;
  std::string word;
  const auto flush = [&]() {
    if (word.size() >= 3 && !kCommon.count(word)) out.insert(word);
    word.clear();
  };
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || u >= 0x80)
      word += static_cast<char>(std::tolower(u));
    else
      flush();
  }
  flush();
  return out;
}

int overlap(const std::set<std::string>& terms, std::string_view text) {
  if (terms.empty()) return 0;
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int score = 0;
  for (const auto& t : terms)
    if (lower.find(t) != std::string::npos) ++score;
  return score;
}

bool overlaps(const Excerpt& a, const Excerpt& b) {
  if (a.path != b.path || a.attachment != b.attachment) return false;
  if (a.page > 0 || b.page > 0) {
    const int a_last = std::max(a.page, a.last_page), b_last = std::max(b.page, b.last_page);
    if (a.page > b_last || b.page > a_last) return false;
  }
  return a.first_line <= b.last_line && b.first_line <= a.last_line;
}

Excerpt from_hit(const Hit& h) {
  Excerpt e;
  e.path = h.path;
  e.name = h.relative_path.empty() ? base_name(h.path) : h.relative_path;
  e.title = h.title;
  e.language = extension_language(h.path);
  e.text = h.text;
  e.first_line = h.first_line;
  e.last_line = std::max(h.first_line, h.last_line);
  e.page = h.page;
  e.last_page = h.page;
  e.folder = h.folder_id;
  return e;
}

// A whole folder: its chunks joined per file (consecutive chunks of one file become one
// excerpt, so a file is cited once).
std::vector<Excerpt> folder_excerpts(const std::vector<Hit>& chunks) {
  std::vector<Excerpt> out;
  for (const Hit& h : chunks) {
    if (!out.empty() && out.back().path == h.path && h.first_line >= out.back().last_line) {
      Excerpt& e = out.back();
      if (!e.text.empty() && e.text.back() != '\n') e.text += "\n";
      e.text += h.text;
      e.last_line = std::max(e.last_line, h.last_line);
      if (h.page > 0) e.last_page = std::max(e.last_page, h.page);
      e.title.clear();
      continue;
    }
    out.push_back(from_hit(h));
  }
  return out;
}

int line_count(std::string_view text) {
  if (text.empty()) return 1;
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  if (text.back() != '\n') ++lines;
  return std::max(lines, 1);
}

class Packer {
 public:
  Packer(const TokenCounter& count, std::int64_t budget) : count_(count), left_(budget) {}

  std::int64_t left() const { return left_; }

  // Measures the excerpt (under a placeholder number as wide as a real one) and takes it when
  // it fits what is left.
  bool take(Excerpt e) {
    if (left_ <= 0) return false;
    if (static_cast<std::int64_t>(e.text.size()) > left_ * kMaxBytesPerToken) return false;
    e.tokens = measure(e);
    if (e.tokens > left_) return false;
    left_ -= e.tokens;
    taken_.push_back(std::move(e));
    return true;
  }
  bool covered(const Excerpt& e) const {
    return std::any_of(taken_.begin(), taken_.end(), [&](const Excerpt& t) { return overlaps(t, e); });
  }
  std::int64_t measure(const Excerpt& e) const { return count_(block_text(e, 99)); }
  std::vector<Excerpt>& taken() { return taken_; }

 private:
  const TokenCounter& count_;
  std::int64_t left_;
  std::vector<Excerpt> taken_;
};

std::string compose(const std::vector<Excerpt>& excerpts) {
  if (excerpts.empty()) return {};
  std::string text(kIntro);
  for (std::size_t i = 0; i < excerpts.size(); ++i) text += block_text(excerpts[i], static_cast<int>(i) + 1);
  text += kOutro;
  return text;
}

// The characters (1-based, inclusive; 0 when not found) each chunk spans in `text`: chunks come
// in the document's order, so each is looked for from where the previous one began.
std::vector<std::pair<std::int64_t, std::int64_t>> char_spans(std::string_view text, const std::vector<Chunk>& chunks) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out(chunks.size(), {0, 0});
  std::size_t from = 0, counted_to = 0;
  std::int64_t chars_before = 0;  // code points in text[0, counted_to)
  const auto advance = [&](std::size_t to) {
    for (; counted_to < to; ++counted_to)
      if ((static_cast<unsigned char>(text[counted_to]) & 0xC0) != 0x80) ++chars_before;
  };
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::string& t = chunks[i].text;
    if (t.empty()) continue;
    const std::size_t at = text.find(t, from);
    if (at == std::string_view::npos) continue;
    advance(at);
    const std::int64_t first = chars_before + 1;
    std::int64_t length = 0;
    for (const char c : t)
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++length;
    out[i] = {first, first + length - 1};
    from = at + 1;
  }
  return out;
}

// An attached document that does not fit whole: its chunks that share the most words with the
// question (earlier ones first among equals), in the document's order.
bool take_document_parts(Packer& packer, const Document& d, const std::set<std::string>& terms,
                         const ChunkOptions& options) {
  const std::vector<Chunk> chunks = chunk_document(d, options);
  const std::vector<std::pair<std::int64_t, std::int64_t>> spans = char_spans(d.text, chunks);
  std::vector<std::pair<int, std::size_t>> ranked;
  for (std::size_t i = 0; i < chunks.size(); ++i) ranked.emplace_back(-overlap(terms, chunks[i].text), i);
  std::stable_sort(ranked.begin(), ranked.end());
  std::size_t chosen = 0;
  int misses = 0;  // a long document: stop measuring once the budget is clearly spent
  for (const auto& [score, i] : ranked) {
    if (packer.left() < 16 || misses >= 64) break;
    const Chunk& c = chunks[i];
    Excerpt e;
    e.path = d.name;
    e.name = d.name;
    e.title = c.title;
    e.language = d.kind == DocumentKind::pdf ? std::string() : d.language;
    e.text = c.text;
    e.first_line = c.first_line;
    e.last_line = std::max(c.first_line, c.last_line);
    e.page = c.page;
    e.last_page = c.page;
    e.attachment = true;
    e.first_char = spans[i].first;
    e.last_char = spans[i].second;
    if (packer.take(std::move(e))) {
      ++chosen;
      misses = 0;
    } else {
      ++misses;
    }
  }
  if (chosen == 0) return false;
  // Put this document's parts back in reading order.
  auto& taken = packer.taken();
  const std::size_t first = taken.size() - chosen;
  std::sort(taken.begin() + static_cast<std::ptrdiff_t>(first), taken.end(), [](const Excerpt& a, const Excerpt& b) {
    return a.page != b.page ? a.page < b.page : a.first_line < b.first_line;
  });
  return true;
}

// Excerpts of files on disk that are parts of one line (a long line split into chunks): their
// characters, found by reading the file (up to 32 MiB), so their citations can say which part.
void locate_split_lines(std::vector<Excerpt>& taken) {
  std::map<std::pair<std::string, int>, std::vector<Excerpt*>> parts;
  for (auto& e : taken)
    if (!e.attachment && e.page == 0 && e.first_line == e.last_line && e.first_char == 0)
      parts[{e.path, e.first_line}].push_back(&e);
  for (auto& [where, excerpts] : parts) {
    if (excerpts.size() < 2) continue;
    std::error_code ec;
    const auto size = std::filesystem::file_size(where.first, ec);
    if (ec || size > (32u << 20)) continue;
    std::ifstream in(where.first, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::sort(excerpts.begin(), excerpts.end(), [](const Excerpt* a, const Excerpt* b) { return a->text < b->text; });
    std::vector<Chunk> chunks;
    for (const Excerpt* e : excerpts) chunks.push_back(Chunk{e->first_line, e->last_line, 0, {}, e->text});
    // Found independently of each other: their order in the file is not known here.
    for (std::size_t i = 0; i < excerpts.size(); ++i) {
      const auto span = char_spans(text, {chunks[i]});
      excerpts[i]->first_char = span[0].first;
      excerpts[i]->last_char = span[0].second;
    }
  }
}

}  // namespace

std::int64_t context_budget(const BudgetInputs& in) {
  const std::int64_t free = in.context_window - std::max<std::int64_t>(in.conversation_tokens, 0) -
                            std::max<std::int64_t>(in.reply_reserve, 0);
  if (free <= 0 || !(in.fraction > 0)) return 0;
  const auto share = static_cast<std::int64_t>(static_cast<double>(free) * std::min(in.fraction, 1.0));
  return std::max<std::int64_t>(0, std::min(share, in.max_tokens));
}

AssembledContext assemble_context(const ContextInput& input, const TokenCounter& count) {
  AssembledContext out;
  const bool offered =
      !input.documents.empty() || !input.hits.empty() ||
      std::any_of(input.whole_folders.begin(), input.whole_folders.end(), [](const auto& f) { return !f.empty(); });
  if (!offered || !count) return out;
  const std::int64_t frame = count(std::string(kIntro) + std::string(kOutro));
  Packer packer(count, input.budget_tokens - frame);
  const std::set<std::string> terms = terms_of(input.question);

  for (const Document& d : input.documents) {
    Excerpt whole;
    whole.path = d.name;
    whole.name = d.name;
    whole.language = d.kind == DocumentKind::pdf ? std::string() : d.language;
    whole.text = d.text;
    whole.first_line = 1;
    whole.last_line = line_count(d.text);
    whole.attachment = true;
    whole.whole = true;
    if (packer.take(whole)) continue;
    out.truncated = true;
    out.shortened.push_back(d.name);
    take_document_parts(packer, d, terms, input.chunking);
  }

  std::set<std::int64_t> whole_ids;
  for (const auto& folder : input.whole_folders) {
    if (folder.empty()) continue;
    std::vector<Excerpt> files = folder_excerpts(folder);
    std::int64_t bytes = 0;
    for (const auto& f : files) bytes += static_cast<std::int64_t>(f.text.size());
    if (bytes > packer.left() * kMaxBytesPerToken) continue;
    std::int64_t need = 0;
    for (auto& f : files) {
      f.tokens = packer.measure(f);
      need += f.tokens;
      if (need > packer.left()) break;
    }
    if (need > packer.left()) continue;  // searched instead, below
    for (auto& f : files) packer.take(std::move(f));
    whole_ids.insert(folder.front().folder_id);
  }

  for (const Hit& h : input.hits) {
    if (whole_ids.count(h.folder_id)) continue;
    Excerpt e = from_hit(h);
    if (packer.covered(e)) continue;
    if (!packer.take(std::move(e))) out.truncated = true;
  }

  // The joined text must fit too: drop excerpts from the end until it does.
  auto& taken = packer.taken();
  out.text = compose(taken);
  out.tokens = out.text.empty() ? 0 : count(out.text);
  while (!taken.empty() && out.tokens > input.budget_tokens) {
    taken.pop_back();
    out.truncated = true;
    out.text = compose(taken);
    out.tokens = out.text.empty() ? 0 : count(out.text);
  }
  locate_split_lines(taken);
  for (std::size_t i = 0; i < taken.size(); ++i) {
    const Excerpt& e = taken[i];
    Citation c;
    c.number = static_cast<int>(i) + 1;
    c.path = e.path;
    c.label = label_of(e);
    c.first_line = e.first_line;
    c.last_line = e.last_line;
    c.page = e.page;
    c.last_page = e.page > 0 ? std::max(e.page, e.last_page) : 0;
    c.attachment = e.attachment;
    c.first_char = e.first_char;
    c.last_char = e.last_char;
    out.citations.push_back(std::move(c));
  }
  return out;
}

IndexResult<AssembledContext> build_context(KnowledgeIndex& index, const ContextRequest& request,
                                            const TokenCounter& count) {
  ContextInput input;
  input.question = request.question;
  input.documents = request.documents;
  input.budget_tokens = request.budget_tokens;
  if (!request.folders.empty()) {
    if (request.whole_folders) {
      auto folders = index.folders();
      if (!folders.ok()) return {std::nullopt, folders.error};
      for (const Folder& f : *folders.value) {
        if (std::find(request.folders.begin(), request.folders.end(), f.id) == request.folders.end()) continue;
        // Only a folder that might fit is read whole.
        if (f.text_bytes > request.budget_tokens * kMaxBytesPerToken) continue;
        auto chunks = index.folder_chunks(f.id);
        if (!chunks.ok()) return {std::nullopt, chunks.error};
        input.whole_folders.push_back(std::move(*chunks.value));
      }
    }
    if (!request.question.empty()) {
      SearchOptions options;
      options.top = request.top;
      options.folders = request.folders;
      auto hits = index.search(request.question, options);
      if (!hits.ok()) return {std::nullopt, hits.error};
      input.hits = std::move(*hits.value);
    }
  }
  return IndexResult<AssembledContext>{assemble_context(input, count), {}};
}

std::string prompt_text(std::string_view context, std::string_view question) {
  return std::string(context) + std::string(question);
}

std::string citations_to_json(const std::vector<Citation>& citations) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : citations) {
    nlohmann::json j = {{"n", c.number},
                        {"path", c.path},
                        {"label", c.label},
                        {"first_line", c.first_line},
                        {"last_line", c.last_line},
                        {"page", c.page},
                        {"last_page", c.last_page},
                        {"attachment", c.attachment}};
    if (c.first_char > 0) {
      j["first_char"] = c.first_char;
      j["last_char"] = c.last_char;
    }
    list.push_back(std::move(j));
  }
  return list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<Citation> citations_from_json(std::string_view json_text) {
  std::vector<Citation> out;
  const auto list = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return out;
  const auto int_of = [](const nlohmann::json& j, const char* key, int fallback) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return fallback;
    const auto v = it->get<std::int64_t>();
    return v < 0 || v > 100'000'000 ? fallback : static_cast<int>(v);
  };
  for (const auto& j : list) {
    if (!j.is_object()) continue;
    const auto path = j.find("path");
    const auto label = j.find("label");
    if (path == j.end() || !path->is_string() || label == j.end() || !label->is_string()) continue;
    Citation c;
    c.number = int_of(j, "n", 0);
    if (c.number <= 0) continue;
    c.path = path->get<std::string>();
    c.label = label->get<std::string>();
    c.first_line = std::max(1, int_of(j, "first_line", 1));
    c.last_line = std::max(c.first_line, int_of(j, "last_line", c.first_line));
    c.page = int_of(j, "page", 0);
    c.last_page = int_of(j, "last_page", c.page);
    const auto attachment = j.find("attachment");
    c.attachment = attachment != j.end() && attachment->is_boolean() && attachment->get<bool>();
    c.first_char = std::max(0, int_of(j, "first_char", 0));
    c.last_char = std::max<std::int64_t>(c.first_char, int_of(j, "last_char", 0));
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// "a-b, c-d" of ranges merged where they touch or overlap.
std::string ranges_text(std::vector<std::pair<std::int64_t, std::int64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  std::string out;
  for (const auto& [a, b] : merged) {
    if (!out.empty()) out += ", ";
    out += std::to_string(a);
    if (b > a) out += "-" + std::to_string(b);
  }
  return out;
}

// The label's name: the citation's label up to its range (labels are "name", "name:10-42" or
// "name p. 3"/"name pp. 3-4").
std::string name_of(const Citation& c) {
  std::string label = c.label;
  if (c.page > 0) {
    const auto at = label.rfind(c.last_page > c.page ? " pp. " : " p. ");
    return at == std::string::npos ? label : label.substr(0, at);
  }
  const std::string suffix = ":" + std::to_string(c.first_line);
  const auto at = label.rfind(suffix);
  return at == std::string::npos ? label : label.substr(0, at);
}

}  // namespace

std::vector<SourceGroup> group_citations(const std::vector<Citation>& citations) {
  std::vector<SourceGroup> out;
  std::vector<std::vector<const Citation*>> members;
  for (const auto& c : citations) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const SourceGroup& g) { return g.path == c.path && g.attachment == c.attachment; });
    if (it == out.end()) {
      SourceGroup g;
      g.path = c.path;
      g.attachment = c.attachment;
      g.first_line = c.first_line;
      g.page = c.page;
      out.push_back(std::move(g));
      members.emplace_back();
      it = out.end() - 1;
    }
    it->numbers.push_back(c.number);
    members[static_cast<std::size_t>(it - out.begin())].push_back(&c);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    SourceGroup& g = out[i];
    const auto& cs = members[i];
    std::sort(g.numbers.begin(), g.numbers.end());
    const std::string name = name_of(*cs.front());
    std::vector<std::pair<std::int64_t, std::int64_t>> pages, lines, chars;
    bool whole = false, all_chars = true;
    int line = cs.front()->first_line;
    for (const Citation* c : cs) {
      if (c->page > 0) pages.emplace_back(c->page, std::max(c->page, c->last_page));
      if (c->label == name) whole = true;  // a whole document: no range
      lines.emplace_back(c->first_line, c->last_line);
      if (c->first_char <= 0 || c->first_line != line || c->last_line != line) all_chars = false;
      chars.emplace_back(c->first_char, c->last_char);
    }
    if (whole) {
      g.label = name;
    } else if (!pages.empty()) {
      const std::string r = ranges_text(pages);
      g.label = name + (r.find_first_of("-,") == std::string::npos ? " p. " : " pp. ") + r;
    } else if (all_chars && cs.size() > 1) {
      g.label = name + ":" + std::to_string(line) + " chars " + ranges_text(chars);
    } else {
      g.label = name + ":" + ranges_text(lines);
    }
  }
  return out;
}

}  // namespace day0::knowledge
