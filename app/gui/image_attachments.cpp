#include "gui/image_attachments.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QImageReader>
#include <QLocale>

#include "storage/history_store.h"

namespace day0::app {
namespace {

QString mime_for(const QByteArray& format) {
  if (format == "png") return QStringLiteral("image/png");
  if (format == "jpeg" || format == "jpg") return QStringLiteral("image/jpeg");
  if (format == "webp") return QStringLiteral("image/webp");
  if (format == "gif") return QStringLiteral("image/gif");
  if (format == "bmp") return QStringLiteral("image/bmp");
  return {};
}

}  // namespace

ValidatedImage validate_image(const QByteArray& data, const QString& file_name, const ImageLimits& limits) {
  ValidatedImage out;
  out.file_name = file_name.isEmpty() ? QStringLiteral("pasted image") : file_name;
  const QString name = out.file_name;
  const QLocale locale = QLocale::c();
  if (data.isEmpty()) {
    out.error = QObject::tr("%1 is empty.").arg(name);
    return out;
  }
  if (data.size() > limits.max_bytes) {
    out.error = QObject::tr("%1 is %2; images up to %3 can be attached.")
                    .arg(name, locale.formattedDataSize(data.size()), locale.formattedDataSize(limits.max_bytes));
    return out;
  }
  QBuffer buffer;
  buffer.setData(data);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer);
  reader.setDecideFormatFromContent(true);
  // Decoding a header that claims a huge image must not allocate it: 4 bytes per pixel at the
  // pixel limit, in MiB.
  reader.setAllocationLimit(static_cast<int>(limits.max_pixels * 4 / (1 << 20)) + 1);
  const QString mime = mime_for(reader.format());
  if (mime.isEmpty()) {
    out.error = QObject::tr("%1 is not an image Day0 can read (PNG, JPEG, WebP, GIF or BMP).").arg(name);
    return out;
  }
  const QSize size = reader.size();
  if (!size.isValid() || size.isEmpty()) {
    out.error = QObject::tr("%1 is damaged: its size cannot be read.").arg(name);
    return out;
  }
  if (size.width() > limits.max_side || size.height() > limits.max_side ||
      static_cast<qint64>(size.width()) * size.height() > limits.max_pixels) {
    out.error = QObject::tr("%1 is %2 x %3 pixels; images up to %4 pixels a side and %5 megapixels can be attached.")
                    .arg(name)
                    .arg(size.width())
                    .arg(size.height())
                    .arg(limits.max_side)
                    .arg(static_cast<double>(limits.max_pixels) / 1e6, 0, 'g', 3);
    return out;
  }
  const QImage image = reader.read();
  if (image.isNull()) {
    out.error = QObject::tr("%1 is damaged or truncated (%2).").arg(name, reader.errorString());
    return out;
  }
  out.data = data;
  out.mime_type = mime;
  out.size = image.size();
  out.sha256 = QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
  return out;
}

void AttachmentSource::add_pending(const QString& sha256, const QByteArray& data) {
  std::lock_guard lock(mutex_);
  pending_[sha256] = data;
}

void AttachmentSource::remove_pending(const QString& sha256) {
  std::lock_guard lock(mutex_);
  pending_.erase(sha256);
}

void AttachmentSource::set_store(storage::HistoryStore* store) {
  std::lock_guard lock(mutex_);
  store_ = store;
}

QByteArray AttachmentSource::bytes(const QString& sha256) {
  std::lock_guard lock(mutex_);
  if (const auto it = pending_.find(sha256); it != pending_.end()) return it->second;
  if (store_ == nullptr) return {};
  // Runs on a QML image loader thread, never the GUI thread: waiting here is fine, and holding
  // the lock keeps the store alive until set_store(nullptr) returns.
  auto result = store_->attachment_data(sha256.toStdString()).get();
  if (!result.is_ok()) return {};
  return QByteArray::fromStdString(result.value());
}

AttachmentImageProvider::AttachmentImageProvider(std::shared_ptr<AttachmentSource> source)
    : QQuickImageProvider(QQuickImageProvider::Image, QQmlImageProviderBase::ForceAsynchronousImageLoading),
      source_(std::move(source)) {}

QImage AttachmentImageProvider::requestImage(const QString& id, QSize* size, const QSize& requested_size) {
  const QByteArray data = source_->bytes(id.section(u'/', 0, 0));
  QBuffer buffer;
  buffer.setData(data);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer);
  reader.setAllocationLimit(256);
  reader.setAutoTransform(true);
  const QSize full = reader.size();
  if (full.isValid() && requested_size.isValid() && !requested_size.isEmpty()) {
    reader.setScaledSize(full.scaled(requested_size.boundedTo(full), Qt::KeepAspectRatio));
  }
  QImage image = reader.read();
  if (size) *size = image.size();
  return image;
}

}  // namespace day0::app
