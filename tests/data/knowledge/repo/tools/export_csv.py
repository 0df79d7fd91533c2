#!/usr/bin/env python3
"""Exports readings from the station database to CSV, one row per day."""
import argparse
import csv
import sqlite3

QUERY = """
SELECT date(taken_at / 1000, 'unixepoch') AS day,
       min(temperature_c), max(temperature_c), avg(humidity), sum(bucket_tips)
FROM readings GROUP BY day ORDER BY day
"""


def export(database, out_path):
    connection = sqlite3.connect(database)
    with open(out_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["date", "min_c", "max_c", "humidity", "bucket_tips"])
        for row in connection.execute(QUERY):
            writer.writerow(row)
    connection.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="/var/lib/tidepool/readings.db")
    parser.add_argument("--out", default="readings.csv")
    args = parser.parse_args()
    export(args.db, args.out)
