#!/usr/bin/env bash
# device-families.sh — issue 29's family timings on one GPU, in one call:
# zscore, rsi and breakout at 102,400 combos (320 lengths x 320 threshold
# pairs, or 320 x 320 lengths) on FIL's first 150,000 bars, both precisions
# with parity, --no-save and saved; the lanes' lines, where the parity ran,
# the timings. Build here: bin/sweepbench (CGO_ENABLED=0 go build).
set -uo pipefail
B=bin/sweepbench
T=/tmp/fam
rm -rf $T && mkdir -p $T
F=(--head 150000 --top 3)
for fam in zscore rsi breakout cross; do
	case $fam in
	zscore) A=(--strategy zscore --param length=10:329:1 --param entry=1:2.5:0.1 --param exit=-0.95:0.95:0.1) ;;
	rsi) A=(--strategy rsi --param length=2:321:1 --param lower=10:40:2 --param upper=60:98:2) ;;
	breakout) A=(--strategy breakout --param entry=2:321:1 --param exit=2:321:1) ;;
	cross) A=(--strategy cross --fast ema:2:321 --slow sma:10:329) ;;
	esac
	for save in nosave saved; do
		S=(--no-save)
		[ $save = saved ] && S=(--db $T/$fam.db)
		t0=$(date +%s.%N)
		SWEEPBENCH_TIMINGS=1 timeout 150 /usr/bin/time -f "%M" -o $T/$fam-$save.rss $B run --backend cuda "${S[@]}" "${F[@]}" "${A[@]}" >$T/$fam-$save.txt 2>$T/$fam-$save.err
		rc=$?
		t1=$(date +%s.%N)
		printf '%-9s %-7s exit %d  wall %6.2f s  max RSS %7d KB\n' $fam $save $rc "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$(tail -1 $T/$fam-$save.rss)"
	done
	grep -E ' cuda |found on|Parity|flips  ' $T/$fam-nosave.txt | head -6
	grep -h 'note' $T/$fam-nosave.err | head -2
done
