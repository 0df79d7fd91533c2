#include "gui/document_attachments.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QHash>
#include <QImageReader>
#include <QLocale>

namespace day0::app {
namespace {

// Media types accept lowercase letters, digits and a few marks; a language name becomes one.
QString mime_subtype(const std::string& language) {
  QString out;
  for (const char c : language) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')
      out += QLatin1Char(c);
    else if (c >= 'A' && c <= 'Z')
      out += QLatin1Char(static_cast<char>(c - 'A' + 'a'));
    else if (c == '+')
      out += QStringLiteral("plus");
    else if (c == '#')
      out += QStringLiteral("sharp");
  }
  return out;
}

QString mime_for(const knowledge::Document& d) {
  switch (d.kind) {
    case knowledge::DocumentKind::pdf:
      return QStringLiteral("application/pdf");
    case knowledge::DocumentKind::markdown:
      return QStringLiteral("text/markdown");
    case knowledge::DocumentKind::code: {
      const QString sub = mime_subtype(d.language);
      return sub.isEmpty() ? QStringLiteral("text/plain") : QStringLiteral("text/x-") + sub;
    }
    case knowledge::DocumentKind::text:
      break;
  }
  return QStringLiteral("text/plain");
}

}  // namespace

ValidatedDocument validate_document(const QByteArray& data, const QString& file_name,
                                    const DocumentAttachmentLimits& limits) {
  ValidatedDocument out;
  out.file_name = file_name.isEmpty() ? QObject::tr("pasted text.txt") : file_name;
  const QLocale locale = QLocale::c();
  if (data.isEmpty()) {
    out.error = QObject::tr("%1 is empty.").arg(out.file_name);
    return out;
  }
  const bool pdf = data.startsWith("%PDF-") || out.file_name.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive);
  const qint64 limit = pdf ? limits.max_pdf_bytes : limits.max_text_bytes;
  if (data.size() > limit) {
    out.error = QObject::tr("%1 is %2; %3 up to %4 can be attached.")
                    .arg(out.file_name, locale.formattedDataSize(data.size()),
                         pdf ? QObject::tr("PDFs") : QObject::tr("text files"), locale.formattedDataSize(limit));
    return out;
  }
  knowledge::DocumentLimits read_limits;
  read_limits.max_text_bytes = limits.max_text_bytes;
  read_limits.max_pdf_bytes = limits.max_pdf_bytes;
  knowledge::DocumentResult read =
      knowledge::read_document_bytes(std::string_view(data.constData(), static_cast<std::size_t>(data.size())),
                                     out.file_name.toStdString(), read_limits);
  if (!read.ok) {
    out.error = QObject::tr("%1 cannot be attached: %2.")
                    .arg(out.file_name, QString::fromStdString(read.reason.empty() ? read.error : read.reason));
    return out;
  }
  if (read.document.text.find_first_not_of(" \t\n") == std::string::npos) {
    out.error = QObject::tr("%1 holds no text.").arg(out.file_name);
    return out;
  }
  out.data = data;
  out.document = std::move(read.document);
  out.mime_type = mime_for(out.document);
  out.sha256 = QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
  return out;
}

bool looks_like_image(const QByteArray& data) {
  QBuffer buffer;
  buffer.setData(data);
  buffer.open(QIODevice::ReadOnly);
  const QByteArray format = QImageReader::imageFormat(&buffer);
  return format == "png" || format == "jpeg" || format == "jpg" || format == "webp" || format == "gif" ||
         format == "bmp";
}

bool is_document_mime(const QString& mime_type) { return !mime_type.startsWith(QStringLiteral("image/")); }

QString document_kind_text(const QString& mime_type) {
  if (mime_type == QLatin1String("application/pdf")) return QStringLiteral("PDF");
  if (mime_type == QLatin1String("text/markdown")) return QStringLiteral("Markdown");
  if (mime_type.startsWith(QStringLiteral("text/x-"))) {
    static const QHash<QString, QString> names = {{QStringLiteral("cpp"), QStringLiteral("C++")},
                                                  {QStringLiteral("c"), QStringLiteral("C")},
                                                  {QStringLiteral("python"), QStringLiteral("Python")},
                                                  {QStringLiteral("rust"), QStringLiteral("Rust")},
                                                  {QStringLiteral("go"), QStringLiteral("Go")},
                                                  {QStringLiteral("java"), QStringLiteral("Java")},
                                                  {QStringLiteral("javascript"), QStringLiteral("JavaScript")},
                                                  {QStringLiteral("typescript"), QStringLiteral("TypeScript")},
                                                  {QStringLiteral("cuda"), QStringLiteral("CUDA")},
                                                  {QStringLiteral("shell"), QStringLiteral("Shell")},
                                                  {QStringLiteral("csharp"), QStringLiteral("C#")},
                                                  {QStringLiteral("cmake"), QStringLiteral("CMake")}};
    const QString sub = mime_type.mid(7);
    return QObject::tr("%1 code").arg(names.value(sub, sub));
  }
  return QObject::tr("Text");
}

QVariantMap document_for_qml(const QString& name, const QString& mime_type, qint64 size, const QString& sha256) {
  return {{QStringLiteral("name"), name},
          {QStringLiteral("kind"), document_kind_text(mime_type)},
          {QStringLiteral("mimeType"), mime_type},
          {QStringLiteral("size"), size},
          {QStringLiteral("sizeText"), QLocale::c().formattedDataSize(size)},
          {QStringLiteral("sha256"), sha256}};
}

}  // namespace day0::app
