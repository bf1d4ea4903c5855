package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestRunRobustness: --blocks adds the Robustness section to run's table
// (PBO over C(8,4) = 70 splits, the DSR of the selected combo, the plateau
// best, the walk-forward folds); the robustness flags are checked before
// anything runs.
func TestRunRobustness(t *testing.T) {
	out, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "--no-save", "-q", "--blocks", "8", "--wf", "rolling:4")
	if err != "" {
		t.Fatalf("run: %s", err)
	}
	for _, want := range []string{"Robustness (fp64 run, 8 blocks of bar returns, objective max sharpe, 25 trials)", "over 70 splits",
		"DSR ", "for the selected combo", "plateau ", "walk-forward  rolling:4, 4 folds"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	// Constraints: the selected combo has the trades asked for.
	out, _, err = execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "6000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "--no-save", "-q", "--blocks", "8", "--min-trades", "150", "--max-drawdown", "0.5")
	if err != "" {
		t.Fatalf("run with constraints: %s", err)
	}
	if !strings.Contains(out, "constraints   at least 150 trades, max drawdown at most 50%: ") {
		t.Errorf("the table does not state the constraints:\n%s", out)
	}
	// Constraints no combo meets: the study stands, the section says so.
	out, _, err = execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--no-save", "-q", "--blocks", "8", "--min-trades", "1000000")
	if err != "" || !strings.Contains(out, "constraints   at least 1000000 trades: 0 of 9 combos selectable") ||
		!strings.Contains(out, "PBO           not computed: no combo meets the constraints: nothing to choose") {
		t.Errorf("unsatisfiable constraints: error %q, table:\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--wf", "rolling:4"}, "--wf rolling:4: the walk-forward runs over blocks: set blocks too"},
		{[]string{"--blocks", "8", "--wf", "rolling:8"}, "--wf rolling:8: 8 blocks in sample leave none out of sample of the 8 blocks"},
		{[]string{"--blocks", "65"}, "--blocks 65: want 0 (none) or 2 to 64 blocks"},
		{[]string{"--objective", "sharpness"}, "--objective sharpness: unknown metric"},
		{[]string{"--blocks", "8", "--objective", "max_drawdown"}, "--objective max_drawdown: with blocks, the robustness statistics need a metric they can take over blocks"},
		{[]string{"--blocks", "8", "--max-drawdown", "1.5"}, "--max-drawdown 1.5: want a fraction in [0, 1]"},
	} {
		args := append([]string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--backend", "reference", "--no-save", "-q"}, c.args...)
		if _, _, err := execute(t, args...); !strings.Contains(err, c.want) {
			t.Errorf("%v: error %q, want %q", c.args, err, c.want)
		}
	}
}

// TestRobustnessSavedAndShown: the Robustness section of a saved run is
// kept with its session (sessions show prints it again, the same text),
// the JSON report carries it under "robustness" and a Parquet file in its
// metadata.
func TestRobustnessSavedAndShown(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "5000", "--hma", "10:50:10", "--hma3", "12:60:12",
		"--backend", "reference", "-q", "--blocks", "8", "--wf", "anchored", "--db", db}
	out, _, err := execute(t, args...)
	if err != "" {
		t.Fatalf("run: %s", err)
	}
	section := out[strings.Index(out, "\nRobustness ("):]
	shown, _, err := execute(t, "sessions", "show", "1", "--db", db)
	if err != "" {
		t.Fatalf("show: %s", err)
	}
	if !strings.HasSuffix(shown, section) {
		t.Errorf("show does not end with run's Robustness section:\n%s\nwant:\n%s", shown, section)
	}
	js, _, err := execute(t, append(args[:len(args)-2:len(args)-2], "--no-save", "--format", "json")...)
	if err != "" {
		t.Fatalf("run --format json: %s", err)
	}
	var doc struct {
		Robustness struct {
			Blocks int      `json:"blocks"`
			PBO    *float64 `json:"pbo"`
			Splits int      `json:"splits"`
			DSR    struct {
				DSR float64 `json:"dsr"`
			} `json:"dsr"`
			Histogram struct {
				Edges  []float64 `json:"edges"`
				Counts []int     `json:"counts"`
			} `json:"logit_histogram"`
			WF struct {
				Folds       []any   `json:"folds"`
				TotalReturn float64 `json:"stitched_total_return"`
				Equity      []struct {
					Bar    int     `json:"bar"`
					Equity float64 `json:"equity"`
				} `json:"stitched_equity"`
			} `json:"walk_forward"`
		} `json:"robustness"`
	}
	if e := json.Unmarshal([]byte(js), &doc); e != nil {
		t.Fatal(e)
	}
	if r := doc.Robustness; r.Blocks != 8 || r.PBO == nil || r.Splits != 70 || len(r.WF.Folds) != 7 || r.DSR.DSR < 0 || r.DSR.DSR > 1 {
		t.Errorf("the JSON report's robustness %+v: want 8 blocks, a PBO over 70 splits, 7 anchored folds, a DSR", r)
	}
	// The pane's data: the logit histogram of the 70 splits, and the
	// stitched out-of-sample equity curve (at most 512 points, ending at
	// the stitched total return; engine/robust tests it to 1e-12).
	h, wf := doc.Robustness.Histogram, doc.Robustness.WF
	n := 0
	for _, c := range h.Counts {
		n += c
	}
	if len(h.Edges) != 21 || len(h.Counts) != 20 || n != 70 {
		t.Errorf("the logit histogram: %d edges, %d bins, %d splits", len(h.Edges), len(h.Counts), n)
	}
	if k := len(wf.Equity); k < 2 || k > 512 || math.Abs(wf.Equity[k-1].Equity-(1+wf.TotalReturn)) > 1e-12 {
		t.Errorf("the stitched equity: %d points %v, the stitched total return %v", k, wf.Equity, wf.TotalReturn)
	}
	pq := filepath.Join(dir, "r.parquet")
	if _, _, err := execute(t, append(args[:len(args)-2:len(args)-2], "--no-save", "--format", "parquet", "--out", pq)...); err != "" {
		t.Fatalf("run --format parquet: %s", err)
	}
	b, e := os.ReadFile(pq)
	if e != nil {
		t.Fatal(e)
	}
	f, e := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if e != nil {
		t.Fatal(e)
	}
	if v, ok := f.Lookup("robustness"); !ok || !strings.Contains(v, `"splits":70`) {
		t.Errorf("the Parquet metadata's robustness %q (%v)", v, ok)
	}
}

