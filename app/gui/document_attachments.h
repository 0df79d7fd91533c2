#pragma once
// Documents attached to messages (text, Markdown, source code, PDF): read and checked by the
// knowledge module before anything is stored (binary, oversized, encrypted or damaged files
// give a sentence naming the file), and stored in the history like images, by SHA-256, with a
// media type that says what they are: text/plain, text/markdown, text/x-<language> or
// application/pdf.
#include <QByteArray>
#include <QString>
#include <QVariantMap>

#include "knowledge/document.h"

namespace day0::app {

struct DocumentAttachmentLimits {
  qint64 max_text_bytes = 8ll << 20;  // a text or code file
  qint64 max_pdf_bytes = 32ll << 20;  // a PDF (the history keeps attachments up to 64 MiB)
};

struct ValidatedDocument {
  QString error;  // empty: valid; otherwise why the file was refused, naming it
  QByteArray data;
  QString mime_type;
  QString file_name;
  QString sha256;
  knowledge::Document document;  // its text, as the model will read it
};

// Checks and reads `data`, named `file_name` (the name gives the language of code, nothing else).
ValidatedDocument validate_document(const QByteArray& data, const QString& file_name,
                                    const DocumentAttachmentLimits& limits = {});

// Whether the bytes are an image format the app attaches as an image (PNG, JPEG, WebP, GIF,
// BMP), judged from the content.
bool looks_like_image(const QByteArray& data);

// Whether a stored attachment's media type is a document (not an image).
bool is_document_mime(const QString& mime_type);

// "Markdown", "C++ code", "PDF", "Text": the kind a chip shows, from the media type.
QString document_kind_text(const QString& mime_type);

// What QML shows for one document: name, kind, sizeText, sha256, mimeType.
QVariantMap document_for_qml(const QString& name, const QString& mime_type, qint64 size, const QString& sha256);

}  // namespace day0::app
