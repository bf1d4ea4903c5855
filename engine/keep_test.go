package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/reference"
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
	kept, got := streamKept(t, s, 3)
	var want bytes.Buffer
	if err := output.WriteCSV(&want, full); err != nil {
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
		if err := output.WriteTable(&table[i], rep, 3); err != nil {
			t.Fatal(err)
		}
	}
	if table[0].String() != table[1].String() {
		t.Errorf("table of the kept report:\n%s\nwant:\n%s", table[1].String(), table[0].String())
	}
	if err := output.WriteJSON(&bytes.Buffer{}, kept); !errors.Is(err, engine.ErrNotKept) {
		t.Errorf("WriteJSON of a kept report: %v, want ErrNotKept", err)
	}
}

// TestStudyBlocks: a study that asks for blocks gets the fp64 lane's
// per-block statistics for every combo of the grid (the fp32 lane's
// trades are not what they count), and a backend that cannot emit them is
// refused by name.
func TestStudyBlocks(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(3000)
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 15, Step: 1}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Blocks: 8,
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{Discard: true})
	if err != nil {
		t.Fatal(err)
	}
	bs := rep.Blocks
	if bs == nil || rep.BlocksOf != engine.FP64 || bs.Combos != s.Grid.Len() || bs.Blocks != 8 || len(bs.Bounds) != 9 || bs.Bounds[8] != 2999 {
		t.Fatalf("blocks %+v of %s: want 8 blocks of the 2,999 returns for %d combos, fp64", bs, rep.BlocksOf, s.Grid.Len())
	}
	full, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range full.Run(engine.FP64).Results {
		if dd, ok := rep.Run(engine.FP64).MaxDrawdownOf(r.Index); !ok || dd != r.MaxDrawdown {
			t.Fatalf("combo %d: kept max drawdown %v (%v), want %v", r.Index, dd, ok, r.MaxDrawdown)
		}
	}
	top := engine.TopBySharpe(rep.Run(engine.FP64), 1)[0]
	trades := 0
	for b := 0; b < 8; b++ {
		trades += int(bs.Trades[top.Index*8+b])
	}
	if trades != top.TotalTrades {
		t.Errorf("combo %d: %d trades in its blocks, %d in its fp64 metrics", top.Index, trades, top.TotalTrades)
	}
	s.Backend = noBlocks{reference.New()}
	if _, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{}); !errors.Is(err, engine.ErrNoBlocks) || !strings.Contains(err.Error(), "noblocks: ") {
		t.Errorf("a backend without per-block statistics: %v, want ErrNoBlocks naming it", err)
	}
}

// noBlocks is a backend whose kernels compute metrics only (no
// engine.BlockKernel).
type noBlocks struct{ engine.Backend }

func (noBlocks) Name() string { return "noblocks" }

func (b noBlocks) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	k, err := b.Backend.Prepare(ctx, job)
	return plainKernel{k}, err
}

type plainKernel struct{ engine.Kernel }

// streamKept runs s keeping its best keep combos (StudyOptions.Discard)
// with its rows streamed to a CSV file as run writes them, and returns
// the report and the file's bytes.
func streamKept(t *testing.T, s *engine.Study, keep int) (*engine.Report, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rows.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rw, err := output.NewRowWriter(f, output.RowsCSV, s)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{Discard: true, Keep: keep, Sink: rw.Sink})
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(kept); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return kept, got
}
