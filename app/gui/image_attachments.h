#pragma once
// Images attached to messages: validated before anything is stored (size, format, pixel
// count; a damaged or hostile file gives a sentence, never a crash), and served to QML as
// image://day0/<sha256> from the composer's pending images or the history database.
#include <QByteArray>
#include <QQuickImageProvider>
#include <QSize>
#include <QString>
#include <map>
#include <memory>
#include <mutex>

namespace day0::storage {
class HistoryStore;
}

namespace day0::app {

struct ImageLimits {
  qint64 max_bytes = 20ll << 20;   // 20 MiB per file
  int max_side = 8192;             // pixels, either side
  qint64 max_pixels = 40'000'000;  // width x height
};

struct ValidatedImage {
  QString error;  // empty: valid; otherwise why the file was refused, naming it
  QByteArray data;
  QString mime_type;  // image/png, image/jpeg, ...
  QString file_name;
  QString sha256;  // lowercase hex of the bytes, as the history stores them
  QSize size;
};

// Checks `data` (named `file_name` in messages) without trusting its extension: the format
// is read from the bytes, the dimensions from the header before decoding, then the whole image
// is decoded under an allocation limit.
ValidatedImage validate_image(const QByteArray& data, const QString& file_name, const ImageLimits& limits = {});

// Thread-safe: the GUI thread adds and removes pending images; QML's image loader threads read.
class AttachmentSource {
 public:
  void add_pending(const QString& sha256, const QByteArray& data);
  void remove_pending(const QString& sha256);
  // The store to read saved attachments from; nullptr detaches (waits for a read in progress).
  void set_store(storage::HistoryStore* store);
  // The image's bytes, from the pending images or the history (empty when unknown).
  QByteArray bytes(const QString& sha256);

 private:
  std::mutex mutex_;
  std::map<QString, QByteArray> pending_;
  storage::HistoryStore* store_ = nullptr;
};

class AttachmentImageProvider : public QQuickImageProvider {
 public:
  explicit AttachmentImageProvider(std::shared_ptr<AttachmentSource> source);
  QImage requestImage(const QString& id, QSize* size, const QSize& requested_size) override;

 private:
  std::shared_ptr<AttachmentSource> source_;
};

}  // namespace day0::app
