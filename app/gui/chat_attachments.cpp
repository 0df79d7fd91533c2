// ChatController: the composer's pending images and documents (files, drops, the clipboard).
#include <QBuffer>
#include <QClipboard>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QLocale>
#include <QMimeData>
#include <QPointer>
#include <QThreadPool>
#include <algorithm>

#include "gui/chat_controller.h"
#include "gui/chat_internal.h"
#include "gui/user_path.h"

namespace day0::app {
namespace {

constexpr int kMaxImagesPerMessage = 8;
constexpr int kMaxDocumentsPerMessage = 10;
// Documents larger than this are read and checked on a pool thread, not the GUI thread.
constexpr qsizetype kReadInBackgroundBytes = 2 << 20;
// Pasted text this long becomes an attached document rather than text in the composer.
constexpr int kLongPasteChars = 10000;

}  // namespace

QVariantList ChatController::pendingAttachments() const {
  QVariantList list;
  const QLocale locale = QLocale::c();
  for (const auto& p : pending_) {
    list.append(QVariantMap{{QStringLiteral("source"), QStringLiteral("image://day0/") + p.sha256},
                            {QStringLiteral("name"), p.file_name},
                            {QStringLiteral("sizeText"), QStringLiteral("%1 x %2, %3")
                                                             .arg(p.size.width())
                                                             .arg(p.size.height())
                                                             .arg(locale.formattedDataSize(p.data.size()))}});
  }
  return list;
}

QVariantList ChatController::pendingDocuments() const {
  QVariantList list;
  for (const auto& d : pendingDocuments_)
    list.append(document_for_qml(d.file_name, d.mime_type, d.data.size(), d.sha256));
  return list;
}

int ChatController::attachData(const QByteArray& data, const QString& fileName) {
  return looks_like_image(data) ? attachImage(data, fileName) : attachDocument(data, fileName);
}

int ChatController::attachImage(const QByteArray& data, const QString& fileName) {
  if (static_cast<int>(pending_.size()) >= kMaxImagesPerMessage) {
    emit errorOccurred(tr("A message can carry up to %1 images.").arg(kMaxImagesPerMessage));
    return 0;
  }
  ValidatedImage image = validate_image(data, fileName);
  if (!image.error.isEmpty()) {
    emit errorOccurred(image.error);
    return 0;
  }
  for (const auto& p : pending_)
    if (p.sha256 == image.sha256) return 0;
  attachments_->add_pending(image.sha256, image.data);
  pending_.push_back(std::move(image));
  emit pendingAttachmentsChanged();
  return 1;
}

int ChatController::attachDocument(const QByteArray& data, const QString& fileName) {
  if (static_cast<int>(pendingDocuments_.size()) + readingDocuments_ >= kMaxDocumentsPerMessage) {
    emit errorOccurred(tr("A message can carry up to %1 documents.").arg(kMaxDocumentsPerMessage));
    return 0;
  }
  if (data.size() <= kReadInBackgroundBytes) return addDocument(validate_document(data, fileName));
  // A large file (a long PDF takes seconds) is read on a pool thread; its chip appears when
  // it has been checked. The QPointer drops the result when the chat is gone by then.
  ++readingDocuments_;
  emit readingDocumentsChanged();
  QThreadPool::globalInstance()->start([chat = QPointer<ChatController>(this), data, fileName]() {
    ValidatedDocument document = validate_document(data, fileName);
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [chat, document = std::move(document)]() mutable {
          if (!chat) return;
          --chat->readingDocuments_;
          emit chat->readingDocumentsChanged();
          chat->addDocument(std::move(document));
        },
        Qt::QueuedConnection);
  });
  return 0;
}

int ChatController::addDocument(ValidatedDocument document) {
  if (!document.error.isEmpty()) {
    emit errorOccurred(document.error);
    return 0;
  }
  for (const auto& d : pendingDocuments_)
    if (d.sha256 == document.sha256) return 0;
  pendingDocuments_.push_back(std::move(document));
  emit pendingAttachmentsChanged();
  return 1;
}

int ChatController::attachUrls(const QVariantList& urls) {
  int added = 0;
  const ImageLimits imageLimits;
  const DocumentAttachmentLimits documentLimits;
  const qint64 maxBytes =
      std::max({imageLimits.max_bytes, documentLimits.max_pdf_bytes, documentLimits.max_text_bytes});
  for (const QVariant& v : urls) {
    const QString path = localPathFromUser(v);
    if (path.isEmpty()) {
      emit errorOccurred(tr("Type the path of a file to attach."));
      continue;
    }
    const QFileInfo info(path);
    if (info.isDir()) {
      emit errorOccurred(tr("%1 is a folder: add it under Knowledge (in the sidebar) to ask about its files.")
                             .arg(info.fileName().isEmpty() ? path : info.fileName()));
      continue;
    }
    if (!info.isFile()) {
      emit errorOccurred(
          tr("%1 is not a file that can be attached.").arg(info.fileName().isEmpty() ? path : info.fileName()));
      continue;
    }
    if (info.size() > maxBytes) {
      emit errorOccurred(tr("%1 is %2; files up to %3 can be attached.")
                             .arg(info.fileName(), QLocale::c().formattedDataSize(info.size()),
                                  QLocale::c().formattedDataSize(maxBytes)));
      continue;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
      emit errorOccurred(tr("%1 cannot be read: %2").arg(info.fileName(), file.errorString()));
      continue;
    }
    added += attachData(file.read(maxBytes + 1), info.fileName());
  }
  return added;
}

bool ChatController::pasteImage() {
  const QMimeData* mime = QGuiApplication::clipboard()->mimeData();
  if (mime == nullptr) return false;
  if (mime->hasImage()) {
    const QImage image = qvariant_cast<QImage>(mime->imageData());
    if (image.isNull()) return false;
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    attachData(png, tr("pasted image.png"));
    return true;
  }
  if (mime->hasUrls()) {
    QVariantList urls;
    for (const QUrl& u : mime->urls())
      if (u.isLocalFile()) urls << u;
    if (!urls.isEmpty()) {
      attachUrls(urls);
      return true;
    }
  }
  if (mime->hasText()) {
    const QString text = mime->text();
    // Files copied in a file manager can arrive as text: one file:// URL a line.
    const QStringList lines = text.split(u'\n', Qt::SkipEmptyParts);
    QVariantList urls;
    for (const QString& line : lines) {
      const QUrl url(line.trimmed());
      if (!url.isLocalFile()) {
        urls.clear();
        break;
      }
      urls << url;
    }
    if (!urls.isEmpty()) {
      attachUrls(urls);
      return true;
    }
    if (text.size() >= kLongPasteChars) {
      if (attachDocument(text.toUtf8(), tr("pasted text.txt")) > 0)
        emit noticeOccurred(tr("The long text you pasted is attached as a document."));
      return true;
    }
  }
  return false;
}

void ChatController::removeAttachment(int index) {
  if (index < 0 || index >= static_cast<int>(pending_.size())) return;
  attachments_->remove_pending(pending_[static_cast<std::size_t>(index)].sha256);
  pending_.erase(pending_.begin() + index);
  emit pendingAttachmentsChanged();
}

void ChatController::removeDocument(int index) {
  if (index < 0 || index >= static_cast<int>(pendingDocuments_.size())) return;
  pendingDocuments_.erase(pendingDocuments_.begin() + index);
  emit pendingAttachmentsChanged();
}

}  // namespace day0::app
