package suite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/suite"
	"sweepbench/reference"
	_ "sweepbench/strategy" // engine.NewStrategy
)

// TestSuiteStrategy: a suite of two datasets (BTC and FIL minutes, 3,000
// bars each) for rsi gives each dataset its own study of the family's grid
// (64 combos, each named by its parameters) and an aggregate whose rows
// are the combos' parameters: the top row is the combo with the best
// median Sharpe of the two datasets, recomputed here from the two runs, its
// length, lower and upper those of its grid point; the JSON carries them
// under the grid's columns, and the heatmap's cell (length, lower) is the
// best median over upper.
func TestSuiteStrategy(t *testing.T) {
	ctx := context.Background()
	spec := engine.Spec{Strategy: "rsi", Params: map[string]string{"length": "7:28:7", "lower": "20:35:5", "upper": "65:80:5"},
		Head: 3000, Fee: engine.DefaultFee, Mode: "long-short", Source: "close", Backend: "reference", Precision: "fp64"}
	reg := &engine.Registry{}
	reg.Register(reference.New())
	su, err := suite.BuildSuite(ctx, spec, reg, []string{"embedded:btcusdt-1m", "embedded:filusdt-1m"})
	if err != nil {
		t.Fatal(err)
	}
	g := su.Studies[0].Grid
	if g.Family() != "rsi" || g.Len() != 64 {
		t.Fatalf("grid %s: %d combos, want rsi's 64", g.Text(), g.Len())
	}
	names := []string{su.Data[0], su.Data[1]}
	agg := suite.NewAggregator(g, names, engine.Objective{}, engine.FP64)
	sharpe := make([][]float64, 2)
	for d, st := range su.Studies {
		if st.Grid.Text() != g.Text() || st.Dataset.Bars.Len() != 3000 {
			t.Fatalf("dataset %d: grid %s over %d bars", d, st.Grid.Text(), st.Dataset.Bars.Len())
		}
		rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		run := rep.Run(engine.FP64)
		if len(run.Results) != g.Len() {
			t.Fatalf("dataset %d: %d results", d, len(run.Results))
		}
		sharpe[d] = make([]float64, g.Len())
		for _, r := range run.Results {
			sharpe[d][r.Index] = r.Sharpe
		}
		best := engine.TopBySharpe(run, 1)[0]
		if l := rep.Grid.Label(best.Index); !strings.HasPrefix(l, "length ") || !strings.Contains(l, ", lower ") || !strings.Contains(l, ", upper ") {
			t.Errorf("dataset %d: the best combo is named %q", d, l)
		}
		agg.Name(d, st.Dataset.Info.Name)
		agg.Add(d, engine.FP64, run.Results)
	}
	a := agg.Aggregate()
	want, wantMed := -1, math.Inf(-1)
	for i := 0; i < g.Len(); i++ {
		if m := sharpe[0][i]/2 + sharpe[1][i]/2; m > wantMed {
			want, wantMed = i, m
		}
	}
	if top := a.Top(1)[0]; top != want || a.Median[top] != wantMed {
		t.Fatalf("top combo %d (median %v), want %d (%v)", top, a.Median[top], want, wantMed)
	}
	p := g.Point(want)
	var b bytes.Buffer
	if err := a.WriteTable(&b, 3); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if got := strings.Fields(lines[2]); len(got) < 4 || strings.Join(got[:3], " ") != "length lower upper" {
		t.Fatalf("header %q:\n%s", lines[2], b.String())
	}
	if got := strings.Fields(lines[3]); len(got) < 4 || got[0] != p[0].Text || got[1] != p[1].Text || got[2] != p[2].Text {
		t.Errorf("top row %q, want %s %s %s", lines[3], p[0].Text, p[1].Text, p[2].Text)
	}
	if !strings.Contains(b.String(), "Heatmap of the best median sharpe over upper: rows length 7:28:7, columns lower 20:35:5") || strings.Contains(b.String(), "hma") {
		t.Errorf("the table:\n%s", b.String())
	}
	js, err := json.Marshal(a.JSON(engine.FP64))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Strategy string           `json:"strategy"`
		Columns  []string         `json:"columns"`
		Combos   []map[string]any `json:"combos"`
		Heatmap  struct {
			Of        string      `json:"of"`
			Rows      string      `json:"rows"`
			RowValues []float64   `json:"row_values"`
			Columns   string      `json:"columns"`
			Values    [][]float64 `json:"values"`
		} `json:"heatmap"`
	}
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	if out.Strategy != "rsi" || strings.Join(out.Columns, ",") != "length,lower,upper" || len(out.Combos) != g.Len() {
		t.Fatalf("JSON %s %v %d combos", out.Strategy, out.Columns, len(out.Combos))
	}
	row := out.Combos[want]
	if row["length"] != p[0].Value || row["lower"] != p[1].Value || row["upper"] != p[2].Value || row["median"] != wantMed || row["hma"] != nil {
		t.Errorf("JSON row %d: %v, want %v and median %v", want, row, p, wantMed)
	}
	// The heatmap cell of the best combo's (length, lower) is its median:
	// the best over upper.
	co := g.Strategy.Coords(want)
	if out.Heatmap.Rows != "length" || out.Heatmap.Columns != "lower" || out.Heatmap.RowValues[co[0]] != p[0].Value || out.Heatmap.Values[co[0]][co[1]] != wantMed {
		t.Errorf("heatmap %+v: cell %v, want %v", out.Heatmap, co, wantMed)
	}
}
