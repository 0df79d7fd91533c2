#pragma once
// One local file as text: plain text, Markdown, source code (recognised by extension and by
// content, UTF-8 checked) and PDF (text per page through poppler-cpp). The bytes are never
// trusted: binary, oversized, encrypted or damaged files give a sentence naming the file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace day0::knowledge {

enum class DocumentKind { text, markdown, code, pdf };
const char* to_string(DocumentKind kind);

struct DocumentLimits {
  std::int64_t max_text_bytes = 8ll << 20;   // a text/code file larger than this is skipped
  std::int64_t max_pdf_bytes = 128ll << 20;  // PDF files
  int max_pdf_pages = 5000;
  std::int64_t max_extracted_bytes = 32ll << 20;  // text taken out of one PDF
};

struct Document {
  std::string name;  // the file name or path as shown to people and models
  DocumentKind kind = DocumentKind::text;
  std::string language;  // code: "cpp", "python", ...; Markdown: "markdown"; otherwise empty
  std::string text;      // valid UTF-8, "\n" line ends
  // PDF: byte offset in `text` where each page starts (page_starts[i] is page i + 1).
  std::vector<std::size_t> page_starts;
};

struct DocumentResult {
  bool ok = false;
  std::string error;   // when !ok: why the file was refused, naming it
  std::string reason;  // when !ok: the same without the name ("binary", "too large (1.0 GB)", ...)
  Document document;
};

// Reads a file from disk (regular files only; the size is checked before reading).
DocumentResult read_document(const std::filesystem::path& path, const DocumentLimits& limits = {});
// Reads bytes already in memory (an attachment); `name` decides nothing but the label and the
// extension hint.
DocumentResult read_document_bytes(std::string_view bytes, const std::string& name, const DocumentLimits& limits = {});

// True when the name's extension or the bytes mark a document this module reads (text, code,
// Markdown, PDF); images and archives are not documents.
bool looks_like_document(std::string_view bytes, const std::string& name);

// The kind and language a name alone suggests ("x.py" -> code/"python", "notes.md" ->
// markdown); false when the name says nothing (no or unknown extension) or marks a non-document.
bool kind_from_name(const std::string& name, DocumentKind* kind, std::string* language);

}  // namespace day0::knowledge
