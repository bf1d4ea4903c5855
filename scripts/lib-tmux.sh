# Helpers of the end-to-end scripts that drive sweepbench in a private tmux
# server (scripts/tui-e2e.sh, scripts/serve-e2e.sh), sourced from the
# repository's root after the script sets
#   e2e     its name, for messages ("tui-e2e")
#   sock    the tmux server's socket name (one per run: -$$)
# Windows are of the tmux session "e2e" and named by the script; a script
# may define on_fail, called by fail after the screens are printed.

# require HINT COMMAND...: exit 2 when a command is missing (HINT: the
# packages that install them).
require() {
	local hint=$1 c
	shift
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || {
			echo "$e2e: $c is not installed (apt-get install -y $hint)" >&2
			exit 2
		}
	done
}

# prepare_bin: $tmp, a fresh folder, and $bin, the binary's absolute path:
# $SWEEPBENCH_BIN, else ./sweepbench built into $tmp.
prepare_bin() {
	tmp=$(mktemp -d)
	bin=${SWEEPBENCH_BIN:-}
	if [ -z "$bin" ]; then
		bin=$tmp/sweepbench
		CGO_ENABLED=0 go build -o "$bin" .
	fi
	bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
}

tm() { tmux -L "$sock" -f /dev/null "$@"; }

# screen WINDOW: the window's visible screen.
screen() { tm capture-pane -p -t "e2e:$1"; }

# poll SECONDS COMMAND...: until the command succeeds, every 0.1 s; status
# 1 when the time runs out.
poll() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		if "$@"; then return 0; fi
		sleep 0.1
	done
	return 1
}

# fail MESSAGE: print it, every window's screen and on_fail's output; exit 1.
fail() {
	local w
	echo "$e2e: FAIL: $*" >&2
	for w in $(tm list-windows -F '#{window_name}' 2>/dev/null); do
		echo "---- screen $w ----" >&2
		screen "$w" >&2 || true
	done
	if declare -F on_fail >/dev/null; then on_fail >&2 || true; fi
	exit 1
}

screen_matches() { screen "$1" 2>/dev/null | grep -Eq -- "$2"; }

# wait_for WINDOW REGEX [SECONDS]: until the window's screen matches
# (default 60 s).
wait_for() {
	local w=$1 re=$2 secs=${3:-60}
	poll "$secs" screen_matches "$w" "$re" || fail "timed out after ${secs}s waiting for /$re/ in window $w"
}

# sweep_to_parity WINDOW: from the form of the 3 x 3 study both scripts
# start with, run it (enter), wait for its 9 combos, then tab to the Parity
# pane (at 80x24 the panes are shown one at a time) and wait for its verdict.
sweep_to_parity() {
	tm send-keys -t "e2e:$1" Enter
	wait_for "$1" 'Metrics: 9 of 9 combos' 120
	tm send-keys -t "e2e:$1" Tab
	wait_for "$1" 'Parity: fp32 vs fp64'
	wait_for "$1" 'VERDICT: (PASS|COLLAPSE)'
}
