#include "gui/knowledge_controller.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QMetaObject>
#include <QUrl>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "gui/user_path.h"

namespace day0::app {

// One thread with its own index connection, running jobs in order. The connection is opened
// on the thread at its first job; when that fails, every job gets nullptr and the reason.
class KnowledgeWorker {
 public:
  using Job = std::function<void(knowledge::KnowledgeIndex* index, const QString& openError)>;

  explicit KnowledgeWorker(std::string path) : path_(std::move(path)), thread_([this]() { run(); }) {}
  ~KnowledgeWorker() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void post(Job job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    wake_.notify_all();
  }

 private:
  void run() {
    std::unique_ptr<knowledge::KnowledgeIndex> index;
    QString openError;
    bool opened = false;
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this]() { return stopping_ || !jobs_.empty(); });
        // Jobs already queued still run (they only post results), unless stopping.
        if (stopping_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      if (!opened) {
        opened = true;
        auto r = knowledge::KnowledgeIndex::open(path_);
        if (r.ok())
          index = std::move(*r.value);
        else
          openError = QString::fromStdString(r.error.message);
      }
      job(index.get(), openError);
    }
  }

  std::string path_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString indexedText(std::int64_t ms) {
  if (ms <= 0) return QObject::tr("not indexed yet");
  const QDateTime at = QDateTime::fromMSecsSinceEpoch(ms);
  const qint64 seconds = at.secsTo(QDateTime::currentDateTime());
  if (seconds < 60) return QObject::tr("indexed just now");
  if (seconds < 3600) return QObject::tr("indexed %1 min ago").arg(seconds / 60);
  if (seconds < 86400) return QObject::tr("indexed %1 h ago").arg(seconds / 3600);
  return QObject::tr("indexed %1").arg(QLocale().toString(at.date(), QLocale::ShortFormat));
}

// "3 skipped (2 binary, 1 too large)": the reasons' first words, counted.
QString skippedText(const std::vector<knowledge::SkippedFile>& skipped) {
  if (skipped.empty()) return {};
  std::map<QString, int> reasons;
  for (const auto& s : skipped) {
    QString r = qs(s.reason).section(u'(', 0, 0).section(u':', 0, 0).trimmed();
    ++reasons[r.isEmpty() ? QObject::tr("other") : r];
  }
  QStringList parts;
  for (const auto& [r, n] : reasons) parts << QStringLiteral("%1 %2").arg(n).arg(r);
  return QObject::tr("%1 skipped (%2)").arg(skipped.size()).arg(parts.join(QStringLiteral(", ")));
}

}  // namespace

KnowledgeController::KnowledgeController(const QString& databasePath, QObject* parent)
    : QObject(parent),
      databasePath_(databasePath),
      query_(std::make_unique<KnowledgeWorker>(databasePath.toStdString())),
      indexer_(std::make_unique<KnowledgeWorker>(databasePath.toStdString())),
      cancel_(std::make_shared<std::atomic<bool>>(false)) {
  refresh();
}

KnowledgeController::~KnowledgeController() {
  // Indexing stops between files; the index stays consistent. Results still queued to this
  // object are discarded with it.
  cancel_->store(true);
  indexer_.reset();
  query_.reset();
}

QString KnowledgeController::folderName(qint64 id) const {
  for (const QVariant& v : folders_) {
    const QVariantMap m = v.toMap();
    if (m.value(QStringLiteral("id")).toLongLong() == id) return m.value(QStringLiteral("name")).toString();
  }
  return {};
}

