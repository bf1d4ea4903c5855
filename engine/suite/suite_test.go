package suite_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/internal/studytest"
)

// TestAggregator: the median (mean of the middle two for an even count),
// the worst (minimum; maximum for a minimised metric) and the datasets in
// profit, NaN left out, worked by hand for one combo over four datasets.
func TestAggregator(t *testing.T) {
	g := engine.Grid{HMA: studytest.MustRange(t, "--hma", "10"), HMA3: studytest.MustRange(t, "--hma3", "12:13")}
	res := func(i int, sharpe, ret, dd float64) engine.ComboResult {
		return engine.ComboResult{Index: i, Combo: g.At(i), Metrics: engine.Metrics{Sharpe: sharpe, TotalReturn: ret, MaxDrawdown: dd}}
	}
	// combo 0: sharpe 3, -1, NaN, 2 -> median of {-1, 2, 3} = 2, worst -1;
	// returns 0.1, -0.2, 0, 0.3 -> 2 in profit (0 is not).
	// combo 1: every sharpe NaN -> NaN.
	data := [][2]engine.ComboResult{
		{res(0, 3, 0.1, 0.2), res(1, math.NaN(), 0, 0.1)},
		{res(0, -1, -0.2, 0.5), res(1, math.NaN(), 0, 0.1)},
		{res(0, math.NaN(), 0, 0.3), res(1, math.NaN(), 0, 0.1)},
		{res(0, 2, 0.3, 0.4), res(1, math.NaN(), 0, 0.1)},
	}
	names := []string{"a", "b", "c", "d"}
	for _, c := range []struct {
		name            string
		obj             engine.Objective
		median0, worst0 float64
	}{
		{"sharpe", engine.Objective{}, 2, -1},
		{"max_drawdown", engine.Objective{Metric: "max_drawdown", Minimise: true}, 0.35, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := suite.NewAggregator(g, names, c.obj, engine.FP64)
			for d, rs := range data {
				a.Add(d, engine.FP64, rs[:])
				a.Add(d, engine.FP32, []engine.ComboResult{res(0, 100, 100, 0)}) // another lane: ignored
			}
			agg := a.Aggregate()
			if agg.Median[0] != c.median0 || agg.Worst[0] != c.worst0 || agg.Profitable[0] != 2 {
				t.Errorf("combo 0: median %v worst %v profitable %d, want %v, %v, 2", agg.Median[0], agg.Worst[0], agg.Profitable[0], c.median0, c.worst0)
			}
			if c.name == "sharpe" && (!math.IsNaN(agg.Median[1]) || !math.IsNaN(agg.Worst[1])) {
				t.Errorf("combo 1 (all NaN): median %v worst %v", agg.Median[1], agg.Worst[1])
			}
			if c.name == "max_drawdown" && !reflect.DeepEqual(agg.Top(2), []int{1, 0}) {
				t.Errorf("top by lowest median drawdown: %v, want [1 0]", agg.Top(2))
			}
		})
	}
}

// TestOverallParity: a collapse on one dataset is a collapse overall, the
// totals are the datasets' sums, the largest indicator error the largest.
func TestOverallParity(t *testing.T) {
	pass := &engine.Parity{Tolerance: 1e-5, Combos: []engine.ComboParity{{Index: 0, Trades64: 100, Trades32: 100}},
		IndicatorErrors: []engine.SeriesError{{Series: "h", Length: 10, MaxRel: 1e-7}}}
	bad := &engine.Parity{Tolerance: 1e-5, Combos: []engine.ComboParity{{Index: 0, Trades64: 50, Trades32: 60, Dn: 10, DnLimitBreached: true}},
		IndicatorErrors: []engine.SeriesError{{Series: "h", Length: 10, MaxRel: 3e-4}}}
	p := engine.OverallParity([]*engine.Parity{pass, nil, bad})
	if p.Verdict != engine.VerdictCollapse || p.TotalTrades64 != 150 || p.TotalTrades32 != 160 || p.MaxRelIndicatorError != 3e-4 || p.CombosCompared != 2 {
		t.Fatalf("overall %+v", *p)
	}
	if engine.OverallParity([]*engine.Parity{nil}) != nil {
		t.Error("no report: want nil")
	}
}

