package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/reference"
)

// TestTopListObjective: a top list ranked by an objective the table has
// no column for (sortino) shows that objective's fp64 and fp32 columns,
// its rows in the objective's order; constraints no combo meets leave a
// line that says so instead of no list (found by a fresh-user trial).
func TestTopListObjective(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(o engine.Objective) string {
		s := &engine.Study{Dataset: ds.Head(3000), Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 36, Step: 12}},
			Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Objective: o,
			Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := output.WriteTable(&b, rep, 3); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := run(engine.Objective{Metric: "sortino"})
	lines := strings.Split(out, "\n")
	var head int
	for i, l := range lines {
		if strings.Contains(l, "sortino64") {
			head = i
		}
	}
	if head == 0 || !strings.Contains(lines[head], "sortino32") {
		t.Fatalf("no sortino columns:\n%s", out)
	}
	prev := 1e300
	for _, l := range lines[head+1 : head+4] {
		f := strings.Fields(l)
		v := parseF(t, f[len(f)-2])
		if v > prev {
			t.Errorf("rows not in sortino order: %v after %v\n%s", v, prev, out)
		}
		prev = v
	}
	if out := run(engine.Objective{MinTrades: 1 << 30}); !strings.Contains(out, "none of the 9 combos meets the constraints") {
		t.Errorf("constraints no combo meets:\n%s", out)
	}
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestParityProgress: the CPU parity pass reports how many combos it has
// compared (PhaseParity, Done), every 4,096, never going back, after an
// event at 0 that names the phase.
func TestParityProgress(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Study{Dataset: ds.Head(600), Grid: engine.Grid{HMA: engine.Range{Start: 2, Stop: 81, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 69, Step: 1}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
	events := make(chan engine.Progress, 1<<16)
	if _, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{Progress: events, Discard: true}); err != nil {
		t.Fatal(err)
	}
	close(events)
	var got []int
	for ev := range events {
		if ev.Phase == engine.PhaseParity {
			if ev.Total != 5120 {
				t.Fatalf("parity event %+v: want the grid's 5,120 combos as its total", ev)
			}
			got = append(got, ev.Done)
		}
	}
	if len(got) != 2 || got[0] != 0 || got[1] != 4096 {
		t.Errorf("parity progress %v, want [0 4096]", got)
	}
}

// TestTopListTwinsShareARow: in the table's top list an HMA3 twin (the
// same backtest, computed once) shares its partner's row ("36|37"), so ten
// rows are ten distinct combos; a length whose twin is outside the grid
// stands alone. Grid hma 29:30 x hma3 36:40 (twins 36|37, 38|39; 40 alone).
func TestTopListTwinsShareARow(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 29, Stop: 30, Step: 1}, HMA3: engine.Range{Start: 36, Stop: 40, Step: 1}}
	run := &engine.Run{Precision: engine.FP64, Grid: g, Status: engine.StatusComplete}
	// Sharpe by distinct backtest: hma 29 x (36|37) best, then 30 x 40,
	// 29 x (38|39), 30 x (36|37), 29 x 40, 30 x (38|39).
	sharpe := map[engine.Combo]float64{{HMA: 29, HMA3: 36}: 5, {HMA: 30, HMA3: 40}: 4, {HMA: 29, HMA3: 38}: 3, {HMA: 30, HMA3: 36}: 2, {HMA: 29, HMA3: 40}: 1, {HMA: 30, HMA3: 38}: 0}
	for i := 0; i < g.Len(); i++ {
		c := g.At(i)
		d := c
		if d.HMA3 != 40 {
			d.HMA3 = min(d.HMA3, engine.HMA3Twin(d.HMA3))
		}
		run.Results = append(run.Results, engine.ComboResult{Index: i, Combo: c, Metrics: engine.Metrics{Sharpe: sharpe[d], TotalTrades: 10 + i/5}})
	}
	rep := &engine.Report{Grid: g, Runs: []*engine.Run{run}, Requested: []engine.Precision{engine.FP64}}
	var b strings.Builder
	if err := output.WriteTable(&b, rep, 4); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && (f[0] == "29" || f[0] == "30") {
			rows = append(rows, f[0]+" "+f[1])
		}
	}
	want := []string{"29 36|37", "30 40", "29 38|39", "30 36|37"}
	if !slices.Equal(rows, want) {
		t.Errorf("top 4 rows %q, want %q\n%s", rows, want, b.String())
	}
}
