package cli

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestObjectiveRanksTopList: --objective and the constraints order run's
// top list (the title says by what), with or without --blocks: every row
// meets the constraints and the rows go from best to worst by the metric
// (max_drawdown lowest first).
func TestObjectiveRanksTopList(t *testing.T) {
	base := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "--no-save", "-q", "--precision", "fp64", "--top", "5"}
	rows := func(out string) [][]string {
		var rs [][]string
		in := false
		for _, l := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(l, "Top "):
				in = true
			case in && strings.TrimSpace(l) == "":
				return rs
			case in && !strings.Contains(l, "hma3"):
				rs = append(rs, strings.Fields(l))
			}
		}
		return rs
	}
	out, _, err := execute(t, append(base, "--objective", "total_return", "--min-trades", "110")...)
	if err != "" {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Top 5 combos by fp64 total_return (at least 110 trades) (returns,") {
		t.Errorf("title:\n%s", out)
	}
	// columns: hma hma3 trades return cagr sharpe sortino maxdd ...
	prev := math.Inf(1)
	for _, r := range rows(out) {
		trades, _ := strconv.Atoi(r[2])
		ret, _ := strconv.ParseFloat(r[3], 64)
		if trades < 110 || ret > prev {
			t.Errorf("row %v: trades %d (want >= 110), return %g after %g (want descending)", r, trades, ret, prev)
		}
		prev = ret
	}
	out, _, err = execute(t, append(base, "--objective", "max_drawdown")...)
	if err != "" {
		t.Fatal(err)
	}
	prev = math.Inf(-1)
	for _, r := range rows(out) {
		dd, _ := strconv.ParseFloat(r[7], 64)
		if dd < prev {
			t.Errorf("row %v: max drawdown %g after %g (want ascending)", r, dd, prev)
		}
		prev = dd
	}
	if len(rows(out)) != 5 || !strings.Contains(out, "by fp64 lowest max_drawdown") {
		t.Errorf("max_drawdown top list:\n%s", out)
	}
}

// TestObjectiveSaved: a session keeps its objective and constraints:
// sessions show lists the same top combos, under the same title, as run.
func TestObjectiveSaved(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	out, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "-q", "--top", "4", "--objective", "sortino", "--min-trades", "150", "--db", db)
	if err != "" {
		t.Fatal(err)
	}
	top := func(s string) string {
		a := strings.Index(s, "\nTop ")
		if a < 0 {
			return ""
		}
		b := strings.Index(s[a+1:], "\n\n")
		return s[a+1 : a+1+b]
	}
	shown, _, err := execute(t, "sessions", "show", "1", "--db", db, "--top", "4")
	if err != "" {
		t.Fatal(err)
	}
	if top(out) == "" || top(shown) != top(out) || !strings.Contains(top(out), "by fp64 sortino (at least 150 trades)") {
		t.Errorf("run's top list:\n%s\nshow's:\n%s", top(out), top(shown))
	}
}
