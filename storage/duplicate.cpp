// A copy of a conversation, through the export and the import: the copy is written by the same
// checked code as an imported file, and only the identities (uuids), the title and the time
// differ.
#include <map>
#include <nlohmann/json.hpp>

#include "common/json_error.h"
#include "storage/codec.h"
#include "storage/transfer.h"

namespace day0::storage {

StoreResult<Conversation> duplicate_conversation(HistoryDb& db, std::int64_t id, std::string_view title) {
  DAY0_STORE_ASSIGN(original, db.conversation(id));
  DAY0_STORE_ASSIGN(text, export_json(db, {id}));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return store_error("the conversation could not be copied: " + common::json_error_text(e));
  }
  auto& conversations = doc["conversations"];
  if (!conversations.is_array() || conversations.size() != 1)
    return store_error("the conversation could not be copied: its export holds no conversation");
  auto& c = conversations[0];
  const std::string uuid = new_uuid();
  c["uuid"] = uuid;
  c["title"] = to_valid_utf8(title.empty() ? original.title : title);
  c["updated_at"] = now_ms();
  c["pinned"] = false;
  std::map<std::string, std::string> renamed;  // old message uuid -> new
  for (auto& m : c["messages"]) {
    const std::string fresh = new_uuid();
    renamed[m["uuid"].get<std::string>()] = fresh;
    m["uuid"] = fresh;
    // Parents come first in an export, so each parent is renamed already.
    if (m.contains("parent") && m["parent"].is_string()) {
      const auto p = renamed.find(m["parent"].get<std::string>());
      if (p == renamed.end()) return store_error("the conversation could not be copied: a message's parent is missing");
      m["parent"] = p->second;
    }
  }
  DAY0_STORE_TRY(import_json(db, doc.dump()));
  return db.find_conversation(uuid);
}

}  // namespace day0::storage
