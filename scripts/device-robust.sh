#!/usr/bin/env bash
# device-robust.sh — one device call for issues 13 (tiles) and 14 (the cost
# of robustness): on the embedded FIL data, first 150,000 bars,
#  1. 320 x 320 both precisions with parity, without and with `--blocks 16
#     --wf rolling:8` (3 runs each; wall and max RSS from /usr/bin/time, the
#     lanes' own times from the table), and a Go CPU profile of the blocks run;
#  2. tiles on the GPU: 320 x 320 untiled and under SWEEPBENCH_SERIES_BUDGET
#     (CSV rows compared byte for byte, parity sections compared), and the
#     10^7-combo fp32 grid to Parquet untiled and in bands of rows.
# Build here first: CGO_ENABLED=0 go build -o bin/sweepbench .
#   run(command="bash scripts/device-robust.sh", carry=["bin"])
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
B=bin/sweepbench
if [ -x /usr/bin/time ]; then
	T() { /usr/bin/time -f '%e s wall, %M KB max RSS' "$@"; }
else # no GNU time: the same two figures from Python
	T() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); r=subprocess.call(sys.argv[1:]); w=time.time()-t
print("%.2f s wall, %d KB max RSS" % (w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=sys.stderr); sys.exit(r)' "$@"; }
fi
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
	nproc
	$B devices 2>&1 | head -5
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
G320="--hma 10:329:1 --hma3 12:331:1"
RUN="$B run --backend cuda --no-save --head 150000"
$RUN --hma 10:20 --hma3 12:20 >/dev/null 2>&1 # warm-up: driver, caches
echo "== 320x320 without / with --blocks 16 --wf rolling:8"
for i in 1 2 3; do
	T $RUN $G320 >"$OUT/r320-plain-$i.txt" 2>"$OUT/r320-plain-$i.err"; tail -1 "$OUT/r320-plain-$i.err"
	T $RUN $G320 --blocks 16 --wf rolling:8 >"$OUT/r320-blocks-$i.txt" 2>"$OUT/r320-blocks-$i.err"; tail -1 "$OUT/r320-blocks-$i.err"
done
grep -E 'fp64|fp32' "$OUT/r320-plain-1.txt" | head -2
grep -E 'fp64|fp32' "$OUT/r320-blocks-1.txt" | head -2
SWEEPBENCH_CPUPROFILE="$OUT/blocks.pprof" $RUN $G320 --blocks 16 --wf rolling:8 >/dev/null 2>&1
SWEEPBENCH_CPUPROFILE="$OUT/plain.pprof" $RUN $G320 >/dev/null 2>&1
echo "== tiles on the GPU: 320x320 under a 200 MiB series budget"
T $RUN $G320 --format csv --out "$OUT/whole.csv" >"$OUT/whole.txt" 2>"$OUT/whole.err"; tail -1 "$OUT/whole.err"
SWEEPBENCH_SERIES_BUDGET=200MiB T $RUN $G320 --format csv --out "$OUT/tiled.csv" >"$OUT/tiled.txt" 2>"$OUT/tiled.err"; tail -1 "$OUT/tiled.err"
grep -o 'run in [0-9]* tiles[^;]*' "$OUT/tiled.txt" | head -1
cmp "$OUT/whole.csv" "$OUT/tiled.csv" && echo "CSV identical ($(wc -l <"$OUT/whole.csv") lines)"
$RUN $G320 >"$OUT/whole-table.txt" 2>&1
SWEEPBENCH_SERIES_BUDGET=200MiB $RUN $G320 >"$OUT/tiled-table.txt" 2>&1
diff <(sed -n '/^Parity/,$p' "$OUT/whole-table.txt") <(sed -n '/^Parity/,$p' "$OUT/tiled-table.txt") >/dev/null && echo "parity sections identical"
rm -f "$OUT/whole.csv" "$OUT/tiled.csv"
echo "== 10^7 fp32 to Parquet: untiled, and in bands (1 GiB budget)"
G10M="--hma 10:3171:1 --hma3 12:3173:1 --precision fp32 --format parquet"
T $RUN $G10M --out /tmp/w.parquet >"$OUT/w10m.txt" 2>"$OUT/w10m.err"; tail -1 "$OUT/w10m.err"
SWEEPBENCH_SERIES_BUDGET=1GiB T $RUN $G10M --out /tmp/t.parquet >"$OUT/t10m.txt" 2>"$OUT/t10m.err"; tail -1 "$OUT/t10m.err"
grep -o 'run in [0-9]* tiles[^;]*' "$OUT/t10m.txt" | head -1
cmp /tmp/w.parquet /tmp/t.parquet && echo "Parquet identical" || ls -l /tmp/w.parquet /tmp/t.parquet
rm -f /tmp/w.parquet /tmp/t.parquet
