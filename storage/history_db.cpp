#include "storage/history_db.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "storage/codec.h"
#include "storage/statement.h"
#include "storage/validate.h"

namespace day0::storage {

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

const char* to_string(Role role) {
  switch (role) {
    case Role::system:
      return "system";
    case Role::user:
      return "user";
    case Role::assistant:
      return "assistant";
    case Role::tool:
      return "tool";
  }
  return "user";
}

const char* to_string(MessageState state) {
  switch (state) {
    case MessageState::complete:
      return "complete";
    case MessageState::incomplete:
      return "incomplete";
    case MessageState::error:
      return "error";
  }
  return "complete";
}

std::optional<Role> parse_role(std::string_view text) {
  for (Role r : {Role::system, Role::user, Role::assistant, Role::tool})
    if (text == to_string(r)) return r;
  return std::nullopt;
}

std::optional<MessageState> parse_state(std::string_view text) {
  for (MessageState s : {MessageState::complete, MessageState::incomplete, MessageState::error})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

bool is_valid_mime_type(std::string_view text) {
  if (text.empty() || text.size() > 255) return false;
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    const bool first = i == 0 || i == slash + 1;
    if (i == slash) continue;
    if (alnum) continue;
    if (first || std::string_view("!#$&^_.+-").find(c) == std::string_view::npos) return false;
  }
  return text.find('/', slash + 1) == std::string_view::npos;
}

namespace {

// Settings are stored compact, keys sorted (nlohmann::json's std::map), so the same settings
// always have the same text; strings that are not UTF-8 are repaired rather than refused.
std::string settings_text(const nlohmann::json& settings) {
  return settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json parse_settings(const std::string& text) {
  auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : nlohmann::json::object();
}

StoreStatus check_settings(const nlohmann::json& settings) {
  if (!settings.is_object()) return store_error("conversation settings must be a JSON object");
  if (settings_text(settings).size() > kMaxSettingsBytes)
    return store_error("conversation settings are larger than " + std::to_string(kMaxSettingsBytes) + " bytes");
  return Ok{};
}

nlohmann::json parse_sources(const std::string& text) {
  auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_array() ? value : nlohmann::json::array();
}

StoreStatus check_sources(const nlohmann::json& sources) {
  if (!sources.is_array()) return store_error("a message's sources must be a JSON array");
  if (settings_text(sources).size() > kMaxSettingsBytes)
    return store_error("a message's sources are larger than " + std::to_string(kMaxSettingsBytes) + " bytes");
  return Ok{};
}

StoreStatus check_short(std::string_view what, std::string_view text) {
  if (text.size() > kMaxShortTextBytes)
    return store_error(std::string(what) + " is longer than " + std::to_string(kMaxShortTextBytes) + " bytes");
  return Ok{};
}

StoreStatus check_long(std::string_view what, std::string_view text) {
  if (text.size() > kMaxTextBytes)
    return store_error(std::string(what) + " is longer than " + std::to_string(kMaxTextBytes) + " bytes");
  return Ok{};
}

constexpr const char* kConversationColumns =
    "c.id, c.uuid, c.title, c.created_at, c.updated_at, c.model, c.settings, c.pinned, c.archived, "
    "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)";

Conversation read_conversation(const Statement& s) {
  Conversation c;
  c.id = s.column_int(0);
  c.uuid = s.column_text(1);
  c.title = s.column_text(2);
  c.created_at = s.column_int(3);
  c.updated_at = s.column_int(4);
  c.model = s.column_text(5);
  c.settings = parse_settings(s.column_text(6));
  c.pinned = s.column_int(7) != 0;
  c.archived = s.column_int(8) != 0;
  c.message_count = s.column_int(9);
  return c;
}

constexpr const char* kMessageColumns =
    "id, uuid, conversation_id, parent_id, role, content, reasoning, state, error, prompt_tokens, "
    "completion_tokens, ttft_ms, tokens_per_second, model, created_at, context, sources, stop_reason";

Message read_message(const Statement& s) {
  Message m;
  m.id = s.column_int(0);
  m.uuid = s.column_text(1);
  m.conversation_id = s.column_int(2);
  m.parent_id = s.column_optional_int(3);
  m.role = parse_role(s.column_text(4)).value_or(Role::user);
  m.content = s.column_text(5);
  m.reasoning = s.column_text(6);
  m.state = parse_state(s.column_text(7)).value_or(MessageState::complete);
  m.error = s.column_text(8);
  m.stats.prompt_tokens = s.column_optional_int(9);
  m.stats.completion_tokens = s.column_optional_int(10);
  m.stats.ttft_ms = s.column_optional_double(11);
  m.stats.tokens_per_second = s.column_optional_double(12);
  m.model = s.column_text(13);
  m.created_at = s.column_int(14);
  m.context = s.column_text(15);
  m.sources = parse_sources(s.column_text(16));
  m.stats.stop_reason = s.column_text(17);
  return m;
}

// A rate over a zero duration is infinite; it is stored as unknown.
std::optional<double> finite_or_null(std::optional<double> v) { return v && std::isfinite(*v) ? v : std::nullopt; }

// Attachment bytes no message refers to any more.
StoreStatus delete_unused_blobs(Database& db) {
  return db.exec("DELETE FROM blobs WHERE sha256 NOT IN (SELECT sha256 FROM attachments)");
}

}  // namespace

// --- conversations --------------------------------------------------------------------------

StoreResult<Conversation> HistoryDb::create_conversation(const NewConversation& c) {
  DAY0_STORE_TRY(check_short("the title", c.title));
  DAY0_STORE_TRY(check_short("the model name", c.model));
  DAY0_STORE_TRY(check_settings(c.settings));
  const std::int64_t now = now_ms();
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "INSERT INTO conversations (uuid, title, created_at, updated_at, model, "
                                          "settings) VALUES (?1, ?2, ?3, ?3, ?4, ?5)"));
  s.bind(1, new_uuid()).bind(2, to_valid_utf8(c.title)).bind(3, now).bind(4, to_valid_utf8(c.model));
  s.bind(5, settings_text(c.settings));
  DAY0_STORE_TRY(s.run());
  return conversation(db_.last_insert_rowid());
}