// TestExpandDatasets: repeated values, a list file (comments, relative
// paths from the list's folder), a glob of one dataset each, and a
// dataset named twice.
func TestExpandDatasets(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"x.csv", "y.csv"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("# symbols\nx.csv\n\nembedded:btcusdt-1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := suite.ExpandDatasets([]string{"embedded:filusdt-1m", "@" + list}, "")
	want := []string{"embedded:filusdt-1m", filepath.Join(dir, "x.csv"), "embedded:btcusdt-1m"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("list: %v, %v", got, err)
	}
	got, err = suite.ExpandDatasets(nil, filepath.Join(dir, "*.csv"))
	if err != nil || !reflect.DeepEqual(got, []string{filepath.Join(dir, "x.csv"), filepath.Join(dir, "y.csv")}) {
		t.Errorf("each: %v, %v", got, err)
	}
	var de *suite.DatasetsError
	if _, err := suite.ExpandDatasets(nil, filepath.Join(dir, "*.none")); !errors.As(err, &de) || !de.Each || de.Value != filepath.Join(dir, "*.none") {
		t.Errorf("an each pattern matching nothing: %#v, want a DatasetsError of the each pattern", err)
	}
	if _, err := suite.ExpandDatasets([]string{filepath.Join(dir, "*.none")}, ""); err != nil {
		t.Errorf("a --data glob is one dataset, checked when it loads: %v", err)
	}
	// A suite: every dataset there before any runs, the one that is not
	// named by the value that gave it (a list's by its line).
	bad := filepath.Join(dir, "list-bad.txt")
	if err := os.WriteFile(bad, []byte("x.csv\nmissing.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		values []string
		value  string // DatasetsError.Value
		says   string
	}{
		{[]string{"embedded:filusdt-1m", filepath.Join(dir, "nosuch.csv")}, filepath.Join(dir, "nosuch.csv"), "no such file"},
		{[]string{"embedded:filusdt-1mx", "embedded:btcusdt-1m"}, "embedded:filusdt-1mx", "no such embedded dataset"},
		{[]string{"embedded:filusdt-1m", filepath.Join(dir, "*.none")}, filepath.Join(dir, "*.none"), "takes in no data file"},
		{[]string{"embedded:filusdt-1m", "@" + bad}, "@" + bad, "line 2 (missing.csv)"},
	} {
		_, err := suite.ExpandDatasets(tc.values, "")
		if !errors.As(err, &de) || de.Value != tc.value || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want a DatasetsError of %s saying %q", tc.values, err, tc.value, tc.says)
		}
	}
}

// TestExpandDatasetsEachFolder: --data-each with a folder is each data
// file directly in it (not hidden, not in a subfolder, not another
// extension), sorted by name; a folder without one is refused.
func TestExpandDatasetsEachFolder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.csv", "a.csv", "c.parquet", ".hidden.csv", "notes.md", filepath.Join("sub", "d.csv")} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := suite.ExpandDatasets(nil, dir)
	want := []string{filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "c.parquet")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("each folder: %v, %v; want %v", got, err, want)
	}
	empty := filepath.Join(dir, "sub", "none")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	var de *suite.DatasetsError
	if _, err := suite.ExpandDatasets(nil, empty); !errors.As(err, &de) || !de.Each || de.Value != empty ||
		!strings.HasPrefix(de.Err.Error(), "the folder holds no data file (") {
		t.Errorf("an each folder without data files: %v, want a DatasetsError of the folder", err)
	}
}

