#!/usr/bin/env bash
# The sharded study on a real Slurm: a one-node cluster (munged, slurmctld,
# slurmd from Debian's munge and slurm-wlm, installed when missing) started
# in a temporary folder on ports of its own, then
#   A. a suite of two datasets as a 4-task array plus its merge job
#      (sweepbench slurm --submit): the merged report must equal a single
#      run's field by field (scripts/cmpreport: every value, times and
#      speeds left out), and the merged session the single run's session;
#   B. a study whose task 1 is killed while it runs (scancel): merge must
#      refuse naming shard 1, slurm status must show it, slurm resubmit must
#      complete the study, equal to a single run; then the workbench's
#      Slurm screen (tui --slurm-dir, in a private tmux server when tmux is
#      installed) must list its four tasks COMPLETED and open the merged
#      session;
#   C. a held array read with slurmctld unreachable: its tasks must show
#      unknown and slurm resubmit must submit nothing.
# Every daemon it starts is stopped by its PID on exit, every job it
# submitted cancelled first. Run as root (the daemons; .ci/run does).
# SWEEPBENCH_SLURM_KEEP=1 keeps the temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0

if [ "$(id -u)" != 0 ]; then
	echo "slurm-test: needs root (it starts munged, slurmctld and slurmd)" >&2
	exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
	# Installed without starting the distribution's own services (a
	# policy-rc.d that refuses, removed after): the only daemons are ours.
	policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		policy=1
	fi
	rc=0
	{ timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq slurm-wlm munge >/dev/null; } || rc=$?
	if [ -n "$policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
	[ "$rc" = 0 ] || { echo "slurm-test: installing slurm-wlm and munge failed ($rc)" >&2; exit 1; }
fi

T=$(mktemp -d /tmp/sweepbench-slurm.XXXXXX)
chmod 755 "$T"
PIDS=()
JOBDIRS=()
TMUX_SOCK=sweepbench-slurm-$$
cleanup() {
	set +e
	command -v tmux >/dev/null && tmux -L "$TMUX_SOCK" -f /dev/null kill-server >/dev/null 2>&1
	export SLURM_CONF="$T/slurm.conf"
	for d in "${JOBDIRS[@]}"; do # our jobs only: their ids are in each slurm.json
		ids=$(tr -d ' \n' <"$d/slurm.json" 2>/dev/null | grep -oE '"(array_jobs|merge_job)":(\[[^]]*\]|"[0-9]+")' | grep -oE '[0-9]+')
		[ -n "$ids" ] && timeout 20 scancel $ids 2>/dev/null
	done
	for _ in $(seq 20); do
		[ -z "$(timeout 10 squeue -h 2>/dev/null)" ] && break
		sleep 1
	done
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do # slurmd, slurmctld, munged
		kill "${PIDS[i]}" 2>/dev/null
		for _ in $(seq 50); do kill -0 "${PIDS[i]}" 2>/dev/null || break; sleep 0.2; done
		kill -9 "${PIDS[i]}" 2>/dev/null
		wait "${PIDS[i]}" 2>/dev/null
	done
	if [ "${SWEEPBENCH_SLURM_KEEP:-}" = 1 ]; then echo "slurm-test: kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

fail() {
	echo "slurm-test: FAIL: $*" >&2
	for f in "$T"/a/logs/* "$T"/b/logs/* "$T"/slurmctld.log "$T"/slurmd.log; do
		[ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 15 "$f"; }
	done >&2
	exit 1
}

# The cluster.
HOST=$(hostname -s)
PORT=$((20000 + $$ % 20000))
mkdir -p "$T/state" "$T/spool" "$T/bin"
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge.key"
cat >"$T/slurm.conf" <<CONF
ClusterName=sweepbenchtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1 State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
munged -F --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
	--log-file="$T/munged.log" --seed-file="$T/munged.seed" >>"$T/munged.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$T/munge.sock" ] && break; sleep 0.2; done
[ -S "$T/munge.sock" ] || fail "munged did not start"
slurmctld -D -c -f "$T/slurm.conf" >>"$T/slurmctld.log" 2>&1 &
PIDS+=($!)
slurmd -D -f "$T/slurm.conf" >>"$T/slurmd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 60); do
	timeout 10 sinfo -h -o %T 2>/dev/null | grep -q idle && break
	sleep 1
done
timeout 10 sinfo -h -o %T | grep -q idle || fail "the node did not come up idle: $(timeout 10 sinfo 2>&1)"
echo "slurm-test: one-node cluster up: $(timeout 10 sinfo -h -o '%P %D %T %c CPUs')"

go build -o "$T/bin/sweepbench" .
go build -o "$T/bin/cmpreport" ./scripts/cmpreport
SB="$T/bin/sweepbench"
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data"

# wait_merged DIR SECONDS: until DIR/merged.json is written, or the merge
# job is gone without it.
wait_merged() {
	local d=$1 limit=$2
	for ((i = 0; i < limit; i++)); do
		[ -f "$d/merged.json" ] && return 0
		sleep 1
	done
	"$SB" slurm status "$d" || true
	fail "$d/merged.json not written in ${limit}s"
}

cd "$T"
FLAGS=(--head 30000 --hma 10:80:10 --hma3 12:23 --backend reference --blocks 8 --wf rolling:4)

# A: a suite of two datasets, 4 tasks and the merge.
JOBDIRS+=("$T/a")
"$SB" --db "$T/a.db" slurm --shards 4 --out "$T/a" --submit -- --data embedded:filusdt-1m --data embedded:btcusdt-1m "${FLAGS[@]}" | tee "$T/a-submit.txt"
wait_merged "$T/a" 300
"$SB" slurm status "$T/a" | tee "$T/a-status.txt"
"$SB" run --data embedded:filusdt-1m --data embedded:btcusdt-1m "${FLAGS[@]}" --format json --out "$T/a-single.json" --db "$T/a-single.db" -q
"$T/bin/cmpreport" "$T/a-single.json" "$T/a/merged.json" || fail "study A: the merged report is not the single run's"
for id in 1 2; do # the merged sessions are the single run's
	"$SB" --db "$T/a.db" sessions show $id --format json >"$T/a-session-$id.json"
	"$SB" --db "$T/a-single.db" sessions show $id --format json >"$T/a-single-session-$id.json"
	"$T/bin/cmpreport" "$T/a-single-session-$id.json" "$T/a-session-$id.json" || fail "study A: session $id differs"
done

# B: task 1 killed while it runs; merge refuses, resubmit completes. The
# array is submitted held and task 1 released alone, so that it is the one
# running when squeue is asked (on a loaded machine the tasks before it
# could take the whole wait); the others are released once it is killed.
# Should task 1 finish before scancel reaches it (squeue answers late on a
# loaded machine), its shard is removed: merge and resubmit then see what
# a killed task leaves, no shard, and the log says so.
JOBDIRS+=("$T/b")
FLAGS_B=(--data embedded:btcusdt-1m --hma 10:200:10 --hma3 12:50:2 --backend reference --blocks 8 --wf rolling:4 --fee 0.001)
"$SB" --db "$T/b.db" slurm --shards 4 --out "$T/b" --submit --hold -- "${FLAGS_B[@]}" | tee "$T/b-submit.txt"
ARR=$(sed -n 's/^submitted array job \([0-9]*\) .*/\1/p' "$T/b-submit.txt")
[ -n "$ARR" ] || fail "no array job id in: $(cat "$T/b-submit.txt")"
scontrol release "${ARR}_1" || fail "study B: scontrol release ${ARR}_1 failed"
for ((i = 0; i < 3000; i++)); do
	squeue -h -r -j "$ARR" -t RUNNING -o %i 2>/dev/null | grep -qx "${ARR}_1" && break
	[ -e "$T/b/shard-1-of-4.parquet" ] && break
	sleep 0.1
done
squeue -h -r -j "$ARR" -t RUNNING -o %i | grep -qx "${ARR}_1" || [ -e "$T/b/shard-1-of-4.parquet" ] || fail "study B: task 1 was never seen running"
scancel "${ARR}_1"
echo "slurm-test: killed task ${ARR}_1 while it ran"
for k in 0 2 3; do
	scontrol release "${ARR}_$k" || fail "study B: scontrol release ${ARR}_$k failed"
done
for ((i = 0; i < 300; i++)); do
	n=$(find "$T/b" -name 'shard-*-of-4.parquet' | wc -l)
	[ "$n" -ge 3 ] && [ -z "$(squeue -h -r -j "$ARR" -t PENDING,RUNNING,COMPLETING 2>/dev/null)" ] && break
	sleep 1
done
if [ -e "$T/b/shard-1-of-4.parquet" ]; then
	echo "slurm-test: note: task 1 finished before scancel reached it: its shard removed"
	rm -f "$T/b/shard-1-of-4.parquet"
fi
[ "$(find "$T/b" -name 'shard-*-of-4.parquet' | wc -l)" = 3 ] || fail "study B: want 3 shards with task 1 killed, have: $(ls "$T/b")"
[ ! -e "$T/b/merged.json" ] || fail "study B: merged without shard 1"
if "$SB" merge "$T/b" --no-save -q 2>"$T/b-merge-err.txt" >/dev/null; then
	fail "study B: merge accepted 3 shards of 4"
fi
grep -q "shard 1 of 4 is missing" "$T/b-merge-err.txt" || fail "study B: merge said: $(cat "$T/b-merge-err.txt")"
echo "slurm-test: merge refused as it should: $(cat "$T/b-merge-err.txt")"
"$SB" slurm status "$T/b" | tee "$T/b-status.txt"
grep -qE '^1 +[^ ]+ +[^ ]+ +missing$' "$T/b-status.txt" || fail "study B: status does not show task 1 missing"
"$SB" slurm resubmit "$T/b" | tee "$T/b-resubmit.txt"
grep -q "resubmitted task 1 " "$T/b-resubmit.txt" || fail "study B: resubmit did not resubmit task 1 alone"
wait_merged "$T/b" 300
"$SB" slurm status "$T/b" | tee "$T/b-status2.txt"
"$SB" run "${FLAGS_B[@]}" --format json --out "$T/b-single.json" --no-save -q
"$T/bin/cmpreport" "$T/b-single.json" "$T/b/merged.json" || fail "study B: the merged report is not the single run's"

# C: slurmctld unreachable (a slurm.conf whose controller port nothing
# listens on): the held tasks of a third array, pending in fact, must show
# unknown, and resubmit must submit nothing; with the cluster's own
# slurm.conf they are pending again and there is nothing to resubmit.
JOBDIRS+=("$T/c")
"$SB" --db "$T/c.db" slurm --shards 2 --out "$T/c" --submit --hold -- "${FLAGS[@]}" --data embedded:btcusdt-1m >"$T/c-submit.txt"
sed "s/^SlurmctldPort=.*/SlurmctldPort=$((PORT + 2))/" "$T/slurm.conf" >"$T/down.conf"
SLURM_CONF="$T/down.conf" "$SB" slurm status "$T/c" | tee "$T/c-status.txt"
[ "$(grep -cE '^[01] +- +unknown +missing$' "$T/c-status.txt")" = 2 ] || fail "study C: status does not show both held tasks unknown with slurmctld unreachable"
if SLURM_CONF="$T/down.conf" "$SB" slurm resubmit "$T/c" >"$T/c-resubmit.txt" 2>&1; then
	fail "study C: resubmit acted with slurmctld unreachable: $(cat "$T/c-resubmit.txt")"
fi
grep -q "the states of tasks 0,1 are unknown: nothing resubmitted" "$T/c-resubmit.txt" || fail "study C: resubmit said: $(cat "$T/c-resubmit.txt")"
[ "$(tr -d ' \n' <"$T/c/slurm.json" | grep -o '"array_jobs":\[[^]]*\]' | grep -o '"[0-9]*"' | wc -l)" = 1 ] || fail "study C: resubmit submitted an array"
"$SB" slurm status "$T/c" | tee "$T/c-status2.txt"
[ "$(grep -cE '^[01] +[0-9]+_[01] +PENDING +\(computing\)$' "$T/c-status2.txt")" = 2 ] || fail "study C: the held tasks are not pending"
"$SB" slurm resubmit "$T/c" | grep -q "no task to resubmit" || fail "study C: resubmit acted on pending tasks"
echo "slurm-test: with slurmctld unreachable the held tasks show unknown and resubmit refuses"

# The workbench's Slurm screen on study B's folder: every task COMPLETED
# (task 1 as the resubmitted array's), the merge written, its session
# opened from the same database.
if command -v tmux >/dev/null; then
	tm() { tmux -L "$TMUX_SOCK" -f /dev/null "$@"; }
	screen() { tm capture-pane -p -t slurm:0.0; }
	wait_screen() { # REGEX SECONDS
		for ((i = 0; i < $2 * 10; i++)); do
			screen | grep -Eq -- "$1" && return 0
			sleep 0.1
		done
		screen >&2
		fail "the Slurm screen did not show /$1/ in $2s"
	}
	tm new-session -d -s slurm -x 100 -y 30 "env SLURM_CONF=$SLURM_CONF PATH=$PATH HOME=$T XDG_CACHE_HOME=$T/cache XDG_DATA_HOME=$T/data TERM=xterm-256color $SB --db $T/b.db tui --slurm-dir $T/b; sleep 30"
	wait_screen 'tasks +4: 4 done, 0 running, 0 pending, 0 failed, 0 missing' 30
	wait_screen 'merged.json written' 10
	[ "$(screen | grep -cE '^[^ ]+ +[0-3]  [0-9]+_[0-3] +COMPLETED +shard-[0-3]-of-4\.parquet')" = 4 ] || { screen >&2; fail "the Slurm screen does not list the 4 tasks COMPLETED"; }
	j0=$(screen | grep -oE ' 0  [0-9]+_0 ' | grep -oE '[0-9]+_')
	j1=$(screen | grep -oE ' 1  [0-9]+_1 ' | grep -oE '[0-9]+_')
	[ -n "$j1" ] && [ "$j0" != "$j1" ] || { screen >&2; fail "task 1 is not shown as the resubmitted array's ($j1 vs $j0)"; }
	screen | tee "$T/b-tui.txt"
	wait_screen 'enter opens it' 10
	tm send-keys -t slurm:0.0 Enter
	wait_screen 'Metrics: 400 of 400' 60
	tm send-keys -t slurm:0.0 q
	tm kill-server >/dev/null 2>&1 || true
	echo "slurm-test: the Slurm screen lists the 4 tasks COMPLETED and opens the merged session"
else
	echo "slurm-test: tmux is not installed: the Slurm screen's check is skipped"
fi
echo "slurm-test: PASS"
