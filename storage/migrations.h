#pragma once
// The history schema as numbered migrations, oldest first (PRAGMA user_version = the version
// of the last one applied). A released migration is never edited: a change is a new one.
//   1  conversations, messages (branching via parent_id), content-addressed blobs and
//      attachments, FTS5 indexes (unicode61)
//   2  stable UUIDs for conversations and messages (export/import identity), the error text
//      of a failed reply
//   3  FTS5 indexes rebuilt with the trigram tokenizer, which finds CJK substrings
//   4  messages.context and messages.sources: the knowledge excerpts a message was sent with
#include <vector>

#include "storage/database.h"

namespace day0::storage {

const std::vector<Migration>& history_migrations();
inline int latest_history_version() { return history_migrations().back().version; }

}  // namespace day0::storage
