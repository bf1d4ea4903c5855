#!/usr/bin/env bash
# device-bench.sh — one device call for the GPU figures in docs/PERFORMANCE.md:
# the GPU tests with every visible GPU (sharding), then `sweepbench bench` on
# the embedded FIL data (150,000 bars) for the default 80-combo grid, the
# 320 x 320 grid and the 1000 x 1000 grid. Build here first:
#   CGO_ENABLED=0 go build -o bin/sweepbench . && CGO_ENABLED=0 go test -c -o bin/cuda.test ./cuda
#   run(command="bash scripts/device-bench.sh", carry=["bin"], kind="nvidia-h200-x2")
# Options (environment): SKIP_TESTS=1 leaves out the GPU tests; GRIDS picks
# the ladders (default "80 320 1000"); NCU=1 adds Nsight Compute's stall
# reasons for sweep_f32_k1 on the 160 x 320 half grid (each GPU's share of
# 320 x 320 on two GPUs). Everything lands in $OUT (tables as .txt, JSON as .json).
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
B=bin/sweepbench
GRIDS=${GRIDS:-80 320 1000}
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
	nproc
	$B version
	$B devices
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
	timeout 300 bin/cuda.test -test.v -test.run GPU -test.timeout 280s >"$OUT/gputest.log" 2>&1
	echo "gpu tests exit $?"
	grep -E '^(--- |PASS|FAIL|ok)' "$OUT/gputest.log" | tail -20
fi
for g in $GRIDS; do
	case $g in
	80) # The method ladder at the article's scale (all rungs).
		timeout 200 $B bench --save-json "$OUT/bench-80.json" >"$OUT/bench-80.txt" 2>"$OUT/bench-80.err" ;;
	320) # 102,400 combos: the CPU rungs on all cores, the article's method, the fused GPU rungs.
		timeout 200 $B bench --hma 10:329:1 --hma3 12:331:1 --rungs M3,M4,M5,M6,M7,M6/1gpu,M7/1gpu --repeat 2 \
			--save-json "$OUT/bench-320.json" >"$OUT/bench-320.txt" 2>"$OUT/bench-320.err" ;;
	1000) # 1,000,000 combos: fused GPU rungs at every GPU count.
		timeout 150 $B bench --hma 10:1009:1 --hma3 12:1011:1 --rungs M6,M7,M6/1gpu,M7/1gpu --repeat 2 \
			--save-json "$OUT/bench-1000.json" >"$OUT/bench-1000.txt" 2>"$OUT/bench-1000.err" ;;
	esac
	echo "bench $g exit $?"
	cat "$OUT/bench-$g.txt"
done
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
	timeout 120 ncu --clock-control none -k regex:sweep_f32_k1 --launch-skip 1 --launch-count 1 \
		--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
		$B bench --hma 10:169:1 --hma3 12:331:1 --rungs M6/1gpu --repeat 1 >"$OUT/ncu.log" 2>&1
	echo "ncu exit $?"
	grep -E 'Stall (Long|Wait|Not Sel|Math|Branch|Dispatch|Short)|Eligible Warps Per Scheduler   |Issued Warp Per Scheduler   |Achieved Occupancy   |Duration|Warp Cycles Per Issued' "$OUT/ncu.log"
fi
