#pragma once
// The conversation history on its own thread. Every call returns at once: the work runs on
// the store thread, in order, over the one connection that thread opened. Results come back
//  - as a std::future, for day0-cli and tests (`.get()` waits), and
//  - through an optional callback `done`, called on the store thread with the result before
//    the future becomes ready. The app's bridge posts it to the GUI thread (a queued signal),
//    so the GUI thread never waits; it may drop the future (it does not block).
// Callbacks must be quick and must not wait on a future of this store (that would deadlock
// its thread); they may make further calls.
//
// A streaming reply: begin_reply (committed at once, state incomplete), then append_reply per
// token, which only buffers; the store thread commits the buffered text in one transaction
// at most `flush_interval` (250 ms) after it arrived, and finish_reply commits the rest with
// the final state and statistics. A crash loses at most the last interval of text, and the
// reply stays marked incomplete.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "storage/history_db.h"
#include "storage/open_history.h"
#include "storage/transfer.h"

namespace day0::storage {

struct StoreOptions {
  OpenOptions open;
  std::chrono::milliseconds flush_interval{250};
  // Called on the store thread after streamed text was committed.
  std::function<void(const std::vector<ReplyCommit>&)> on_reply_commit;
  // Called on the store thread when committing streamed text fails. Text of a reply that can
  // no longer take it (finished, deleted) is dropped; after a transient failure (disk full,
  // I/O, busy) it is kept and retried.
  std::function<void(const StoreError&)> on_background_error;
};

class HistoryStore {
 public:
  template <typename T>
  using Future = std::future<StoreResult<T>>;
  template <typename T>
  using Done = std::function<void(const StoreResult<T>&)>;

  // Starts the store thread, which opens the database (open_history_database: checks,
  // recovers, backs up, migrates). Returns at once.
  explicit HistoryStore(std::filesystem::path path, StoreOptions options = {});
  // Commits buffered reply text, runs the calls already queued, and stops the thread.
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // What opening found and did (recovery, backups), or why the database could not be opened
  // (then every call fails with that error).
  Future<OpenReport> open_report(Done<OpenReport> done = {});

  Future<Conversation> create_conversation(NewConversation c, Done<Conversation> done = {});
  Future<Ok> update_conversation(std::int64_t id, ConversationPatch patch, Done<Ok> done = {});
  Future<Ok> delete_conversation(std::int64_t id, Done<Ok> done = {});
  Future<std::vector<Conversation>> list_conversations(ListOptions options = {},
                                                       Done<std::vector<Conversation>> done = {});
  Future<Conversation> conversation(std::int64_t id, Done<Conversation> done = {});
  Future<Conversation> find_conversation(std::string reference, Done<Conversation> done = {});

  Future<std::vector<Message>> messages(std::int64_t conversation_id, Done<std::vector<Message>> done = {});
  Future<std::vector<Message>> path_to(std::int64_t message_id, Done<std::vector<Message>> done = {});
  Future<Message> add_message(NewMessage m, Done<Message> done = {});
  Future<Ok> delete_message(std::int64_t id, Done<Ok> done = {});
  Future<Ok> edit_message(std::int64_t id, std::string content, Done<Ok> done = {});
  Future<Ok> set_system_prompt(std::int64_t conversation_id, std::string text, Done<Ok> done = {});
  Future<std::string> attachment_data(std::string sha256, Done<std::string> done = {});

  Future<Message> begin_reply(NewReply r, Done<Message> done = {});
  // Buffers text for a reply begun with begin_reply; never waits. A UTF-8 character split
  // between two calls is held back until it is whole.
  void append_reply(std::int64_t message_id, std::string_view content, std::string_view reasoning = {});
  Future<Ok> finish_reply(std::int64_t message_id, ReplyEnd end, Done<Ok> done = {});
  // Commits buffered reply text now. The result is the first failure of any commit of
  // buffered text since the previous flush() (also reported to on_background_error), else Ok.
  Future<Ok> flush(Done<Ok> done = {});

  Future<std::vector<SearchHit>> search(std::string query, SearchOptions options = {},
                                        Done<std::vector<SearchHit>> done = {});
  Future<std::string> export_json(std::vector<std::int64_t> conversation_ids = {}, Done<std::string> done = {});
  Future<std::string> export_markdown(std::vector<std::int64_t> conversation_ids = {}, Done<std::string> done = {});
  Future<ImportReport> import_json(std::string text, Done<ImportReport> done = {});
  Future<Conversation> duplicate_conversation(std::int64_t id, std::string title, Done<Conversation> done = {});

  // Runs `job` on the store thread with the open database, for what the calls above do not
  // cover. Buffered reply text is committed before any job runs, so a job sees all of it.
  template <typename T>
  Future<T> run(std::function<StoreResult<T>(HistoryDb&)> job, Done<T> done = {});

 private:
  using Job = std::function<void(HistoryDb* db, const StoreError* open_error)>;
  struct Pending {
    std::string content;
    std::string reasoning;
  };

  void enqueue(Job job);
  void thread_main(std::filesystem::path path);
  // Commits buffered text (store thread). Characters still incomplete stay buffered unless
  // `message_id` names the reply being finished, whose remaining text is returned instead.
  StoreStatus flush_pending(std::optional<std::int64_t> finishing = std::nullopt, Pending* rest = nullptr);

  StoreOptions options_;
  std::unique_ptr<HistoryDb> db_;  // store thread only
  std::optional<StoreError> open_error_;
  std::optional<StoreError> unreported_flush_error_;  // store thread only
  OpenReport open_report_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::map<std::int64_t, Pending> pending_;
  std::optional<std::chrono::steady_clock::time_point> pending_since_;
  bool stopping_ = false;
  std::thread thread_;
};

template <typename T>
HistoryStore::Future<T> HistoryStore::run(std::function<StoreResult<T>(HistoryDb&)> job, Done<T> done) {
  auto promise = std::make_shared<std::promise<StoreResult<T>>>();
  Future<T> future = promise->get_future();
  enqueue([promise, job = std::move(job), done = std::move(done)](HistoryDb* db, const StoreError* open_error) {
    StoreResult<T> result = open_error ? StoreResult<T>(*open_error) : StoreResult<T>(store_error("no database"));
    if (db) {
      try {
        result = job(*db);
      } catch (const std::exception& e) {
        result = store_error(std::string("history store: unexpected failure: ") + e.what());
      }
    }
    if (done) {
      try {
        done(result);
      } catch (...) {
        // A failing callback must not leave the future without a value.
      }
    }
    promise->set_value(std::move(result));
  });
  return future;
}

}  // namespace day0::storage