// TestExpandDatasetsRefusesOneDatasetTwice: a dataset given twice, under
// any spelling (./x.csv and x.csv, a symbolic link, a glob's match, a
// list's line, a folder and its glob), is refused naming both origins;
// another file, even with the same bytes, is not the same dataset.
func TestExpandDatasetsRefusesOneDatasetTwice(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, n := range []string{"x.csv", "y.csv"} {
		if err := os.WriteFile(n, []byte("same bytes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("x.csv", "link.csv"); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Mkdir("lists", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("lists", "list.txt"), []byte("../x.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("lists", "twice.txt"), []byte("../x.csv\n# again\n  ./../x.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "x.csv")
	first := func(v string) suite.DatasetOrigin { return suite.DatasetOrigin{Dataset: v, Value: v} }
	for _, c := range []struct {
		name          string
		values        []string
		each          string
		first, second suite.DatasetOrigin
	}{
		{"the same spelling", []string{"x.csv", "x.csv"}, "", first("x.csv"), first("x.csv")},
		{"./x.csv and x.csv", []string{"./x.csv", "x.csv"}, "", first("./x.csv"), first("x.csv")},
		{"absolute and relative", []string{abs, "x.csv"}, "", first(abs), first("x.csv")},
		{"a symbolic link", []string{"x.csv", "link.csv"}, "", first("x.csv"), first("link.csv")},
		{"an each match", []string{"y.csv"}, "[xy].csv", first("y.csv"), suite.DatasetOrigin{Dataset: "y.csv", Each: true, Value: "[xy].csv"}},
		{"a list's line", []string{"@lists/list.txt", "./x.csv"}, "", suite.DatasetOrigin{Dataset: "x.csv", Value: "@lists/list.txt", Line: 1, Written: "../x.csv"}, first("./x.csv")},
		{"two lines of a list", []string{"@lists/twice.txt"}, "",
			suite.DatasetOrigin{Dataset: "x.csv", Value: "@lists/twice.txt", Line: 1, Written: "../x.csv"},
			suite.DatasetOrigin{Dataset: "x.csv", Value: "@lists/twice.txt", Line: 3, Written: "./../x.csv"}},
		{"a folder and its glob", []string{".", "*.csv"}, "", first("."), first("*.csv")},
		{"embedded", []string{"embedded:btcusdt-1m", "x.csv", "embedded:btcusdt-1m"}, "", first("embedded:btcusdt-1m"), first("embedded:btcusdt-1m")},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := suite.ExpandDatasets(c.values, c.each)
			var de *suite.DatasetsError
			var dup *suite.DuplicateDatasetError
			if !errors.As(err, &de) || !errors.As(err, &dup) {
				t.Fatalf("got %v, want a DuplicateDatasetError", err)
			}
			if dup.First != c.first || dup.Second != c.second || de.Each != c.second.Each || de.Value != c.second.Value {
				t.Errorf("got %+v (at %+v), want %+v then %+v", *dup, *de, c.first, c.second)
			}
		})
	}
	for _, ok := range [][]string{{"x.csv", "y.csv"}, {"x.csv", "x.csv#member"}, {"*.csv", "x.csv"}, {"embedded:btcusdt-1m", "embedded:filusdt-1m"}} {
		if _, err := suite.ExpandDatasets(ok, ""); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestSuiteRef: the refs runSuite and merge save read back, and a value
// that is not one is an error naming it.
func TestSuiteRef(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     suite.SuiteRef
		ok, err  bool
	}{
		{"first", "3fa2c9e1b0d4 1/5 r0a1b2c3d", suite.SuiteRef{"3fa2c9e1b0d4", 1, 5, "r0a1b2c3d"}, true, false},
		{"last", "b16796de63b5 2/2 r00000001", suite.SuiteRef{"b16796de63b5", 2, 2, "r00000001"}, true, false},
		{"saved before runs", "b16796de63b5 2/2", suite.SuiteRef{"b16796de63b5", 2, 2, ""}, true, false},
		{"too many fields", "b16796de63b5 2/2 r1 x", suite.SuiteRef{}, false, true},
		{"none", "", suite.SuiteRef{}, false, false},
		{"no position", "3fa2c9e1b0d4", suite.SuiteRef{}, false, true},
		{"past the end", "3fa2c9e1b0d4 6/5", suite.SuiteRef{}, false, true},
		{"zero", "3fa2c9e1b0d4 0/5", suite.SuiteRef{}, false, true},
		{"not a number", "3fa2c9e1b0d4 a/5", suite.SuiteRef{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := suite.ParseSuiteRef(tc.in)
			if got != tc.want || ok != tc.ok || (err != nil) != tc.err {
				t.Fatalf("suite.ParseSuiteRef(%q) = %+v, %v, %v", tc.in, got, ok, err)
			}
			if ok && got.String() != tc.in {
				t.Fatalf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
	if a, b := suite.NewSuiteRun(), suite.NewSuiteRun(); a == b || len(a) != 9 || a[0] != 'r' {
		t.Fatalf("NewSuiteRun: %q then %q, want two runs' names r + 8 hex", a, b)
	}
	if suite.ReferenceLane([]engine.Precision{engine.FP32, engine.FP64}) != engine.FP64 || suite.ReferenceLane([]engine.Precision{engine.FP32}) != engine.FP32 {
		t.Fatal("ReferenceLane: fp64 when run, else the one precision")
	}
}
