#include <sqlite3.h>

#include <string>

#include "sensor_reader.h"

namespace tidepool {

// Appends one reading to the readings table (db/schema.sql). Uses a prepared statement that
// lives as long as the connection, because the station writes every ten seconds for years.
class ReadingStore {
 public:
  explicit ReadingStore(const std::string& path) {
    sqlite3_open(path.c_str(), &db_);
    sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    sqlite3_prepare_v2(db_,
                       "INSERT INTO readings(taken_at, temperature_c, humidity, pressure_hpa) VALUES(?, ?, ?, ?)",
                       -1, &insert_, nullptr);
  }
  ~ReadingStore() {
    sqlite3_finalize(insert_);
    sqlite3_close(db_);
  }

  bool save(const Reading& r) {
    sqlite3_reset(insert_);
    sqlite3_bind_int64(insert_, 1, r.timestamp_ms);
    sqlite3_bind_double(insert_, 2, r.temperature_c);
    sqlite3_bind_double(insert_, 3, r.humidity_percent);
    sqlite3_bind_double(insert_, 4, r.pressure_hpa);
    return sqlite3_step(insert_) == SQLITE_DONE;
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
};

}  // namespace tidepool
