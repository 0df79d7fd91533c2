-- One row per reading of the sensor board (every ten seconds).
CREATE TABLE IF NOT EXISTS readings (
  id INTEGER PRIMARY KEY,
  taken_at INTEGER NOT NULL,          -- Unix milliseconds
  temperature_c REAL NOT NULL,
  humidity REAL NOT NULL,
  pressure_hpa REAL NOT NULL,
  bucket_tips INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS readings_by_time ON readings(taken_at);

-- Daily summary kept for ten years, after raw readings older than a year are deleted.
CREATE TABLE IF NOT EXISTS daily (
  day TEXT PRIMARY KEY,
  min_c REAL, max_c REAL, rain_mm REAL
);
