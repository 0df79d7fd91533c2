"""Monthly rainfall totals from the station's tipping-bucket counts.

Each tip of the bucket is 0.2 mm of rain. The script reads the CSV export (see
export_csv.py) and prints the total per month and the wettest day.
"""
import csv
import sys
from collections import defaultdict

MM_PER_TIP = 0.2


def monthly_totals(rows):
    totals = defaultdict(float)
    for row in rows:
        month = row["date"][:7]
        totals[month] += int(row["bucket_tips"]) * MM_PER_TIP
    return dict(sorted(totals.items()))


def wettest_day(rows):
    best = max(rows, key=lambda row: int(row["bucket_tips"]))
    return best["date"], int(best["bucket_tips"]) * MM_PER_TIP


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for month, millimetres in monthly_totals(rows).items():
        print(f"{month}: {millimetres:.1f} mm")
    day, amount = wettest_day(rows)
    print(f"wettest day: {day} with {amount:.1f} mm")


if __name__ == "__main__":
    main(sys.argv[1])
