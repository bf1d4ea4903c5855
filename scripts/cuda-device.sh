#!/usr/bin/env bash
# cuda-device.sh — one full device call: build the PTX, test it, time it.
# Run from the repository root on the GPU machine, with the Go test binary
# built here beforehand (the device machine has no Go):
#   CGO_ENABLED=0 go test -c -o bin/cuda.test ./cuda
#   run(command="bash scripts/cuda-device.sh", carry=["bin"])
# Writes under $OUT (at most 8 files come back):
#   ptx/{indicators,sweep,parity}.ptx and cubins, ptx/*.sha256  (copy into cuda/ptx/)
#   build.log   nvidia-smi, nvcc version, PTX build, ptxas -v resource report
#   test.log    go test -v output of the GPU tests (and the timing table)
#   timing.md   the timing table (TestGPUTiming)
#   sanitizer.log  compute-sanitizer memcheck + racecheck on a small grid
#   ncu.log     (SWEEPBENCH_NCU=1) Nsight Compute on one 102,400-combo
#               sweep_f32_k1 launch: speed of light, occupancy, stall reasons
# SWEEPBENCH_SANITIZE=0 skips the sanitizer; SWEEPBENCH_TESTRUN overrides
# the -test.run pattern; SWEEPBENCH_EMBEDDED=1 tests the PTX embedded in
# the binary instead of the one just built (after copying it to cuda/ptx).
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT/ptx"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv
	nvcc --version | tail -2
	bash scripts/cuda-build.sh "$OUT/ptx" || exit 1
	for m in indicators sweep parity robust; do
		nvcc -cubin -arch=sm_90 --fmad=false -O3 -std=c++17 -Xptxas -v -Ireference/kernels \
			-o "/tmp/$m.cubin" "cuda/kernels/$m.cu" 2>&1 | grep -E 'Function properties|registers|spill|Compiling entry' || true
	done
} >"$OUT/build.log" 2>&1
rc=$?
tail -5 "$OUT/build.log"
if [ $rc -ne 0 ] || [ ! -s "$OUT/ptx/sweep.ptx" ]; then
	echo "PTX build failed"
	cat "$OUT/build.log"
	exit 1
fi
export SWEEPBENCH_OUT="$OUT"
if [ "${SWEEPBENCH_EMBEDDED:-0}" != 1 ]; then
	export SWEEPBENCH_PTX_DIR="$OUT/ptx"
elif ! cmp -s "$OUT/ptx/sweep.ptx" cuda/ptx/sweep.ptx || ! cmp -s "$OUT/ptx/indicators.ptx" cuda/ptx/indicators.ptx; then
	echo "WARNING: cuda/ptx differs from the PTX nvcc just built (embedded PTX is stale?)"
fi
timeout 420 bin/cuda.test -test.v -test.run "${SWEEPBENCH_TESTRUN:-GPU}" -test.timeout 400s >"$OUT/test.log" 2>&1
trc=$?
grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|gpu_test|timing' "$OUT/test.log" | grep -v '=== RUN' | tail -60
echo "test exit $trc"
if [ "${SWEEPBENCH_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
	{
		for tool in ${SWEEPBENCH_SANITIZERS:-memcheck racecheck}; do
			echo "== compute-sanitizer --tool $tool"
			timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
				bin/cuda.test -test.run 'GPUSmall' -test.v 2>&1 | tail -25
			echo "exit ${PIPESTATUS[0]}"
		done
	} >"$OUT/sanitizer.log" 2>&1
	grep -E '^(==|exit|.*ERROR SUMMARY|.*RACECHECK SUMMARY)' "$OUT/sanitizer.log"
fi
if [ "${SWEEPBENCH_NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
	# Launches of sweep_f32_k1 in TestGPUTiming: 4 on the 80-combo grid
	# (thread-per-combo forced), then the 102,400-combo ones.
	timeout 240 ncu --clock-control none -k regex:sweep_f32_k1 --launch-skip 4 --launch-count 1 \
		--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
		--section LaunchStats --print-details all bin/cuda.test -test.run GPUTiming >"$OUT/ncu.log" 2>&1
	echo "ncu exit $?"
	grep -E 'Stall|Warp Cycles|Issued|Eligible|Occupancy|Throughput|Duration|Registers|Block Limit' "$OUT/ncu.log" | head -60
fi
[ -f "$OUT/timing.md" ] && cat "$OUT/timing.md"
exit $trc
