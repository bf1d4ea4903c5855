#!/usr/bin/env bash
# device-final.sh — the closing device call for issues 13 and 14 on one
# H200: every GPU test, 80 combos (auto and cuda), 320 x 320 without and
# with robustness (stage times from SWEEPBENCH_TIMINGS), the bench ladder's
# fused GPU rungs at 320 x 320 (nothing slower), and on two of the host's
# cores (taskset) the reference backend's robustness and parity costs with
# a CPU profile. All output in $OUT/log.txt.
# Build here first (gzip keeps the carry under 64 MiB):
#   CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/sweepbench . &&
#   CGO_ENABLED=0 go test -ldflags="-s -w" -c -o bin/cuda.test ./cuda &&
#   mkdir -p binz && gzip -9c bin/sweepbench >binz/sweepbench.gz && gzip -9c bin/cuda.test >binz/cuda.test.gz
#   run(command="bash scripts/device-final.sh", carry=["binz"])
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT" bin
exec > >(tee -a "$OUT/log.txt") 2>&1
for f in sweepbench cuda.test; do gunzip -c "binz/$f.gz" >"bin/$f" && chmod +x "bin/$f"; done
B=bin/sweepbench
T() { /usr/bin/time -f '%e s wall, %U s user, %M KB max RSS' "$@"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
echo "== 0. every GPU test"
timeout 240 bin/cuda.test -test.v -test.run GPU -test.skip GPUTiming -test.timeout 230s >"$OUT/gputest.txt" 2>&1
echo "exit $?"; grep -E '^(--- |PASS|FAIL|ok|panic)' "$OUT/gputest.txt" | sort | uniq -c | sort -rn | head -40
RUN="$B run --no-save --head 150000"
$RUN --backend cuda --hma 10:20 --hma3 12:20 >/dev/null 2>&1
echo "== 1. 80 combos: auto, then --backend cuda (3 runs each)"
for i in 1 2 3; do T $RUN 2>&1 >/dev/null | tail -1; done
for i in 1 2 3; do T $RUN --backend cuda 2>&1 >/dev/null | tail -1; done
G320="--hma 10:329:1 --hma3 12:331:1"
echo "== 2. 320x320, cuda: without / with --blocks 16 --wf rolling:8 (4 runs each)"
for i in 1 2 3 4; do
	T $RUN --backend cuda $G320 2>&1 >/dev/null | tail -1
	SWEEPBENCH_TIMINGS=1 T $RUN --backend cuda $G320 --blocks 16 --wf rolling:8 2>&1 >/tmp/b.txt | tr '\n' ' '; echo
done
sed -n '/^Parity/,/^Robustness/p' /tmp/b.txt | head -4
echo "== 3. bench, 320x320, fused GPU rungs"
timeout 120 $B bench $G320 --rungs M6/1gpu,M7/1gpu --repeat 3 2>/dev/null | grep -E 'M6|M7' | head -6
echo "== 4. two cores (taskset -c 0,1), reference, 320x320 on 20,000 bars"
R2="taskset -c 0,1 $B run --backend reference --no-save --head 20000 $G320"
for i in 1 2; do
	T $R2 2>&1 >/dev/null | tail -1
	T $R2 --blocks 16 --wf rolling:8 2>&1 >/dev/null | tail -1
done
SWEEPBENCH_CPUPROFILE="$OUT/cpu2-plain.pprof" $R2 >/dev/null 2>&1
SWEEPBENCH_CPUPROFILE="$OUT/cpu2-blocks.pprof" $R2 --blocks 16 --wf rolling:8 >/dev/null 2>&1
date -u