StoreStatus HistoryDb::update_conversation(std::int64_t id, const ConversationPatch& patch) {
  if (patch.title) DAY0_STORE_TRY(check_short("the title", *patch.title));
  if (patch.model) DAY0_STORE_TRY(check_short("the model name", *patch.model));
  if (patch.settings) DAY0_STORE_TRY(check_settings(*patch.settings));
  // COALESCE keeps a field whose parameter is NULL (not in the patch).
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "UPDATE conversations SET title = COALESCE(?2, title), model = "
                                          "COALESCE(?3, model), settings = COALESCE(?4, settings), pinned = "
                                          "COALESCE(?5, pinned), archived = COALESCE(?6, archived) WHERE id = ?1"));
  s.bind(1, id);
  if (patch.title) s.bind(2, to_valid_utf8(*patch.title));
  if (patch.model) s.bind(3, to_valid_utf8(*patch.model));
  if (patch.settings) s.bind(4, settings_text(*patch.settings));
  if (patch.pinned) s.bind(5, std::int64_t{*patch.pinned});
  if (patch.archived) s.bind(6, std::int64_t{*patch.archived});
  DAY0_STORE_TRY(s.run());
  if (db_.changes() == 0) return store_error("there is no conversation " + std::to_string(id));
  return Ok{};
}

StoreStatus HistoryDb::delete_conversation(std::int64_t id) {
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "DELETE FROM conversations WHERE id = ?1"));
  DAY0_STORE_TRY(s.bind(1, id).run());
  if (db_.changes() == 0) return store_error("there is no conversation " + std::to_string(id));
  DAY0_STORE_TRY(delete_unused_blobs(db_));
  return tx.commit();
}

StoreStatus HistoryDb::save_preset(std::string_view name, const nlohmann::json& settings) {
  const std::string n = to_valid_utf8(std::string(name));
  if (n.empty() || n.size() > 200) return store_error("a preset needs a name of 1 to 200 bytes");
  DAY0_STORE_TRY(check_settings(settings));
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "INSERT INTO presets (name, settings, updated_at) VALUES (?1, ?2, ?3) "
                                          "ON CONFLICT(name) DO UPDATE SET settings = ?2, updated_at = ?3"));
  return s.bind(1, n).bind(2, settings_text(settings)).bind(3, now_ms()).run();
}

