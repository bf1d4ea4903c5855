#!/usr/bin/env bash
# End-to-end check of `sweepbench serve` (issue 17) with OpenSSH's client:
# start the server on 127.0.0.1 (a free port it picks and logs) with key
# pairs made by ssh-keygen, then
#   - a key not in authorized_keys, password auth, exec, a port forward
#     (-L and -R), SFTP and a session without a terminal are refused, each
#     logged;
#   - alice drives a small sweep through the workbench over ssh -tt inside
#     tmux and reads its parity verdict from the screen;
#   - bob, connected at the same time, sees only his own sessions, and may
#     not open alice's;
#   - alice keeps a long study computing (K) and her client is killed: the
#     server serves on, bob's study waits in the queue with its position
#     and ETA, alice reconnects and finds the study in her sessions;
#   - a client killed mid-run without K: its study stops (cancelled);
#   - NO_COLOR from the client's environment gives a plain ASCII screen.
# Every process started is stopped by its PID; every wait is bounded.
#
#   scripts/serve-e2e.sh                      # builds ./sweepbench into a temp dir
#   SWEEPBENCH_BIN=bin/sweepbench scripts/serve-e2e.sh
#   SERVE_E2E_CAPTURE=FILE                    # also writes alice's parity screen there
#
# Exit status: 0 pass, 1 a check failed, 2 tmux or the OpenSSH client missing.
set -euo pipefail
cd "$(dirname "$0")/.."

e2e=serve-e2e
sock=sweepbench-serve-e2e-$$
. scripts/lib-tmux.sh
require "tmux openssh-client" tmux ssh ssh-keygen sftp
prepare_bin

pids=() # background processes this script started (the server, ssh -L)
srv=
log=$tmp/server.log

# stop PID [SECONDS]: SIGTERM, then SIGKILL after SECONDS (default 10).
stop() {
	local pid=$1 secs=${2:-10} i
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
	tm kill-server >/dev/null 2>&1 || true
	for p in "${pids[@]}"; do stop "$p" 40; done
	rm -rf "$tmp" 2>/dev/null || { sleep 1; rm -rf "$tmp"; }
}
trap cleanup EXIT
trap 'exit 1' INT TERM # the EXIT trap stops what was started

on_fail() {
	echo "---- server log ----"
	tail -n 40 "$log"
}
# wait_log REGEX [SECONDS]: until the server's log has a matching line.
wait_log() {
	local re=$1 secs=${2:-20}
	poll "$secs" grep -Eq -- "$re" "$log" || fail "timed out after ${secs}s waiting for /$re/ in the server log"
}
# sessions_of USER: that user's saved sessions as `sessions ls` lists them.
sessions_of() { "$bin" sessions ls --db "$tmp/data/users/$1/sessions.db"; }
sessions_match() { sessions_of "$1" 2>/dev/null | grep -Eq -- "$2"; }
# wait_sessions USER REGEX [SECONDS]
wait_sessions() {
	local u=$1 re=$2 secs=${3:-60}
	poll "$secs" sessions_match "$u" "$re" && return 0
	sessions_of "$u" >&2 || true
	fail "timed out after ${secs}s waiting for /$re/ in $u's sessions"
}

# Keys: alice and bob are authorized, eve is not.
for u in alice bob eve; do
	ssh-keygen -q -t ed25519 -N '' -C "$u@e2e" -f "$tmp/$u"
done
cat "$tmp/alice.pub" "$tmp/bob.pub" >"$tmp/authorized_keys"

"$bin" serve --listen 127.0.0.1:0 --authorized-keys "$tmp/authorized_keys" --data-dir "$tmp/data" \
	--data embedded:btcusdt-1m --hma 10:30:10 --hma3 12:36:12 --backend reference \
	--user-studies 2 --max-sessions 8 2>"$log" &