// TestBlocksOut: --blocks-out writes the per-block statistics as Parquet,
// one row per combo and block: per combo the blocks' bar returns add up to
// n-1, their trades to the combo's trade count, expm1 of their log growth
// to its total return (from the JSON report of the same study); the first
// block starts on the second bar.
func TestBlocksOut(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(dir, "blocks.parquet")
	args := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:30:10", "--hma3", "12:36:12",
		"--backend", "reference", "--no-save", "-q", "--precision", "fp64", "--blocks", "4"}
	js, _, err := execute(t, append(args, "--format", "json", "--blocks-out", pq)...)
	if err != "" {
		t.Fatal(err)
	}
	type row struct {
		HMA       int64   `parquet:"hma"`
		HMA3      int64   `parquet:"hma3"`
		Block     int64   `parquet:"block"`
		FirstTime int64   `parquet:"first_time"`
		Bars      int64   `parquet:"bars"`
		LogGrowth float64 `parquet:"log_growth"`
		Trades    int64   `parquet:"trades"`
	}
	b, e := os.ReadFile(pq)
	if e != nil {
		t.Fatal(e)
	}
	rd := parquet.NewGenericReader[row](bytes.NewReader(b))
	rows := make([]row, rd.NumRows())
	if n, e := rd.Read(rows); n != len(rows) && e != nil {
		t.Fatal(e)
	}
	var doc struct {
		Runs []struct {
			Combos []struct {
				HMA         int64   `json:"hma"`
				HMA3        int64   `json:"hma3"`
				TotalTrades int64   `json:"total_trades"`
				TotalReturn float64 `json:"total_return"`
			} `json:"combos"`
		} `json:"runs"`
	}
	if e := json.Unmarshal([]byte(js), &doc); e != nil {
		t.Fatal(e)
	}
	combos := doc.Runs[0].Combos
	if len(rows) != 4*len(combos) || len(combos) != 9 {
		t.Fatalf("%d rows for %d combos x 4 blocks", len(rows), len(combos))
	}
	for i, c := range combos {
		var bars, trades int64
		var lg float64
		for b := 0; b < 4; b++ {
			r := rows[4*i+b]
			if r.HMA != c.HMA || r.HMA3 != c.HMA3 || r.Block != int64(b) {
				t.Fatalf("row %d: %+v, want combo %d x %d block %d", 4*i+b, r, c.HMA, c.HMA3, b)
			}
			bars, trades, lg = bars+r.Bars, trades+r.Trades, lg+r.LogGrowth
		}
		if bars != 2999 || trades != c.TotalTrades || math.Abs(math.Expm1(lg)-c.TotalReturn) > 1e-9 {
			t.Errorf("combo %d x %d: %d bar returns, %d trades, growth %.12g; want 2999, %d, %.12g", c.HMA, c.HMA3, bars, trades, math.Expm1(lg), c.TotalTrades, c.TotalReturn)
		}
	}
	if rows[0].FirstTime == 0 {
		t.Error("the first block has no start time")
	}
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--no-save", "-q", "--backend", "reference", "--blocks-out", pq); !strings.Contains(err, "--blocks-out") || !strings.Contains(err, "only with --blocks") {
		t.Errorf("--blocks-out without --blocks: %q", err)
	}
}
