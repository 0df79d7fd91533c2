#pragma once
// The conversation history over one connection, synchronously. Not thread-safe: it lives on
// the thread that opened it (HistoryStore's worker in the app and day0-cli; tests may use it
// directly). Every write is one transaction, so a committed call survives a crash or power
// loss (synchronous=FULL).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/database.h"
#include "storage/history_types.h"

namespace day0::storage {

class HistoryDb {
 public:
  // `db` must be migrated to the latest schema (open_history_database does both).
  explicit HistoryDb(Database db) : db_(std::move(db)) {}

  Database& database() { return db_; }

  // --- conversations ------------------------------------------------------------------------
  StoreResult<Conversation> create_conversation(const NewConversation& c);
  // updated_at is not changed: it is the time of the last message, which orders the list.
  StoreStatus update_conversation(std::int64_t id, const ConversationPatch& patch);
  // Deletes its messages and attachments too, and any attachment bytes no longer used.
  StoreStatus delete_conversation(std::int64_t id);
  // --- presets: named chat settings, by name (case-sensitive) ------------------------------
  // Adds the preset or replaces the one with this name; `settings` must be an object.
  StoreStatus save_preset(std::string_view name, const nlohmann::json& settings);
  StoreStatus delete_preset(std::string_view name);
  // By name.
  StoreResult<std::vector<Preset>> presets();

  // Pinned first, then the most recently updated.
  StoreResult<std::vector<Conversation>> list_conversations(const ListOptions& options = {});
  StoreResult<Conversation> conversation(std::int64_t id);
  // By row id ("12"), uuid, or a uuid prefix of at least 4 characters that only one has.
  StoreResult<Conversation> find_conversation(std::string_view reference);

  // --- messages -----------------------------------------------------------------------------
  // Every message of every branch, in the order they were written, each after its parent (a
  // system prompt given later, see set_system_prompt, comes before the messages it leads).
  StoreResult<std::vector<Message>> messages(std::int64_t conversation_id);
  StoreResult<Message> message(std::int64_t id);
  // The branch that ends at `message_id`, from the root: what a reply to it is conditioned on.
  StoreResult<std::vector<Message>> path_to(std::int64_t message_id);
  // Commits a finished message (typically the user's, with its images) at once.
  StoreResult<Message> add_message(const NewMessage& m);
  // Deletes the message and every reply below it.
  StoreStatus delete_message(std::int64_t id);
  // Replaces a message's text (an edited reply); the search index follows.
  StoreStatus edit_message(std::int64_t id, std::string_view content);
  // Makes the conversation's leading system message say `text`: its text replaced; a system
  // message put before the first messages when there was none; removed (the messages after it
  // moving up to the top) when `text` is empty. The conversation's settings are not touched.
  StoreStatus set_system_prompt(std::int64_t conversation_id, std::string_view text);
  StoreResult<std::string> attachment_data(std::string_view sha256);

  // --- a streaming reply --------------------------------------------------------------------
  // An empty assistant message in state incomplete, committed: from here on a crash leaves
  // whatever text was appended, still marked incomplete. It carries the sources of the user
  // message it answers (Message::sources), so the answer shows what informed it.
  StoreResult<Message> begin_reply(const NewReply& r);
  // Appends to replies that are incomplete, all in one transaction. Text must be whole UTF-8
  // characters (HistoryStore holds back a character split between deltas).
  StoreResult<std::vector<ReplyCommit>> append_reply(const std::vector<ReplyDelta>& deltas);
  // Appends the last text and sets the final state and statistics, in one transaction.
  StoreStatus finish_reply(std::int64_t message_id, const ReplyEnd& end, const std::vector<ReplyDelta>& last = {});

  // --- search -------------------------------------------------------------------------------
  // Finds conversations whose title, and messages whose text or reasoning, contain every
  // word of `query` (case-insensitive for Latin letters; any script, CJK included; "quoted
  // phrases" keep their spaces). Title hits come first, then messages by relevance.
  StoreResult<std::vector<SearchHit>> search(std::string_view query, const SearchOptions& options = {});

 private:
  StoreStatus touch_conversation(std::int64_t id, std::int64_t now);
  StoreResult<std::vector<ReplyCommit>> append_in_transaction(const std::vector<ReplyDelta>& deltas);
  StoreResult<std::vector<Attachment>> attachments_of(std::int64_t message_id);
  StoreResult<std::vector<SearchHit>> search_titles(const std::vector<std::string>& terms,
                                                    const SearchOptions& options);
  StoreResult<std::vector<SearchHit>> search_messages(const std::vector<std::string>& terms,
                                                      const SearchOptions& options);
  Database db_;
};

std::int64_t now_ms();

}  // namespace day0::storage
