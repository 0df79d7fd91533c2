// Reading one file as text. Order of checks, cheapest first: regular file, size against the
// limit of its kind (before any byte is read), PDF magic, binary signatures and NUL bytes,
// UTF-16 byte-order marks, UTF-8 validity, control-character density.
#include "knowledge/document.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-page.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "knowledge/text_util.h"

namespace day0::knowledge {

const char* to_string(DocumentKind kind) {
  switch (kind) {
    case DocumentKind::text:
      return "text";
    case DocumentKind::markdown:
      return "markdown";
    case DocumentKind::code:
      return "code";
    case DocumentKind::pdf:
      return "pdf";
  }
  return "text";
}

namespace {

struct NameKind {
  DocumentKind kind;
  const char* language;
};

// Extension (lower case, without the dot) -> kind and language.
const std::unordered_map<std::string, NameKind>& extension_table() {
  static const std::unordered_map<std::string, NameKind> table = [] {
    std::unordered_map<std::string, NameKind> t;
    const auto code = [&t](const char* language, std::initializer_list<const char*> exts) {
      for (const char* e : exts) t.emplace(e, NameKind{DocumentKind::code, language});
    };
    code("c", {"c", "h"});
    code("cpp", {"cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "inl", "tpp"});
    code("cuda", {"cu", "cuh"});
    code("python", {"py", "pyi", "pyw"});
    code("javascript", {"js", "mjs", "cjs", "jsx"});
    code("typescript", {"ts", "mts", "cts", "tsx"});
    code("rust", {"rs"});
    code("go", {"go"});
    code("java", {"java"});
    code("kotlin", {"kt", "kts"});
    code("swift", {"swift"});
    code("csharp", {"cs"});
    code("ruby", {"rb"});
    code("php", {"php"});
    code("perl", {"pl", "pm"});
    code("lua", {"lua"});
    code("shell", {"sh", "bash", "zsh", "ksh", "fish"});
    code("cmake", {"cmake"});
    code("make", {"mk", "mak"});
    code("sql", {"sql"});
    code("r", {"r"});
    code("scala", {"scala", "sc"});
    code("haskell", {"hs"});
    code("ocaml", {"ml", "mli"});
    code("elixir", {"ex", "exs"});
    code("erlang", {"erl", "hrl"});
    code("dart", {"dart"});
    code("zig", {"zig"});
    code("julia", {"jl"});
    code("qml", {"qml"});
    code("glsl", {"glsl", "vert", "frag", "comp"});
    code("protobuf", {"proto"});
    code("groovy", {"groovy", "gradle"});
    code("html", {"html", "htm"});
    code("css", {"css", "scss", "sass", "less"});
    code("vue", {"vue", "svelte"});
    code("json", {"json", "jsonl"});
    code("yaml", {"yaml", "yml"});
    code("toml", {"toml"});
    code("xml", {"xml", "xsd", "xsl"});
    code("nix", {"nix"});
    code("terraform", {"tf"});
    code("powershell", {"ps1"});
    code("batch", {"bat", "cmd"});
    for (const char* e : {"md", "markdown", "mdown", "mkd", "mdx"})
      t.emplace(e, NameKind{DocumentKind::markdown, "markdown"});
    for (const char* e : {"txt", "text", "rst",  "adoc",       "asciidoc", "org",  "log",   "csv", "tsv", "tex",
                          "ini", "cfg",  "conf", "properties", "env",      "diff", "patch", "srt", "vtt", "bib"})
      t.emplace(e, NameKind{DocumentKind::text, ""});
    t.emplace("pdf", NameKind{DocumentKind::pdf, ""});
    return t;
  }();
  return table;
}

// What a file is when its extension alone marks it as something other than a document: "image"
// (SVG is text, but an image rather than a document), "binary", or empty for any other name.
std::string non_document_kind(const std::string& ext) {
  static const char* const kImages[] = {"png", "jpg",  "jpeg", "gif", "bmp",  "webp", "ico",
                                        "tif", "tiff", "svg",  "psd", "heic", "avif"};
  static const char* const kBinaries[] = {
      "zip",         "gz",    "tgz", "bz2",   "xz",  "zst", "7z",     "rar",     "tar",     "jar",     "war",
      "exe",         "dll",   "so",  "dylib", "o",   "a",   "obj",    "lib",     "bin",     "pyc",     "pyo",
      "class",       "wasm",  "mp3", "mp4",   "wav", "ogg", "flac",   "avi",     "mkv",     "mov",     "webm",
      "woff",        "woff2", "ttf", "otf",   "eot", "db",  "sqlite", "sqlite3", "docx",    "xlsx",    "pptx",
      "odt",         "ods",   "odp", "doc",   "xls", "ppt", "iso",    "img",     "dmg",     "deb",     "rpm",
      "safetensors", "gguf",  "npy", "npz",   "pt",  "pth", "onnx",   "pkl",     "parquet", "DS_Store"};
  const auto listed = [&](const auto& list) {
    return std::any_of(std::begin(list), std::end(list), [&](const char* e) { return ext == e; });
  };
  if (listed(kImages)) return "image";
  if (listed(kBinaries)) return "binary";
  return "";
}

bool is_non_document_extension(const std::string& ext) { return !non_document_kind(ext).empty(); }

std::string file_name_of(const std::string& name) {
  const auto slash = name.find_last_of('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::string extension_of(const std::string& name) {
  const std::string file = file_name_of(name);
  const auto dot = file.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return "";
  return to_lower_ascii(file.substr(dot + 1));
}

// Names that say what a file is without an extension (or despite it).
bool special_name(const std::string& file, NameKind* out) {
  static const std::unordered_map<std::string, NameKind> kNames = {
      {"CMakeLists.txt", {DocumentKind::code, "cmake"}},
      {"Makefile", {DocumentKind::code, "make"}},
      {"makefile", {DocumentKind::code, "make"}},
      {"GNUmakefile", {DocumentKind::code, "make"}},
      {"Dockerfile", {DocumentKind::code, "dockerfile"}},
      {"Containerfile", {DocumentKind::code, "dockerfile"}},
      {"Jenkinsfile", {DocumentKind::code, "groovy"}},
      {"Rakefile", {DocumentKind::code, "ruby"}},
      {"Gemfile", {DocumentKind::code, "ruby"}},
      {"meson.build", {DocumentKind::code, "meson"}},
      {"BUILD", {DocumentKind::code, "starlark"}},
      {"WORKSPACE", {DocumentKind::code, "starlark"}},
      {".bashrc", {DocumentKind::code, "shell"}},
      {".profile", {DocumentKind::code, "shell"}},
      {".gitignore", {DocumentKind::text, ""}},
      {".gitattributes", {DocumentKind::text, ""}},
      {".editorconfig", {DocumentKind::text, ""}},
      {"README", {DocumentKind::text, ""}},
      {"LICENSE", {DocumentKind::text, ""}},
      {"COPYING", {DocumentKind::text, ""}},
      {"AUTHORS", {DocumentKind::text, ""}},
      {"CHANGELOG", {DocumentKind::text, ""}}};
  const auto it = kNames.find(file);
  if (it == kNames.end()) return false;
  *out = it->second;
  return true;
}

// "#!/usr/bin/env python3" -> "python".
std::string language_from_shebang(std::string_view text) {
  if (text.substr(0, 2) != "#!") return "";
  std::string_view line = text.substr(2, text.find('\n') == std::string_view::npos ? 200 : text.find('\n') - 2);
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < line.size();) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  std::string interpreter;
  for (std::size_t w = 0; w < words.size(); ++w) {
    std::string_view word = words[w];
    const auto slash = word.find_last_of('/');
    if (slash != std::string_view::npos) word.remove_prefix(slash + 1);
    if (word == "env" || word.starts_with('-')) continue;
    interpreter = std::string(word);
    break;
  }
  static const std::pair<const char*, const char*> kInterpreters[] = {
      {"python", "python"}, {"bash", "shell"}, {"zsh", "shell"},       {"dash", "shell"},      {"ksh", "shell"},
      {"sh", "shell"},      {"fish", "shell"}, {"node", "javascript"}, {"deno", "typescript"}, {"perl", "perl"},
      {"ruby", "ruby"},     {"lua", "lua"},    {"php", "php"},         {"Rscript", "r"},       {"julia", "julia"},
      {"make", "make"},     {"awk", "awk"},    {"gawk", "awk"},        {"tclsh", "tcl"}};
  for (const auto& [prefix, language] : kInterpreters)
    if (interpreter.starts_with(prefix)) return language;
  return interpreter.empty() ? "" : "shell";
}

// A known binary format, by its first bytes; empty when none matches.
std::string binary_signature(std::string_view b) {
  static const std::pair<std::string_view, const char*> kMagic[] = {
      {std::string_view("\x89PNG", 4), "PNG image"},
      {std::string_view("\xff\xd8\xff", 3), "JPEG image"},
      {"GIF87a", "GIF image"},
      {"GIF89a", "GIF image"},
      {std::string_view("PK\x03\x04", 4), "ZIP archive"},
      {std::string_view("PK\x05\x06", 4), "ZIP archive"},
      {std::string_view("\x1f\x8b", 2), "gzip archive"},
      {std::string_view("\x7f"
                        "ELF",
                        4),
       "executable"},
      {std::string_view("\xfd"
                        "7zXZ\0",
                        6),
       "xz archive"},
      {std::string_view("7z\xbc\xaf\x27\x1c", 6), "7-Zip archive"},
      {std::string_view("Rar!\x1a\x07", 6), "RAR archive"},
      {std::string_view("\0asm", 4), "WebAssembly"},
      {std::string_view("SQLite format 3\0", 16), "SQLite database"},
      {std::string_view("\x28\xb5\x2f\xfd", 4), "zstd archive"},
      {std::string_view("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 8), "Office document"},
      {"RIFF", "media file"},
      {"OggS", "media file"},
      {"fLaC", "media file"},
      {std::string_view("\x00\x00\x00\x18"
                        "ftyp",
                        8),
       "media file"},
      {std::string_view("\x00\x00\x00\x20"
                        "ftyp",
                        8),
       "media file"},
      {std::string_view("\x1a\x45\xdf\xa3", 4), "media file"},
      {"wOFF", "font"},
      {"wOF2", "font"},
      {std::string_view("\xca\xfe\xba\xbe", 4), "executable"},
      {std::string_view("\xcf\xfa\xed\xfe", 4), "executable"},
      {"MZ", "executable"},
  };
  for (const auto& [magic, what] : kMagic)
    if (b.starts_with(magic)) {
      // "MZ" is also how some text begins: only call it an executable when NULs follow.
      if (magic == "MZ" && b.substr(0, 512).find('\0') == std::string_view::npos) continue;
      return what;
    }
  return "";
}

bool is_pdf_magic(std::string_view bytes) {
  // The header may follow a little junk (the PDF reference allows it within the first 1 KB).
  return bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos;
}

// UTF-16 with a byte-order mark -> UTF-8; false on unpaired surrogates.
bool utf16_to_utf8(std::string_view b, bool little_endian, std::string* out) {
  out->clear();
  out->reserve(b.size());
  const auto unit = [&](std::size_t i) -> std::uint32_t {
    const auto lo = static_cast<unsigned char>(b[i + (little_endian ? 0 : 1)]);
    const auto hi = static_cast<unsigned char>(b[i + (little_endian ? 1 : 0)]);
    return (hi << 8) | lo;
  };
  if (b.size() % 2 != 0) return false;
  for (std::size_t i = 2; i < b.size(); i += 2) {
    std::uint32_t cp = unit(i);
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (i + 3 >= b.size()) return false;
      const std::uint32_t low = unit(i + 2);
      if (low < 0xdc00 || low > 0xdfff) return false;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      i += 2;
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      return false;
    }
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  return true;
}

// Control characters other than tab, line ends, form feed and escape: text has few.
bool too_many_controls(std::string_view text) {
  const std::string_view sample = text.substr(0, 64 << 10);
  std::size_t controls = 0;
  for (const char ch : sample) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b) || c == 0x7f)
      ++controls;
  }
  return controls > 8 && controls * 100 > sample.size();
}

DocumentResult refuse(const std::string& name, std::string reason) {
  DocumentResult r;
  r.error = name + ": " + reason;
  r.reason = std::move(reason);
  return r;
}

void quiet_poppler(const std::string&, void*) {}

DocumentResult read_pdf(std::string_view bytes, const std::string& name, const DocumentLimits& limits) {
  static std::once_flag once;
  // Poppler reports every repair it makes on stderr; a damaged file is reported by us instead.
  std::call_once(once, [] { poppler::set_debug_error_function(&quiet_poppler, nullptr); });
  if (static_cast<std::int64_t>(bytes.size()) > limits.max_pdf_bytes || bytes.size() > INT_MAX)
    return refuse(name, "too large (" + human_size(static_cast<std::int64_t>(bytes.size())) + "; PDFs up to " +
                            human_size(limits.max_pdf_bytes) + " are read)");
  std::unique_ptr<poppler::document> pdf(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (!pdf) return refuse(name, "damaged PDF (it cannot be opened)");
  if (pdf->is_locked()) return refuse(name, "encrypted PDF (it needs a password)");
  const int pages = pdf->pages();
  if (pages <= 0) return refuse(name, "damaged PDF (no pages)");
  if (pages > limits.max_pdf_pages)
    return refuse(name, "too many pages (" + std::to_string(pages) + "; up to " + std::to_string(limits.max_pdf_pages) +
                            " are read)");
  DocumentResult r;
  Document& d = r.document;
  d.name = name;
  d.kind = DocumentKind::pdf;
  bool any_text = false;
  for (int i = 0; i < pages; ++i) {
    d.page_starts.push_back(d.text.size());
    std::unique_ptr<poppler::page> page(pdf->create_page(i));
    if (!page) continue;
    const poppler::byte_array utf8 = page->text().to_utf8();
    std::string text = normalize_line_ends(std::string_view(utf8.data(), utf8.size()));
    if (!is_valid_utf8(text)) text = sanitize_utf8(text);
    for (char& c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '\f')
        c = '\n';
      else if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f)
        c = ' ';
    }
    if (text.find_first_not_of(" \t\n") != std::string::npos) any_text = true;
    d.text += text;
    if (d.text.empty() || d.text.back() != '\n') d.text.push_back('\n');
    if (static_cast<std::int64_t>(d.text.size()) > limits.max_extracted_bytes)
      return refuse(name, "too much text (more than " + human_size(limits.max_extracted_bytes) + " in the PDF)");
  }
  if (!any_text) return refuse(name, "no text in the PDF (scanned pages without a text layer?)");
  r.ok = true;
  return r;
}

}  // namespace

bool kind_from_name(const std::string& name, DocumentKind* kind, std::string* language) {
  NameKind found{};
  const std::string file = file_name_of(name);
  if (!special_name(file, &found)) {
    const std::string ext = extension_of(name);
    const auto it = extension_table().find(ext);
    if (it == extension_table().end()) return false;
    found = it->second;
  }
  *kind = found.kind;
  *language = found.language;
  return true;
}

DocumentResult read_document_bytes(std::string_view bytes, const std::string& name, const DocumentLimits& limits) {
  const std::string ext = extension_of(name);
  if (is_pdf_magic(bytes)) return read_pdf(bytes, name, limits);
  if (ext == "pdf") return refuse(name, "damaged PDF (no PDF header)");
  if (static_cast<std::int64_t>(bytes.size()) > limits.max_text_bytes)
    return refuse(name, "too large (" + human_size(static_cast<std::int64_t>(bytes.size())) + "; text files up to " +
                            human_size(limits.max_text_bytes) + " are read)");
  if (const std::string what = binary_signature(bytes); !what.empty()) return refuse(name, "binary (" + what + ")");
  if (is_non_document_extension(ext)) return refuse(name, non_document_kind(ext) + " (." + ext + " file)");

  std::string decoded;
  std::string_view text = bytes;
  const bool utf16le = bytes.starts_with(std::string_view("\xff\xfe", 2));
  const bool utf16be = bytes.starts_with(std::string_view("\xfe\xff", 2));
  if (utf16le || utf16be) {
    if (!utf16_to_utf8(bytes, utf16le, &decoded)) return refuse(name, "not valid UTF-16");
    text = decoded;
  } else if (text.starts_with("\xef\xbb\xbf")) {
    text.remove_prefix(3);
  }
  if (text.find('\0') != std::string_view::npos) return refuse(name, "binary (NUL bytes)");
  if (const std::size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
    return refuse(name, "not valid UTF-8 (byte " + std::to_string(bad) + ")");
  if (too_many_controls(text)) return refuse(name, "binary (control characters)");

  DocumentResult r;
  Document& d = r.document;
  d.name = name;
  d.text = normalize_line_ends(text);
  if (!kind_from_name(name, &d.kind, &d.language)) {
    d.language = language_from_shebang(d.text);
    d.kind = d.language.empty() ? DocumentKind::text : DocumentKind::code;
  }
  r.ok = true;
  return r;
}

DocumentResult read_document(const std::filesystem::path& path, const DocumentLimits& limits) {
  const std::string name = sanitize_utf8(path.string());
  // O_NONBLOCK: a FIFO or device opened by mistake must not hang the reader; fstat refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return refuse(name, std::string("unreadable: ") + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refuse(name, std::string("unreadable: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return refuse(name, "unreadable: a folder, not a file");
  if (!S_ISREG(st.st_mode)) return refuse(name, "unreadable: not a regular file");
  char head[1024];
  const ssize_t head_size = ::pread(fd, head, sizeof head, 0);
  if (head_size < 0) return refuse(name, std::string("unreadable: ") + std::strerror(errno));
  const bool pdf =
      is_pdf_magic(std::string_view(head, static_cast<std::size_t>(head_size))) || extension_of(name) == "pdf";
  const std::int64_t limit = pdf ? limits.max_pdf_bytes : limits.max_text_bytes;
  if (st.st_size > limit)
    return refuse(name, "too large (" + human_size(st.st_size) + "; " + (pdf ? "PDFs" : "text files") + " up to " +
                            human_size(limit) + " are read)");
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refuse(name, std::string("unreadable: ") + std::strerror(errno));
    if (n == 0) break;  // the file shrank while being read: take what is there
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  return read_document_bytes(bytes, name, limits);
}

bool looks_like_document(std::string_view bytes, const std::string& name) {
  const std::string ext = extension_of(name);
  if (is_non_document_extension(ext)) return false;
  if (is_pdf_magic(bytes)) return true;
  if (!binary_signature(bytes).empty()) return false;
  DocumentKind kind;
  std::string language;
  if (kind_from_name(name, &kind, &language)) return true;
  // Unknown name: text without NULs whose sampled prefix is UTF-8 (a sequence cut by the sample's
  // end does not count against it).
  const std::string_view sample = bytes.substr(0, 64 << 10);
  if (sample.empty() || sample.find('\0') != std::string_view::npos) return false;
  const std::size_t bad = find_invalid_utf8(sample);
  return (bad == std::string_view::npos || (sample.size() < bytes.size() && bad + 4 > sample.size())) &&
         !too_many_controls(sample);
}

}  // namespace day0::knowledge
