#include "storage/history_store.h"

#include <sqlite3.h>

#include "storage/codec.h"

namespace day0::storage {

HistoryStore::HistoryStore(std::filesystem::path path, StoreOptions options) : options_(std::move(options)) {
  thread_ = std::thread([this, path = std::move(path)] { thread_main(path); });
}

HistoryStore::~HistoryStore() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void HistoryStore::enqueue(Job job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_all();
}

void HistoryStore::thread_main(std::filesystem::path path) {
  auto opened = open_history_database(path, options_.open);
  if (opened) {
    db_ = std::make_unique<HistoryDb>(std::move(opened->db));
    open_report_ = std::move(opened->report);
  } else {
    open_error_ = opened.error();
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!jobs_.empty()) {
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      // Buffered text first, so that the job sees it and calls keep their order.
      (void)flush_pending();
      job(db_.get(), open_error_ ? &*open_error_ : nullptr);
      lock.lock();
      continue;
    }
    const bool due = pending_since_ && std::chrono::steady_clock::now() >= *pending_since_ + options_.flush_interval;
    if (due || (stopping_ && !pending_.empty())) {
      lock.unlock();
      (void)flush_pending();
      lock.lock();
      // Text that stays buffered (a partial character, a transient failure) waits another interval.
      if (stopping_) break;
      continue;
    }
    if (stopping_) break;
    if (pending_since_)
      wake_.wait_until(lock, *pending_since_ + options_.flush_interval);
    else
      wake_.wait(lock);
  }
}

void HistoryStore::append_reply(std::int64_t message_id, std::string_view content, std::string_view reasoning) {
  if (content.empty() && reasoning.empty()) return;
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    Pending& p = pending_[message_id];
    p.content.append(content);
    p.reasoning.append(reasoning);
    if (!pending_since_) {
      pending_since_ = std::chrono::steady_clock::now();
      first = true;
    }
  }
  // The thread sleeps until a job arrives or the pending deadline passes; a new deadline
  // must wake it so it can sleep until that deadline instead.
  if (first) wake_.notify_all();
}

namespace {

// Failures that may pass (another process holds the lock, the disk is full, an I/O error):
// the text is kept and retried. Anything else means the reply cannot take the text.
bool is_transient(const StoreError& e) {
  return e.sqlite_code == SQLITE_BUSY || e.sqlite_code == SQLITE_LOCKED || e.sqlite_code == SQLITE_FULL ||
         e.sqlite_code == SQLITE_IOERR || e.sqlite_code == SQLITE_NOMEM;
}

}  // namespace

StoreStatus HistoryStore::flush_pending(std::optional<std::int64_t> finishing, Pending* rest) {
  std::map<std::int64_t, Pending> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(pending_);
    pending_since_.reset();
  }
  if (finishing && rest) {
    if (auto it = taken.find(*finishing); it != taken.end()) {
      *rest = std::move(it->second);
      taken.erase(it);
    }
  }
  std::vector<ReplyDelta> deltas;
  std::map<std::int64_t, Pending> held;  // incomplete characters, back into the buffer
  for (auto& [id, p] : taken) {
    ReplyDelta d{id, {}, {}};
    const std::size_t c = utf8_complete_prefix(p.content), r = utf8_complete_prefix(p.reasoning);
    if (c < p.content.size() || r < p.reasoning.size()) held[id] = {p.content.substr(c), p.reasoning.substr(r)};
    d.content = p.content.substr(0, c);
    d.reasoning = p.reasoning.substr(0, r);
    if (!d.content.empty() || !d.reasoning.empty()) deltas.push_back(std::move(d));
  }
  StoreStatus status = Ok{};
  std::vector<ReplyCommit> commits;
  if (!deltas.empty()) {
    if (!db_) {
      status = open_error_ ? *open_error_ : store_error("no database");
      if (options_.on_background_error) options_.on_background_error(status.error());
    } else if (auto r = db_->append_reply(deltas); r) {
      commits = std::move(r).value();
    } else {
      // One reply that cannot take its text must not hold back the others: retry one by one.
      status = r.error();
      for (auto& d : deltas) {
        auto one = db_->append_reply({d});
        if (one) {
          commits.insert(commits.end(), one->begin(), one->end());
          continue;
        }
        if (options_.on_background_error) options_.on_background_error(one.error());
        if (is_transient(one.error())) {
          Pending& back = held[d.message_id];
          back.content.insert(0, d.content);
          back.reasoning.insert(0, d.reasoning);
        }
      }
    }
  }
  if (!held.empty()) {
    std::lock_guard lock(mutex_);
    for (auto& [id, h] : held) {
      Pending& p = pending_[id];
      p.content.insert(0, h.content);
      p.reasoning.insert(0, h.reasoning);
    }
    if (!pending_since_) pending_since_ = std::chrono::steady_clock::now();
  }
  if (!commits.empty() && options_.on_reply_commit) options_.on_reply_commit(commits);
  if (!status && !unreported_flush_error_) unreported_flush_error_ = status.error();
  return status;
}

// --- the typed calls ------------------------------------------------------------------------

HistoryStore::Future<OpenReport> HistoryStore::open_report(Done<OpenReport> done) {
  return run<OpenReport>([this](HistoryDb&) -> StoreResult<OpenReport> { return open_report_; }, std::move(done));
}

