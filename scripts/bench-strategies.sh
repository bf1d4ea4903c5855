#!/usr/bin/env bash
# bench-strategies.sh — times the whole `sweepbench run` command (load, both
# precisions, parity, the table) for a strategy family's grid beside hull's grid
# of the same size, on the embedded BTC data (43,208 one-minute bars), and
# reports combos/s and ns per combo-bar. A benchmark, not a test: the figures
# depend on the machine (docs/PERFORMANCE.md records them with the date, the
# machine and the commit).
#
#   CGO_ENABLED=0 go build -o bin/sweepbench . && scripts/bench-strategies.sh
#
# Environment: B the binary (default bin/sweepbench); OUT the folder for the
# tables (default a temporary one); BACKEND (default reference: the CPU, which
# every family runs on; GPU backends fall back to it for a strategy grid);
# RUNS the cases to time, any of "cross hull" (default both); REPEAT how many
# times each (default 1; the cases interleave, so that both see the same load
# on a shared machine: compare the best of each). The grids:
#   cross  --fast ema:2:200:1 --slow sma:2:200:1   199 x 199 = 39,601 combos
#   hull   --hma 2:200:1 --hma3 6:204:1            199 x 199 = 39,601 combos
# A combo-bar is one combo over one bar in one precision: ns per combo-bar =
# elapsed / (combos x bars x precisions); for the whole command the elapsed
# time is the wall-clock time of the command, for a precision the table's
# elapsed column (its prepare included). "outside the lanes" is the whole
# command less the two lanes: loading the data, the parity report, the table.
# With /usr/bin/time the command's CPU time (user + system, every core summed)
# and max RSS too: on a shared machine the CPU time moves less with the load.
set -uo pipefail
B=${B:-bin/sweepbench}
BACKEND=${BACKEND:-reference}
RUNS=${RUNS:-cross hull}
REPEAT=${REPEAT:-1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
DATA=embedded:btcusdt-1m

if [ ! -x "$B" ]; then
	echo "bench-strategies: no binary at $B (build it: CGO_ENABLED=0 go build -o $B .)" >&2
	exit 2
fi

{
	echo "date     $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit   $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "cores    $(nproc)"
	echo "cpu      $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "binary   $($B version 2>/dev/null | head -1)"
	echo "load     $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
} | tee "$OUT/machine.txt"

# bench NAME ARGS...: runs the command once, timed, and prints its figures.
bench() {
	local name=$1
	shift
	local table="$OUT/$name-$rep.txt" err="$OUT/$name-$rep.err"
	local t0 t1
	local cpu="$OUT/$name-$rep.cpu"
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S %M" -o "$cpu" "$B" run --data "$DATA" --backend "$BACKEND" --no-save -y "$@" >"$table" 2>"$err"
	else
		"$B" run --data "$DATA" --backend "$BACKEND" --no-save -y "$@" >"$table" 2>"$err"
	fi
	local rc=$?
	t1=$(date +%s.%N)
	# CPU seconds (user + system) and max RSS: on a shared machine the CPU
	# time moves less with the load than the wall time does.
	local cpus="" rss=""
	if [ -s "$cpu" ]; then
		read -r u sy rss < <(tail -1 "$cpu")
		cpus=$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }')
	fi
	if [ $rc -ne 0 ]; then
		echo "$name: exit $rc" >&2
		cat "$err" >&2
		return $rc
	fi
	# The grid line: "grid    ... = 39,601 combos ...; ..."; the data line: "...: 43,208 bars ...".
	local combos bars
	combos=$(sed -n 's/^grid .* = \([0-9,]*\) combo.*/\1/p' "$table" | tr -d ,)
	bars=$(sed -n 's/^data .*: \([0-9,]*\) bars .*/\1/p' "$table" | tr -d ,)
	awk -v name="$name" -v rep="$rep" -v cpus="$cpus" -v rss="$rss" -v t0="$t0" -v t1="$t1" -v combos="$combos" -v bars="$bars" -v args="$*" '
		BEGIN {
			wall = t1 - t0
			printf "\n%s (run %s): sweepbench run --data '"$DATA"' %s --no-save\n", name, rep, args
			printf "  %s combos x %s bars\n", combos, bars
		}
		# The runs table: backend precision wma status combos prepare elapsed combos/s device
		($2 == "fp64" || $2 == "fp32") && $4 == "complete" {
			el = $7; sub(/s$/, "", el)
			n++
			printf "  %-5s %-7s elapsed %8.2f s  %10.0f combos/s  %6.2f ns per combo-bar\n", $2, $3, el, combos / el, el * 1e9 / (combos * bars)
		}
		($2 == "fp64" || $2 == "fp32") && $4 == "complete" { lanes += el }
		END {
			if (n == 0) n = 1
			printf "  whole command %8.2f s  %10.0f combos/s (both precisions: %.0f combo-precisions/s)  %6.2f ns per combo-bar\n", wall, combos / wall, combos * n / wall, wall * 1e9 / (combos * bars * n)
			printf "  outside the lanes (load, parity, table) %.2f s\n", wall - lanes
			if (cpus != "")
				printf "  CPU time (user + system) %.2f s  %.2f CPU-ns per combo-bar (both cores summed); max RSS %.0f MB\n", cpus, cpus * 1e9 / (combos * bars * n), rss / 1024
		}' "$table" | tee "$OUT/$name-$rep.summary"
	sed -n '/^Parity/,/^$/p' "$table" | head -3
}

for rep in $(seq 1 "$REPEAT"); do
	for r in $RUNS; do
		case $r in
		cross) bench cross --strategy cross --fast ema:2:200:1 --slow sma:2:200:1 ;;
		hull) bench hull --hma 2:200:1 --hma3 6:204:1 ;;
		*) echo "bench-strategies: unknown case $r (cross, hull)" >&2 ;;
		esac
	done
done
echo
echo "tables in $OUT"
