#pragma once
// Context assembly: the excerpts that go into the prompt for one question. The best chunks
// (and any attached documents) are packed within a token budget measured by the caller's
// tokenizer; each excerpt is introduced by its source (file and line range, or PDF page) and a
// number the answer can cite.
//
// The text placed before the question looks like
//   Sources for the question below. Cite them as [n] where you use them.
//
//   [1] notes.md (attached)
//   ```markdown
//   ...
//   ```
//
//   [2] src/foo.cpp:10-42 (parse_args)
//   ```cpp
//   ...
//   ```
//
//   Question:
// and prompt_text() appends the question. The same inputs always give the same text, so a
// stored context sends the same prompt again (and the engine's KV-cache prefix reuse holds).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "knowledge/document.h"
#include "knowledge/index.h"

namespace day0::knowledge {

struct Citation {
  int number = 0;     // [1], [2], ... as the prompt names them
  std::string path;   // absolute path, or the attachment's name
  std::string label;  // "src/foo.cpp:10-42" or "notes/report.pdf p. 3"
  int first_line = 1;
  int last_line = 1;
  int page = 0;
  int last_page = 0;        // PDF: the last page of the excerpt (page when it is one page)
  bool attachment = false;  // an attached document (path is its name), not a file on disk
  // Characters (code points, 1-based, inclusive) of the excerpt in its document when known
  // (0 otherwise): what tells apart the parts of one long line.
  std::int64_t first_char = 0;
  std::int64_t last_char = 0;
};

// One source as the chat shows it: every citation of one document or file (its passages
// merged where they touch or overlap), labelled with its real ranges: pages, else lines, else
// (within one line) characters, e.g. "big.txt chars 1-40000, 80001-120000" or "a.cpp:10-42, 80-95".
struct SourceGroup {
  std::vector<int> numbers;  // the citations' numbers, ascending
  std::string path;
  std::string label;
  int first_line = 1;  // where opening it goes: the first citation's passage (the best match)
  int page = 0;
  bool attachment = false;
};
std::vector<SourceGroup> group_citations(const std::vector<Citation>& citations);

struct AssembledContext {
  std::string text;  // the block placed before the question; empty when there is nothing
  std::vector<Citation> citations;
  std::int64_t tokens = 0;             // of `text`, by the caller's tokenizer
  bool truncated = false;              // some material did not fit the budget
  std::vector<std::string> shortened;  // attached documents that went in only in part
};

using TokenCounter = std::function<std::int64_t(std::string_view)>;

// The budget for one question's excerpts: `fraction` of what the context window leaves after
// the conversation so far and the reply's reserve, at most `max_tokens`; never negative.
struct BudgetInputs {
  std::int64_t context_window = 0;
  std::int64_t conversation_tokens = 0;
  std::int64_t reply_reserve = 0;
  double fraction = 0.5;
  std::int64_t max_tokens = 32768;
};
std::int64_t context_budget(const BudgetInputs& inputs);

// What one question brings: attached documents (they come first, whole when they fit, else
// their chunks that best match the question), folders allowed to go in whole (every chunk, in
// path and line order: a folder goes in whole only when all of it fits), then search hits, best
// first (a hit already covered is skipped).
struct ContextInput {
  std::string question;
  std::vector<Document> documents;
  std::vector<std::vector<Hit>> whole_folders;
  std::vector<Hit> hits;
  std::int64_t budget_tokens = 0;
  ChunkOptions chunking;  // for attached documents that do not fit whole
};

AssembledContext assemble_context(const ContextInput& input, const TokenCounter& count);

// Searches the enabled folders of `index` for the question and assembles the context: the
// index side of assemble_context.
struct ContextRequest {
  std::string question;
  std::vector<Document> documents;
  std::vector<std::int64_t> folders;  // enabled folders; none: no search
  bool whole_folders = false;         // put a folder in whole when it fits
  std::int64_t budget_tokens = 0;
  int top = 24;  // search hits considered
};
IndexResult<AssembledContext> build_context(KnowledgeIndex& index, const ContextRequest& request,
                                            const TokenCounter& count);

// The user message as the model reads it: the context, then the question.
std::string prompt_text(std::string_view context, std::string_view question);

// Citations as a JSON array ([{"n", "path", "label", "first_line", "last_line", "page",
// "last_page", "attachment"}]) and back; reading skips malformed entries.
std::string citations_to_json(const std::vector<Citation>& citations);
std::vector<Citation> citations_from_json(std::string_view json_text);

}  // namespace day0::knowledge
