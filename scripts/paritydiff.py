#!/usr/bin/env python3
"""paritydiff.py A.json B.json: compare the "parity" objects of two sweepbench
JSON reports (run --format json), every field but where it ran ("device",
"compared"). Exit 1 and print the first differences when they differ."""
import json
import sys


def load(path):
    with open(path) as f:
        p = json.load(f).get("parity")
    if p is None:
        sys.exit(f"{path}: no parity object")
    p.pop("compared", None)
    where = p.pop("device", None) or "the CPU"
    print(f"  {path}: parity on {where}")
    return p


def diff(a, b, path, out):
    if type(a) is not type(b):
        out.append(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            diff(a.get(k), b.get(k), f"{path}.{k}", out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")


a, b = load(sys.argv[1]), load(sys.argv[2])
out = []
diff(a, b, "parity", out)
if out:
    print(f"  parity differs in {len(out)} places:")
    for line in out[:12]:
        print("   ", line)
    sys.exit(1)
print(f"  parity identical ({len(a.get('combos', []))} combos, {a.get('flip_count')} flips, verdict {a.get('verdict')})")
