#!/usr/bin/env bash
# device-parity.sh — one device call for issue 13's CPU parity target and
# the streamed suite JSON: on two of the host's cores (taskset -c 0,1), the
# reference backend's whole command at 320 x 320 on 20,000 FIL bars, both
# precisions with parity, with a CPU profile (the parity pass's share of
# the lanes' CPU time); BenchmarkPositionFlips on one core; then on the
# GPU the 320 x 320 suite over FIL and BTC to JSON (was 16.4 s, 2.3 GB)
# against the single dataset, and 320 x 320 with the parity on the CPU
# (SWEEPBENCH_PARITY=cpu). All output in $OUT/log.txt, profiles in $OUT.
# Build here first:
#   CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/sweepbench . &&
#   CGO_ENABLED=0 go test -ldflags="-s -w" -c -o bin/reference.test ./reference &&
#   mkdir -p binz && for f in sweepbench reference.test; do gzip -9c bin/$f >binz/$f.gz; done
#   run(command="bash scripts/device-parity.sh", carry=["binz"])
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT" bin
exec > >(tee -a "$OUT/log.txt") 2>&1
for f in binz/*.gz; do b=bin/$(basename "$f" .gz); [ -x "$b" ] || { gunzip -c "$f" >"$b" && chmod +x "$b"; }; done
B=$PWD/bin/sweepbench
T() { /usr/bin/time -f '%e s wall, %U s user, %M KB max RSS' "$@"; }
W=$(mktemp -d)
export XDG_DATA_HOME=$W/data XDG_CACHE_HOME=$W/cache
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E 'Model name|^CPU\(s\)'
G320=(--data embedded:filusdt-1m --hma 10:329:1 --hma3 12:331:1 --precision both -q)
echo "== 1. two cores, reference, 320 x 320 on 20,000 bars, both precisions with parity"
R2=(taskset -c 0,1 $B run --backend reference --no-save --head 20000 "${G320[@]}")
"${R2[@]}" >/dev/null 2>&1 # the dataset cache
for i in 1 2 3; do T "${R2[@]}" 2>&1 >/dev/null | tail -1; done
SWEEPBENCH_CPUPROFILE="$OUT/cpu2-plain.pprof" "${R2[@]}" >/dev/null 2>&1
echo "== 2. BenchmarkPositionFlips, BenchmarkBacktest (one core)"
taskset -c 2 bin/reference.test -test.run '^$' -test.bench 'PositionFlips|Backtest/fp' -test.benchtime 300x -test.count 3 2>&1 | grep -E '^Benchmark'
echo "== 3. GPU: 320 x 320 on 150,000 bars, one dataset and the suite FIL + BTC, JSON"
F=(--head 150000 --hma 10:329:1 --hma3 12:331:1 --backend cuda --blocks 16 --wf rolling:8 --no-save -q)
$B run --data embedded:filusdt-1m --head 1000 --hma 10:20:10 --hma3 12:14 --backend cuda --no-save -q >/dev/null
for i in 1 2; do
	T $B run --data embedded:filusdt-1m "${F[@]}" --format json --out $W/single.json
	SWEEPBENCH_TIMINGS=1 T $B run --data embedded:filusdt-1m --data embedded:btcusdt-1m "${F[@]}" --format json --out $W/suite.json
done
ls -l $W/single.json $W/suite.json
python3 -c "import json,sys; d=json.load(open('$W/suite.json')); print('suite JSON parses:', list(d), len(d['datasets']), 'datasets')"
echo "== 4. GPU lanes, parity on the CPU (SWEEPBENCH_PARITY=cpu), 320 x 320, 150,000 bars"
for i in 1 2; do
	T $B run --data embedded:filusdt-1m --head 150000 --hma 10:329:1 --hma3 12:331:1 --backend cuda --no-save -q >$W/gpu.txt
	SWEEPBENCH_PARITY=cpu T $B run --data embedded:filusdt-1m --head 150000 --hma 10:329:1 --hma3 12:331:1 --backend cuda --no-save -q >$W/cpu.txt
done
sed -n '/^Parity/,/^$/p' $W/gpu.txt | head -3
if diff <(sed -n '/^Parity/,$p' $W/gpu.txt) <(sed -n '/^Parity/,$p' $W/cpu.txt) >/dev/null; then echo "parity sections identical (GPU and CPU)"; else echo "parity sections DIFFER"; diff <(sed -n '/^Parity/,$p' $W/gpu.txt) <(sed -n '/^Parity/,$p' $W/cpu.txt) | head -20; fi
date -u
rm -rf "$W"
