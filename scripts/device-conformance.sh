#!/usr/bin/env bash
# device-conformance.sh — one device call after a change to the study
# pipeline or to the kernels' host code, on the PTX embedded in the binary:
#   1. nvcc builds the kernel sources again (-Ireference/kernels) and the
#      result is compared with the embedded PTX and its sources hash;
#   2. every GPU test, the conformance suite (conformance) among
#      them, then compute-sanitizer memcheck of the conformance suite;
#   3. the whole `run` command on the GPU (default grid, --wma prefix,
#      320 x 320 on 150,000 bars with parity on the GPU and on the CPU,
#      10^6 and 10^7 combos to Parquet, 10^8 fp32 combos on 20,000 bars)
#      with its wall time and max RSS;
#   4. a GPU session killed with SIGKILL part way and resumed, compared with
#      an uninterrupted run (CSV of every metric, byte for byte);
#   5. the bench's fused GPU rungs on the 80-combo and 320 x 320 grids;
#   6. start-up: one small `run` on a cold driver cache (CUDA_CACHE_DISABLE=1)
#      with the embedded cubin, then with the PTX JIT (SWEEPBENCH_PTX_DIR);
#   7. the strategy families (SPEC Part 2) under --backend cuda: every lane
#      on the reference fallback with its note, results identical to
#      --backend reference (CSV of every metric, byte for byte).
# Build here first:
#   CGO_ENABLED=0 go build -o bin/sweepbench . && CGO_ENABLED=0 go test -c -o bin/cuda.test ./cuda
#   run(command="bash scripts/device-conformance.sh", carry=["bin"])
# STEPS=135 runs only those steps (default: all). Everything lands in
# $OUT; the summary is printed last.
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT"
B=bin/sweepbench
STEPS=${STEPS:-1234567}
timed() { # timed NAME CMD...: stdout to $OUT/NAME.txt, wall and max RSS to the summary
	local name=$1
	shift
	local t0 t1
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%M" -o "$OUT/$name.rss" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
	else
		"$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
	fi
	local rc=$?
	t1=$(date +%s.%N)
	printf '%-14s exit %d  wall %6.2f s  max RSS %s KB\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$(cat "$OUT/$name.rss" 2>/dev/null || echo '?')" | tee -a "$OUT/summary.txt"
}
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
	nproc
	$B version
	$B devices
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
: >"$OUT/summary.txt"

if [[ $STEPS == *1* ]]; then
	echo "== 1. PTX" | tee -a "$OUT/summary.txt"
	bash scripts/cuda-build.sh "$OUT/ptx" >"$OUT/build.log" 2>&1
	echo "nvcc exit $?" | tee -a "$OUT/summary.txt"
	for f in indicators.ptx sweep.ptx parity.ptx robust.ptx SOURCES.sha256 CUBINS.sha256; do
		if cmp -s "$OUT/ptx/$f" "cuda/ptx/$f"; then echo "$f: identical to the embedded"; else echo "$f: DIFFERS from the embedded"; fi
	done | tee -a "$OUT/summary.txt"
	if [ -n "${USE_NEW_PTX:-}" ]; then
		# Kernel sources changed here: the later steps load the PTX just
		# built (SWEEPBENCH_PTX_DIR), before it is committed and embedded.
		export SWEEPBENCH_PTX_DIR=$OUT/ptx
		echo "later steps load the PTX just built ($OUT/ptx)" | tee -a "$OUT/summary.txt"
	fi
fi
if [[ $STEPS == *2* ]]; then
	echo "== 2. GPU tests" | tee -a "$OUT/summary.txt"
	timeout 300 bin/cuda.test -test.v -test.run GPU -test.skip GPUTiming -test.timeout 280s >"$OUT/gputest.log" 2>&1
	echo "gpu tests exit $?" | tee -a "$OUT/summary.txt"
	grep -E '^(--- |PASS|FAIL|ok|panic)' "$OUT/gputest.log" | grep -v '^    ' | tee -a "$OUT/summary.txt"
	grep -E 'seed|GPUs|combos' "$OUT/gputest.log" | head -8
	if command -v compute-sanitizer >/dev/null; then
		timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 bin/cuda.test -test.v -test.run GPUConformance >"$OUT/sanitizer.log" 2>&1
		echo "memcheck (conformance suite) exit $?" | tee -a "$OUT/summary.txt"
		grep -E "^(--- |PASS|FAIL|ok|panic)|ERROR SUMMARY|Error|error" "$OUT/sanitizer.log" | head -20
	fi
