#!/bin/bash
# Nightly backup of the readings database, run from cron at 03:15.
# Keeps the last 14 copies; uses SQLite's online backup so the station keeps writing.
set -euo pipefail

DB=/var/lib/tidepool/readings.db
DEST=/mnt/usb/tidepool-backups
KEEP=14

mkdir -p "$DEST"
stamp=$(date +%Y%m%d)
sqlite3 "$DB" ".backup '$DEST/readings-$stamp.db'"
gzip -f "$DEST/readings-$stamp.db"

# Rotate: delete everything but the newest $KEEP archives.
ls -1t "$DEST"/readings-*.db.gz | tail -n +$((KEEP + 1)) | xargs -r rm --