void KnowledgeController::setFolders(const std::vector<knowledge::Folder>& folders) {
  QVariantList list;
  const QLocale locale = QLocale::c();
  for (const auto& f : folders) {
    const QString path = qs(f.path);
    QString name = QFileInfo(path).fileName();
    if (name.isEmpty()) name = path;
    list.append(QVariantMap{{QStringLiteral("id"), static_cast<qlonglong>(f.id)},
                            {QStringLiteral("path"), path},
                            {QStringLiteral("name"), name},
                            {QStringLiteral("files"), static_cast<qlonglong>(f.files)},
                            {QStringLiteral("chunks"), static_cast<qlonglong>(f.chunks)},
                            {QStringLiteral("sizeText"), locale.formattedDataSize(f.text_bytes)},
                            {QStringLiteral("indexedText"), indexedText(f.indexed_at)},
                            {QStringLiteral("indexing"), indexingIds_.contains(f.id)}});
  }
  folders_ = list;
  emit foldersChanged();
}

// From a worker thread: the index could not be opened, said on the GUI thread.
void KnowledgeController::reportOpenError(const QString& openError) {
  QMetaObject::invokeMethod(
      this, [this, openError]() { emit errorOccurred(tr("The knowledge index cannot be opened: %1").arg(openError)); },
      Qt::QueuedConnection);
}

void KnowledgeController::refresh() {
  query_->post([this](knowledge::KnowledgeIndex* index, const QString& openError) {
    if (!index) {
      reportOpenError(openError);
      return;
    }
    auto r = index->folders();
    if (!r.ok()) return;
    QMetaObject::invokeMethod(
        this, [this, folders = std::move(*r.value)]() { setFolders(folders); }, Qt::QueuedConnection);
  });
}

void KnowledgeController::addFolder(const QVariant& folder) {
  const QString path = localPathFromUser(folder);
  const QFileInfo info(path);
  if (path.isEmpty() || !info.isDir()) {
    emit errorOccurred(tr("%1 is not a folder.").arg(path.isEmpty() ? tr("This") : path));
    return;
  }
  const std::string dir = QDir(info.absoluteFilePath()).canonicalPath().toStdString();
  query_->post([this, dir](knowledge::KnowledgeIndex* index, const QString& openError) {
    if (!index) {
      reportOpenError(openError);
      return;
    }
    auto added = index->add_folder(dir);
    auto all = index->folders();
    QMetaObject::invokeMethod(
        this,
        [this, ok = added.ok(), folder = added.value.value_or(knowledge::Folder{}), message = qs(added.error.message),
         all = all.value.value_or(std::vector<knowledge::Folder>{})]() {
          if (!ok) {
            emit errorOccurred(tr("The folder cannot be added: %1").arg(message));
            return;
          }
          setFolders(all);
          startIndexing(folder.id, QFileInfo(qs(folder.path)).fileName());
        },
        Qt::QueuedConnection);
  });
}

void KnowledgeController::reindex(qint64 id) {
  if (indexingIds_.contains(id)) return;
  startIndexing(id, folderName(id));
}

