#!/usr/bin/env python3
"""csvdiff.py A.csv B.csv: compare two `run --format csv` outputs row by
row (same combo order), ignoring the backend column; print, per precision,
how many rows differ in each column, and exit 1 when any does. A device
script's check of one backend against the reference."""
import csv
import sys
from collections import Counter

a = list(csv.DictReader(open(sys.argv[1])))
b = list(csv.DictReader(open(sys.argv[2])))
if len(a) != len(b):
    print(f"rows: {len(a)} vs {len(b)}")
    sys.exit(1)
diff = Counter()
for x, y in zip(a, b):
    for k in x:
        if k != "backend" and x[k] != y.get(k):
            diff[(x["precision"], k)] += 1
for (p, k), c in sorted(diff.items()):
    print(f"  {p} {k}: {c} of {len(a)} rows differ")
sys.exit(1 if diff else 0)
