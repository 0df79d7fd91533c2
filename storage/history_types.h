#pragma once
// The records of the conversation history, as the app and day0-cli see them. Times are Unix
// milliseconds (UTC); text is UTF-8; ids are the database's row ids, uuids the identities
// that survive export and import.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace day0::storage {

enum class Role { system, user, assistant, tool };
// complete: finished normally. incomplete: still streaming, or cut off (crash, cancel).
// error: generation failed; Message::error says why.
enum class MessageState { complete, incomplete, error };

const char* to_string(Role role);
const char* to_string(MessageState state);
std::optional<Role> parse_role(std::string_view text);
std::optional<MessageState> parse_state(std::string_view text);

struct Conversation {
  std::int64_t id = 0;
  std::string uuid;
  std::string title;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  std::string model;
  nlohmann::json settings = nlohmann::json::object();  // sampling and the like, always an object
  bool pinned = false;
  bool archived = false;
  std::int64_t message_count = 0;  // all branches
};

// Attachment bytes are stored once per SHA-256 and shared between messages.
struct Attachment {
  std::string sha256;  // 64 lowercase hex digits
  std::string mime_type;
  std::string file_name;
  std::int64_t size = 0;
  int position = 0;  // order within the message
};

struct ReplyStats {
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
  std::optional<double> ttft_ms;  // time to first token
  std::optional<double> tokens_per_second;
  // Why generation ended: eos, stop_string, max_tokens, cancelled, error; empty when unknown.
  std::string stop_reason;
};

struct Message {
  std::int64_t id = 0;
  std::string uuid;
  std::int64_t conversation_id = 0;
  std::optional<std::int64_t> parent_id;  // the message this one answers or follows
  Role role = Role::user;
  std::string content;
  std::string reasoning;  // the model's thinking, shown apart from the answer
  MessageState state = MessageState::complete;
  std::string error;
  ReplyStats stats;
  std::string model;
  std::int64_t created_at = 0;
  std::vector<Attachment> attachments;
  // A user message sent with knowledge: the excerpts (attached documents, chunks of folders)
  // the model read before `content`, exactly as sent, so a reloaded conversation sends the same
  // prompt; and the sources they cite, a JSON array the app defines (empty when none). A reply
  // to it carries the same sources (begin_reply copies them): the answer they informed.
  std::string context;
  nlohmann::json sources = nlohmann::json::array();
};

struct NewConversation {
  std::string title;
  std::string model;
  nlohmann::json settings = nlohmann::json::object();
};

// Fields left empty are not changed.
struct ConversationPatch {
  std::optional<std::string> title;
  std::optional<std::string> model;
  std::optional<nlohmann::json> settings;
  std::optional<bool> pinned;
  std::optional<bool> archived;
};

struct NewAttachment {
  std::string mime_type;  // e.g. image/png
  std::string file_name;  // a label only; never used as a path
  std::string data;       // the file's bytes
};

struct NewMessage {
  std::int64_t conversation_id = 0;
  std::optional<std::int64_t> parent_id;
  Role role = Role::user;
  std::string content;
  std::string reasoning;
  std::string model;
  std::vector<NewAttachment> attachments;
  std::string context;                               // see Message::context
  nlohmann::json sources = nlohmann::json::array();  // a JSON array
};

// An assistant reply that is about to stream.
struct NewReply {
  std::int64_t conversation_id = 0;
  std::optional<std::int64_t> parent_id;  // usually the user message it answers
  std::string model;
};

// Text to append to a streaming reply.
struct ReplyDelta {
  std::int64_t message_id = 0;
  std::string content;
  std::string reasoning;
};

// Streamed text now on disk: the reply's total lengths after a commit.
struct ReplyCommit {
  std::int64_t message_id = 0;
  std::size_t content_bytes = 0;
  std::size_t reasoning_bytes = 0;
};

struct ReplyEnd {
  MessageState state = MessageState::complete;
  std::string error;  // for MessageState::error
  ReplyStats stats;
};

// Named chat settings (HistoryDb::save_preset).
struct Preset {
  std::string name;
  nlohmann::json settings = nlohmann::json::object();
  std::int64_t updated_at = 0;
};

struct ListOptions {
  bool include_archived = false;
  int limit = -1;  // all
  int offset = 0;
};

struct SearchOptions {
  int limit = 50;
  bool include_archived = true;
};

// A conversation whose title matched (message_id 0) or a message whose text matched.
struct SearchHit {
  std::int64_t conversation_id = 0;
  std::string conversation_uuid;
  std::string conversation_title;
  std::int64_t message_id = 0;
  std::string message_uuid;
  std::optional<Role> role;
  std::int64_t created_at = 0;
  // Up to ~80 characters of the matching text around the first match, on one line; the
  // match itself is snippet.substr(match_offset, match_length) (byte offsets).
  std::string snippet;
  std::size_t match_offset = 0;
  std::size_t match_length = 0;
};

}  // namespace day0::storage
