package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/report"
)

// strategyGrid is the grid of `--strategy family --param ...` (as run
// builds it).
func strategyGrid(t *testing.T, family string, params map[string]string, fastBelowSlow bool) engine.Grid {
	t.Helper()
	s := engine.DefaultSpec()
	s.Strategy, s.HMA, s.HMA3, s.Params, s.FastBelowSlow = family, "", "", params, fastBelowSlow
	set, err := s.Parse()
	if err != nil {
		t.Fatal(err)
	}
	if set.Grid.Strategy == nil {
		t.Fatalf("%s: not a strategy grid", family)
	}
	return set.Grid
}

// TestReportStrategyComboAndAxes: `sessions plot --combo NAME=V,...` of a
// strategy study is the index of the combo with those values (its label
// recomputed from the grid says so), a leg by its length or KIND:LENGTH,
// an axis of one value optional; `--axes NAME,NAME` two of the grid's
// parameters; anything else refused saying what the grid has.
func TestReportStrategyComboAndAxes(t *testing.T) {
	z := strategyGrid(t, "zscore", map[string]string{"length": "20:40:20", "entry": "1.5:2:0.5", "exit": "0:0.5:0.5"}, false)
	for _, c := range []struct {
		combo, label string
		coords       []int
	}{
		{"length=40,entry=1.5,exit=0.5", "length 40, entry 1.5, exit 0.5", []int{1, 0, 1}},
		{" exit=0 , length=20,entry=2.0", "length 20, entry 2, exit 0", []int{0, 1, 0}},
	} {
		i, err := strategyCombo(z, c.combo)
		if err != nil {
			t.Fatalf("%q: %v", c.combo, err)
		}
		if i != z.Strategy.IndexOf(c.coords) || z.Label(i) != c.label {
			t.Errorf("%q: combo %d (%s), want %d (%s)", c.combo, i, z.Label(i), z.Strategy.IndexOf(c.coords), c.label)
		}
	}
	x := strategyGrid(t, "cross", map[string]string{"fast": "ema:10:30:10", "slow": "sma:20:40:10"}, true)
	for _, c := range []struct{ combo, label string }{
		{"fast=10,slow=20", "fast ema 10, slow sma 20"},
		{"fast=ema:20,slow=SMA:40", "fast ema 20, slow sma 40"},
	} {
		i, err := strategyCombo(x, c.combo)
		if err != nil || x.Label(i) != c.label {
			t.Errorf("%q: combo %d (%v), want %s", c.combo, i, err, c.label)
		}
	}
	p := strategyGrid(t, "cross", map[string]string{"fast": "price", "slow": "sma:20:40:10"}, false)
	if i, err := strategyCombo(p, "slow=30"); err != nil || p.Label(i) != p.Label(p.Strategy.IndexOf([]int{0, 1})) {
		t.Errorf("slow=30 with a price fast leg: combo %d (%v)", i, err)
	}
	for _, c := range []struct {
		g          engine.Grid
		combo, err string
	}{
		{z, "length=30,entry=2,exit=0", `--combo "length=30,entry=2,exit=0": length 30 is not in the grid (20:40:20: 20, 40)`},
		{z, "length=20", `--combo "length=20": give entry too (one of 1.5, 2), e.g. --combo length=20,entry=1.5,exit=0`},
		{z, "fast=20", `--combo "fast=20": zscore has no parameter "fast" (its parameters: length, entry, exit)`},
		{z, "length=20,length=40", `--combo "length=20,length=40": length is given twice`},
		{z, "length", `--combo "length": want NAME=VALUE,... for a zscore study, e.g. --combo length=20,entry=1.5,exit=0`},
		{z, "length=twenty,entry=2,exit=0", `length twenty is not in the grid`},
		{x, "fast=30,slow=20", `--combo "fast=30,slow=20": the grid fast ema:10:30:10 x slow sma:20:40:10 (fast < slow) has no such combo: --fast-below-slow dropped it`},
		{x, "fast=sma:10,slow=20", `--combo "fast=sma:10,slow=20": the grid's fast leg is ema, not sma`},
	} {
		if _, err := strategyCombo(c.g, c.combo); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.combo, err, c.err)
		}
	}

	if a, err := parseAxes(" length , exit"); err != nil || len(a) != 2 || a[0] != "length" || a[1] != "exit" {
		t.Errorf("--axes length,exit: %q %v", a, err)
	}
	if a, err := parseAxes(""); a != nil || err != nil {
		t.Errorf("--axes empty: %q %v", a, err)
	}
	for s, want := range map[string]string{
		"length":            `--axes "length": want two parameter names, NAME,NAME (e.g. length,exit), not 1`,
		"length,":           `--axes "length,": want two parameter names`,
		"length,entry,exit": `not 3`,
	} {
		if _, err := parseAxes(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--axes %q: %v, want %q", s, err, want)
		}
	}
	if err := report.CheckAxes(z, []string{"length", "exit"}); err != nil {
		t.Errorf("length,exit: %v", err)
	}
	if err := report.CheckAxes(z, []string{"length", "fast"}); err == nil || !strings.Contains(err.Error(), `zscore has no parameter "fast" (its parameters: length, entry, exit)`) {
		t.Errorf("length,fast: %v", err)
	}
}

// TestSessionsReportHullRefusesStrategyFlags: a hull session's plot and
// report refuse --axes (its heatmap is hma by hma3) and a --combo by
// parameter names, saying how its combos are named, writing nothing.
func TestSessionsReportHullRefusesStrategyFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if _, _, err := execute(t, "run", "--head", "3000", "--hma", "10:30:20", "--hma3", "12:36:24", "--precision", "fp64", "--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"plot --axes", []string{"sessions", "plot", "1", "--figure", "heatmap", "--axes", "hma,hma3"}, "--axes: session 1: a hull study's heatmaps are hma by hma3: there are no axes to choose (its grid hma 10:30:20 x hma3 12:36:24)"},
		{"report --axes", []string{"sessions", "report", "1", "--axes", "hma,hma3"}, "--axes: session 1: a hull study's heatmaps are hma by hma3"},
		{"bad --axes", []string{"sessions", "report", "1", "--axes", "hma"}, `--axes "hma": want two parameter names`},
		{"plot --combo NAME=V", []string{"sessions", "plot", "1", "--figure", "equity", "--combo", "length=20"}, `--combo "length=20": session 1 is a hull study (hma 10:30:20 x hma3 12:36:24): name its combo by lengths, --combo HMA:HMA3`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "x.svg")
			if c.args[1] == "report" {
				out = filepath.Join(dir, "x.html")
			}
			_, _, err := execute(t, append(c.args, "--db", db, "--out", out)...)
			if !strings.Contains(err, c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused command wrote %s", out)
			}
		})
	}
	// --combo HMA:HMA3 as before.
	eq := filepath.Join(dir, "eq.svg")
	if _, _, err := execute(t, "sessions", "plot", "1", "--db", db, "--figure", "equity", "--combo", "30:36", "--out", eq); err != "" {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(eq); !strings.Contains(string(b), "hma 30") {
		t.Errorf("--combo 30:36: %.300s", b)
	}
}
