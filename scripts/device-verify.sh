#!/usr/bin/env bash
# device-verify.sh — after a kernel or host change, in one device call:
# build the PTX with nvcc into $OUT/ptx (copy it into cuda/ptx here when the
# tests pass), run every GPU test on it (SWEEPBENCH_PTX_DIR makes both
# binaries load it; the timing test is left to the bench), then the bench:
# the 80-combo grid's GPU rungs, the 320 x 320 fused rungs on 1 and on all
# GPUs, the half grid 160 x 320 on one GPU (each GPU's share on two), and
# the 320 x 320 rungs again on the PTX embedded in the binary (the version
# before, for an A/B on the same machine). Last, compute-sanitizer memcheck
# on the small-grid test. Build here first:
#   CGO_ENABLED=0 go build -o bin/sweepbench . && CGO_ENABLED=0 go test -c -o bin/cuda.test ./cuda
#   run(command="bash scripts/device-verify.sh", carry=["bin"], kind="nvidia-h200-x2")
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT/ptx"
B=bin/sweepbench
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
	bash scripts/cuda-build.sh "$OUT/ptx" &&
		nvcc -cubin -arch=sm_90 --fmad=false -O3 -std=c++17 -Xptxas -v -Ireference/kernels \
			-o /tmp/sweep.cubin cuda/kernels/sweep.cu 2>&1 | grep -E 'registers|spill|Compiling entry'
} >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
grep -E 'cuda-build|k1' "$OUT/build.log" | tail -4
timeout 200 env SWEEPBENCH_PTX_DIR="$OUT/ptx" bin/cuda.test -test.v -test.run GPU -test.skip GPUTiming \
	-test.timeout 190s >"$OUT/gputest.log" 2>&1
echo "gpu tests exit $?"
grep -E '^(--- |PASS|FAIL|ok|panic)|GPUs|combos on' "$OUT/gputest.log" | tail -24
{
	echo "== new PTX"
	export SWEEPBENCH_PTX_DIR="$OUT/ptx"
	timeout 60 $B bench --rungs M6/1gpu,M7/1gpu --repeat 3 2>/dev/null
	timeout 90 $B bench --hma 10:329:1 --hma3 12:331:1 --rungs M6/1gpu,M7/1gpu,M6,M7 --repeat 3 \
		--save-json "$OUT/bench-320.json" 2>/dev/null
	timeout 60 $B bench --hma 10:169:1 --hma3 12:331:1 --rungs M6/1gpu,M7/1gpu --repeat 3 2>/dev/null
	echo "== embedded PTX (the version before)"
	unset SWEEPBENCH_PTX_DIR
	timeout 90 $B bench --hma 10:329:1 --hma3 12:331:1 --rungs M6/1gpu,M6 --repeat 3 2>/dev/null
} >"$OUT/bench.txt" 2>&1
grep -E '^==|M6|M7|data' "$OUT/bench.txt" | grep -v '^M6 \|^M7 \|^M6/1gpu \|^M7/1gpu '
if command -v compute-sanitizer >/dev/null; then
	timeout 100 env SWEEPBENCH_PTX_DIR="$OUT/ptx" compute-sanitizer --tool memcheck --error-exitcode 9 \
		bin/cuda.test -test.run 'GPUSmall' >"$OUT/sanitizer.log" 2>&1
	echo "memcheck exit $?"
	tail -3 "$OUT/sanitizer.log"
fi
