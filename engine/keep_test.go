package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
	"sweepbench/reference/conformance"
)

// TestDiscardKeepsTheReport: a study whose results are not kept
// (StudyOptions.Discard, Keep 3) reports what the same study holding every
// result reports: the counts, the best combos by Sharpe (both lanes' side
// by side), the note, the parity report field for field; its CSV streamed
// while it ran equals the full report's; its runs hold at most the 3 best
// of each lane and fp64's best in fp32; writing it whole is refused.
func TestDiscardKeepsTheReport(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(4000)
	study := func() *engine.Study {
		return &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 130, Step: 20}, HMA3: engine.Range{Start: 12, Stop: 156, Step: 24}},
			Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, WMA: engine.Prefix,
			Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
	}
	ctx := context.Background()
	full, err := engine.RunStudy(ctx, study(), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := study()
	path := filepath.Join(t.TempDir(), "rows.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rw, err := engine.NewRowWriter(f, engine.RowsCSV, s)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := engine.RunStudy(ctx, s, engine.StudyOptions{Discard: true, Keep: 3, Sink: rw.Sink})
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(kept); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := full.WriteCSV(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("streamed CSV (%d bytes) differs from the full report's (%d bytes)", len(got), want.Len())
	}
	n := s.Grid.Len()
	for i, run := range kept.Runs {
		fr := full.Runs[i]
		if !run.Kept || run.Count() != n || fr.Count() != n || run.Computed != n {
			t.Errorf("%s: kept %v, count %d (full %d), want kept and %d", run.Precision, run.Kept, run.Count(), fr.Count(), n)
		}
		if len(run.Results) > 6 {
			t.Errorf("%s: %d results kept in memory, want at most 3 + 3", run.Precision, len(run.Results))
		}
		g, w := engine.TopBySharpe(run, 3), engine.TopBySharpe(fr, 3)
		for k := range w {
			if g[k] != w[k] {
				t.Errorf("%s best %d: %+v, want %+v", run.Precision, k, g[k], w[k])
			}
		}
	}
	for _, r := range engine.TopBySharpe(full.Run(engine.FP64), 3) {
		if got := kept.Run(engine.FP32).Lookup(r.Index); got == nil || *got != *full.Run(engine.FP32).Lookup(r.Index) {
			t.Errorf("fp32 result of fp64's best combo %d: %v, want it kept", r.Index, got)
		}
	}
	if kept.Note != full.Note {
		t.Errorf("note %q, want %q", kept.Note, full.Note)
	}
	if full.Parity == nil || full.Parity.FlipCount == 0 {
		t.Fatal("the study has no flips to compare")
	}
	conformance.SameParity(t, "kept", kept.Parity, full.Parity, 0)
	var table [2]bytes.Buffer
	for i, rep := range []*engine.Report{full, kept} {
		for _, run := range rep.Runs {
			run.Elapsed, run.Prepare, run.Saving = 0, 0, 0 // the timing columns differ
		}
		if err := rep.WriteTable(&table[i], 3); err != nil {
			t.Fatal(err)
		}
	}
	if table[0].String() != table[1].String() {
		t.Errorf("table of the kept report:\n%s\nwant:\n%s", table[1].String(), table[0].String())
	}
	if err := kept.WriteJSON(&bytes.Buffer{}); !errors.Is(err, engine.ErrNotKept) {
		t.Errorf("WriteJSON of a kept report: %v, want ErrNotKept", err)
	}
}
