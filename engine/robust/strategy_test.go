package robust

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
	_ "sweepbench/strategy" // engine.NewStrategy
)

// strategyGrid is family's grid of params, failing t on an error.
func strategyGrid(t *testing.T, family string, params map[string]string, fastBelowSlow bool) engine.Grid {
	t.Helper()
	st, err := engine.NewStrategy(family, params, fastBelowSlow)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Grid{Strategy: st}
}

// comboAt is the index of the combo of g whose label is label, failing t
// when there is none.
func comboAt(t *testing.T, g engine.Grid, label string) int {
	t.Helper()
	for i := 0; i < g.Len(); i++ {
		if g.Label(i) == label {
			return i
		}
	}
	t.Fatalf("grid %s has no combo %q", g.Text(), label)
	return -1
}

// TestPlateauStrategyAxes: the plateau of a zscore grid of 3 x 3 x 3
// combos (length 10:30:10, entry 1.5:2.5:0.5, exit 0:1:0.5) averages each
// combo's window of the combos within one step on every axis. With the
// value of a combo 100 a + 10 b + c for its axis indices (a, b, c), read
// from its parameters, the window's mean is 100 x the mean of its a's, and
// so on: worked by hand below for a corner (8 combos), an edge, the centre
// (27) and the far corner; the plateau best is the far corner, and with it
// excluded the best of the others.
func TestPlateauStrategyAxes(t *testing.T) {
	g := strategyGrid(t, "zscore", map[string]string{"length": "10:30:10", "entry": "1.5:2.5:0.5", "exit": "0:1:0.5"}, false)
	if g.Len() != 27 {
		t.Fatalf("%d combos, want 27", g.Len())
	}
	lengths := map[string]float64{"10": 0, "20": 1, "30": 2}
	entries := map[string]float64{"1.5": 0, "2": 1, "2.5": 2}
	exits := map[string]float64{"0": 0, "0.5": 1, "1": 2}
	values := make([]float64, g.Len())
	for i := range values {
		p := g.Point(i)
		values[i] = 100*lengths[p[0].Text] + 10*entries[p[1].Text] + exits[p[2].Text]
	}
	r, err := Plateau(values, g, 3, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		label string
		score float64
	}{
		{"length 10, entry 1.5, exit 0", 55.5},  // a, b, c in {0, 1}: 8 combos
		{"length 10, entry 2, exit 1", 61.5},    // a {0, 1}, b {0, 1, 2}, c {1, 2}: 12 combos
		{"length 20, entry 2, exit 0.5", 111},   // the centre: all 27
		{"length 30, entry 2.5, exit 1", 166.5}, // a, b, c in {1, 2}
		{"length 30, entry 2.5, exit 0.5", 166}, // a, b {1, 2}, c {0, 1, 2}
		{"length 20, entry 2.5, exit 1", 116.5}, // a {0, 1, 2}, b, c {1, 2}
	} {
		if got := r.Score[comboAt(t, g, c.label)]; math.Abs(got-c.score) > 1e-12 {
			t.Errorf("%s: score %v, want %v", c.label, got, c.score)
		}
	}
	far := comboAt(t, g, "length 30, entry 2.5, exit 1")
	if r.Best != far || r.RawBest != far || r.BestScore != 166.5 || r.RawBestValue != 222 {
		t.Errorf("best %d (%v), raw best %d (%v); want %d: 166.5 and 222", r.Best, r.BestScore, r.RawBest, r.RawBestValue, far)
	}
	sel := make([]bool, g.Len())
	for i := range sel {
		sel[i] = i != far
	}
	r, err = Plateau(values, g, 3, false, sel)
	if err != nil {
		t.Fatal(err)
	}
	if want := comboAt(t, g, "length 30, entry 2.5, exit 0.5"); r.Best != want || r.BestScore != 166 {
		t.Errorf("without the far corner: best %s (%v), want %s (166)", g.Label(r.Best), r.BestScore, g.Label(want))
	}
	// A window of 1 is the combo itself.
	if r, err := Plateau(values, g, 1, false, nil); err != nil || r.Score[5] != values[5] {
		t.Errorf("k = 1: %v, score %v, want its value %v", err, r.Score[5], values[5])
	}
	if _, err := Plateau(values[:26], g, 3, false, nil); err == nil {
		t.Error("26 values for 27 combos: no error")
	}
}

// TestPlateauFastBelowSlow: a crossover grid with --fast-below-slow (fast
// sma 10:30:10, slow sma 20:40:10: 6 of its 9 pairs) averages, in a combo's
// window, only the pairs the grid holds. With value fast + 100 x slow:
// (30, 40) sees (20, 30), (20, 40), (30, 40); (10, 20) sees (10, 20),
// (10, 30), (20, 30); (20, 30) sees all six.
func TestPlateauFastBelowSlow(t *testing.T) {
	g := strategyGrid(t, "cross", map[string]string{"fast": "sma:10:30:10", "slow": "sma:20:40:10"}, true)
	if g.Len() != 6 {
		t.Fatalf("%d combos, want 6", g.Len())
	}
	values := make([]float64, g.Len())
	for i := range values {
		p := g.Point(i)
		values[i] = p[0].Value + 100*p[1].Value
	}
	r, err := Plateau(values, g, 3, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		label string
		score float64
	}{
		{"fast sma 30, slow sma 40", (3020 + 4020 + 4030) / 3.0},
		{"fast sma 10, slow sma 20", (2010 + 3010 + 3020) / 3.0},
		{"fast sma 20, slow sma 30", (2010 + 3010 + 4010 + 3020 + 4020 + 4030) / 6.0},
	} {
		if got := r.Score[comboAt(t, g, c.label)]; math.Abs(got-c.score) > 1e-9 {
			t.Errorf("%s: score %v, want %v", c.label, got, c.score)
		}
	}
}

