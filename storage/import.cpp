// Import of a JSON export (format in transfer.h). The file may be hostile: it is measured
// first without building anything (nesting depth, number of values), then read into plain
// records with every field checked, and only then written, in one transaction.
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "common/json_error.h"
#include "storage/codec.h"
#include "storage/statement.h"
#include "storage/transfer.h"
#include "storage/validate.h"

namespace day0::storage {
namespace {

using json = nlohmann::json;

constexpr int kMaxDepth = 48;                          // the format needs 7, plus settings
constexpr std::size_t kMaxValues = 20'000'000;         // bounds the memory of the parsed document
constexpr std::int64_t kMaxCount = 1'000'000'000'000;  // token counts
constexpr double kMaxRate = 1e12;                      // ms, tokens/s

// Counts values and depth while checking the syntax, and stops at the first limit passed.
class Measure {
 public:
  std::string problem;

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool key(json::string_t&) { return value(); }
  bool start_object(std::size_t) { return open(); }
  bool start_array(std::size_t) { return open(); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const json::exception& e) {
    (void)position;  // the exception says where, as a line and a column
    problem = common::json_parse_problem("the file", e);
    return false;
  }

 private:
  bool value() {
    if (++values_ <= kMaxValues) return true;
    problem = "the file has more than " + std::to_string(kMaxValues) + " values";
    return false;
  }
  bool open() {
    if (++depth_ > kMaxDepth) {
      problem = "the file is nested deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    return value();
  }
  bool close() {
    --depth_;
    return true;
  }
  std::size_t values_ = 0;
  int depth_ = 0;
};

struct InAttachment {
  std::string sha256;
  std::string file_name;
  std::int64_t position = 0;
};

struct InMessage {
  std::string uuid;
  std::optional<std::string> parent;
  Role role = Role::user;
  std::string content, reasoning;
  MessageState state = MessageState::complete;
  std::string error;
  ReplyStats stats;
  std::string model;
  std::int64_t created_at = 0;
  std::vector<InAttachment> attachments;
  std::string context;
  std::string sources = "[]";  // compact JSON array text
};

struct InConversation {
  std::string uuid, title, model, settings;
  std::int64_t created_at = 0, updated_at = 0;
  bool pinned = false, archived = false;
  std::vector<InMessage> messages;
};

struct InBlob {
  std::string mime_type;
  std::string data;
};

// Field readers: `where` names the field for the message ("conversations[2].messages[5].role").
StoreError bad(const std::string& where, const std::string& problem) { return store_error(where + ": " + problem); }

const json* field(const json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

StoreStatus read_string(const json& object, const char* name, const std::string& where, std::size_t max_bytes,
                        bool required, std::string* out) {
  const json* v = field(object, name);
  if (!v) return required ? StoreStatus(bad(where + "." + name, "missing")) : StoreStatus(Ok{});
  if (!v->is_string()) return bad(where + "." + name, "must be a string");
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) return bad(where + "." + name, "longer than " + std::to_string(max_bytes) + " bytes");
  if (!is_valid_utf8(s)) return bad(where + "." + name, "not valid UTF-8");
  *out = s;
  return Ok{};
}

StoreStatus read_int(const json& object, const char* name, const std::string& where, std::int64_t min, std::int64_t max,
                     std::optional<std::int64_t>* out, bool required) {
  const json* v = field(object, name);
  if (!v || v->is_null()) {
    if (required) return bad(where + "." + name, "missing");
    out->reset();
    return Ok{};
  }
  if (!v->is_number_integer()) return bad(where + "." + name, "must be an integer");
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return bad(where + "." + name, "out of range");
  const auto x = v->get<std::int64_t>();
  if (x < min || x > max)
    return bad(where + "." + name,
               std::to_string(x) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
  *out = x;
  return Ok{};
}

StoreStatus read_required_int(const json& object, const char* name, const std::string& where, std::int64_t min,
                              std::int64_t max, std::int64_t* out) {
  std::optional<std::int64_t> v;
  DAY0_STORE_TRY(read_int(object, name, where, min, max, &v, true));
  *out = *v;
  return Ok{};
}

StoreStatus read_rate(const json& object, const char* name, const std::string& where, std::optional<double>* out) {
  const json* v = field(object, name);
  if (!v || v->is_null()) return Ok{};
  if (!v->is_number()) return bad(where + "." + name, "must be a number or null");
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < 0 || x > kMaxRate) return bad(where + "." + name, "out of range");
  *out = x;
  return Ok{};
}

StoreStatus read_bool(const json& object, const char* name, const std::string& where, bool* out) {
  const json* v = field(object, name);
  if (!v) return Ok{};
  if (!v->is_boolean()) return bad(where + "." + name, "must be true or false");
  *out = v->get<bool>();
  return Ok{};
}

StoreResult<const json*> read_array(const json& object, const char* name, const std::string& where, bool required) {
  static const json kEmpty = json::array();
  const json* v = field(object, name);
  if (!v) return required ? StoreResult<const json*>(bad(where + "." + name, "missing")) : &kEmpty;
  if (!v->is_array()) return bad(where + "." + name, "must be an array");
  return v;
}

StoreResult<std::map<std::string, InBlob>> read_blobs(const json& doc) {
  DAY0_STORE_ASSIGN(list, read_array(doc, "blobs", "file", false));
  std::map<std::string, InBlob> blobs;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& jb = (*list)[i];
    const std::string where = "blobs[" + std::to_string(i) + "]";
    if (!jb.is_object()) return bad(where, "must be an object");
    std::string sha, data64;
    InBlob b;
    std::int64_t size = 0;
    DAY0_STORE_TRY(read_string(jb, "sha256", where, 64, true, &sha));
    if (!is_sha256_hex(sha)) return bad(where + ".sha256", "must be 64 lowercase hex digits");
    if (blobs.contains(sha)) return bad(where, "SHA-256 " + sha + " appears twice");
    DAY0_STORE_TRY(read_string(jb, "mime_type", where, 255, true, &b.mime_type));
    if (!is_valid_mime_type(b.mime_type)) return bad(where + ".mime_type", "'" + b.mime_type + "' is not a media type");
    DAY0_STORE_TRY(read_required_int(jb, "size", where, 0, kMaxAttachmentBytes, &size));
    DAY0_STORE_TRY(read_string(jb, "data", where, (kMaxAttachmentBytes + 2) / 3 * 4, true, &data64));
    auto data = base64_decode(data64);
    if (!data) return bad(where + ".data", "not valid base64");
    if (static_cast<std::int64_t>(data->size()) != size)
      return bad(where, "holds " + std::to_string(data->size()) + " bytes but says size " + std::to_string(size));
    if (sha256_hex(*data) != sha) return bad(where, "its bytes do not have the SHA-256 " + sha);
    b.data = std::move(*data);
    blobs.emplace(sha, std::move(b));
  }
  return blobs;
}

StoreStatus read_message(const json& jm, const std::string& where, const std::set<std::string>& earlier,
                         const std::map<std::string, InBlob>& blobs, InMessage* m) {
  if (!jm.is_object()) return bad(where, "must be an object");
  DAY0_STORE_TRY(read_string(jm, "uuid", where, 36, true, &m->uuid));
  if (!is_uuid(m->uuid)) return bad(where + ".uuid", "not a lowercase UUID");
  if (const json* p = field(jm, "parent"); p && !p->is_null()) {
    if (!p->is_string() || !is_uuid(p->get_ref<const std::string&>()))
      return bad(where + ".parent", "must be a UUID or null");
    if (!earlier.contains(p->get<std::string>()))
      return bad(where + ".parent", p->get<std::string>() + " is not an earlier message of this conversation");
    m->parent = p->get<std::string>();
  }
  std::string role = "", state = "complete";
  DAY0_STORE_TRY(read_string(jm, "role", where, 16, true, &role));
  if (!parse_role(role)) return bad(where + ".role", "'" + role + "' is not one of system, user, assistant, tool");
  m->role = *parse_role(role);
  DAY0_STORE_TRY(read_string(jm, "content", where, kMaxTextBytes, true, &m->content));
  DAY0_STORE_TRY(read_string(jm, "reasoning", where, kMaxTextBytes, false, &m->reasoning));
  DAY0_STORE_TRY(read_string(jm, "state", where, 16, false, &state));
  if (!parse_state(state)) return bad(where + ".state", "'" + state + "' is not one of complete, incomplete, error");
  m->state = *parse_state(state);
  DAY0_STORE_TRY(read_string(jm, "error", where, kMaxShortTextBytes, false, &m->error));
  DAY0_STORE_TRY(read_int(jm, "prompt_tokens", where, 0, kMaxCount, &m->stats.prompt_tokens, false));
  DAY0_STORE_TRY(read_int(jm, "completion_tokens", where, 0, kMaxCount, &m->stats.completion_tokens, false));
  DAY0_STORE_TRY(read_rate(jm, "ttft_ms", where, &m->stats.ttft_ms));
  DAY0_STORE_TRY(read_rate(jm, "tokens_per_second", where, &m->stats.tokens_per_second));
  DAY0_STORE_TRY(read_string(jm, "stop_reason", where, 32, false, &m->stats.stop_reason));
  DAY0_STORE_TRY(read_string(jm, "model", where, kMaxShortTextBytes, false, &m->model));
  DAY0_STORE_TRY(read_required_int(jm, "created_at", where, 0, kMaxTimestampMs, &m->created_at));
  DAY0_STORE_ASSIGN(list, read_array(jm, "attachments", where, false));
  if (list->size() > 1000) return bad(where + ".attachments", "more than 1000");
  for (std::size_t k = 0; k < list->size(); ++k) {
    const json& ja = (*list)[k];
    const std::string at = where + ".attachments[" + std::to_string(k) + "]";
    if (!ja.is_object()) return bad(at, "must be an object");
    InAttachment a;
    DAY0_STORE_TRY(read_string(ja, "sha256", at, 64, true, &a.sha256));
    if (!is_sha256_hex(a.sha256)) return bad(at + ".sha256", "must be 64 lowercase hex digits");
    if (!blobs.contains(a.sha256)) return bad(at + ".sha256", a.sha256 + " is not among the file's blobs");
    DAY0_STORE_TRY(read_string(ja, "file_name", at, kMaxShortTextBytes, false, &a.file_name));
    std::optional<std::int64_t> position = static_cast<std::int64_t>(k);
    DAY0_STORE_TRY(read_int(ja, "position", at, 0, 1000, &position, false));
    a.position = position.value_or(static_cast<std::int64_t>(k));
    m->attachments.push_back(std::move(a));
  }
  DAY0_STORE_TRY(read_string(jm, "context", where, kMaxTextBytes, false, &m->context));
  if (const json* s = field(jm, "sources")) {
    if (!s->is_array()) return bad(where + ".sources", "must be an array");
    m->sources = s->dump();
    if (m->sources.size() > kMaxSettingsBytes) return bad(where + ".sources", "larger than 1 MiB");
  }
  return Ok{};
}

StoreResult<std::vector<InConversation>> read_conversations(const json& doc,
                                                            const std::map<std::string, InBlob>& blobs) {
  DAY0_STORE_ASSIGN(list, read_array(doc, "conversations", "file", true));
  std::vector<InConversation> out;
  std::set<std::string> conversation_uuids, message_uuids;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& jc = (*list)[i];
    const std::string where = "conversations[" + std::to_string(i) + "]";
    if (!jc.is_object()) return bad(where, "must be an object");
    InConversation c;
    DAY0_STORE_TRY(read_string(jc, "uuid", where, 36, true, &c.uuid));
    if (!is_uuid(c.uuid)) return bad(where + ".uuid", "not a lowercase UUID");
    if (!conversation_uuids.insert(c.uuid).second) return bad(where + ".uuid", c.uuid + " appears twice");
    DAY0_STORE_TRY(read_string(jc, "title", where, kMaxShortTextBytes, false, &c.title));
    DAY0_STORE_TRY(read_string(jc, "model", where, kMaxShortTextBytes, false, &c.model));
    DAY0_STORE_TRY(read_required_int(jc, "created_at", where, 0, kMaxTimestampMs, &c.created_at));
    DAY0_STORE_TRY(read_required_int(jc, "updated_at", where, 0, kMaxTimestampMs, &c.updated_at));
    DAY0_STORE_TRY(read_bool(jc, "pinned", where, &c.pinned));
    DAY0_STORE_TRY(read_bool(jc, "archived", where, &c.archived));
    c.settings = "{}";
    if (const json* s = field(jc, "settings")) {
      if (!s->is_object()) return bad(where + ".settings", "must be an object");
      c.settings = s->dump();  // compact with sorted keys, as HistoryDb stores settings
      if (c.settings.size() > kMaxSettingsBytes) return bad(where + ".settings", "larger than 1 MiB");
    }
    DAY0_STORE_ASSIGN(messages, read_array(jc, "messages", where, true));
    std::set<std::string> earlier;
    for (std::size_t k = 0; k < messages->size(); ++k) {
      InMessage m;
      const std::string at = where + ".messages[" + std::to_string(k) + "]";
      DAY0_STORE_TRY(read_message((*messages)[k], at, earlier, blobs, &m));
      if (!message_uuids.insert(m.uuid).second) return bad(at + ".uuid", m.uuid + " appears twice");
      earlier.insert(m.uuid);
      c.messages.push_back(std::move(m));
    }
    out.push_back(std::move(c));
  }
  return out;
}

// --- writing --------------------------------------------------------------------------------

StoreResult<std::optional<std::int64_t>> id_by_uuid(Database& db, const char* sql, const std::string& uuid) {
  DAY0_STORE_ASSIGN(s, Statement::prepare(db, sql));
  DAY0_STORE_ASSIGN(row, s.bind(1, uuid).step());
  if (!row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(s.column_int(0));
}

StoreStatus write_conversation(Database& db, const InConversation& c, const std::map<std::string, InBlob>& blobs,
                               ImportReport* report) {
  DAY0_STORE_ASSIGN(existing, id_by_uuid(db, "SELECT id FROM conversations WHERE uuid = ?1", c.uuid));
  std::int64_t conversation_id;
  if (existing) {
    conversation_id = *existing;
    ++report->conversations_merged;
  } else {
    DAY0_STORE_ASSIGN(s, Statement::prepare(db,
                                            "INSERT INTO conversations (uuid, title, created_at, updated_at, model, "
                                            "settings, pinned, archived) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    s.bind(1, c.uuid).bind(2, c.title).bind(3, c.created_at).bind(4, c.updated_at).bind(5, c.model);
    s.bind(6, c.settings).bind(7, std::int64_t{c.pinned}).bind(8, std::int64_t{c.archived});
    DAY0_STORE_TRY(s.run());
    conversation_id = db.last_insert_rowid();
    ++report->conversations_added;
  }
  DAY0_STORE_ASSIGN(find, Statement::prepare(db, "SELECT id, conversation_id FROM messages WHERE uuid = ?1"));
  DAY0_STORE_ASSIGN(insert, Statement::prepare(db,
                                               "INSERT INTO messages (uuid, conversation_id, parent_id, role, content, "
                                               "reasoning, state, error, prompt_tokens, completion_tokens, ttft_ms, "
                                               "tokens_per_second, model, created_at, context, sources, stop_reason) "
                                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                                               "?15, ?16, ?17)"));
  DAY0_STORE_ASSIGN(blob, Statement::prepare(db,
                                             "INSERT OR IGNORE INTO blobs (sha256, mime_type, size, data) VALUES "
                                             "(?1, ?2, ?3, ?4)"));
  DAY0_STORE_ASSIGN(link, Statement::prepare(db,
                                             "INSERT INTO attachments (message_id, sha256, file_name, position) "
                                             "VALUES (?1, ?2, ?3, ?4)"));
  std::map<std::string, std::int64_t> id_of;
  for (const auto& m : c.messages) {
    find.reset();
    DAY0_STORE_ASSIGN(found, find.bind(1, m.uuid).step());
    if (found) {
      if (find.column_int(1) != conversation_id)
        return store_error("message " + m.uuid + " of conversation " + c.uuid +
                           " is already in this history under another conversation");
      id_of[m.uuid] = find.column_int(0);
      ++report->messages_skipped;
      continue;
    }
    insert.reset();
    insert.bind(1, m.uuid).bind(2, conversation_id);
    if (m.parent)
      insert.bind(3, id_of.at(*m.parent));  // read_message checked it is an earlier message
    else
      insert.bind_null(3);
    insert.bind(4, to_string(m.role)).bind(5, m.content).bind(6, m.reasoning).bind(7, to_string(m.state));
    insert.bind(8, m.error).bind(9, m.stats.prompt_tokens).bind(10, m.stats.completion_tokens);
    insert.bind(11, m.stats.ttft_ms).bind(12, m.stats.tokens_per_second).bind(13, m.model).bind(14, m.created_at);
    insert.bind(15, m.context).bind(16, m.sources).bind(17, m.stats.stop_reason);
    DAY0_STORE_TRY(insert.run());
    const std::int64_t id = db.last_insert_rowid();
    id_of[m.uuid] = id;
    ++report->messages_added;
    for (const auto& a : m.attachments) {
      const InBlob& b = blobs.at(a.sha256);
      blob.reset();
      blob.bind(1, a.sha256).bind(2, b.mime_type).bind(3, static_cast<std::int64_t>(b.data.size()));
      DAY0_STORE_TRY(blob.bind_blob(4, b.data).run());
      link.reset();
      DAY0_STORE_TRY(link.bind(1, id).bind(2, a.sha256).bind(3, a.file_name).bind(4, a.position).run());
      ++report->attachments_added;
    }
  }
  return Ok{};
}

}  // namespace

StoreResult<ImportReport> import_json(HistoryDb& db, std::string_view text) {
  if (text.size() > kMaxImportBytes)
    return store_error("the file is larger than " + std::to_string(kMaxImportBytes >> 30) + " GiB");
  Measure measure;
  if (!json::sax_parse(text.begin(), text.end(), &measure)) return store_error(measure.problem);
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return store_error(common::json_parse_problem("the file", e));
  }
  if (!doc.is_object()) return store_error("the file is not a Day0 history export (not a JSON object)");
  if (const json* f = field(doc, "format"); !f || *f != kExportFormat)
    return store_error("the file is not a Day0 history export (\"format\" is not \"" + std::string(kExportFormat) +
                       "\")");
  std::optional<std::int64_t> version;
  DAY0_STORE_TRY(read_int(doc, "version", "file", 1, 1'000'000, &version, true));
  if (*version > kExportVersion)
    return store_error("the file has export format version " + std::to_string(*version) +
                       ", written by a newer Day0; " + "this one reads version " + std::to_string(kExportVersion));
  DAY0_STORE_ASSIGN(blobs, read_blobs(doc));
  DAY0_STORE_ASSIGN(conversations, read_conversations(doc, blobs));

  ImportReport report;
  DAY0_STORE_ASSIGN(tx, Transaction::begin(db.database()));
  for (const auto& c : conversations) DAY0_STORE_TRY(write_conversation(db.database(), c, blobs, &report));
  DAY0_STORE_TRY(tx.commit());
  return report;
}

}  // namespace day0::storage