StoreStatus HistoryDb::delete_preset(std::string_view name) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "DELETE FROM presets WHERE name = ?1"));
  DAY0_STORE_TRY(s.bind(1, name).run());
  if (db_.changes() == 0) return store_error("there is no preset named " + std::string(name));
  return Ok{};
}

StoreResult<std::vector<Preset>> HistoryDb::presets() {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "SELECT name, settings, updated_at FROM presets ORDER BY name"));
  std::vector<Preset> out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    out.push_back({s.column_text(0), parse_settings(s.column_text(1)), s.column_int(2)});
  }
  return out;
}

StoreResult<std::vector<Conversation>> HistoryDb::list_conversations(const ListOptions& options) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, std::string("SELECT ") + kConversationColumns +
                                                   " FROM conversations c WHERE (?1 OR c.archived = 0) "
                                                   "ORDER BY c.pinned DESC, c.updated_at DESC, c.id DESC "
                                                   "LIMIT ?2 OFFSET ?3"));
  s.bind(1, std::int64_t{options.include_archived}).bind(2, std::int64_t{options.limit});
  s.bind(3, std::int64_t{std::max(0, options.offset)});
  std::vector<Conversation> out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    out.push_back(read_conversation(s));
  }
  return out;
}

StoreResult<Conversation> HistoryDb::conversation(std::int64_t id) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, std::string("SELECT ") + kConversationColumns +
                                                   " FROM conversations c WHERE c.id = ?1"));
  DAY0_STORE_ASSIGN(row, s.bind(1, id).step());
  if (!row) return store_error("there is no conversation " + std::to_string(id));
  return read_conversation(s);
}

StoreResult<Conversation> HistoryDb::find_conversation(std::string_view reference) {
  const bool digits = !reference.empty() && reference.size() <= 18 &&
                      std::all_of(reference.begin(), reference.end(), [](char c) { return c >= '0' && c <= '9'; });
  // A number names a conversation by id; a UUID prefix may be all digits too, so a number
  // that is no id is tried as a prefix (an id wins when both match).
  if (digits) {
    auto by_id = conversation(std::stoll(std::string(reference)));
    if (by_id.is_ok() || reference.size() < 4) return by_id;
  }
  const bool uuid_chars =
      reference.size() >= 4 && reference.size() <= 36 && std::all_of(reference.begin(), reference.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
      });
  if (!uuid_chars)
    return store_error("'" + std::string(reference) +
                       "' is neither a conversation number nor a uuid (or a prefix of one, at least 4 characters)");
  // Only hex digits and '-' reach LIKE, so the prefix holds no wildcards.
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "SELECT id FROM conversations WHERE uuid LIKE ?1 || '%' LIMIT 2"));
  s.bind(1, reference);
  std::vector<std::int64_t> ids;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    ids.push_back(s.column_int(0));
  }
  if (ids.empty()) return store_error("there is no conversation with uuid " + std::string(reference) + "...");
  if (ids.size() > 1)
    return store_error("more than one conversation has a uuid starting with " + std::string(reference) +
                       "; give more of it");
  return conversation(ids.front());
}

StoreStatus HistoryDb::touch_conversation(std::int64_t id, std::int64_t now) {
  DAY0_STORE_ASSIGN(s,
                    Statement::prepare(db_, "UPDATE conversations SET updated_at = max(updated_at, ?2) WHERE id = ?1"));
  return s.bind(1, id).bind(2, now).run();
}

// --- messages -------------------------------------------------------------------------------

StoreResult<std::vector<Attachment>> HistoryDb::attachments_of(std::int64_t message_id) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "SELECT a.sha256, b.mime_type, a.file_name, b.size, a.position FROM "
                                          "attachments a JOIN blobs b ON b.sha256 = a.sha256 WHERE a.message_id = ?1 "
                                          "ORDER BY a.position, a.id"));
  s.bind(1, message_id);
  std::vector<Attachment> out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    out.push_back(
        {s.column_text(0), s.column_text(1), s.column_text(2), s.column_int(3), static_cast<int>(s.column_int(4))});
  }
  return out;
}

