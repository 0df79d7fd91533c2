// Reading documents: kinds by name and content, UTF-8 and UTF-16, line ends, limits, PDFs
// (text per page, encrypted, damaged) and files that are not documents.
#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-page.h>

#include <memory>

#include "knowledge/document.h"
#include "knowledge/text_util.h"

namespace fs = std::filesystem;
using namespace day0::knowledge;

namespace {

const fs::path kData = fs::path(DAY0_TEST_DATA_DIR) / "knowledge";

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

class TestDocument : public QObject {
  Q_OBJECT
 private slots:
  void plainTextAndLineEnds() {
    const auto r = read_document_bytes("\xef\xbb\xbfone\r\ntwo\rthree\n", "notes.txt");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(r.document.kind, DocumentKind::text);
    QCOMPARE(r.document.text, std::string("one\ntwo\nthree\n"));
    QCOMPARE(r.document.name, std::string("notes.txt"));
    QVERIFY(r.document.page_starts.empty());
  }

  void kindsByName() {
    struct Case {
      const char* name;
      DocumentKind kind;
      const char* language;
    };
    const Case cases[] = {{"a/b/readme.MD", DocumentKind::markdown, "markdown"},
                          {"x.py", DocumentKind::code, "python"},
                          {"src/lib.rs", DocumentKind::code, "rust"},
                          {"web/app.jsx", DocumentKind::code, "javascript"},
                          {"k.cuh", DocumentKind::code, "cuda"},
                          {"dir/CMakeLists.txt", DocumentKind::code, "cmake"},
                          {"Makefile", DocumentKind::code, "make"},
                          {"run.sh", DocumentKind::code, "shell"},
                          {"todo.txt", DocumentKind::text, ""}};
    for (const auto& c : cases) {
      const auto r = read_document_bytes("hello\n", c.name);
      QVERIFY2(r.ok, r.error.c_str());
      QVERIFY2(r.document.kind == c.kind, c.name);
      QCOMPARE(r.document.language, std::string(c.language));
    }
  }

  void kindsByContent() {
    auto r = read_document_bytes("#!/usr/bin/env python3\nprint('hi')\n", "tools/cleanup");
    QVERIFY(r.ok);
    QCOMPARE(r.document.kind, DocumentKind::code);
    QCOMPARE(r.document.language, std::string("python"));
    r = read_document_bytes("#!/bin/bash\nset -e\n", "bin/deploy");
    QCOMPARE(r.document.language, std::string("shell"));
    r = read_document_bytes("#!/usr/bin/env -S node --harmony\n", "serve");
    QCOMPARE(r.document.language, std::string("javascript"));
    // No extension, no shebang, valid UTF-8: text. Non-ASCII is fine.
    r = read_document_bytes("Grüße aus Köln — 東京\n", "LETTER");
    QVERIFY(r.ok);
    QCOMPARE(r.document.kind, DocumentKind::text);
    QVERIFY(r.document.text.find("東京") != std::string::npos);
  }

  void utf16WithByteOrderMark() {
    const std::string le("\xff\xfeH\0i\0 \0\xac\x20\n\0", 12);  // "Hi €\n"
    auto r = read_document_bytes(le, "w.txt");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(r.document.text, std::string("Hi \xe2\x82\xac\n"));
    const std::string be("\xfe\xff\0H\xd8\x3d\xde\x00", 8);  // "H" + U+1F600
    r = read_document_bytes(be, "w.txt");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(r.document.text, std::string("H\xf0\x9f\x98\x80"));
    r = read_document_bytes(std::string("\xff\xfe\x00\xdc", 4), "w.txt");  // lone low surrogate
    QVERIFY(!r.ok);
  }

  void refusesBinaryAndInvalidText() {
    auto r = read_document_bytes(std::string("abc\0def", 7), "data.txt");
    QVERIFY(!r.ok);
    QCOMPARE(r.reason, std::string("binary (NUL bytes)"));
    QVERIFY(r.error.starts_with("data.txt: "));
    r = read_document_bytes("\x89PNG\r\n\x1a\nrest", "picture");
    QVERIFY(!r.ok);
    QVERIFY(r.reason.find("PNG") != std::string::npos);
    r = read_document_bytes("caf\xe9 au lait\n", "latin1.txt");  // Latin-1, not UTF-8
    QVERIFY(!r.ok);
    QCOMPARE(r.reason, std::string("not valid UTF-8 (byte 3)"));
    r = read_document_bytes("plain words", "logo.png");
    QVERIFY(!r.ok);
    std::string controls(200, '\x01');
    r = read_document_bytes(controls, "weird.txt");
    QVERIFY(!r.ok);
  }

