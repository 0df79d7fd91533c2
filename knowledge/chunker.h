#pragma once
// Splits a document into retrieval chunks that respect its structure: headings and paragraphs
// for prose and Markdown, top-level functions/blocks (by indentation and braces) or line
// windows for code, pages for PDF text. Every chunk knows its 1-based line range (and page).
#include <string>
#include <vector>

#include "knowledge/document.h"

namespace day0::knowledge {

struct ChunkOptions {
  std::size_t target_bytes = 1500;  // chunks grow up to about this size
  std::size_t max_bytes = 4000;     // never larger (long lines are split)
};

struct Chunk {
  int first_line = 1;  // 1-based, inclusive, in the document's text
  int last_line = 1;
  int page = 0;       // PDF: 1-based page of the first line; 0 otherwise
  std::string title;  // the nearest heading or the function/class name, when known
  std::string text;
};

std::vector<Chunk> chunk_document(const Document& document, const ChunkOptions& options = {});

}  // namespace day0::knowledge
