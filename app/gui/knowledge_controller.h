#pragma once
// Folders as knowledge in the app: the folder list the Knowledge panel shows, indexing on a
// background thread (progress and a notice with what was skipped), and the context assembly
// of each question on another. Each thread has its own KnowledgeIndex connection to
// knowledge.db beside the history (WAL lets indexing and searching run together); results
// come back to the GUI thread as queued calls, so the properties change only there.
#include <QObject>
#include <QString>
#include <QVariantList>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "knowledge/context.h"

namespace day0::app {

class KnowledgeWorker;

// What one question needs for its context: the documents attached to it (bytes, checked again
// on the worker), the enabled folders, and the figures of the budget.
struct AssemblyRequest {
  std::string question;
  std::vector<std::pair<std::string, std::string>> documents;  // name, bytes
  std::vector<std::int64_t> folders;
  bool whole_folders = false;
  std::vector<std::string> conversation;  // texts of the messages before it, as sent
  std::int64_t context_window = 0;
  std::int64_t reply_reserve = 0;
  knowledge::TokenCounter count;
};

struct AssemblyResult {
  knowledge::AssembledContext context;
  std::int64_t budget = 0;
  QString error;  // the index could not be searched (the context then holds the documents only)
};

class KnowledgeController : public QObject {
  Q_OBJECT
  Q_PROPERTY(QVariantList folders READ folders NOTIFY foldersChanged)
  Q_PROPERTY(bool indexing READ indexing NOTIFY indexingChanged)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)  // 0..1; -1 while the files are counted
  Q_PROPERTY(QString progressText READ progressText NOTIFY progressChanged)
  Q_PROPERTY(QString databasePath READ databasePath CONSTANT)

 public:
  explicit KnowledgeController(const QString& databasePath, QObject* parent = nullptr);
  ~KnowledgeController() override;

  QVariantList folders() const { return folders_; }
  bool indexing() const { return indexingCount_ > 0; }
  double progress() const { return progress_; }
  QString progressText() const { return progressText_; }
  QString databasePath() const { return databasePath_; }
  // The folder's display name ("day0" for /home/me/src/day0); empty when unknown.
  QString folderName(qint64 id) const;

  // Adds a folder (a file URL or a path) and indexes it.
  Q_INVOKABLE void addFolder(const QVariant& folder);
  Q_INVOKABLE void reindex(qint64 id);
  Q_INVOKABLE void removeFolder(qint64 id);
  Q_INVOKABLE void cancelIndexing();
  Q_INVOKABLE void refresh();

  // Assembles the context on the query thread; `done` runs on the GUI thread.
  void assemble(AssemblyRequest request, std::function<void(const AssemblyResult&)> done);

 signals:
  void foldersChanged();
  void indexingChanged();
  void progressChanged();
  void folderIndexed(qint64 id, bool ok);
  void folderRemoved(qint64 id);
  void errorOccurred(const QString& message);
  void noticeOccurred(const QString& message);

 private:
  void startIndexing(qint64 id, const QString& name);
  void setFolders(const std::vector<knowledge::Folder>& folders);
  void reportOpenError(const QString& openError);

  QString databasePath_;
  std::unique_ptr<KnowledgeWorker> query_;    // list, add, remove, search
  std::unique_ptr<KnowledgeWorker> indexer_;  // indexing, one folder at a time
  std::shared_ptr<std::atomic<bool>> cancel_;
  QVariantList folders_;
  QList<qint64> indexingIds_;
  int indexingCount_ = 0;
  double progress_ = 0;
  QString progressText_;
};

}  // namespace day0::app
