#!/usr/bin/env bash
# device-verify.sh — after a kernel change: build the PTX with nvcc into
# $OUT/ptx (copy it into cuda/ptx here), run the GPU tests and the 80-combo
# ladder's GPU rungs on it (SWEEPBENCH_PTX_DIR makes both binaries load it).
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT/ptx"
bash scripts/cuda-build.sh "$OUT/ptx" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
tail -1 "$OUT/build.log"
export SWEEPBENCH_PTX_DIR="$OUT/ptx"
timeout 240 bin/cuda.test -test.v -test.run GPU -test.timeout 230s >"$OUT/gputest.log" 2>&1
echo "gpu tests exit $?"
grep -E '^(--- |PASS|FAIL|ok)' "$OUT/gputest.log" | tail -20
timeout 120 bin/sweepbench bench --rungs M3,M6,M7,M6/1gpu,M7/1gpu --repeat 3 --save-json "$OUT/bench-80.json" 2>/dev/null | tee "$OUT/bench-80.txt"
if [ "${VERIFY_LARGE:-0}" = 1 ]; then
	timeout 150 bin/sweepbench bench --hma 10:329:1 --hma3 12:331:1 --rungs M6/1gpu,M7/1gpu,M6,M7 --repeat 3 \
		--save-json "$OUT/bench-320.json" 2>/dev/null | tee "$OUT/bench-320.txt"
fi
