// The history schema, as numbered migrations (see migrations.h). Each runs in one
// transaction with foreign keys off (Database::migrate), which lets a migration rebuild a
// table the way SQLite documents: create the new table, copy, drop the old one, rename.
#include "storage/migrations.h"

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
      {2, "stable UUIDs for conversations and messages, error text of a failed reply", R"sql(
-- A UUID (version 4, lowercase) per conversation and message identifies them across
-- databases, so importing the same export twice adds nothing. Existing rows get random ones.
CREATE TABLE conversations_v2 (
  id          INTEGER PRIMARY KEY,
  uuid        TEXT    NOT NULL UNIQUE CHECK (length(uuid) = 36),
  title       TEXT    NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL,              -- Unix milliseconds
  updated_at  INTEGER NOT NULL,
  model       TEXT    NOT NULL DEFAULT '',
  settings    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
  pinned      INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  archived    INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1))
);
INSERT INTO conversations_v2 (id, uuid, title, created_at, updated_at, model, settings, pinned, archived)
  SELECT id,
         lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
           substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
         title, created_at, updated_at, model, settings, pinned, archived FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_v2 RENAME TO conversations;
CREATE INDEX conversations_by_update ON conversations(archived, pinned DESC, updated_at DESC);

CREATE TABLE messages_v2 (
  id                INTEGER PRIMARY KEY,
  uuid              TEXT    NOT NULL UNIQUE CHECK (length(uuid) = 36),
  conversation_id   INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id         INTEGER REFERENCES messages(id) ON DELETE CASCADE,  -- branching
  role              TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content           TEXT    NOT NULL DEFAULT '',
  reasoning         TEXT    NOT NULL DEFAULT '',
  state             TEXT    NOT NULL DEFAULT 'complete' CHECK (state IN ('complete', 'incomplete', 'error')),
  error             TEXT    NOT NULL DEFAULT '',
  prompt_tokens     INTEGER,
  completion_tokens INTEGER,
  ttft_ms           REAL,
  tokens_per_second REAL,
  model             TEXT    NOT NULL DEFAULT '',
  created_at        INTEGER NOT NULL
);
INSERT INTO messages_v2 (id, uuid, conversation_id, parent_id, role, content, reasoning, state, prompt_tokens,
                         completion_tokens, ttft_ms, tokens_per_second, model, created_at)
  SELECT id,
         lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
           substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
         conversation_id, parent_id, role, content, reasoning, state, prompt_tokens,
         completion_tokens, ttft_ms, tokens_per_second, model, created_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v2 RENAME TO messages;
CREATE INDEX messages_by_conversation ON messages(conversation_id, created_at);
CREATE INDEX messages_by_parent ON messages(parent_id);

-- The rows kept their ids, so the external-content indexes stay valid; the dropped tables
-- took their triggers with them.
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
      {3, "trigram full-text indexes (CJK substrings)", R"sql(
-- unicode61 treats a run of CJK characters as one token, so a word inside a Chinese or
-- Japanese sentence was never found. The trigram tokenizer indexes every 3-character window
-- (case-folded) and so matches any substring of 3 or more characters in any script; shorter
-- queries are answered by a scan (HistoryDb::search).
DROP TRIGGER messages_ai;
DROP TRIGGER messages_ad;
DROP TRIGGER messages_au;
DROP TRIGGER conversations_ai;
DROP TRIGGER conversations_ad;
DROP TRIGGER conversations_au;
DROP TABLE message_search;
DROP TABLE conversation_search;

CREATE VIRTUAL TABLE message_search USING fts5(content, reasoning, content='messages', content_rowid='id',
                                               tokenize='trigram');
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
INSERT INTO message_search(message_search) VALUES ('rebuild');

CREATE VIRTUAL TABLE conversation_search USING fts5(title, content='conversations', content_rowid='id',
                                                    tokenize='trigram');
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
INSERT INTO conversation_search(conversation_search) VALUES ('rebuild');
)sql"},
      {4, "the knowledge a message was sent with, and its sources", R"sql(
-- A user message asked with documents or folders carries the excerpts the model read (sent
-- before its text, the same on every later turn) and the sources they cite, as a JSON array.
ALTER TABLE messages ADD COLUMN context TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN sources TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(sources));
)sql"},
      {5, "chat settings presets", R"sql(
-- Named chat settings (system prompt, sampling, stop strings) to apply to any conversation; a
-- conversation keeps its own copy in conversations.settings.
CREATE TABLE presets (
  name        TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
  settings    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
  updated_at  INTEGER NOT NULL
);
)sql"},
      {6, "why a reply ended", R"sql(
-- eos, stop_string, max_tokens, cancelled or error; empty for replies stored before.
ALTER TABLE messages ADD COLUMN stop_reason TEXT NOT NULL DEFAULT '';
)sql"},
  };
  return migrations;
}

}  // namespace day0::storage
