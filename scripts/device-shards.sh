#!/usr/bin/env bash
# device-shards.sh — one device call for issue 16 (shards and suites) on
# one GPU, FIL (and BTC) first 150,000 bars; everything to $OUT/log.txt:
#  1. 320 x 320 both precisions, --blocks 16 --wf rolling:8 on CUDA: a
#     single run against 8 shards merged (report compared value for value
#     by cmpreport; the wall time of each shard and of the merge; shard
#     file sizes);
#  2. the same grid as a suite over FIL and BTC: single suite run against
#     4 shards merged;
#  3. 1000 x 1000 = 10^6 combos, both precisions: 4 shards and the merge
#     to Parquet (shard sizes per combo, merge time and memory).
# Build here first (gzip keeps the carry under 64 MiB):
#   CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/sweepbench . && CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/cmpreport ./scripts/cmpreport &&
#   mkdir -p binz && gzip -9c bin/sweepbench >binz/sweepbench.gz && gzip -9c bin/cmpreport >binz/cmpreport.gz
#   run(command="bash scripts/device-shards.sh", carry=["binz"])
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
mkdir -p bin
for f in binz/*.gz; do [ -e "$f" ] || continue; b=bin/$(basename "$f" .gz); gunzip -c "$f" >"$b" && chmod +x "$b"; done
B=$PWD/bin/sweepbench
C=$PWD/bin/cmpreport
T() { /usr/bin/time -f '%e s wall, %M KB max RSS' "$@"; }
command -v /usr/bin/time >/dev/null || T() { "$@"; }
W=$(mktemp -d)
export XDG_DATA_HOME=$W/data XDG_CACHE_HOME=$W/cache
date -u
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
nproc
$B devices 2>&1 | head -3
F=(--head 150000 --hma 10:329:1 --hma3 12:331:1 --backend cuda --blocks 16 --wf rolling:8 --no-save -q)
$B run --data embedded:filusdt-1m --head 1000 --hma 10:20:10 --hma3 12:14 --backend cuda --no-save -q >/dev/null # warm the cache

echo "== 1. 320 x 320, single run vs 8 shards"
T $B run --data embedded:filusdt-1m "${F[@]}" --format json --out $W/single.json
for k in $(seq 0 7); do T $B run --data embedded:filusdt-1m "${F[@]}" --shard $k/8 --shard-dir $W/s1; done
ls -l $W/s1
T $B merge $W/s1 --format json --out $W/merged.json --no-save -q
$C $W/single.json $W/merged.json

echo "== 2. suite FIL + BTC, 320 x 320: single suite run vs 4 shards"
T $B run --data embedded:filusdt-1m --data embedded:btcusdt-1m "${F[@]}" --format json --out $W/suite.json
for k in 0 1 2 3; do T $B run --data embedded:filusdt-1m --data embedded:btcusdt-1m "${F[@]}" --shard $k/4 --shard-dir $W/s2; done
T $B merge $W/s2 --format json --out $W/suite-merged.json --no-save -q
$C $W/suite.json $W/suite-merged.json

echo "== 3. 1000 x 1000, 4 shards, merge to Parquet"
G=(--data embedded:filusdt-1m --head 150000 --hma 10:1009:1 --hma3 12:1011:1 --backend cuda --no-save -q)
T $B run "${G[@]}" --format parquet --out $W/single-1m.parquet
for k in 0 1 2 3; do T $B run "${G[@]}" --shard $k/4 --shard-dir $W/s3; done
ls -l $W/s3
T $B merge $W/s3 --format parquet --out $W/merged-1m.parquet --no-save -q
ls -l $W/single-1m.parquet $W/merged-1m.parquet
python3 - "$W/single-1m.parquet" "$W/merged-1m.parquet" <<'PY' || echo "parquet contents not compared (no pyarrow)"
import sys, pyarrow.parquet as pq
a, b = (pq.read_table(f) for f in sys.argv[1:3])
print("parquet: %d rows, %d columns; contents equal: %s" % (a.num_rows, a.num_columns, a.equals(b)))
PY
T $B merge $W/s3 --no-save -q | tail -5
rm -rf "$W"
