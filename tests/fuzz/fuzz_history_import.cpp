// History import (a day0-history JSON file) into an in-memory database migrated as the app's,
// emptied after each input (migrating a fresh one per input would cost most of the time).
// Import checks everything before writing, so a refused file must leave the database empty; an
// accepted one must export and re-import into itself adding nothing.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "storage/database.h"
#include "storage/history_db.h"
#include "storage/migrations.h"
#include "storage/transfer.h"

namespace {

std::int64_t rows(day0::storage::HistoryDb& db) {
  auto n = db.database().query_int(
      "SELECT (SELECT count(*) FROM conversations) + (SELECT count(*) FROM messages) + "
      "(SELECT count(*) FROM attachments) + (SELECT count(*) FROM blobs)");
  DAY0_FUZZ_CHECK(n.is_ok(), "count rows");
  return n.value();
}

day0::storage::HistoryDb& history() {
  static day0::storage::HistoryDb* db = [] {
    auto opened = day0::storage::Database::open(":memory:");
    DAY0_FUZZ_CHECK(opened.is_ok(), "open an in-memory database");
    day0::storage::Database d = std::move(opened).value();
    DAY0_FUZZ_CHECK(d.migrate(day0::storage::history_migrations()).is_ok(), "migrate");
    return new day0::storage::HistoryDb(std::move(d));
  }();
  return *db;
}

void empty(day0::storage::HistoryDb& db) {
  // Messages and attachments go with their conversations (ON DELETE CASCADE); the search
  // indexes follow through their triggers.
  DAY0_FUZZ_CHECK(db.database().exec("DELETE FROM conversations; DELETE FROM blobs;").is_ok(), "empty the database");
  DAY0_FUZZ_CHECK(rows(db) == 0, "rows left after emptying");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace day0::storage;
  HistoryDb& db = history();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto report = import_json(db, text);
  if (!report) {
    DAY0_FUZZ_CHECK(!report.error().message.empty(), "an error needs a message");
    DAY0_FUZZ_CHECK(rows(db) == 0, "a refused import wrote rows");
    return 0;
  }
  const std::int64_t before = rows(db);
  auto exported = export_json(db);
  DAY0_FUZZ_CHECK(exported.is_ok(), "export after import");
  auto again = import_json(db, exported.value());
  DAY0_FUZZ_CHECK(again.is_ok(), "re-importing the export failed");
  DAY0_FUZZ_CHECK(again->conversations_added == 0 && again->messages_added == 0 && again->attachments_added == 0,
                  "re-importing the export added something");
  DAY0_FUZZ_CHECK(rows(db) == before, "re-importing the export changed the row count");
  empty(db);
  return 0;
}