// TestAnalyseStrategy: the robustness of a real zscore study (embedded
// BTC/USDT minutes, 8 blocks, rolling:4) names real combos: the selected
// combo is the run's best by Sharpe, and the summary names it, the plateau
// best and every fold's choice by its parameters (Grid.Label), in the
// table and the JSON ({"index", "label"}, no hma); PBO, the DSR and the
// walk-forward run over the grid's combos; the stitched equity curve,
// recomputed by the family's arithmetic, ends at 1 + the walk-forward's
// total return from the block statistics.
func TestAnalyseStrategy(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(8000)
	g := strategyGrid(t, "zscore", map[string]string{"length": "10:40:10", "entry": "1.5:2.5:0.5", "exit": "0:0.5:0.5"}, false)
	s := &engine.Study{Dataset: ds, Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Blocks: 8,
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, WMA: engine.Direct, Backend: reference.New()}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Blocks == nil {
		t.Fatal("no per-block statistics from the strategy grid's kernel")
	}
	wf, err := ParseWF("rolling:4")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyse(context.Background(), rep, Options{WF: &wf, Bars: &ds.Bars})
	if err != nil {
		t.Fatal(err)
	}
	run := rep.Run(engine.FP64)
	best := engine.TopBySharpe(run, 1)[0]
	if r.Selected != best.Index {
		t.Errorf("selected combo %d (%s), the run's best by Sharpe is %d (%s)", r.Selected, g.Label(r.Selected), best.Index, g.Label(best.Index))
	}
	if r.Trials != g.Len() || r.PBO == nil || r.PBO.Splits() != 70 || r.DSR == nil || r.WF == nil || len(r.WF.Folds) != 4 {
		t.Fatalf("trials %d of %d, PBO %v, DSR %v, walk-forward %v", r.Trials, g.Len(), r.PBO, r.DSR, r.WF)
	}
	sm := r.Summary()
	if want := g.Label(best.Index); sm.Selected.Label != want || sm.Selected.Index != best.Index || sm.Selected.HMA != 0 {
		t.Errorf("summary's selected %+v, want %d %q", sm.Selected, best.Index, want)
	}
	if want := g.Label(r.Plateau.Best); sm.PlateauBest.Label != want || sm.PlateauAxes != 3 {
		t.Errorf("plateau best %+v over %d axes, want %q over 3", sm.PlateauBest, sm.PlateauAxes, want)
	}
	for i, f := range sm.WF.Folds {
		if want := g.Label(r.WF.Folds[i].Combo); f.Combo.Label != want || !strings.HasPrefix(want, "length ") {
			t.Errorf("fold %d: %+v, want %q", i+1, f.Combo, want)
		}
	}
	if n := len(r.WF.Equity); n == 0 || math.Abs(r.WF.Equity[n-1].Equity-(1+r.WF.TotalReturn)) > 1e-12 {
		t.Errorf("stitched equity (%d points, note %q) does not end at 1 + %v", n, r.WF.EquityNote, r.WF.TotalReturn)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{"for the selected combo (" + g.Label(best.Index) + ",", "plateau       best " + g.Label(r.Plateau.Best) + ":",
		"3x3x3 neighbourhood", "walk-forward  rolling:4, 4 folds", g.Label(r.WF.Folds[0].Combo) + "  "} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "hma") || strings.Contains(sm.Brief(), "0 x 0") {
		t.Errorf("the table or brief names hma lengths of a strategy grid:\n%s\n%s", table, sm.Brief())
	}
	js, err := json.Marshal(sm)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Selected map[string]any `json:"selected"`
		Plateau  map[string]any `json:"plateau_best"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Selected["label"] != g.Label(best.Index) || back.Selected["index"] != float64(best.Index) || back.Selected["hma"] != nil || back.Plateau["label"] != sm.PlateauBest.Label {
		t.Errorf("JSON selected %v, plateau best %v", back.Selected, back.Plateau)
	}
	// Read back (a saved session's summary), the combo is the same.
	var sm2 Summary
	if err := json.Unmarshal(js, &sm2); err != nil || sm2.Selected != sm.Selected || sm2.PlateauBest != sm.PlateauBest || sm2.Window() != "3x3x3" {
		t.Errorf("read back: %v, %+v %+v (%s)", err, sm2.Selected, sm2.PlateauBest, sm2.Window())
	}
}

// TestComboJSONHull: a hull combo's JSON is what it always was.
func TestComboJSONHull(t *testing.T) {
	js, err := json.Marshal(Combo{Index: 3, HMA: 20, HMA3: 30})
	if err != nil || string(js) != `{"index":3,"hma":20,"hma3":30}` {
		t.Errorf("%s %v", js, err)
	}
	if n := (Combo{HMA: 20, HMA3: 30}).Name(); n != "hma 20, hma3 30" {
		t.Errorf("Name %q", n)
	}
}