srv=$!
pids+=("$srv")
wait_log 'msg=listening addr=127\.0\.0\.1:[0-9]+' 60
port=$(grep -m1 -Eo 'msg=listening addr=127\.0\.0\.1:[0-9]+' "$log" | grep -Eo '[0-9]+$')
echo "serve-e2e: server pid $srv on 127.0.0.1:$port"
[ "$(stat -c %a "$tmp/data/host_ed25519")" = 600 ] || fail "the host key is not mode 0600: $(stat -c %a "$tmp/data/host_ed25519")"
hostfp=$(grep -m1 -Eo 'msg="host key created" .*fingerprint=SHA256:[^ ]+' "$log" | grep -Eo 'SHA256:[^ ]+$') || fail "no host key line in the log"

common=(-F /dev/null -p "$port" -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile="$tmp/known_hosts"
	-o IdentityAgent=none -o ConnectTimeout=10 -o LogLevel=ERROR -o ServerAliveInterval=5)
keyed() { printf '%s\n' -i "$tmp/$1" -o IdentitiesOnly=yes -o BatchMode=yes; }

# --- Refusals -------------------------------------------------------------
out=$(timeout 30 ssh "${common[@]}" $(keyed eve) -tt eve@127.0.0.1 </dev/null 2>&1) && fail "eve's key got in: $out"
grep -q 'Permission denied (publickey)' <<<"$out" || fail "eve: no 'Permission denied (publickey)': $out"
wait_log 'refused: key not authorized.*login=eve'
echo "serve-e2e: a key not in authorized_keys is refused"

out=$(timeout 30 ssh "${common[@]}" -o PubkeyAuthentication=no -o PreferredAuthentications=password,keyboard-interactive \
	-o BatchMode=yes -o NumberOfPasswordPrompts=0 alice@127.0.0.1 </dev/null 2>&1) && fail "password auth got in: $out"
grep -q 'Permission denied (publickey)' <<<"$out" || fail "password: the server offers more than publickey: $out"
echo "serve-e2e: password and keyboard-interactive are not offered (only publickey)"

out=$(timeout 30 ssh "${common[@]}" $(keyed alice) alice@127.0.0.1 echo pwned </dev/null 2>&1) && fail "exec ran: $out"
grep -q 'pwned' <<<"$out" && fail "exec ran: $out"
grep -q 'exec request failed' <<<"$out" || fail "exec: no refusal: $out"
wait_log 'refused: exec.*command="echo pwned"'
echo "serve-e2e: exec is refused"

out=$(timeout 30 ssh "${common[@]}" $(keyed alice) -T alice@127.0.0.1 </dev/null 2>&1) && fail "a session without a terminal got a shell: $out"
grep -q 'shell request failed' <<<"$out" || fail "ssh -T: no refusal: $out"
wait_log 'refused: a session without a terminal'
out=$(timeout 30 sftp -q -F /dev/null -P "$port" -o UserKnownHostsFile="$tmp/known_hosts" -o IdentitiesOnly=yes -o IdentityAgent=none \
	-o BatchMode=yes -i "$tmp/alice" -b /dev/null alice@127.0.0.1 2>&1) && fail "sftp got in: $out"
wait_log 'refused: subsystem.*subsystem=sftp'
echo "serve-e2e: a session without a terminal and SFTP are refused"

# -L: a local port forwarded to the server's own port. Were the forward
# served, reading from it would give the server's SSH banner.
lport=
for _ in $(seq 20); do
	p=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then lport=$p && break; fi
done
[ -n "$lport" ] || fail "no free local port for -L"
ssh "${common[@]}" $(keyed alice) -N -o ExitOnForwardFailure=yes -L "127.0.0.1:$lport:127.0.0.1:$port" alice@127.0.0.1 </dev/null 2>"$tmp/fwd.err" &
fwd=$!
pids+=("$fwd")
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$lport") 2>/dev/null && break
	kill -0 "$fwd" 2>/dev/null || fail "ssh -L exited: $(cat "$tmp/fwd.err")"
	sleep 0.1
