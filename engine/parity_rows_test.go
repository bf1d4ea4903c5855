package engine_test

import (
	"context"
	"fmt"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// parityFigures is everything a parity report says but its per-combo
// rows: its fields (the combos behind the maxima included) as fmt
// prints them (NaN equal to NaN), the sensitive combo by value.
func parityFigures(p *engine.Parity) string {
	q := *p
	q.Combos, q.SensitiveWorst = nil, nil
	s := fmt.Sprintf("%+v worst %+v", q, *p.Worst())
	if p.SensitiveWorst != nil {
		s += fmt.Sprintf(" sensitive worst %+v", *p.SensitiveWorst)
	}
	return s
}

// TestParityWithoutRows: a study run with StudyOptions.NoParityRows has
// the parity report of the same study with its rows, field for field
// (its figures, verdict, reasons, the combos behind the maxima, the worst
// flips), and no rows, when the report is built in many blocks of a few
// HMA rows (an HMA3 range of step 1: twin pairs at the blocks' edges),
// from kept runs (Discard) or whole ones, on the CPU, on a device parity
// pass, and for a strategy family with memory (its sensitive combos).
func TestParityWithoutRows(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(3000)
	defer engine.SetParityBlock(50)()
	hull := func(b engine.Backend) *engine.Study {
		return &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 40, Step: 3}, HMA3: engine.Range{Start: 12, Stop: 51, Step: 1}},
			Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, WMA: engine.Prefix,
			Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: b}
	}
	fil, err := data.Open("embedded:filusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zscore, err := engine.NewStrategy("zscore", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	strat := func(ds *data.Dataset, form engine.Formulation) *engine.Study {
		return &engine.Study{Dataset: ds, Grid: engine.Grid{Strategy: zscore}, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600},
			WMA: form, Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
	}
	for _, c := range []struct {
		name      string
		s         *engine.Study
		device    bool
		discard   bool
		sensitive bool // the study has sensitive combos (a family with memory)
	}{
		{"cpu, kept runs", hull(reference.New()), false, true, false},
		{"cpu, whole runs", hull(reference.New()), false, false, false},
		{"device", hull(conformance.NaiveParity(reference.New())), true, true, false},
		{"strategy, non-borderline flips", strat(ds, engine.Prefix), false, true, false},
		{"strategy, sensitive combos", strat(fil.Head(3000), engine.Direct), false, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.device {
				t.Setenv(engine.ParityEnv, "device")
			}
			run := func(noRows bool) *engine.Parity {
				t.Helper()
				rep, err := engine.RunStudy(context.Background(), c.s, engine.StudyOptions{Discard: c.discard, NoParityRows: noRows})
				if err != nil || rep.Parity == nil {
					t.Fatalf("%v, parity %v", err, rep.Parity)
				}
				return rep.Parity
			}
			with, without := run(false), run(true)
			if n := c.s.Grid.Len(); len(with.Combos) != n || with.CombosCompared != n {
				t.Fatalf("with rows: %d rows, %d compared; want %d", len(with.Combos), with.CombosCompared, n)
			}
			if without.Combos != nil {
				t.Errorf("NoParityRows: %d rows, want none", len(without.Combos))
			}
			if g, w := parityFigures(without), parityFigures(with); g != w {
				t.Errorf("without rows:\n%s\nwith rows:\n%s", g, w)
			}
			if c.device && with.Device == "" {
				t.Errorf("the parity pass ran on the CPU, want the device's")
			}
			if c.sensitive && (with.Sensitive == 0 || with.SensitiveWorst == nil) {
				t.Errorf("no sensitive combo: the fold of a family with memory is not exercised")
			}
			if with.FlipCount == 0 {
				t.Errorf("no flip: the blocks' flips are not exercised")
			}
		})
	}
}
