#!/usr/bin/env bash
# device-profile.sh — where the large-grid time goes: the 320 x 320 fused
# rungs on 1 and 2 GPUs (with a Go CPU profile of the host side), the half
# grid 160 x 320 (what each of 2 GPUs gets) on one GPU, and, when Nsight
# Compute is installed, sweep_f32_k1's stall reasons on both grid sizes.
# bin/sweepbench is built here; run with carry ["bin"], kind nvidia-h200-x2.
# SWEEPBENCH_PTX_DIR=dir (after scripts/cuda-build.sh dir) times that PTX
# instead of the embedded one.
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
B=bin/sweepbench
{
	timeout 200 $B bench --hma 10:329:1 --hma3 12:331:1 --rungs M6/1gpu,M7/1gpu,M6,M7 --repeat 3 \
		--cpuprofile "$OUT/host.pprof" --save-json "$OUT/bench-320b.json" 2>/dev/null
	timeout 100 $B bench --hma 10:169:1 --hma3 12:331:1 --rungs M6/1gpu,M7/1gpu --repeat 3 2>/dev/null
} | tee "$OUT/bench.txt"
if command -v ncu >/dev/null; then
	for g in "10:169:1 12:331:1" "10:329:1 12:331:1"; do
		set -- $g
		echo "== ncu sweep_f32_k1, grid $1 x $2"
		timeout 200 ncu --clock-control none -k regex:sweep_f32_k1 --launch-skip 1 --launch-count 1 \
			--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
			--section LaunchStats --section MemoryWorkloadAnalysis --print-details all \
			$B bench --hma "$1" --hma3 "$2" --rungs M6/1gpu --repeat 1 2>&1
	done >"$OUT/ncu.log"
	grep -E '^==|Stall|Warp Cycles|Issued|Eligible|Occupancy|Throughput|Duration|Registers|Hit Rate' "$OUT/ncu.log" | head -90
else
	echo "ncu not installed"
fi
