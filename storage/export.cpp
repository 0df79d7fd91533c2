// Export to JSON (lossless; the format is described in transfer.h) and Markdown (readable).
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>

#include "storage/codec.h"
#include "storage/statement.h"
#include "storage/transfer.h"

namespace day0::storage {
namespace {

using ordered_json = nlohmann::ordered_json;

StoreResult<std::vector<std::int64_t>> resolve_ids(HistoryDb& db, const std::vector<std::int64_t>& requested) {
  if (!requested.empty()) return requested;
  DAY0_STORE_ASSIGN(s, Statement::prepare(db.database(), "SELECT id FROM conversations ORDER BY id"));
  std::vector<std::int64_t> ids;
  for (;;) {
    DAY0_STORE_ASSIGN(row, s.step());
    if (!row) break;
    ids.push_back(s.column_int(0));
  }
  return ids;
}

template <typename T>
ordered_json optional_value(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

std::string utc_text(std::int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
  return text;
}

std::string human_size(std::int64_t bytes) {
  char text[32];
  if (bytes < 1024)
    std::snprintf(text, sizeof text, "%" PRId64 " B", bytes);
  else if (bytes < (std::int64_t{1} << 20))
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

// Text that must stay on one line of Markdown (titles, names).
std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

const char* role_heading(Role role) {
  switch (role) {
    case Role::system:
      return "System";
    case Role::user:
      return "User";
    case Role::assistant:
      return "Assistant";
    case Role::tool:
      return "Tool";
  }
  return "User";
}

}  // namespace

StoreResult<std::string> export_json(HistoryDb& db, const std::vector<std::int64_t>& conversation_ids) {
  DAY0_STORE_ASSIGN(ids, resolve_ids(db, conversation_ids));
  ordered_json doc;
  doc["format"] = kExportFormat;
  doc["version"] = kExportVersion;
  doc["exported_at"] = now_ms();
  ordered_json conversations = ordered_json::array();
  std::map<std::string, std::string> blob_types;  // sha256 -> mime type, sorted for a stable file
  for (const std::int64_t id : ids) {
    DAY0_STORE_ASSIGN(c, db.conversation(id));
    DAY0_STORE_ASSIGN(messages, db.messages(id));
    ordered_json jc;
    jc["uuid"] = c.uuid;
    jc["title"] = c.title;
    jc["created_at"] = c.created_at;
    jc["updated_at"] = c.updated_at;
    jc["model"] = c.model;
    jc["settings"] = ordered_json::parse(c.settings.dump());
    jc["pinned"] = c.pinned;
    jc["archived"] = c.archived;
    std::map<std::int64_t, std::string> uuid_of;
    ordered_json jm_list = ordered_json::array();
    for (const auto& m : messages) {
      uuid_of[m.id] = m.uuid;
      ordered_json jm;
      jm["uuid"] = m.uuid;
      jm["parent"] = nullptr;
      if (m.parent_id) {
        const auto parent = uuid_of.find(*m.parent_id);
        if (parent == uuid_of.end())
          return store_error("message " + std::to_string(m.id) + " comes before its parent " +
                             std::to_string(*m.parent_id) + "; the database was edited by hand");
        jm["parent"] = parent->second;
      }
      jm["role"] = to_string(m.role);
      jm["content"] = m.content;
      jm["reasoning"] = m.reasoning;
      jm["state"] = to_string(m.state);
      jm["error"] = m.error;
      jm["prompt_tokens"] = optional_value(m.stats.prompt_tokens);
      jm["completion_tokens"] = optional_value(m.stats.completion_tokens);
      jm["ttft_ms"] = optional_value(m.stats.ttft_ms);
      jm["tokens_per_second"] = optional_value(m.stats.tokens_per_second);
      if (!m.stats.stop_reason.empty()) jm["stop_reason"] = m.stats.stop_reason;
      jm["model"] = m.model;
      jm["created_at"] = m.created_at;
      ordered_json ja = ordered_json::array();
      for (const auto& a : m.attachments) {
        ja.push_back({{"sha256", a.sha256}, {"file_name", a.file_name}, {"position", a.position}});
        blob_types[a.sha256] = a.mime_type;
      }
      jm["attachments"] = std::move(ja);
      if (!m.context.empty()) jm["context"] = m.context;
      if (!m.sources.empty()) jm["sources"] = ordered_json::parse(m.sources.dump());
      jm_list.push_back(std::move(jm));
    }
    jc["messages"] = std::move(jm_list);
    conversations.push_back(std::move(jc));
  }
  doc["conversations"] = std::move(conversations);
  ordered_json blobs = ordered_json::array();
  for (const auto& [sha, mime] : blob_types) {
    DAY0_STORE_ASSIGN(data, db.attachment_data(sha));
    blobs.push_back({{"sha256", sha},
                     {"mime_type", mime},
                     {"size", static_cast<std::int64_t>(data.size())},
                     {"data", base64_encode(data)}});
  }
  doc["blobs"] = std::move(blobs);
  return doc.dump(1, '\t', false, ordered_json::error_handler_t::replace) + "\n";
}

StoreResult<std::string> export_markdown(HistoryDb& db, const std::vector<std::int64_t>& conversation_ids) {
  DAY0_STORE_ASSIGN(ids, resolve_ids(db, conversation_ids));
  std::string out;
  for (const std::int64_t id : ids) {
    DAY0_STORE_ASSIGN(c, db.conversation(id));
    DAY0_STORE_ASSIGN(messages, db.messages(id));
    if (!out.empty()) out += "---\n\n";
    out += "# " + (c.title.empty() ? std::string("Untitled conversation") : one_line(c.title)) + "\n\n";
    out += "- Created " + utc_text(c.created_at) + ", updated " + utc_text(c.updated_at) + "\n";
    if (!c.model.empty()) out += "- Model: " + one_line(c.model) + "\n";
    if (c.pinned || c.archived)
      out += std::string("- ") + (c.pinned ? "Pinned" : "") + (c.pinned && c.archived ? ", " : "") +
             (c.archived ? "Archived" : "") + "\n";
    out += "- Conversation " + c.uuid + "\n\n";
    // Messages are numbered in order; one that does not follow the message just above it
    // (another branch) says which one it answers.
    std::map<std::int64_t, int> number;
    std::optional<std::int64_t> previous;
    for (const auto& m : messages) {
      number[m.id] = static_cast<int>(number.size()) + 1;
      out += "## " + std::to_string(number[m.id]) + ". " + role_heading(m.role);
      if (m.role == Role::assistant && !m.model.empty()) out += " (" + one_line(m.model) + ")";
      out += " \xc2\xb7 " + utc_text(m.created_at);
      if (m.parent_id && m.parent_id != previous)
        out += " \xc2\xb7 in reply to " + std::to_string(number[*m.parent_id]);
      out += "\n\n";
      if (m.state == MessageState::incomplete) out += "> *Incomplete: the reply was cut off.*\n\n";
      if (m.state == MessageState::error) out += "> *Failed: " + one_line(m.error) + "*\n\n";
      if (!m.reasoning.empty()) out += "<details><summary>Reasoning</summary>\n\n" + m.reasoning + "\n\n</details>\n\n";
      if (!m.content.empty()) out += m.content + "\n\n";
      for (const auto& a : m.attachments)
        out += "- Attachment: " + (a.file_name.empty() ? std::string("(unnamed)") : one_line(a.file_name)) + " (" +
               a.mime_type + ", " + human_size(a.size) + ", SHA-256 " + a.sha256.substr(0, 12) + "\xe2\x80\xa6)\n";
      if (!m.attachments.empty()) out += "\n";
      if (!m.context.empty())
        out += "<details><summary>Context given to the model</summary>\n\n" + m.context + "\n\n</details>\n\n";
      std::string stats;
      auto add = [&stats](const std::string& part) { stats += (stats.empty() ? "" : " \xc2\xb7 ") + part; };
      if (m.stats.prompt_tokens) add(std::to_string(*m.stats.prompt_tokens) + " prompt tokens");
      if (m.stats.completion_tokens) add(std::to_string(*m.stats.completion_tokens) + " tokens");
      char number_text[48];
      if (m.stats.ttft_ms) {
        std::snprintf(number_text, sizeof number_text, "first token after %.0f ms", *m.stats.ttft_ms);
        add(number_text);
      }
      if (m.stats.tokens_per_second) {
        std::snprintf(number_text, sizeof number_text, "%.1f tokens/s", *m.stats.tokens_per_second);
        add(number_text);
      }
      if (!stats.empty()) out += "*" + stats + "*\n\n";
      previous = m.id;
    }
  }
  return out;
}

}  // namespace day0::storage
