package robust

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// TestAnalyseStudy: the robustness of a real study (the reference backend
// on embedded BTC/USDT minutes, 8 blocks) from the blocks its sweep
// emitted: every combo's whole-sample Sharpe from the blocks is its own
// fp64 Sharpe, so the selected combo is the run's best by Sharpe; PBO over
// C(8,4) = 70 splits; the DSR is a probability; a rolling:4 walk-forward
// has 4 folds; the table says all of it. A report without blocks is
// refused.
func TestAnalyseStudy(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(8000)
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 90, Step: 20}, HMA3: engine.Range{Start: 12, Stop: 84, Step: 12}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Blocks: 8,
		Precisions: []engine.Precision{engine.FP64}, Backend: reference.New()}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wf, err := ParseWF("rolling:4")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyse(context.Background(), rep, Options{WF: &wf})
	if err != nil {
		t.Fatal(err)
	}
	bs := FromSweep(rep.Blocks)
	run := rep.Run(engine.FP64)
	for _, res := range run.Results {
		got := bs.Whole(res.Index).Sharpe(s.Params.BarsPerYear)
		if math.Abs(got-res.Sharpe) > 1e-9*math.Max(1, math.Abs(res.Sharpe)) {
			t.Fatalf("combo %d: Sharpe from its blocks %.15g, its own %.15g", res.Index, got, res.Sharpe)
		}
	}
	if best := engine.TopBySharpe(run, 1)[0]; r.Selected != best.Index {
		t.Errorf("selected combo %d, the run's best by Sharpe is %d", r.Selected, best.Index)
	}
	if r.PBO == nil || r.PBO.Splits() != 70 || r.PBO.PBO < 0 || r.PBO.PBO > 1 {
		t.Fatalf("PBO %+v: want 70 splits and a share", r.PBO)
	}
	if d := r.DSR; d == nil || !(d.DSR >= 0 && d.DSR <= 1) || d.Trials != s.Grid.Len() || d.Bars != int64(ds.Bars.Len()-1) {
		t.Fatalf("DSR %+v: want a probability over %d trials and %d bar returns", d, s.Grid.Len(), ds.Bars.Len()-1)
	}
	if r.WF == nil || len(r.WF.Folds) != 4 {
		t.Fatalf("walk-forward %+v: want 4 folds", r.WF)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Robustness (fp64 run, 8 blocks", "PBO ", "over 70 splits", "DSR ", "plateau ", "walk-forward  rolling:4, 4 folds"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	// Constraints: at least one trade more than the raw best made, and its
	// max drawdown or less: the selection moves to a combo that meets both,
	// the best of those by Sharpe, and the count of selectable combos is
	// the direct one.
	best := engine.TopBySharpe(run, 1)[0]
	cr, err := Analyse(context.Background(), rep, Options{MinTrades: best.TotalTrades + 1, MaxDrawdown: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	want, n := -1, 0
	for _, res := range run.Results {
		if res.TotalTrades >= best.TotalTrades+1 && res.MaxDrawdown <= 0.9 {
			n++
			if want < 0 || res.Sharpe > run.Results[want].Sharpe {
				want = res.Index
			}
		}
	}
	if cr.Selectable != n || cr.Selected != want || cr.Selected == best.Index {
		t.Errorf("constrained: %d selectable, selected %d; want %d and %d (the raw best %d excluded)", cr.Selectable, cr.Selected, n, want, best.Index)
	}

	// Twins: the PBO's trials are the distinct combos.
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 7, Stop: 11, Step: 1}} // hma3 7 | 8 9 | 10 11
	if rows := DistinctCombos(g); len(rows) != g.Distinct().Len() || len(rows) != 6 || rows[0] != 0 || rows[1] != 1 || rows[2] != 3 || rows[3] != 5 {
		t.Errorf("DistinctCombos(7:11) = %v, want [0 1 3 5 6 8]", rows)
	}
	rep.Blocks = nil
	if _, err := Analyse(context.Background(), rep, Options{}); !errors.Is(err, ErrNoBlocks) {
		t.Errorf("a report without blocks: %v, want ErrNoBlocks", err)
	}
}

// TestAnalyseTwins: on a grid with HMA3 twins, PBO and the walk-forward
// run on the distinct combos and name grid combos: the folds choose what a
// walk-forward over every combo chooses (a twin ties with its pair, and
// the lower index wins either way), PBO counts the distinct combos.
func TestAnalyseTwins(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(6000)
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 50, Step: 20}, HMA3: engine.Range{Start: 12, Stop: 21, Step: 1}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Blocks: 8,
		Precisions: []engine.Precision{engine.FP64}, Backend: reference.New()}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wf, _ := ParseWF("rolling:3")
	r, err := Analyse(context.Background(), rep, Options{WF: &wf})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := WalkForward(FromSweep(rep.Blocks), wf, r.Objective, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range r.WF.Folds {
		if f.Combo != direct.Folds[i].Combo {
			t.Errorf("fold %d: combo %d, over every combo %d", i, f.Combo, direct.Folds[i].Combo)
		}
	}
	if r.PBO.Trials != s.Grid.Distinct().Len() || r.Trials != s.Grid.Distinct().Len() || s.Grid.Aliases() == 0 {
		t.Errorf("PBO trials %d, DSR trials %d; want the %d distinct combos (grid of %d)", r.PBO.Trials, r.Trials, s.Grid.Distinct().Len(), s.Grid.Len())
	}
}

