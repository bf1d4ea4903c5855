#!/usr/bin/env bash
# device-issue29.sh — issue 29's device run, in one call, the summary on
# stdout (files in /tmp): the GPU tests; hull and cross under --backend cuda
# against --backend reference (every metric of every combo, scripts/csvdiff.py);
# the issue's timings on FIL's first 150,000 bars (whole command, wall and
# max RSS): 80 combos under auto, 320 x 320 saved and --no-save, the JSON
# report, 10^6 and 10^7 combos to Parquet, 10^8 fp32 combos, cross
# ema x sma 320 x 320; a kill -9 and resume.
# Build here: bin/sweepbench and bin/cuda.test (see device-conformance.sh).
# USE_NEW_PTX=1 builds the kernels with nvcc first and loads that PTX.
set -uo pipefail
B=bin/sweepbench
T=/tmp/i29
rm -rf $T && mkdir -p $T
if [ -n "${USE_NEW_PTX:-}" ]; then
	bash scripts/cuda-build.sh $T/ptx >/dev/null 2>&1 && export SWEEPBENCH_PTX_DIR=$T/ptx && echo "PTX built here, loaded from $T/ptx"
	[ -n "${OUT:-}" ] && tar czf "$OUT/ptx.tgz" -C $T ptx
fi
timed() { # timed NAME CMD...
	local name=$1
	shift
	local t0 t1
	t0=$(date +%s.%N)
	SWEEPBENCH_TIMINGS=1 /usr/bin/time -f "%M" -o $T/$name.rss "$@" >$T/$name.txt 2>$T/$name.err
	local rc=$?
	t1=$(date +%s.%N)
	printf '%-18s exit %d  wall %6.2f s  max RSS %7d KB\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$(tail -1 $T/$name.rss)"
	[ $rc -ne 0 ] && tail -3 $T/$name.err
	return 0
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [[ ${STEPS:-123} == *1* ]]; then
	echo "== GPU tests"
	timeout 300 bin/cuda.test -test.v -test.run GPU -test.skip GPUTiming -test.timeout 280s >$T/gputest.log 2>&1
	echo "gpu tests exit $?"
	grep -E '^(--- FAIL|FAIL|panic)' $T/gputest.log | head
	grep -E -A8 '^--- FAIL' $T/gputest.log | head -40
fi
if [[ ${STEPS:-123} == *2* ]]; then
	echo "== cuda against reference, every metric of every combo"
	cmpcase() { # cmpcase NAME ARGS...
		local name=$1
		shift
		$B run --backend cuda --no-save "$@" --format csv >$T/$name-cuda.csv 2>$T/$name-cuda.err
		$B run --backend reference --no-save "$@" --format csv >$T/$name-ref.csv 2>/dev/null
		note=$(grep -o 'has no [a-z -]* kernel[a-z -]* yet' $T/$name-cuda.err | head -1)
		echo "$name ($*): $(wc -l <$T/$name-cuda.csv) lines; note: ${note:-none}"
		python3 scripts/csvdiff.py $T/$name-cuda.csv $T/$name-ref.csv && echo "  identical"
	}
	H=(--head 30000 --hma 10:40:3 --hma3 12:60:4)
	cmpcase hull "${H[@]}"
	cmpcase hull-lo "${H[@]}" --mode long-only --source hl2
	cmpcase hull-rf "${H[@]}" --risk-free 0.04 --slippage 0.0005
	cmpcase hull-pf "${H[@]}" --objective profit_factor --wma prefix
	C=(--data embedded:btcusdt-1m --strategy cross)
	cmpcase cross "${C[@]}" --fast ema:5:50:5 --slow sma:20:200:10
	cmpcase cross-kinds "${C[@]}" --fast dema:3:30:3 --slow wma:20:200:20 --mode long-only
	cmpcase cross-prefix "${C[@]}" --fast hma:5:50:5 --slow sma:20:200:10 --formulation prefix
	cmpcase cross-price "${C[@]}" --fast price --slow tema:10:100:10 --risk-free 0.03
	cmpcase cross-fbs "${C[@]}" --fast ema:5:50:5 --slow sma:20:200:10 --fast-below-slow
	Z=(--head 30000 --strategy zscore --param length=10:60:5 --param entry=1:2.5:0.5 --param exit=-0.5:0.5:0.25)
	cmpcase zscore "${Z[@]}"
	cmpcase zscore-lo-hl2 "${Z[@]}" --mode long-only --source hl2 --risk-free 0.03
	cmpcase zscore-prefix "${Z[@]}" --formulation prefix
	R=(--head 30000 --strategy rsi --param length=2:40:3 --param lower=20:40:5 --param upper=60:80:5)
	cmpcase rsi "${R[@]}"
	cmpcase rsi-lo-prefix "${R[@]}" --mode long-only --formulation prefix --slippage 0.0005
	K=(--head 30000 --strategy breakout --param entry=5:100:5 --param exit=3:60:3)
	cmpcase breakout "${K[@]}"
	cmpcase breakout-lo "${K[@]}" --mode long-only
	cmpcase breakout-btc --data embedded:btcusdt-1m --strategy breakout --param entry=10:200:10 --param exit=5:100:5
	cmpcase zscore-stops "${Z[@]}" --param stop_loss=0.01:0.02:0.01
	echo "== parity on the GPU (SWEEPBENCH_PARITY=device) against the CPU's, the whole report"
	paritycase() { # paritycase NAME ARGS...
		local name=$1
		shift
		SWEEPBENCH_PARITY=device $B run --backend cuda --no-save "$@" --format json >$T/$name-pc.json 2>$T/$name-pc.err
		$B run --backend reference --no-save "$@" --format json >$T/$name-pr.json 2>/dev/null
		SWEEPBENCH_PARITY=device $B run --backend cuda --no-save "$@" >$T/$name-pc.txt 2>&1
		echo "$name ($*): $(grep -ho 'found on .*(each\|parity on [^;]*' $T/$name-pc.txt | head -1)"
		python3 scripts/paritydiff.py $T/$name-pc.json $T/$name-pr.json
	}
	paritycase zscore "${Z[@]}"
	paritycase zscore-lo-prefix "${Z[@]}" --mode long-only --formulation prefix
	paritycase rsi-prefix "${R[@]}" --formulation prefix
	paritycase rsi-lo "${R[@]}" --mode long-only --source hl2
	paritycase breakout "${K[@]}"
	paritycase cross "${C[@]}" --fast ema:5:50:5 --slow sma:20:200:10
	paritycase cross-prefix-lo "${C[@]}" --fast sma:3:30:3 --slow wma:10:60:10 --formulation prefix --mode long-only
	paritycase zscore-btc --data embedded:btcusdt-1m --strategy zscore --param length=5:100:5 --param entry=0.5:3:0.5 --param exit=-0.4:0.4:0.2
fi
if [[ ${STEPS:-123} == *3* ]]; then
	echo "== timings"
	F=(--head 150000)
	G=("${F[@]}" --hma 10:329:1 --hma3 12:331:1 --top 3)
	X=("${F[@]}" --strategy cross --fast ema:2:321 --slow sma:10:329 --top 3)
	timed warm $B run --backend cuda --no-save --head 2000 --hma 20 --hma3 30
	for i in 1 2 3; do
		timed "auto-80-$i" $B run --no-save "${F[@]}"
	done
	head -3 $T/auto-80-3.err
	for i in 1 2; do
		timed "cuda-80-$i" $B run --backend cuda --no-save "${F[@]}"
		timed "320-nosave-$i" $B run --backend cuda --no-save "${G[@]}"
		rm -f $T/s.db*
		timed "320-saved-$i" $B run --backend cuda --db $T/s.db "${G[@]}"
	done
	grep -h 'study done\|saving\|saved' $T/320-nosave-2.err $T/320-saved-2.err | head -6
	# saving's tail: study done, report written, database closed (the last checkpoint), against --no-save
	for f in 320-nosave-1 320-nosave-2 320-saved-1 320-saved-2; do grep -h '^timing' $T/$f.err | sed "s/^/$f: /"; done
	# saved into a database that holds sessions already (no schema to create: what a user's runs pay)
	for i in 1 2; do timed "320-saved-again-$i" $B run --backend cuda --db $T/s.db "${G[@]}"; done
	timed json $B run --backend cuda --no-save "${G[@]}" --format json --out $T/r.json
	timed jsonl $B run --backend cuda --no-save "${G[@]}" --format jsonl --out $T/r.jsonl
	grep -h 'timing' $T/json.err $T/jsonl.err | grep -E 'study|report|written|done' | head -8
	timed parquet-1m $B run --backend cuda --no-save "${F[@]}" --hma 10:1009:1 --hma3 12:1011:1 --format parquet --out $T/r1m.parquet
	rm -f $T/r1m.parquet
	timed parquet-10m $B run --backend cuda --no-save "${F[@]}" --hma 10:3172:1 --hma3 12:3174:1 --format parquet --out $T/r10m.parquet
	rm -f $T/r10m.parquet
	# mem: the heap at each stage (SWEEPBENCH_TIMINGS), a heap profile when
	# the study is done (SWEEPBENCH_MEMPROFILE, to $OUT), and the collector
	# at GOGC=50 (the heap's headroom over what is live).
	grep -h 'timing' $T/parquet-10m.err | head -4
	timed parquet-10m-prof env SWEEPBENCH_MEMPROFILE=$T/heap-10m.pb.gz $B run --backend cuda --no-save "${F[@]}" --hma 10:3172:1 --hma3 12:3174:1 --format parquet --out $T/r10m.parquet
	rm -f $T/r10m.parquet
	[ -n "${OUT:-}" ] && cp $T/heap-10m.pb.gz "$OUT/" 2>/dev/null
	timed parquet-10m-gogc50 env GOGC=50 $B run --backend cuda --no-save "${F[@]}" --hma 10:3172:1 --hma3 12:3174:1 --format parquet --out $T/r10m.parquet
	rm -f $T/r10m.parquet
	grep -h 'timing' $T/parquet-10m-gogc50.err | head -4
	timed fp32-100m $B run --backend cuda --no-save --head 20000 --hma 2:10001 --hma3 6:10005 --precision fp32 --top 3
	for i in 1 2; do
		timed "cross-nosave-$i" $B run --backend cuda --no-save "${X[@]}"
		rm -f $T/x.db*
		timed "cross-saved-$i" $B run --backend cuda --db $T/x.db "${X[@]}"
	done
	grep -E 'Parity|cuda ' $T/cross-nosave-2.txt | head -4
	grep -h 'timing' $T/cross-nosave-2.err | head -12
	ZB=("${F[@]}" --strategy zscore --param length=10:329:1 --param entry=1:2.5:0.1 --param exit=-0.95:0.95:0.1 --top 3)
	RB=("${F[@]}" --strategy rsi --param length=2:321:1 --param lower=10:40:2 --param upper=60:98:2 --top 3)
	KB=("${F[@]}" --strategy breakout --param entry=2:321:1 --param exit=2:321:1 --top 3)
	for fam in zscore rsi breakout; do
		case $fam in zscore) A=("${ZB[@]}") ;; rsi) A=("${RB[@]}") ;; breakout) A=("${KB[@]}") ;; esac
		timed "$fam-nosave" timeout 200 $B run --backend cuda --no-save "${A[@]}"
		grep -E 'Parity|verdict|cuda ' $T/$fam-nosave.txt | head -3
		grep -h 'timing' $T/$fam-nosave.err | head -8
	done
	timed cross-ref-4k $B run --backend reference --no-save --head 150000 --strategy cross --fast ema:2:65 --slow sma:10:73 --top 3
	grep -E 'reference ' $T/cross-ref-4k.txt | head -2
fi
