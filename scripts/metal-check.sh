#!/usr/bin/env bash
# metal-check.sh — the Metal backend's check on a Mac (Apple GPU, macOS 13+,
# Go installed). Until this has passed on real hardware the Metal backend is
# compiled and unit-tested only (on Linux: cross-build, vet, the host
# emulation of the kernels). Run from anywhere; writes into $OUT
# (default: a fresh temporary folder) and prints a summary.
#
#  1. builds sweepbench (CGO_ENABLED=0) and lists the devices;
#  2. go test ./metal on the GPU: the backend conformance suite (Metal fp32
#     == the reference's fp32 bit for bit on all metrics but CVaR, summed in
#     another order; every slot written; cancellation; chunking; the fp64
#     lane of a study on the fallback; the per-block statistics), the
#     per-block statistics bit for bit over several dispatches
#     (TestGPUBlockStats: block_stats_f32 and its software binary64), and
#     the shared host code (./reference/kernels: bins, finishing, launch
#     sizing, FinishBlocks);
#  3. per embedded dataset: a reference fp64 run, a reference fp32 run and
#     a Metal fp32 run, saved to a private sessions database, then
#       sessions diff REF64 METAL32   the parity report (verdict pass/collapse)
#       sessions diff REF32 METAL32   must show no difference at all
#     (Metal has no fp64, so the fp64 side comes from the reference);
#  4. robustness (--blocks 16 --wf rolling:8) of an fp32-only study on the
#     reference and on Metal (whose block statistics then come from the
#     GPU): the JSON reports' robustness sections must be identical;
#  5. sweepbench bench --rungs M2,M3,M4,Metal and prints the table.
set -euo pipefail
[ "$(uname -s)" = Darwin ] || { echo "metal-check: run this on a Mac (uname: $(uname -s))" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d -t sweepbench-metal)}
mkdir -p "$OUT"
db="$OUT/sessions.db"
rm -f "$db"
bin="$OUT/sweepbench"
cd "$root"
export CGO_ENABLED=0

echo "== build ($(sw_vers -productVersion 2>/dev/null || true), $(sysctl -n machdep.cpu.brand_string 2>/dev/null || true))"
go build -o "$bin" .
"$bin" version
"$bin" devices | tee "$OUT/devices.txt"
grep -q '^metal  *available' "$OUT/devices.txt" || { echo "metal-check: the Metal backend is not available here (see above)" >&2; exit 1; }

echo "== go test ./metal (the conformance suite on the GPU) ./reference/kernels"
go test -count=1 -v -run 'GPU|Layout|Dispatch|Source|Assemble|Bins|Scratch|CheckJob|Finish|Launch|Select' ./metal ./reference/kernels 2>&1 | tee "$OUT/test.log" | grep -E '^(---|ok|FAIL|PASS)|gpu_darwin_test' || true
grep -q '^ok  *sweepbench/metal' "$OUT/test.log" && ! grep -q '^FAIL' "$OUT/test.log" || { echo "metal-check: go test ./metal failed: $OUT/test.log" >&2; exit 1; }

last_id() { "$bin" --db "$db" sessions ls -n 1 | awk 'NR==2 {print $1}'; }
run() { "$bin" --db "$db" run -q --format json -o "$OUT/$1.json" "${@:2}"; last_id; }

status=0
for ds in filusdt-1m btcusdt-1m; do
	echo "== $ds"
	ref64=$(run "$ds-ref64" --data "embedded:$ds" --backend reference --precision fp64)
	ref32=$(run "$ds-ref32" --data "embedded:$ds" --backend reference --precision fp32)
	met32=$(run "$ds-metal32" --data "embedded:$ds" --backend metal --precision fp32)
	echo "sessions: reference fp64 #$ref64, reference fp32 #$ref32, metal fp32 #$met32"
	echo "-- parity: metal fp32 against the fp64 reference"
	"$bin" --db "$db" sessions diff "$ref64" "$met32" | tee "$OUT/$ds-parity.txt"
	"$bin" --db "$db" sessions diff "$ref64" "$met32" --format json >"$OUT/$ds-parity.json"
	echo "-- bit-identity: metal fp32 against the reference fp32 (want no difference)"
	"$bin" --db "$db" sessions diff "$ref32" "$met32" | tee "$OUT/$ds-fp32.txt"
	"$bin" --db "$db" sessions diff "$ref32" "$met32" --format json >"$OUT/$ds-fp32.json"
	# Trades must agree combo by combo with the CPU's fp32 path.
	if ! python3 - "$OUT/$ds-ref32.json" "$OUT/$ds-metal32.json" <<'PY'; then status=1; fi
import json, sys
def trades(path):
    rep = json.load(open(path))
    runs = rep.get("runs") or []
    out = {}
    for run in runs:
        for r in run.get("combos") or []:
            out[(r.get("hma"), r.get("hma3"))] = r.get("total_trades")
    return out
a, b = trades(sys.argv[1]), trades(sys.argv[2])
if not a or not b:
    print("trade check: no per-combo results in the JSON (see the diff above)"); sys.exit(0)
bad = [k for k in a if a[k] != b.get(k)]
print(f"trade check: {len(a)} combos, {len(bad)} with different trade counts (metal fp32 vs reference fp32)")
for k in bad[:10]:
    print(f"  combo {k}: reference {a[k]}, metal {b.get(k)}")
sys.exit(1 if bad else 0)
PY
done

echo "== robustness: --blocks 16 on Metal fp32 against the reference fp32 (want the same section)"
for ds in filusdt-1m; do
	for be in reference metal; do
		"$bin" run -q --no-save --format json -o "$OUT/$ds-blocks-$be.json" --data "embedded:$ds" --head 50000 \
			--backend "$be" --precision fp32 --blocks 16 --wf rolling:8
	done
	if ! python3 - "$OUT/$ds-blocks-reference.json" "$OUT/$ds-blocks-metal.json" <<'PY'; then status=1; fi
import json, sys
a, b = (json.load(open(p)).get("robustness") for p in sys.argv[1:3])
if not a or not b:
    print("robustness check: a report has no robustness section"); sys.exit(1)
if a != b:
    print("robustness check: the sections differ (metal fp32 vs reference fp32):")
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print(f"  {k}: reference {a.get(k)}, metal {b.get(k)}")
    sys.exit(1)
print(f"robustness check: identical ({a.get('blocks')} blocks, PBO {a.get('pbo')}, selected {a.get('selected')})")
PY
done

echo "== bench (M2, M3, M4 on the CPU; Metal on the GPU)"
"$bin" bench --rungs M2,M3,M4,Metal | tee "$OUT/bench.txt"

echo "== metal-check: results in $OUT"
[ $status = 0 ] && echo "metal-check: PASS" || echo "metal-check: FAIL (trade counts or the robustness section differ from the CPU fp32 path: see above)"
exit $status
