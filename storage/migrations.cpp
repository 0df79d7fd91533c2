// The history schema, as numbered migrations. A migration is never edited once released: a
// change is a new migration at the end.
#include "storage/database.h"

namespace day0::storage {

const std::vector<Migration>& history_migrations() {
  static const std::vector<Migration> migrations = {
      {1, "conversations, messages, attachments, full-text index", R"sql(
CREATE TABLE conversations (
  id          INTEGER PRIMARY KEY,
  title       TEXT    NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL,              -- Unix milliseconds
  updated_at  INTEGER NOT NULL,
  model       TEXT    NOT NULL DEFAULT '',
  settings    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
  pinned      INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  archived    INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1))
);
CREATE INDEX conversations_by_update ON conversations(archived, pinned DESC, updated_at DESC);

CREATE TABLE messages (
  id                INTEGER PRIMARY KEY,
  conversation_id   INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id         INTEGER REFERENCES messages(id) ON DELETE CASCADE,  -- branching
  role              TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content           TEXT    NOT NULL DEFAULT '',
  reasoning         TEXT    NOT NULL DEFAULT '',
  state             TEXT    NOT NULL DEFAULT 'complete' CHECK (state IN ('complete', 'incomplete', 'error')),
  prompt_tokens     INTEGER,
  completion_tokens INTEGER,
  ttft_ms           REAL,
  tokens_per_second REAL,
  model             TEXT    NOT NULL DEFAULT '',
  created_at        INTEGER NOT NULL
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, created_at);
CREATE INDEX messages_by_parent ON messages(parent_id);

-- Attachment bytes are stored content-addressed (by SHA-256) and shared between messages.
CREATE TABLE blobs (
  sha256      TEXT    PRIMARY KEY CHECK (length(sha256) = 64),
  mime_type   TEXT    NOT NULL,
  size        INTEGER NOT NULL CHECK (size >= 0),
  data        BLOB    NOT NULL
);
CREATE TABLE attachments (
  id          INTEGER PRIMARY KEY,
  message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  sha256      TEXT    NOT NULL REFERENCES blobs(sha256),
  file_name   TEXT    NOT NULL DEFAULT '',
  position    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX attachments_by_message ON attachments(message_id, position);

CREATE VIRTUAL TABLE message_search USING fts5(content, reasoning, content='messages', content_rowid='id');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO message_search(rowid, content, reasoning) VALUES (new.id, new.content, new.reasoning);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
  INSERT INTO message_search(message_search, rowid, content, reasoning) VALUES ('delete', old.id, old.content, old.reasoning);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF content, reasoning ON messages BEGIN
  INSERT INTO message_search(message_search, rowid, content, reasoning) VALUES ('delete', old.id, old.content, old.reasoning);
  INSERT INTO message_search(rowid, content, reasoning) VALUES (new.id, new.content, new.reasoning);
END;

CREATE VIRTUAL TABLE conversation_search USING fts5(title, content='conversations', content_rowid='id');
CREATE TRIGGER conversations_ai AFTER INSERT ON conversations BEGIN
  INSERT INTO conversation_search(rowid, title) VALUES (new.id, new.title);
END;
CREATE TRIGGER conversations_ad AFTER DELETE ON conversations BEGIN
  INSERT INTO conversation_search(conversation_search, rowid, title) VALUES ('delete', old.id, old.title);
END;
CREATE TRIGGER conversations_au AFTER UPDATE OF title ON conversations BEGIN
  INSERT INTO conversation_search(conversation_search, rowid, title) VALUES ('delete', old.id, old.title);
  INSERT INTO conversation_search(rowid, title) VALUES (new.id, new.title);
END;
)sql"},
  };
  return migrations;
}

}  // namespace day0::storage