HistoryStore::Future<Conversation> HistoryStore::create_conversation(NewConversation c, Done<Conversation> done) {
  return run<Conversation>([c = std::move(c)](HistoryDb& db) { return db.create_conversation(c); }, std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::update_conversation(std::int64_t id, ConversationPatch patch, Done<Ok> done) {
  return run<Ok>([id, patch = std::move(patch)](HistoryDb& db) { return db.update_conversation(id, patch); },
                 std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::delete_conversation(std::int64_t id, Done<Ok> done) {
  return run<Ok>([id](HistoryDb& db) { return db.delete_conversation(id); }, std::move(done));
}

HistoryStore::Future<std::vector<Conversation>> HistoryStore::list_conversations(ListOptions options,
                                                                                 Done<std::vector<Conversation>> done) {
  return run<std::vector<Conversation>>([options](HistoryDb& db) { return db.list_conversations(options); },
                                        std::move(done));
}

HistoryStore::Future<Conversation> HistoryStore::conversation(std::int64_t id, Done<Conversation> done) {
  return run<Conversation>([id](HistoryDb& db) { return db.conversation(id); }, std::move(done));
}

HistoryStore::Future<Conversation> HistoryStore::find_conversation(std::string reference, Done<Conversation> done) {
  return run<Conversation>(
      [reference = std::move(reference)](HistoryDb& db) { return db.find_conversation(reference); }, std::move(done));
}

HistoryStore::Future<std::vector<Message>> HistoryStore::messages(std::int64_t conversation_id,
                                                                  Done<std::vector<Message>> done) {
  return run<std::vector<Message>>([conversation_id](HistoryDb& db) { return db.messages(conversation_id); },
                                   std::move(done));
}

HistoryStore::Future<std::vector<Message>> HistoryStore::path_to(std::int64_t message_id,
                                                                 Done<std::vector<Message>> done) {
  return run<std::vector<Message>>([message_id](HistoryDb& db) { return db.path_to(message_id); }, std::move(done));
}

HistoryStore::Future<Message> HistoryStore::add_message(NewMessage m, Done<Message> done) {
  return run<Message>([m = std::move(m)](HistoryDb& db) { return db.add_message(m); }, std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::delete_message(std::int64_t id, Done<Ok> done) {
  return run<Ok>([id](HistoryDb& db) { return db.delete_message(id); }, std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::set_system_prompt(std::int64_t conversation_id, std::string text,
                                                         Done<Ok> done) {
  return run<Ok>(
      [conversation_id, text = std::move(text)](HistoryDb& db) { return db.set_system_prompt(conversation_id, text); },
      std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::edit_message(std::int64_t id, std::string content, Done<Ok> done) {
  return run<Ok>([id, content = std::move(content)](HistoryDb& db) { return db.edit_message(id, content); },
                 std::move(done));
}

HistoryStore::Future<Conversation> HistoryStore::duplicate_conversation(std::int64_t id, std::string title,
                                                                        Done<Conversation> done) {
  return run<Conversation>(
      [id, title = std::move(title)](HistoryDb& db) { return storage::duplicate_conversation(db, id, title); },
      std::move(done));
}

HistoryStore::Future<std::string> HistoryStore::attachment_data(std::string sha256, Done<std::string> done) {
  return run<std::string>([sha256 = std::move(sha256)](HistoryDb& db) { return db.attachment_data(sha256); },
                          std::move(done));
}

HistoryStore::Future<Message> HistoryStore::begin_reply(NewReply r, Done<Message> done) {
  return run<Message>([r = std::move(r)](HistoryDb& db) { return db.begin_reply(r); }, std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::finish_reply(std::int64_t message_id, ReplyEnd end, Done<Ok> done) {
  return run<Ok>(
      [this, message_id, end = std::move(end)](HistoryDb& db) -> StoreStatus {
        // The job runner committed what was whole; what is left (a character cut off by the
        // end of the stream) goes in with the final state, repaired to U+FFFD.
        Pending rest;
        (void)flush_pending(message_id, &rest);
        std::vector<ReplyDelta> last;
        if (!rest.content.empty() || !rest.reasoning.empty())
          last.push_back({message_id, std::move(rest.content), std::move(rest.reasoning)});
        return db.finish_reply(message_id, end, last);
      },
      std::move(done));
}

HistoryStore::Future<Ok> HistoryStore::flush(Done<Ok> done) {
  return run<Ok>(
      [this](HistoryDb&) -> StoreStatus {
        (void)flush_pending();  // usually nothing left: the job runner flushed before this job
        if (!unreported_flush_error_) return Ok{};
        StoreError e = std::move(*unreported_flush_error_);
        unreported_flush_error_.reset();
        return e;
      },
      std::move(done));
}

HistoryStore::Future<std::vector<SearchHit>> HistoryStore::search(std::string query, SearchOptions options,
                                                                  Done<std::vector<SearchHit>> done) {
  return run<std::vector<SearchHit>>(
      [query = std::move(query), options](HistoryDb& db) { return db.search(query, options); }, std::move(done));
}

HistoryStore::Future<std::string> HistoryStore::export_json(std::vector<std::int64_t> ids, Done<std::string> done) {
  return run<std::string>([ids = std::move(ids)](HistoryDb& db) { return storage::export_json(db, ids); },
                          std::move(done));
}

HistoryStore::Future<std::string> HistoryStore::export_markdown(std::vector<std::int64_t> ids, Done<std::string> done) {
  return run<std::string>([ids = std::move(ids)](HistoryDb& db) { return storage::export_markdown(db, ids); },
                          std::move(done));
}

HistoryStore::Future<ImportReport> HistoryStore::import_json(std::string text, Done<ImportReport> done) {
  return run<ImportReport>([text = std::move(text)](HistoryDb& db) { return storage::import_json(db, text); },
                           std::move(done));
}

}  // namespace day0::storage
