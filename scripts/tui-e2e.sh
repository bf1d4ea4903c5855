#!/usr/bin/env bash
# End-to-end check of the workbench (issue 3): drive the real binary in a
# private tmux server, run the issue's small study, assert the parity pane
# shows the verdict and its numbers, go through an analysis (the heatmap's
# overview, a filter, a crossover, the trade list to its last trade, the
# sessions browser and a compare: issue 15), quit, and check the terminal is
# restored (alternate screen off, cooked tty, shell prompt back). Then open
# it again with NO_COLOR=1 and check the screen is plain ASCII; last, browse
# the sessions while a larger study runs (it is listed as running) and come
# back to it as it completes.
#
#   scripts/tui-e2e.sh                      # builds ./sweepbench into a temp dir
#   SWEEPBENCH_BIN=bin/sweepbench scripts/tui-e2e.sh
#
# Exit status: 0 pass, 1 a check failed, 2 tmux missing.
set -euo pipefail
cd "$(dirname "$0")/.."

e2e=tui-e2e
sock=sweepbench-e2e-$$
. scripts/lib-tmux.sh
require tmux tmux
prepare_bin

pane=e2e:main
# The workbench records its last study's final state in the sessions store
# (under $tmp) as it exits: wait for it (up to 10 s) before removing $tmp.
cleanup() {
	tm kill-server >/dev/null 2>&1 || true
	poll 10 bin_exited || true
	rm -rf "$tmp" 2>/dev/null || { sleep 1; rm -rf "$tmp"; }
}
bin_exited() { ! pgrep -f "$bin" >/dev/null 2>&1; }
trap cleanup EXIT

alt_on() { tm display-message -p -t "$pane" '#{alternate_on}'; }

tm new-session -d -s e2e -n main -x 80 -y 24 "env -i HOME=$tmp PATH=/usr/bin:/bin TERM=xterm-256color bash --norc --noprofile"
tm send-keys -t "$pane" "PS1='e2e\$ '; cd $(printf %q "$PWD")" Enter
wait_for main '^e2e\$( |$)' 10
tm send-keys -t "$pane" "clear; $(printf %q "$bin") tui --data embedded:btcusdt-1m --head 5000 --hma 10:30:10 --hma3 12:36:12 --backend reference; echo \"exit=\$?\"" Enter

# Setup: the dataset summary, the form prefilled from the flags.
wait_for main '5,000 bars, 2025-06-01 17:23'
[ "$(alt_on)" = 1 ] || fail "the workbench is not on the alternate screen"
wait_for main 'HMA range +10:30:10'
wait_for main 'grid 3 x 3 = 9 combos'

# The focus is in the HMA range, which takes q and ?: the status line offers
# esc and f1; F1 (as the terminal sends it: ESC O P), and ctrl+/ (0x1f)
# where a terminal keeps F1, open the help from the field and close it,
# the field unchanged.
wait_for main 'esc leave field [^a-z]+f1 help'
help_closed() { ! screen_matches main 'help \(anywhere\)'; }
for k in F1 C-_; do
	tm send-keys -t "$pane" "$k"
	wait_for main 'f1 +help \(anywhere\)' 10
	tm send-keys -t "$pane" "$k"
	poll 10 help_closed || fail "$k did not close the help"
done
wait_for main 'HMA range +10:30:10 '

# Run: enter runs the sweep; the results come up; tab moves to Parity.
sweep_to_parity main
s=$(screen main)
grep -Eq 'trades [0-9,]+ fp64 / [0-9,]+ fp32, shifted [0-9,]+ \([0-9.]+%\)' <<<"$s" || fail "no trade counts in the parity pane"
grep -Eq 'max \|dn\| [0-9,]+ \(hma [0-9]+, hma3 [0-9]+\); max relative \|dn\| [0-9.]+% \(hma [0-9]+, hma3 [0-9]+\)' <<<"$s" || fail "no max |dn| with its combos in the parity pane"
grep -Eq 'max \|dPnL\| [0-9.e+-]+ pp \(hma [0-9]+, hma3 [0-9]+\); max relative [0-9.e+-]+ \(hma [0-9]+, hma3 [0-9]+\)' <<<"$s" || fail "no dPnL with its combos in the parity pane"
grep -Eq 'flips [0-9,]+, non-borderline [0-9,]+; indicator error [0-9.e+-]+' <<<"$s" || fail "no flip counts / indicator error in the parity pane"
grep -Eq 'runs: fp64 complete 9/9 in [0-9.]+(ms|s|µs)' <<<"$s" || fail "the runs are not reported complete"
grep -Eq ' 30 +12 +[0-9,]+ +[-+][0-9]+ +-?[0-9.]+ +[0-9]+' <<<"$s" || fail "no per-combo parity rows"
echo "tui-e2e: parity pane at 80x24:"
grep -E 'VERDICT|trades .* fp64|max \|dPnL\||flips [0-9]' <<<"$s" | sed 's/^/  /'