fi
if [[ $STEPS == *3* ]]; then
	echo "== 3. run" | tee -a "$OUT/summary.txt"
	timed run-default $B run --backend cuda --no-save
	timed run-prefix $B run --backend cuda --no-save --wma prefix
	timed run-default-2 $B run --backend cuda --no-save
	timed run-320 $B run --backend cuda --no-save --head 150000 --hma 10:329:1 --hma3 12:331:1 --top 3
	SWEEPBENCH_PARITY=cpu timed run-320-cpu $B run --backend cuda --no-save --head 150000 --hma 10:329:1 --hma3 12:331:1 --top 3
	if diff <(grep -v -E 'combos/s|found on' "$OUT/run-320.txt") <(grep -v -E 'combos/s|found on' "$OUT/run-320-cpu.txt") | grep -v -E '^[<>] +cuda +fp(32|64)|^---|^[0-9]' | grep -q .; then r=DIFFERS; else r=identical; fi
	echo "320 x 320 report, parity on the GPU vs on the CPU: $r (lane timings aside)" | tee -a "$OUT/summary.txt"
	timed run-1m $B run --backend cuda --no-save --head 150000 --hma 10:1009:1 --hma3 12:1011:1 --format parquet --out /tmp/run-1m.parquet
	timed run-10m $B run --backend cuda --no-save --head 150000 --hma 10:3172:1 --hma3 12:3174:1 --format parquet --out /tmp/run-10m.parquet
	timed run-100m-fp32 $B run --backend cuda --no-save --head 20000 --hma 2:10001 --hma3 6:10005 --precision fp32 --top 3
	timed run-320-blocks $B run --backend cuda --no-save --head 150000 --hma 10:329:1 --hma3 12:331:1 --top 3 --blocks 16 --wf rolling:8
	grep -E 'PBO|DSR' "$OUT/run-320-blocks.txt" | tee -a "$OUT/summary.txt"
	grep -E 'Parity|cuda ' "$OUT/run-default.txt" "$OUT/run-prefix.txt" "$OUT/run-320.txt" | tee -a "$OUT/summary.txt"
fi
if [[ $STEPS == *4* ]]; then
	echo "== 4. kill -9 and resume on the GPU" | tee -a "$OUT/summary.txt"
	G=(--backend cuda --head 150000 --hma 10:329:1 --hma3 12:331:1 --format csv -q)
	$B run "${G[@]}" --db "$OUT/killed.db" >/dev/null 2>&1 &
	pid=$!
	sleep "${KILL_AFTER:-1.0}"
	kill -9 $pid
	wait $pid 2>/dev/null
	$B sessions ls --db "$OUT/killed.db" | tee -a "$OUT/summary.txt"
	timed resume $B sessions resume 1 --db "$OUT/killed.db" --format csv
	grep -E 'saved|resumed' "$OUT/resume.err" | tee -a "$OUT/summary.txt"
	timed fresh $B run "${G[@]}" --no-save
	if cmp -s "$OUT/resume.txt" "$OUT/fresh.txt"; then r=identical; else r=DIFFERS; fi
	echo "resumed CSV vs uninterrupted: $r ($(wc -l <"$OUT/fresh.txt") lines)" | tee -a "$OUT/summary.txt"