StoreResult<std::vector<Message>> HistoryDb::messages(std::int64_t conversation_id) {
  DAY0_STORE_TRY(conversation(conversation_id));
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, std::string("SELECT ") + kMessageColumns +
                                                   " FROM messages WHERE conversation_id = ?1 ORDER BY id"));
  s.bind(1, conversation_id);
  std::vector<Message> out;
  std::map<std::int64_t, std::size_t> index;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    out.push_back(read_message(s));
    index[out.back().id] = out.size() - 1;
  }
  DAY0_STORE_ASSIGN(a, Statement::prepare(db_,
                                          "SELECT a.message_id, a.sha256, b.mime_type, a.file_name, b.size, "
                                          "a.position FROM attachments a JOIN blobs b ON b.sha256 = a.sha256 JOIN "
                                          "messages m ON m.id = a.message_id WHERE m.conversation_id = ?1 ORDER BY "
                                          "a.message_id, a.position, a.id"));
  a.bind(1, conversation_id);
  for (;;) {
    DAY0_STORE_ASSIGN(row, a.step());
    if (!row) break;
    const auto it = index.find(a.column_int(0));
    if (it == index.end()) continue;
    out[it->second].attachments.push_back(
        {a.column_text(1), a.column_text(2), a.column_text(3), a.column_int(4), static_cast<int>(a.column_int(5))});
  }
  // Parents first: a message whose parent came later (a system prompt set afterwards) waits for
  // it. Without loops on the way up (a parent is never its own descendant), in id order otherwise.
  std::vector<Message> ordered;
  ordered.reserve(out.size());
  std::vector<bool> placed(out.size(), false);
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t at = i; !placed[at];) {
      placed[at] = true;
      pending.push_back(at);
      const auto parent = out[at].parent_id ? index.find(*out[at].parent_id) : index.end();
      if (parent == index.end()) break;
      at = parent->second;
    }
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) ordered.push_back(std::move(out[*it]));
    pending.clear();
  }
  return ordered;
}

StoreResult<Message> HistoryDb::message(std::int64_t id) {
  DAY0_STORE_ASSIGN(s,
                    Statement::prepare(db_, std::string("SELECT ") + kMessageColumns + " FROM messages WHERE id = ?1"));
  DAY0_STORE_ASSIGN(row, s.bind(1, id).step());
  if (!row) return store_error("there is no message " + std::to_string(id));
  Message m = read_message(s);
  DAY0_STORE_ASSIGN(attachments, attachments_of(id));
  m.attachments = std::move(attachments);
  return m;
}

StoreResult<std::vector<Message>> HistoryDb::path_to(std::int64_t message_id) {
  // Parents always have smaller ids than their replies (they are written first, and import
  // keeps that order), so the walk ends; the depth bound guards a hand-edited database.
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "WITH RECURSIVE chain(id, parent, depth) AS ("
                                          " SELECT id, parent_id, 0 FROM messages WHERE id = ?1"
                                          " UNION ALL SELECT m.id, m.parent_id, chain.depth + 1 FROM messages m"
                                          " JOIN chain ON m.id = chain.parent WHERE chain.depth < 1000000)"
                                          " SELECT id FROM chain ORDER BY depth DESC"));
  s.bind(1, message_id);
  std::vector<Message> out;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    DAY0_STORE_ASSIGN(m, message(s.column_int(0)));
    out.push_back(std::move(m));
  }
  if (out.empty()) return store_error("there is no message " + std::to_string(message_id));
  return out;
}

namespace {

// The parent must be a message of the same conversation.
StoreStatus check_parent(Database& db, std::int64_t conversation_id, std::optional<std::int64_t> parent_id) {
  if (!parent_id) return Ok{};
  DAY0_STORE_ASSIGN(s, Statement::prepare(db, "SELECT conversation_id FROM messages WHERE id = ?1"));
  DAY0_STORE_ASSIGN(row, s.bind(1, *parent_id).step());
  if (!row) return store_error("there is no message " + std::to_string(*parent_id) + " to reply to");
  if (s.column_int(0) != conversation_id)
    return store_error("message " + std::to_string(*parent_id) + " belongs to another conversation");
  return Ok{};
}

StoreStatus check_conversation_exists(Database& db, std::int64_t id) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db, "SELECT 1 FROM conversations WHERE id = ?1"));
  DAY0_STORE_ASSIGN(row, s.bind(1, id).step());
  if (!row) return store_error("there is no conversation " + std::to_string(id));
  return Ok{};
}

}  // namespace