# An analysis at 80x24 (issue 15): the heatmap's overview, a filter, the
# crossover of a combo, its trade list to the last trade, the sessions
# browser and a compare of the session's own fp32 run against its fp64 one.
tm send-keys -t "$pane" Tab
wait_for main 'Heatmap: sharpe \(fp64\)'
tm send-keys -t "$pane" z
wait_for main 'Heatmap: sharpe \(fp64\), overview'
tm send-keys -t "$pane" z
tm send-keys -t "$pane" /
sleep 0.2
tm send-keys -t "$pane" 'hma=20' Enter
wait_for main 'Metrics: 3 of 9 combos'
tm send-keys -t "$pane" Enter
wait_for main 'Crossover: (flip [0-9]+ of [0-9]+|no flips)'
tm send-keys -t "$pane" Tab
wait_for main 'Combo hma 20 x hma3 [0-9]+'
wait_for main 'fp64: return [^,]+, sharpe [^,]+, max dd [^,]+, [0-9,]+ trades'
last=$(screen main | grep -Eo 'fp64: return [^,]+, sharpe [^,]+, max dd [^,]+, [0-9,]+ trades' | head -1 | grep -Eo '[0-9,]+ trades' | tr -d ', trades')
[ -n "$last" ] || fail "no trade count in the Combo pane"
tm send-keys -t "$pane" G
wait_for main "(>|▶) +$last (long|short) " 10
echo "tui-e2e: the Combo pane's last trade ($last) reached"
tm send-keys -t "$pane" S
wait_for main 'Sessions: 1 in '
wait_for main ' pass +-?[0-9.]+'
tm send-keys -t "$pane" Space Space Space
wait_for main 'AB +1 '
tm send-keys -t "$pane" c
wait_for main 'Parity B vs A: (PASS|COLLAPSE)' 60
tm send-keys -t "$pane" Escape
wait_for main 'Sessions: 1 in '
tm send-keys -t "$pane" Escape
wait_for main 'Combo hma 20 x hma3 [0-9]+' # back where the analysis was

# Resize to 160x48: the workbench redraws with every pane on screen.
tm resize-window -t e2e -x 160 -y 48
wait_for main 'Heatmap: sharpe'
wait_for main 'Crossover: flip [0-9]+ of [0-9]+'
wait_for main 'VERDICT: (PASS|COLLAPSE)'

# Quit and check the terminal is restored.
tm send-keys -t "$pane" q
wait_for main '^exit=0$' 20
wait_for main '^e2e\$( |$)' 10
[ "$(alt_on)" = 0 ] || fail "the alternate screen is still on after quitting"
if screen main | grep -Eq 'VERDICT|Metrics: 9 of 9'; then fail "the workbench left its screen behind"; fi
tm send-keys -t "$pane" "stty -a | tr ' ;' '\n\n' | grep -Ex -- '-?(icanon|echo)' | tr '\n' ' '; echo" Enter
wait_for main '^icanon echo ?$' 10

# NO_COLOR: the same screens in plain ASCII.
tm send-keys -t "$pane" "clear; NO_COLOR=1 $(printf %q "$bin") tui --data embedded:btcusdt-1m --head 5000 --hma 10:30:10 --hma3 12:36:12; echo \"exit=\$?\"" Enter
wait_for main '5,000 bars, 2025-06-01 17:23'
if screen main | LC_ALL=C grep -q '[^ -~]'; then fail "NO_COLOR: the screen is not plain ASCII"; fi
# The form's range field has the focus: q would be typed there (keys are
# text in a text field); esc leaves it, then q quits.
tm send-keys -t "$pane" Escape
sleep 0.3
tm send-keys -t "$pane" q
wait_for main '^exit=0$' 20
[ "$(alt_on)" = 0 ] || fail "the alternate screen is still on after quitting (NO_COLOR)"

# Work while a sweep runs (issue 15): a study of 12,848 combos over the whole
# month (several seconds on two cores); during it the sessions browser opens
# and lists the study as running, esc returns to the run, which completes.
tm send-keys -t "$pane" "clear; $(printf %q "$bin") tui --data embedded:btcusdt-1m --hma 10:300:2 --hma3 12:360:4 --backend reference; echo \"exit=\$?\"" Enter
wait_for main 'grid 146 x 88 = 12,848 combos'
tm send-keys -t "$pane" Enter
wait_for main 'fp64' 20
tm send-keys -t "$pane" S
wait_for main 'Sessions: 2 in '
wait_for main ' running [0-9]+%' 10
tm send-keys -t "$pane" Escape
wait_for main 'Metrics: 12,848 of 12,848 combos' 300
tm send-keys -t "$pane" q
wait_for main '^exit=0$' 20

echo "tui-e2e: ok"