void KnowledgeController::startIndexing(qint64 id, const QString& name) {
  indexingIds_.append(id);
  if (indexingCount_++ == 0) {
    cancel_->store(false);
    emit indexingChanged();
  }
  progress_ = -1;
  progressText_ = tr("Reading %1…").arg(name);
  emit progressChanged();
  refresh();
  auto cancel = cancel_;
  indexer_->post([this, id, name, cancel](knowledge::KnowledgeIndex* index, const QString& openError) {
    knowledge::IndexResult<knowledge::IndexReport> report;
    if (!index) {
      report.error.message = openError.toStdString();
    } else {
      auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
      report = index->index_folder(
          id, {},
          [&](const knowledge::IndexProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            if (now - last < std::chrono::milliseconds(100)) return;
            last = now;
            const double fraction =
                p.files_total > 0 ? static_cast<double>(p.files_done) / static_cast<double>(p.files_total) : -1.0;
            const QString text = p.files_total > 0
                                     ? tr("Indexing %1: %2 of %3 files").arg(name).arg(p.files_done).arg(p.files_total)
                                     : tr("Reading %1…").arg(name);
            QMetaObject::invokeMethod(
                this,
                [this, fraction, text]() {
                  progress_ = fraction;
                  progressText_ = text;
                  emit progressChanged();
                },
                Qt::QueuedConnection);
          },
          cancel.get());
    }
    QMetaObject::invokeMethod(
        this,
        [this, id, name, report = std::move(report)]() {
          indexingIds_.removeOne(id);
          if (--indexingCount_ == 0) {
            progress_ = 0;
            progressText_.clear();
            emit progressChanged();
            emit indexingChanged();
          }
          if (!report.ok()) {
            emit errorOccurred(tr("%1 cannot be indexed: %2").arg(name, qs(report.error.message)));
          } else if (report.value->cancelled) {
            emit noticeOccurred(tr("Indexing %1 was stopped; what was read so far is searchable.").arg(name));
          } else {
            const auto& r = *report.value;
            const auto files = r.files_seen - static_cast<std::int64_t>(r.skipped.size());
            QString text =
                files == 1 ? tr("%1 is indexed: 1 file").arg(name) : tr("%1 is indexed: %2 files").arg(name).arg(files);
            text += r.chunks_total == 1 ? tr(", 1 chunk") : tr(", %1 chunks").arg(r.chunks_total);
            const QString skipped = skippedText(r.skipped);
            if (!skipped.isEmpty()) text += QStringLiteral("; ") + skipped;
            emit noticeOccurred(text + QLatin1Char('.'));
          }
          refresh();
          emit folderIndexed(id, report.ok() && !report.value->cancelled);
        },
        Qt::QueuedConnection);
  });
}

void KnowledgeController::cancelIndexing() {
  if (indexingCount_ > 0) cancel_->store(true);
}

void KnowledgeController::removeFolder(qint64 id) {
  if (indexingIds_.contains(id)) cancel_->store(true);
  // On the indexer's thread, after any indexing of it has stopped.
  indexer_->post([this, id](knowledge::KnowledgeIndex* index, const QString& openError) {
    QString error = openError;
    if (index) {
      auto r = index->remove_folder(id);
      if (!r.ok()) error = qs(r.error.message);
    }
    QMetaObject::invokeMethod(
        this,
        [this, id, error]() {
          if (!error.isEmpty())
            emit errorOccurred(tr("The folder cannot be removed: %1").arg(error));
          else
            emit folderRemoved(id);
          refresh();
        },
        Qt::QueuedConnection);
  });
}

void KnowledgeController::assemble(AssemblyRequest request, std::function<void(const AssemblyResult&)> done) {
  query_->post([this, request = std::move(request), done = std::move(done)](knowledge::KnowledgeIndex* index,
                                                                            const QString& openError) {
    AssemblyResult result;
    std::int64_t conversation = 0;
    // Each message also costs its role markers: a few tokens.
    for (const auto& text : request.conversation) conversation += request.count(text) + 8;
    result.budget = knowledge::context_budget(
        {request.context_window, conversation + request.count(request.question), request.reply_reserve});
    knowledge::ContextRequest c;
    c.question = request.question;
    for (const auto& [name, bytes] : request.documents) {
      auto read = knowledge::read_document_bytes(bytes, name);
      if (read.ok) c.documents.push_back(std::move(read.document));
    }
    c.folders = request.folders;
    c.whole_folders = request.whole_folders;
    c.budget_tokens = result.budget;
    if (!c.folders.empty() && !index) {
      result.error = openError;
      c.folders.clear();
    }
    if (index) {
      auto built = knowledge::build_context(*index, c, request.count);
      if (built.ok()) {
        result.context = std::move(*built.value);
      } else {
        result.error = qs(built.error.message);
        c.folders.clear();
      }
    }
    if (!index || !result.error.isEmpty()) {
      knowledge::ContextInput input;
      input.question = c.question;
      input.documents = std::move(c.documents);
      input.budget_tokens = c.budget_tokens;
      result.context = knowledge::assemble_context(input, request.count);
    }
    QMetaObject::invokeMethod(
        this, [done, result = std::move(result)]() { done(result); }, Qt::QueuedConnection);
  });
}

}  // namespace day0::app