StoreResult<Message> HistoryDb::add_message(const NewMessage& m) {
  DAY0_STORE_TRY(check_long("the message", m.content));
  DAY0_STORE_TRY(check_long("the reasoning", m.reasoning));
  DAY0_STORE_TRY(check_short("the model name", m.model));
  DAY0_STORE_TRY(check_long("the message's context", m.context));
  DAY0_STORE_TRY(check_sources(m.sources));
  for (const auto& a : m.attachments) {
    if (a.data.size() > kMaxAttachmentBytes)
      return store_error("attachment '" + a.file_name + "' is larger than " +
                         std::to_string(kMaxAttachmentBytes >> 20) + " MiB");
    if (!is_valid_mime_type(a.mime_type))
      return store_error("attachment '" + a.file_name + "' has an invalid type '" + a.mime_type + "'");
    DAY0_STORE_TRY(check_short("an attachment's file name", a.file_name));
  }
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_TRY(check_conversation_exists(db_, m.conversation_id));
  DAY0_STORE_TRY(check_parent(db_, m.conversation_id, m.parent_id));
  const std::int64_t now = now_ms();
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "INSERT INTO messages (uuid, conversation_id, parent_id, role, content, "
                                          "reasoning, state, model, created_at, context, sources) VALUES (?1, ?2, ?3, "
                                          "?4, ?5, ?6, 'complete', ?7, ?8, ?9, ?10)"));
  s.bind(1, new_uuid()).bind(2, m.conversation_id).bind(3, m.parent_id).bind(4, to_string(m.role));
  s.bind(5, to_valid_utf8(m.content)).bind(6, to_valid_utf8(m.reasoning)).bind(7, to_valid_utf8(m.model));
  s.bind(8, now).bind(9, to_valid_utf8(m.context)).bind(10, settings_text(m.sources));
  DAY0_STORE_TRY(s.run());
  const std::int64_t id = db_.last_insert_rowid();
  DAY0_STORE_ASSIGN(blob, Statement::prepare(db_,
                                             "INSERT OR IGNORE INTO blobs (sha256, mime_type, size, data) VALUES "
                                             "(?1, ?2, ?3, ?4)"));
  DAY0_STORE_ASSIGN(link, Statement::prepare(db_,
                                             "INSERT INTO attachments (message_id, sha256, file_name, position) "
                                             "VALUES (?1, ?2, ?3, ?4)"));
  for (std::size_t i = 0; i < m.attachments.size(); ++i) {
    const auto& a = m.attachments[i];
    const std::string sha = sha256_hex(a.data);
    blob.reset();
    blob.bind(1, sha).bind(2, a.mime_type).bind(3, static_cast<std::int64_t>(a.data.size())).bind_blob(4, a.data);
    DAY0_STORE_TRY(blob.run());
    link.reset();
    link.bind(1, id).bind(2, sha).bind(3, to_valid_utf8(a.file_name)).bind(4, static_cast<std::int64_t>(i));
    DAY0_STORE_TRY(link.run());
  }
  DAY0_STORE_TRY(touch_conversation(m.conversation_id, now));
  DAY0_STORE_TRY(tx.commit());
  return message(id);
}

StoreStatus HistoryDb::delete_message(std::int64_t id) {
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_ASSIGN(m, message(id));
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "DELETE FROM messages WHERE id = ?1"));
  DAY0_STORE_TRY(s.bind(1, id).run());  // replies go too: parent_id ... ON DELETE CASCADE
  DAY0_STORE_TRY(delete_unused_blobs(db_));
  DAY0_STORE_TRY(touch_conversation(m.conversation_id, now_ms()));
  return tx.commit();
}

