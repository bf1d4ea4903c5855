#!/usr/bin/env bash
# device-dev.sh: build and run every kernel variant under measurement in
# cuda/dev/ (each file holds a variant, its check against the production
# kernel and its timing), on the GPU machine, from the repository root:
#   run(command="bash scripts/device-dev.sh")
# Writes $OUT/dev.log: one block per variant (its output, then its exit).
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
rc=0
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	for src in cuda/dev/*.cu; do
		name=$(basename "$src" .cu)
		echo "== $src"
		if ! nvcc -O3 --fmad=false -std=c++17 -arch=sm_90 -Ireference/kernels -o "/tmp/$name" "$src"; then
			echo "build failed"
			rc=1
			continue
		fi
		"/tmp/$name" "$@"
		r=$?
		echo "exit $r"
		[ $r -eq 0 ] || rc=1
	done
} >"$OUT/dev.log" 2>&1
cat "$OUT/dev.log"
exit $rc
