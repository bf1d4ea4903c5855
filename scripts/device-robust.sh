#!/usr/bin/env bash
# device-robust.sh — one device call for issues 13 (tiles, auto on small
# studies) and 14 (the cost of robustness), on the embedded FIL data, first
# 150,000 bars; everything goes to $OUT/log.txt (the CPU profile beside it):
#  0. the GPU tests of tiles, block statistics, PBO and parity;
#  1. 80 combos (the default grid) under auto and under --backend cuda;
#  2. 320 x 320 both precisions with parity, without and with `--blocks 16
#     --wf rolling:8` (3 runs each; wall and max RSS from /usr/bin/time, the
#     stages' wall times from SWEEPBENCH_TIMINGS), a CPU profile of the
#     blocks run;
#  3. tiles on the GPU: 320 x 320 untiled and under SWEEPBENCH_SERIES_BUDGET
#     (CSV compared byte for byte, parity sections compared), and 10^7 fp32
#     combos to Parquet untiled and in bands of rows.
# Build here first:
#   CGO_ENABLED=0 go build -o bin/sweepbench . && CGO_ENABLED=0 go test -c -o bin/cuda.test ./cuda
#   run(command="bash scripts/device-robust.sh", carry=["bin"])
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
exec > >(tee -a "$LOG") 2>&1
B=bin/sweepbench
T() { /usr/bin/time -f '%e s wall, %M KB max RSS' "$@"; }
command -v /usr/bin/time >/dev/null || T() { python3 -c 'import resource,subprocess,sys,time
t=time.time(); r=subprocess.call(sys.argv[1:]); w=time.time()-t
print("%.2f s wall, %d KB max RSS" % (w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=sys.stderr); sys.exit(r)' "$@"; }
date -u
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
nproc
$B devices 2>&1 | head -5
echo "== 0. GPU tests"
timeout 240 bin/cuda.test -test.v -test.run 'GPUTiledStudy|GPUBlockStats|GPUPBO|GPUParityStudy' -test.timeout 230s 2>&1 |
	grep -E '^(--- |PASS|FAIL|ok|panic)|tiles|flips' | tail -20
RUN="$B run --no-save --head 150000"
$RUN --backend cuda --hma 10:20 --hma3 12:20 >/dev/null 2>&1 # warm-up: driver, caches
echo "== 1. 80 combos: auto (3 runs), --backend cuda (3 runs)"
for i in 1 2 3; do SWEEPBENCH_TIMINGS=1 T $RUN 2>&1 >/tmp/a.txt | grep -v '^auto'; done
grep -m1 'auto' /tmp/a.txt; $RUN 2>&1 | grep -m1 'auto:'
for i in 1 2 3; do T $RUN --backend cuda 2>&1 >/dev/null | tail -1; done
G320="--hma 10:329:1 --hma3 12:331:1"
RC="$RUN --backend cuda"
echo "== 2. 320x320 without / with --blocks 16 --wf rolling:8"
for i in 1 2 3; do
	echo "-- plain $i"; SWEEPBENCH_TIMINGS=1 T $RC $G320 2>&1 >/tmp/p.txt | tail -5
	echo "-- blocks $i"; SWEEPBENCH_TIMINGS=1 T $RC $G320 --blocks 16 --wf rolling:8 2>&1 >/tmp/b.txt | tail -5
done
grep -E ' fp64 | fp32 ' /tmp/p.txt | head -2
grep -E ' fp64 | fp32 ' /tmp/b.txt | head -2
sed -n '/^Robustness/,$p' /tmp/b.txt | head -12
SWEEPBENCH_CPUPROFILE="$OUT/blocks.pprof" $RC $G320 --blocks 16 --wf rolling:8 >/dev/null 2>&1
echo "== 3. tiles on the GPU: 320x320 under a 200 MiB series budget"
T $RC $G320 --format csv --out /tmp/whole.csv 2>&1 >/dev/null | tail -1
SWEEPBENCH_SERIES_BUDGET=200MiB T $RC $G320 --format csv --out /tmp/tiled.csv 2>&1 >/dev/null | grep -E 'tiles|wall'
cmp /tmp/whole.csv /tmp/tiled.csv && echo "CSV identical ($(wc -l </tmp/whole.csv) lines)"
$RC $G320 >/tmp/wt.txt 2>&1
SWEEPBENCH_SERIES_BUDGET=200MiB $RC $G320 >/tmp/tt.txt 2>&1
diff <(sed -n '/^Parity/,$p' /tmp/wt.txt) <(sed -n '/^Parity/,$p' /tmp/tt.txt) && echo "parity sections identical"
grep -E ' fp64 | fp32 ' /tmp/tt.txt | head -2
rm -f /tmp/whole.csv /tmp/tiled.csv
echo "== 10^7 fp32 to Parquet: untiled, and in bands (1 GiB budget)"
G10M="--hma 10:3171:1 --hma3 12:3173:1 --precision fp32 --format parquet"
T $RC $G10M --out /tmp/w.parquet 2>&1 >/dev/null | tail -1
SWEEPBENCH_SERIES_BUDGET=1GiB T $RC $G10M --out /tmp/t.parquet 2>&1 >/dev/null | grep -E 'tiles|wall'
ls -l /tmp/w.parquet /tmp/t.parquet
cmp /tmp/w.parquet /tmp/t.parquet && echo "Parquet identical" || echo "first difference above; the footer (metadata: the tiling note) starts near the end"
python3 -c '
import pyarrow.parquet as pq
a=pq.read_table("/tmp/w.parquet"); b=pq.read_table("/tmp/t.parquet")
print("pyarrow: rows", a.num_rows, b.num_rows, "tables equal:", a.equals(b))' 2>&1 | tail -2
rm -f /tmp/w.parquet /tmp/t.parquet
