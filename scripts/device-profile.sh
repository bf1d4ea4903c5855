#!/usr/bin/env bash
# device-profile.sh — the 320 x 320 fused rungs with a Go CPU profile of
# the host side (bin/sweepbench built here; run with carry ["bin"]).
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
timeout 200 bin/sweepbench bench --hma 10:329:1 --hma3 12:331:1 --rungs M6/1gpu,M7/1gpu,M6,M7 --repeat 3 \
	--cpuprofile "$OUT/host.pprof" --save-json "$OUT/bench-320b.json" 2>/dev/null | tee "$OUT/bench-320b.txt"