done
banner=$(timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$lport && head -c 8 <&3" 2>/dev/null || true)
[ "$banner" = "SSH-2.0-" ] && fail "the port forward (-L) was served"
wait_log 'refused: port forwarding \(ssh -L\).*channel=direct-tcpip'
stop "$fwd"
out=$(timeout 30 ssh "${common[@]}" $(keyed alice) -N -o ExitOnForwardFailure=yes -R "127.0.0.1:0:127.0.0.1:$port" alice@127.0.0.1 </dev/null 2>&1) &&
	fail "ssh -R stayed up: $out"
grep -q 'remote port forwarding failed' <<<"$out" || fail "-R: no refusal: $out"
wait_log 'refused: remote port forwarding'
echo "serve-e2e: port forwarding (-L, -R) is refused"
grep -q "$hostfp" <<<"$(ssh-keygen -l -f "$tmp/known_hosts")" || fail "the client saw another host key than the one created"

# --- The workbench over SSH -----------------------------------------------
# client WINDOW USER [ssh options...]: a tmux window whose process is ssh
# (exec: the pane's PID is the client's).
client() {
	local w=$1 u=$2
	shift 2
	local cmd
	cmd=$(printf '%q ' ssh -tt "${common[@]}" $(keyed "$u") "$@")
	if tm has-session -t e2e 2>/dev/null; then
		tm new-window -d -t e2e -n "$w" "exec $cmd"
	else
		tm new-session -d -s e2e -n "$w" -x 100 -y 30 "exec $cmd"
		tm set-option -t e2e remain-on-exit on
	fi
}
pane_pid() { tm display-message -p -t "e2e:$1" '#{pane_pid}'; }
# to_form WINDOW: from the sessions screen back to Setup with the form
# focused (esc there focuses the Dataset pane; enter loads its dataset
# again and moves on to the form).
to_form() {
	tm send-keys -t "e2e:$1" Escape
	wait_for "$1" '^┏━ (Dataset|Parameters)' 20
	if screen "$1" | grep -q '^┏━ Dataset'; then
		tm send-keys -t "e2e:$1" Enter
		wait_for "$1" '^┏━ Parameters' 20
	fi
	wait_for "$1" 'grid [0-9]+ x [0-9]+ = ' 20
}

client alice alice alice@127.0.0.1
wait_for alice 'signed in as alice' 30
wait_for alice '[0-9,]+ bars, 2025-06-01 17:23'
wait_for alice 'grid 3 x 3 = 9 combos'
wait_log 'msg=connected user=alice .*colors=256'
sweep_to_parity alice
s=$(screen alice)
grep -Eq 'trades [0-9,]+ fp64 / [0-9,]+ fp32, shifted [0-9,]+ \([0-9.]+%\)' <<<"$s" || fail "no trade counts in alice's parity pane"
grep -Eq 'runs: fp64 complete 9/9 in' <<<"$s" || fail "alice's runs are not reported complete"
echo "serve-e2e: alice's sweep over ssh: $(grep -Eo 'VERDICT: [A-Z]+' <<<"$s")"
[ -n "${SERVE_E2E_CAPTURE:-}" ] && printf '%s\n' "$s" >"$SERVE_E2E_CAPTURE"
wait_sessions alice '^1 .* complete +pass' 30

# bob at the same time: his own (empty) sessions, never alice's.
client bob bob bob@127.0.0.1
wait_for bob 'signed in as bob' 30
wait_for bob 'grid 3 x 3 = 9 combos'
tm send-keys -t e2e:bob Escape
sleep 0.3
tm send-keys -t e2e:bob S
wait_for bob 'Sessions: 0 in .*users/bob/sessions\.db'
tm send-keys -t e2e:alice S
wait_for alice 'Sessions: 1 in .*users/alice/sessions\.db'
wait_for alice ' pass +-?[0-9.]+'
if screen bob | grep -Eq 'alice|10:30:10 x 12:36:12'; then fail "bob's screen shows alice's sessions"; fi
[ -z "$(sessions_of bob 2>/dev/null | tail -n +2)" ] || fail "bob's database holds sessions he did not run: $(sessions_of bob)"
out=$(timeout 30 ssh -tt "${common[@]}" $(keyed bob) alice@127.0.0.1 </dev/null 2>&1) && fail "bob opened alice's sessions: $out"
grep -q 'the sessions of alice are theirs' <<<"$out" || fail "bob as alice: no refusal: $out"
echo "serve-e2e: two clients at once see only their own sessions"

# --- A kept study survives its client; the queue ---------------------------
# long_study WINDOW: from its form (the HMA range focused), a study of
# some seconds started: 199 x 40 combos x 2 precisions on the month of
# 1-minute bars (about 45 s on two busy cores).
long_study() {
	tm send-keys -t "e2e:$1" C-u
	tm send-keys -t "e2e:$1" -l '2:200:1'
	tm send-keys -t "e2e:$1" Down C-u
	tm send-keys -t "e2e:$1" -l '12:168:4'
	wait_for "$1" 'grid 199 x 40 = 7,960 combos'
	tm send-keys -t "e2e:$1" Enter
}

client alice2 alice alice@127.0.0.1
wait_for alice2 'grid 3 x 3 = 9 combos' 30
long_study alice2
wait_for alice2 'K: keep this study computing if you disconnect' 30
wait_for alice2 'fp(64|32) .* [1-9][0-9,]*/7,960' 60
tm send-keys -t e2e:alice2 K
wait_for alice2 'kept: this study computes on'
kill -9 "$(pane_pid alice2)"
wait_log 'msg="connection closed" user=alice .*study_kept=true'
wait_sessions alice '^2 .* running [0-9,]+/15,920' 10
echo "serve-e2e: alice's client killed mid-run, her kept study computes on"

# bob's study waits for it, with its place and an ETA (a study has
# completed on the reference backend: alice's first).
to_form bob
tm send-keys -t e2e:bob Enter
wait_for bob 'queued: position 1 of 1 waiting \(1 computing on this server\)' 20
wait_for bob 'starts in about [0-9.]+(ms|s|m)'
echo "serve-e2e: bob's run screen: $(screen bob | grep -A1 'queued: position' | tr -s ' \n' ' ')"

# The server serves on: alice comes back and finds her study.
client alice3 alice alice@127.0.0.1
wait_for alice3 'signed in as alice' 30
# The dataset loads after the connection; its form then takes the focus:
# wait for it, so that esc leaves the text field before S is pressed (on a
# loaded machine S was typed into the HMA range).
wait_for alice3 'grid 3 x 3 = 9 combos' 30
tm send-keys -t e2e:alice3 Escape
sleep 0.3
tm send-keys -t e2e:alice3 S
wait_for alice3 'Sessions: 2 in '
wait_for alice3 ' 2:200:1x12:168:4 '
wait_sessions alice '^2 .* complete ' 300
wait_log 'msg="kept study ended" user=alice' 30
wait_for bob 'Metrics: 9 of 9 combos' 120
echo "serve-e2e: the kept study completed; bob's queued study then ran"

# --- A client killed mid-run without K: its study stops ---------------------
to_form alice3
long_study alice3
wait_for alice3 'fp(64|32) .* [1-9][0-9,]*/7,960' 60
kill -9 "$(pane_pid alice3)"
wait_log 'msg="connection closed" user=alice .*study_kept=false' 20
wait_sessions alice '^3 .* cancelled' 30
kill -0 "$srv" 2>/dev/null || fail "the server exited"
echo "serve-e2e: a client killed mid-run without K: its study was cancelled; the server serves on"

# --- NO_COLOR from the client's environment --------------------------------
client plain bob -o SetEnv=NO_COLOR=1 bob@127.0.0.1
wait_for plain 'signed in as bob' 30
wait_for plain 'grid 3 x 3 = 9 combos'
if screen plain | LC_ALL=C grep -q '[^ -~]'; then fail "NO_COLOR: the screen is not plain ASCII"; fi
wait_log 'msg=connected user=bob .*colors=none'
echo "serve-e2e: NO_COLOR gives the plain ASCII screen"

# --- Stop ------------------------------------------------------------------
tm kill-server
stop "$srv" 40
kill -0 "$srv" 2>/dev/null && fail "the server did not stop on SIGTERM"
grep -q 'msg=stopped' "$log" || fail "no 'stopped' line in the server log"
n=$(grep -c 'msg="connection closed" user=[a-z]* login=[a-z]* key=SHA256:[^ ]* addr=127\.0\.0\.1:[0-9]* duration=' "$log" || true)
[ "$n" -ge 5 ] || fail "expected a connection line (user, key, addr, duration) per client, found $n"
echo "serve-e2e: ok"