  void utf8Validator() {
    QVERIFY(is_valid_utf8("plain ASCII"));
    QVERIFY(is_valid_utf8("\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9"));
    QCOMPARE(find_invalid_utf8("ab\xc0\xaf"), std::size_t(2));         // overlong "/"
    QCOMPARE(find_invalid_utf8("\xed\xa0\x80"), std::size_t(0));       // UTF-16 surrogate
    QCOMPARE(find_invalid_utf8("x\xf4\x90\x80\x80"), std::size_t(1));  // above U+10FFFF
    QCOMPARE(find_invalid_utf8("xy\xe2\x82"), std::size_t(2));         // cut short
    QCOMPARE(find_invalid_utf8("\x80"), std::size_t(0));               // stray continuation
    QCOMPARE(sanitize_utf8("a\xffz"), std::string("a\xef\xbf\xbdz"));
    QCOMPARE(utf8_safe_cut("\xe2\x82\xac\xe2\x82\xac", 4), std::size_t(3));
  }

  void sizeLimits() {
    DocumentLimits limits;
    limits.max_text_bytes = 10;
    auto r = read_document_bytes("0123456789A", "big.txt", limits);
    QVERIFY(!r.ok);
    QVERIFY(r.reason.starts_with("too large (11 bytes"));
    QTemporaryDir dir;
    const fs::path big = fs::path(dir.path().toStdString()) / "sparse.txt";
    write_file(big, "x");
    fs::resize_file(big, 3ll << 30);  // sparse: nothing is written, nothing must be read
    r = read_document(big);
    QVERIFY(!r.ok);
    QVERIFY2(r.reason.starts_with("too large (3.0 GB"), r.reason.c_str());
  }

  void pdfPages() {
    const auto r = read_document(kData / "notes" / "lease-agreement.pdf");
    QVERIFY2(r.ok, r.error.c_str());
    const Document& d = r.document;
    QCOMPARE(d.kind, DocumentKind::pdf);
    QCOMPARE(d.page_starts.size(), std::size_t(3));
    QCOMPARE(d.page_starts[0], std::size_t(0));
    // The generator put these headings first on pages 2 and 3.
    QVERIFY2(d.text.compare(d.page_starts[1], 16, "Security deposit") == 0, d.text.c_str());
    QVERIFY(d.text.compare(d.page_starts[2], 7, "Animals") == 0);
    QVERIFY(d.text.find("1,240 euros") < d.page_starts[1]);
    QVERIFY(d.text.find("three months' written notice") > d.page_starts[2]);
    QVERIFY(d.text[d.page_starts[1] - 1] == '\n');
    QVERIFY(is_valid_utf8(d.text));
    DocumentLimits limits;
    limits.max_pdf_pages = 2;
    QVERIFY(read_document(kData / "notes" / "lease-agreement.pdf", limits).reason.starts_with("too many pages"));
  }

  void hostilePdfs() {
    auto r = read_document(kData / "hostile" / "encrypted.pdf");
    QVERIFY(!r.ok);
    QCOMPARE(r.reason, std::string("encrypted PDF (it needs a password)"));
    // The file really is encrypted (RC4, revision 2): with its password poppler reads it.
    std::ifstream in(kData / "hostile" / "encrypted.pdf", std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::unique_ptr<poppler::document> pdf(
        poppler::document::load_from_raw_data(bytes.data(), int(bytes.size()), "", "tidepool"));
    QVERIFY(pdf && !pdf->is_locked());
    std::unique_ptr<poppler::page> page(pdf->create_page(0));
    const auto text = page->text().to_utf8();
    QVERIFY(std::string(text.begin(), text.end()).find("Tax return checklist") != std::string::npos);
    r = read_document(kData / "hostile" / "damaged.pdf");
    QVERIFY(!r.ok);
    QVERIFY2(r.reason.starts_with("damaged PDF"), r.reason.c_str());
    // Poppler may rebuild a cut file's cross-reference table; either way no crash, and any
    // text it returns is valid UTF-8.
    r = read_document(kData / "hostile" / "truncated.pdf");
    QVERIFY(r.ok ? is_valid_utf8(r.document.text) : !r.reason.empty());
    r = read_document_bytes("just words", "report.pdf");
    QVERIFY(!r.ok);
    QVERIFY(r.reason.starts_with("damaged PDF"));
  }

  void notRegularFiles() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    auto r = read_document(root);
    QVERIFY(!r.ok);
    QVERIFY(r.reason.starts_with("unreadable"));
    QVERIFY(!read_document(root / "missing.txt").ok);
    QCOMPARE(::mkfifo((root / "pipe").c_str(), 0600), 0);
    r = read_document(root / "pipe");  // must not block waiting for a writer
    QVERIFY(!r.ok);
    QCOMPARE(r.reason, std::string("unreadable: not a regular file"));
  }

  void looksLikeDocument() {
    QVERIFY(looks_like_document("int main() {}", "main.cpp"));
    QVERIFY(looks_like_document("%PDF-1.7 ...", "scan"));
    QVERIFY(looks_like_document("just some words\n", "NOTES"));
    QVERIFY(!looks_like_document("\x89PNG\r\n\x1a\n", "a.md"));
    QVERIFY(!looks_like_document("GIF89a", "x"));
    QVERIFY(!looks_like_document("text", "photo.jpg"));
    QVERIFY(!looks_like_document(std::string("\0\0\0", 3), "blob"));
  }
};

QTEST_APPLESS_MAIN(TestDocument)
#include "test_document.moc"