StoreStatus HistoryDb::edit_message(std::int64_t id, std::string_view content) {
  if (content.size() > kMaxTextBytes) return store_error("the message is longer than the history allows");
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_ASSIGN(m, message(id));
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "UPDATE messages SET content = ?2 WHERE id = ?1"));
  DAY0_STORE_TRY(s.bind(1, id).bind(2, to_valid_utf8(content)).run());
  DAY0_STORE_TRY(touch_conversation(m.conversation_id, now_ms()));
  return tx.commit();
}

StoreStatus HistoryDb::set_system_prompt(std::int64_t conversation_id, std::string_view text) {
  if (text.size() > kMaxTextBytes) return store_error("the system prompt is longer than the history allows");
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_TRY(check_conversation_exists(db_, conversation_id));
  DAY0_STORE_ASSIGN(find, Statement::prepare(db_,
                                             "SELECT id FROM messages WHERE conversation_id = ?1 AND parent_id IS NULL "
                                             "AND role = 'system' ORDER BY id"));
  find.bind(1, conversation_id);
  std::vector<std::int64_t> systems;
  for (;;) {
    DAY0_STORE_ASSIGN(row, find.step());
    if (!row) break;
    systems.push_back(find.column_int(0));
  }
  const std::int64_t now = now_ms();
  if (text.empty()) {
    for (const std::int64_t id : systems) {
      DAY0_STORE_ASSIGN(up, Statement::prepare(db_, "UPDATE messages SET parent_id = NULL WHERE parent_id = ?1"));
      DAY0_STORE_TRY(up.bind(1, id).run());
      DAY0_STORE_ASSIGN(gone, Statement::prepare(db_, "DELETE FROM messages WHERE id = ?1"));
      DAY0_STORE_TRY(gone.bind(1, id).run());
    }
  } else if (!systems.empty()) {
    for (const std::int64_t id : systems) {
      DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "UPDATE messages SET content = ?2 WHERE id = ?1"));
      DAY0_STORE_TRY(s.bind(1, id).bind(2, to_valid_utf8(text)).run());
    }
  } else {
    // A new first message, as old as the conversation's first, leading every branch.
    DAY0_STORE_ASSIGN(s, Statement::prepare(
                             db_,
                             "INSERT INTO messages (uuid, conversation_id, parent_id, role, content, state, created_at) "
                             "VALUES (?1, ?2, NULL, 'system', ?3, 'complete', COALESCE((SELECT MIN(created_at) FROM "
                             "messages WHERE conversation_id = ?2), ?4))"));
    s.bind(1, new_uuid()).bind(2, conversation_id).bind(3, to_valid_utf8(text)).bind(4, now);
    DAY0_STORE_TRY(s.run());
    const std::int64_t id = db_.last_insert_rowid();
    DAY0_STORE_ASSIGN(down, Statement::prepare(db_,
                                               "UPDATE messages SET parent_id = ?2 WHERE conversation_id = ?1 AND "
                                               "parent_id IS NULL AND id != ?2"));
    DAY0_STORE_TRY(down.bind(1, conversation_id).bind(2, id).run());
  }
  DAY0_STORE_TRY(touch_conversation(conversation_id, now));
  return tx.commit();
}

StoreResult<std::string> HistoryDb::attachment_data(std::string_view sha256) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_, "SELECT data FROM blobs WHERE sha256 = ?1"));
  DAY0_STORE_ASSIGN(row, s.bind(1, sha256).step());
  if (!row) return store_error("there is no attachment with SHA-256 " + std::string(sha256));
  return s.column_blob(0);
}

// --- a streaming reply ----------------------------------------------------------------------

StoreResult<Message> HistoryDb::begin_reply(const NewReply& r) {
  DAY0_STORE_TRY(check_short("the model name", r.model));
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_TRY(check_conversation_exists(db_, r.conversation_id));
  DAY0_STORE_TRY(check_parent(db_, r.conversation_id, r.parent_id));
  const std::int64_t now = now_ms();
  // The reply shows the sources of the knowledge it was written from: those of the user
  // message it answers.
  DAY0_STORE_ASSIGN(s, Statement::prepare(
                           db_,
                           "INSERT INTO messages (uuid, conversation_id, parent_id, role, state, model, created_at, "
                           "sources) VALUES (?1, ?2, ?3, 'assistant', 'incomplete', ?4, ?5, COALESCE((SELECT sources "
                           "FROM messages WHERE id = ?3 AND role = 'user'), '[]'))"));
  s.bind(1, new_uuid()).bind(2, r.conversation_id).bind(3, r.parent_id).bind(4, to_valid_utf8(r.model)).bind(5, now);
  DAY0_STORE_TRY(s.run());
  const std::int64_t id = db_.last_insert_rowid();
  DAY0_STORE_TRY(touch_conversation(r.conversation_id, now));
  DAY0_STORE_TRY(tx.commit());
  return message(id);
}