fi
if [[ $STEPS == *5* ]]; then
	echo "== 5. bench" | tee -a "$OUT/summary.txt"
	timeout 120 $B bench --rungs M6,M7 --repeat 3 >"$OUT/bench-80.txt" 2>&1
	timeout 200 $B bench --hma 10:329:1 --hma3 12:331:1 --rungs M6,M7 --repeat 3 >"$OUT/bench-320.txt" 2>&1
	grep -E '^ +M[67]' "$OUT/bench-80.txt" "$OUT/bench-320.txt" | tee -a "$OUT/summary.txt"
fi
if [[ $STEPS == *6* ]]; then
	echo "== 6. start-up, cold driver cache" | tee -a "$OUT/summary.txt"
	$B devices | tee -a "$OUT/summary.txt"
	S=(run --backend cuda --no-save --head 5000 --hma 20 --hma3 30 --format csv -q)
	for i in 1 2; do
		CUDA_CACHE_DISABLE=1 timed "start-cubin-$i" $B "${S[@]}"
		CUDA_CACHE_DISABLE=1 SWEEPBENCH_PTX_DIR=cuda/ptx timed "start-ptx-$i" $B "${S[@]}"
	done
	if cmp -s "$OUT/start-cubin-1.txt" "$OUT/start-ptx-1.txt"; then r=identical; else r=DIFFERS; fi
	echo "cubin vs PTX results: $r" | tee -a "$OUT/summary.txt"
	timed start-ref $B run --backend reference --no-save --head 5000 --hma 20 --hma3 30 --format csv -q
fi
if [[ $STEPS == *7* ]]; then
	echo "== 7. strategy families under --backend cuda" | tee -a "$OUT/summary.txt"
	for fam in "cross --fast ema:5:50:5 --slow sma:20:200:10" "zscore" "breakout" "rsi" "zscore --formulation prefix --param length=20 --param entry=2 --param exit=0"; do
		name=$(echo "$fam" | tr -c 'a-z0-9\n' '-' | cut -c1-40)
		# shellcheck disable=SC2086
		timed "fam-cuda-$name" $B run --backend cuda --no-save --data embedded:btcusdt-1m --strategy $fam --format csv
		# shellcheck disable=SC2086
		timed "fam-ref-$name" $B run --backend reference --no-save --data embedded:btcusdt-1m --strategy $fam --format csv
		if diff <(cut -d, -f1,3- "$OUT/fam-cuda-$name.txt") <(cut -d, -f1,3- "$OUT/fam-ref-$name.txt") >/dev/null; then r=identical; else r=DIFFERS; fi
		note=$(grep -o 'has no [a-z]* kernel yet[^;]*' "$OUT/fam-cuda-$name.err" | head -1)
		echo "$fam: cuda vs reference CSV $r; note: ${note:-none}" | tee -a "$OUT/summary.txt"
	done
fi
if [[ $STEPS == *8* ]]; then
	echo "== 8. hull under --backend cuda against --backend reference, every metric" | tee -a "$OUT/summary.txt"
	for opts in "" "--mode long-only --source hl2" "--risk-free 0.04 --slippage 0.0005" "--objective profit_factor --wma prefix"; do
		name=hull-$(echo "x$opts" | tr -c 'a-z0-9\n' '-' | cut -c1-40)
		# shellcheck disable=SC2086
		timed "$name-cuda" $B run --backend cuda --no-save --head 30000 --hma 10:40:3 --hma3 12:60:4 $opts --format csv
		# shellcheck disable=SC2086
		timed "$name-ref" $B run --backend reference --no-save --head 30000 --hma 10:40:3 --hma3 12:60:4 $opts --format csv
		if python3 scripts/csvdiff.py "$OUT/$name-cuda.txt" "$OUT/$name-ref.txt" >"$OUT/$name.diff"; then r=identical; else r="differs:"; fi
		echo "hull $opts: cuda vs reference CSV (24 metrics, both precisions) $r" | tee -a "$OUT/summary.txt"
		cat "$OUT/$name.diff" | tee -a "$OUT/summary.txt"
		rm -f "$OUT/$name"-*.txt "$OUT/$name"-*.rss "$OUT/$name"-*.err "$OUT/$name.diff" # the fetch takes few files
	done
fi
echo "== summary"
cat "$OUT/summary.txt"