// TestOptionsFor: the robustness settings of a Spec, the one reading of
// them every front end uses; a bad one is an *engine.FieldError naming its
// field (wf, objective), every bad one at once.
func TestOptionsFor(t *testing.T) {
	for _, c := range []struct {
		name   string
		spec   engine.Spec
		fields []string // the fields in error, in order
		wf     string   // the walk-forward read, when valid
		metric Metric
	}{
		{"nothing asked", engine.Spec{}, nil, "", MetricSharpe},
		{"blocks, the default objective", engine.Spec{Blocks: 8}, nil, "", MetricSharpe},
		{"rolling", engine.Spec{Blocks: 8, WF: "rolling:4", Objective: "Sortino"}, nil, "rolling:4", MetricSortino},
		{"anchored", engine.Spec{Blocks: 8, WF: " anchored "}, nil, "anchored", MetricSharpe},
		{"any metric without blocks", engine.Spec{Objective: "max_drawdown"}, nil, "", MetricSharpe},
		{"a walk-forward without blocks", engine.Spec{WF: "rolling:4"}, []string{engine.FieldWF}, "", 0},
		{"K as large as the blocks", engine.Spec{Blocks: 8, WF: "rolling:8"}, []string{engine.FieldWF}, "", 0},
		{"a walk-forward of no kind", engine.Spec{Blocks: 8, WF: "sliding:2"}, []string{engine.FieldWF}, "", 0},
		{"a metric the blocks cannot take, and a bad K", engine.Spec{Blocks: 8, Objective: "max_drawdown", WF: "rolling:x"},
			[]string{engine.FieldObjective, engine.FieldWF}, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := OptionsFor(c.spec)
			fes := engine.FieldErrors(err)
			var fields []string
			for _, fe := range fes {
				fields = append(fields, fe.Field)
				if strings.Contains(fe.Err.Error(), "robust:") {
					t.Errorf("%s: the reason %q keeps the package's prefix", fe.Field, fe.Err)
				}
			}
			if strings.Join(fields, ",") != strings.Join(c.fields, ",") || (err != nil) != (len(c.fields) > 0) {
				t.Fatalf("errors %v (fields %v), want fields %v", err, fields, c.fields)
			}
			if err != nil {
				return
			}
			got := ""
			if o.WF != nil {
				got = o.WF.String()
			}
			if got != c.wf {
				t.Errorf("walk-forward %q, want %q", got, c.wf)
			}
			if o.Objective.Metric != c.metric || o.MinTrades != c.spec.MinTrades || o.MaxDrawdown != c.spec.MaxDrawdown {
				t.Errorf("options %+v", o)
			}
		})
	}
	_, err := OptionsFor(engine.Spec{Blocks: 8, WF: "rolling:8"})
	if !errors.Is(err, ErrBlocks) {
		t.Errorf("%v is not ErrBlocks", err)
	}
}

// TestAnalyseBesideTheStudy: the robustness computed from the early report
// engine.StudyOptions.AfterBlocks hands over while the fp32 lane and the
// parity report go on (how `run` computes it) is the robustness of the
// finished report, untiled and in 6 tiles; AfterBlocks is called once,
// with the fp64 run and its block statistics and no parity report yet,
// and RunStudy returns after it.
func TestAnalyseBesideTheStudy(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []string{"", "480000"} {
		t.Setenv(engine.SeriesBudgetEnv, budget)
		spec := engine.DefaultSpec()
		spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.WMA, spec.Blocks, spec.WF = "embedded:btcusdt-1m", 4000, "10:130:20", "12:40:1", "prefix", 8, "rolling:4"
		reg := &engine.Registry{}
		reg.Register(reference.New())
		s, err := spec.Study(ds.Head(4000), reg)
		if err != nil {
			t.Fatal(err)
		}
		var calls int
		var early *engine.Report
		var beside *Robustness
		var besideErr error
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{AfterBlocks: func(r *engine.Report) {
			calls++
			early = r
			beside, besideErr = AnalyseStudy(context.Background(), s, r)
		}})
		if err != nil || besideErr != nil {
			t.Fatal(err, besideErr)
		}
		tiled := strings.Contains(rep.Note, "run in 6 tiles")
		if calls != 1 || early.Parity != nil || len(early.Runs) != 1 || early.Runs[0] != rep.Run(engine.FP64) || early.Blocks != rep.Blocks || tiled != (budget != "") {
			t.Fatalf("budget %q: %d calls, early report %d runs, parity %v, blocks shared %v; note %q",
				budget, calls, len(early.Runs), early.Parity != nil, early.Blocks == rep.Blocks, rep.Note)
		}
		after, err := AnalyseStudy(context.Background(), s, rep)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := errors.Join(beside.WriteTable(&a), after.WriteTable(&b)); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() || !strings.Contains(a.String(), "walk-forward") {
			t.Errorf("budget %q: robustness beside the study\n%s\nafter it\n%s", budget, a.String(), b.String())
		}
	}
}