StoreResult<std::vector<ReplyCommit>> HistoryDb::append_in_transaction(const std::vector<ReplyDelta>& deltas) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "UPDATE messages SET content = content || ?2, reasoning = reasoning || ?3 "
                                          "WHERE id = ?1 AND state = 'incomplete' AND length(CAST(content AS BLOB)) + "
                                          "length(CAST(reasoning AS BLOB)) + ?4 <= ?5 "
                                          "RETURNING length(CAST(content AS BLOB)), length(CAST(reasoning AS BLOB))"));
  std::vector<ReplyCommit> out;
  for (const auto& d : deltas) {
    if (d.content.empty() && d.reasoning.empty()) continue;
    s.reset();
    s.bind(1, d.message_id).bind(2, to_valid_utf8(d.content)).bind(3, to_valid_utf8(d.reasoning));
    s.bind(4, static_cast<std::int64_t>(d.content.size() + d.reasoning.size()));
    s.bind(5, static_cast<std::int64_t>(2 * kMaxTextBytes));
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) {
      DAY0_STORE_ASSIGN(m, message(d.message_id));
      if (m.state != MessageState::incomplete)
        return store_error("message " + std::to_string(d.message_id) + " is not a reply being written (it is " +
                           to_string(m.state) + ")");
      return store_error("reply " + std::to_string(d.message_id) + " would grow past " +
                         std::to_string(2 * kMaxTextBytes >> 20) + " MiB");
    }
    out.push_back({d.message_id, static_cast<std::size_t>(s.column_int(0)), static_cast<std::size_t>(s.column_int(1))});
    DAY0_STORE_TRY(s.run());
  }
  return out;
}

StoreResult<std::vector<ReplyCommit>> HistoryDb::append_reply(const std::vector<ReplyDelta>& deltas) {
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_ASSIGN(commits, append_in_transaction(deltas));
  DAY0_STORE_TRY(tx.commit());
  return commits;
}

StoreStatus HistoryDb::finish_reply(std::int64_t message_id, const ReplyEnd& end, const std::vector<ReplyDelta>& last) {
  DAY0_STORE_TRY(check_short("the error text", end.error));
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db_));
  DAY0_STORE_TRY(append_in_transaction(last));
  DAY0_STORE_ASSIGN(s, Statement::prepare(db_,
                                          "UPDATE messages SET state = ?2, error = ?3, prompt_tokens = ?4, "
                                          "completion_tokens = ?5, ttft_ms = ?6, tokens_per_second = ?7, stop_reason = ?8 "
                                          "WHERE id = ?1 AND state = 'incomplete' RETURNING conversation_id"));
  s.bind(1, message_id).bind(2, to_string(end.state)).bind(3, to_valid_utf8(end.error));
  s.bind(4, end.stats.prompt_tokens).bind(5, end.stats.completion_tokens);
  s.bind(6, finite_or_null(end.stats.ttft_ms)).bind(7, finite_or_null(end.stats.tokens_per_second));
  s.bind(8, to_valid_utf8(end.stats.stop_reason.substr(0, 32)));
  DAY0_STORE_ASSIGN(row, s.step());
  if (!row) {
    DAY0_STORE_ASSIGN(m, message(message_id));
    return store_error("reply " + std::to_string(message_id) + " was already finished (" + to_string(m.state) + ")");
  }
  const std::int64_t conversation_id = s.column_int(0);
  DAY0_STORE_TRY(s.run());
  DAY0_STORE_TRY(touch_conversation(conversation_id, now_ms()));
  return tx.commit();
}

}  // namespace day0::storage
