#!/bin/sh
# Copies the station build to the Raspberry Pi and restarts the systemd service.
set -eu
HOST="${1:-pi@tidepool.local}"

cmake --build build --target tidepool-station
rsync -az build/station/tidepool-station "$HOST:/usr/local/bin/"
rsync -az config/station.toml "$HOST:/etc/tidepool/station.toml"
ssh "$HOST" sudo systemctl restart tidepool-station.service
ssh "$HOST" systemctl --no-pager status tidepool-station.service | head -n 5
