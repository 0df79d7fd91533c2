#pragma once
// Export and import of conversations.
//
// JSON (lossless, re-importable): one document
//   {"format": "day0-history", "version": 1, "exported_at": <ms>,
//    "conversations": [{"uuid", "title", "created_at", "updated_at", "model", "settings": {...},
//                       "pinned", "archived",
//                       "messages": [{"uuid", "parent": <uuid>|null, "role", "content", "reasoning",
//                                     "state", "error", "prompt_tokens", "completion_tokens",
//                                     "ttft_ms", "tokens_per_second", "model", "created_at",
//                                     "attachments": [{"sha256", "file_name", "position"}],
//                                     "context", "sources": [...]  (only when the message has them)}]}],
//    "blobs": [{"sha256", "mime_type", "size", "data": <base64>}]}
// Messages are listed parents first; each attachment's bytes appear once in "blobs".
//
// Markdown: for reading only (every branch, attachments by name, type and size).
//
// Import checks everything before it writes anything (types, sizes, roles, states, uuids,
// parents that exist earlier in the same conversation, base64 and SHA-256 of every blob) and
// writes in one transaction. Conversations and messages are identified by uuid: what the
// database already holds is skipped, so importing a file twice adds nothing the second time,
// and a conversation exported again after more messages only gains the new ones.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/history_db.h"

namespace day0::storage {

inline constexpr const char* kExportFormat = "day0-history";
inline constexpr int kExportVersion = 1;
// Import reads the whole document into memory; larger files are refused.
inline constexpr std::size_t kMaxImportBytes = std::size_t{2} << 30;

struct ImportReport {
  int conversations_added = 0;
  int conversations_merged = 0;  // already present: only missing messages were added
  int messages_added = 0;
  int messages_skipped = 0;  // already present
  int attachments_added = 0;
};

// `conversation_ids` empty: every conversation, archived ones included.
StoreResult<std::string> export_json(HistoryDb& db, const std::vector<std::int64_t>& conversation_ids = {});
StoreResult<std::string> export_markdown(HistoryDb& db, const std::vector<std::int64_t>& conversation_ids = {});
StoreResult<ImportReport> import_json(HistoryDb& db, std::string_view text);
// A copy of conversation `id` titled `title`: every branch, the same attachments (stored once),
// under new uuids, updated now. Made by exporting and importing, so it is checked the same way.
StoreResult<Conversation> duplicate_conversation(HistoryDb& db, std::int64_t id, std::string_view title);

}  // namespace day0::storage
