package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/engine/shard"
	"sweepbench/reference"
)

// tiledStudy is a study of 7 x 29 combos (HMA3 step 1: twins) over 4,000
// real bars whose fp32 lane uses the prefix-sum trap, so the parity report
// has flips to compare: 23 indicator series of 4,000 values in fp64 and
// fp32 (48,000 bytes each), 1.1 MB.
func tiledStudy(t *testing.T) *engine.Study {
	t.Helper()
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Study{Dataset: ds.Head(4000), Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 130, Step: 20}, HMA3: engine.Range{Start: 12, Stop: 40, Step: 1}},
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, WMA: engine.Prefix, Blocks: 4,
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
}

// tilingNote is the note a tiled study adds to its report.
func withoutTilingNote(note string) string {
	var keep []string
	for _, n := range strings.Split(note, "; ") {
		if !strings.HasPrefix(n, "run in ") {
			keep = append(keep, n)
		}
	}
	return strings.Join(keep, "; ")
}

// TestTiledStudyEqualsWhole: under a series budget of 10 series (480,000
// bytes) the study runs in 6 tiles (bands of 4 and 3 HMA lengths by HMA3
// 12:21, 22:31, 32:40), under one of 20 series in 2 bands of whole rows
// (4 and 3 HMA lengths), and its report is the untiled study's: every
// combo's result in both lanes bit for bit, the per-block statistics, the
// parity report field for field (flips, worst flips, indicator errors,
// verdict), and the note but for the line that says it was tiled. Kept
// (StudyOptions.Discard), the streamed CSV equals the untiled report's
// bytes and the best combos are the same.
func TestTiledStudyEqualsWhole(t *testing.T) {
	ctx := context.Background()
	whole, err := engine.RunStudy(ctx, tiledStudy(t), engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Parity == nil || whole.Parity.FlipCount == 0 || whole.Blocks == nil {
		t.Fatal("the untiled study has no flips or blocks to compare")
	}
	for _, c := range []struct {
		budget, tiles int
		series        int64
	}{{10, 6, 10}, {20, 2, 4 + 15 + 1}} {
		t.Run(fmt.Sprint(c.tiles, "tiles"), func(t *testing.T) {
			t.Setenv(engine.SeriesBudgetEnv, fmt.Sprint(c.budget*48000))
			s := tiledStudy(t)
			if m := engine.ForecastMemory(s); m.Tiles != c.tiles || m.SeriesAll != 23*48000 || m.Series != c.series*48000 {
				t.Fatalf("forecast %+v: want %d tiles of %d series of the 23 (1,104,000 bytes)", m, c.tiles, c.series)
			}
			tiledEqualsWhole(t, s, whole, c.tiles)
		})
	}
}

func tiledEqualsWhole(t *testing.T, s *engine.Study, whole *engine.Report, tiles int) {
	ctx := context.Background()
	events := make(chan engine.Progress, 4096)
	tiled, err := engine.RunStudy(ctx, s, engine.StudyOptions{Progress: events})
	if err != nil {
		t.Fatal(err)
	}
	close(events)
	if !strings.Contains(tiled.Note, fmt.Sprintf("run in %d tiles of the grid", tiles)) {
		t.Errorf("note %q: want it to say the study ran in %d tiles", tiled.Note, tiles)
	}
	if got, want := withoutTilingNote(tiled.Note), whole.Note; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	for i, wr := range whole.Runs {
		tr := tiled.Runs[i]
		if tr.Precision != wr.Precision || tr.Status != engine.StatusComplete || tr.Kept || len(tr.Results) != len(wr.Results) || tr.Grid != wr.Grid {
			t.Fatalf("run %d: %s %s kept %v, %d results of %v; want %s complete, %d of %v", i, tr.Precision, tr.Status, tr.Kept, len(tr.Results), tr.Grid, wr.Precision, len(wr.Results), wr.Grid)
		}
		for k := range wr.Results {
			if tr.Results[k] != wr.Results[k] {
				t.Fatalf("%s combo %d: %+v, want %+v", wr.Precision, k, tr.Results[k], wr.Results[k])
			}
		}
	}
	conformance.SameParity(t, "tiled", tiled.Parity, whole.Parity, 0)
	if !reflect.DeepEqual(tiled.Blocks, whole.Blocks) || tiled.BlocksOf != whole.BlocksOf {
		t.Error("the tiled study's per-block statistics differ from the untiled study's")
	}
	type lane struct {
		p      engine.Precision
		parity bool
	}
	last := map[lane]int{}
	for ev := range events {
		l := lane{ev.Precision, ev.Phase == engine.PhaseParity}
		if ev.Total != s.Grid.Len() || ev.Done < last[l] {
			t.Fatalf("progress %+v after %d done: want the grid's total and a count that never goes back", ev, last[l])
		}
		last[l] = ev.Done
	}
	if last[lane{p: engine.FP64}] != s.Grid.Len() || last[lane{p: engine.FP32}] != s.Grid.Len() {
		t.Errorf("progress ended at %v, want %d in each lane", last, s.Grid.Len())
	}

	// Kept: the rows streamed in grid order as the untiled report's file.
	s = tiledStudy(t)
	kept, got := streamKept(t, s, 10) // a table of 5 keeps 10, as run does: twins share a row
	var want bytes.Buffer
	if err := output.WriteCSV(&want, whole); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("streamed CSV of the tiled study (%d bytes) differs from the untiled report's (%d bytes)", len(got), want.Len())
	}
	for i, run := range kept.Runs {
		wr := whole.Runs[i]
		if !run.Kept || run.Count() != s.Grid.Len() || !run.Complete() {
			t.Errorf("%s: kept %v, count %d, %s; want kept, %d, complete", run.Precision, run.Kept, run.Count(), run.Status, s.Grid.Len())
		}
		g, w := engine.TopBySharpe(run, 5), engine.TopBySharpe(wr, 5)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s best 5: %v, want %v", run.Precision, g, w)
		}
	}
	for _, r := range engine.TopBySharpe(whole.Run(engine.FP64), 5) {
		if got := kept.Run(engine.FP32).Lookup(r.Index); got == nil || *got != *whole.Run(engine.FP32).Lookup(r.Index) {
			t.Errorf("fp32 result of fp64's best combo %d: %v, want it kept", r.Index, got)
		}
	}
	conformance.SameParity(t, "tiled, kept", kept.Parity, whole.Parity, 0)
	if !reflect.DeepEqual(kept.Blocks, whole.Blocks) {
		t.Error("the kept tiled study's per-block statistics differ from the untiled study's")
	}
	for _, r := range whole.Run(engine.FP64).Results {
		if dd, ok := kept.Run(engine.FP64).MaxDrawdownOf(r.Index); !ok || dd != r.MaxDrawdown {
			t.Fatalf("combo %d: kept max drawdown %v (%v), want %v", r.Index, dd, ok, r.MaxDrawdown)
		}
	}
	var table [2]bytes.Buffer
	kept.Note = withoutTilingNote(kept.Note)
	for i, rep := range []*engine.Report{whole, kept} {
		for _, run := range rep.Runs {
			run.Elapsed, run.Prepare, run.Saving = 0, 0, 0
		}
		if err := output.WriteTable(&table[i], rep, 5); err != nil {
			t.Fatal(err)
		}
	}
	if table[0].String() != table[1].String() {
		t.Errorf("table of the tiled study:\n%s\nwant:\n%s", table[1].String(), table[0].String())
	}
}

// TestTiledStudyBudgetErrors: a series budget too small for one combo's
// series is refused before anything runs, naming the variable; a budget
// that is not a size names it too.
func TestTiledStudyBudgetErrors(t *testing.T) {
	for budget, want := range map[string]string{"100000": "cannot hold the 3 indicator series of one combo (46.9 KiB each): raise " + engine.SeriesBudgetEnv,
		"lots": engine.SeriesBudgetEnv + `="lots": want a positive number of bytes`} {
		t.Setenv(engine.SeriesBudgetEnv, budget)
		rep, err := engine.RunStudy(context.Background(), tiledStudy(t), engine.StudyOptions{})
		if err == nil || !strings.Contains(err.Error(), want) || rep != nil {
			t.Errorf("budget %s: %v (report %v), want %q", budget, err, rep != nil, want)
		}
	}
}

// TestTiledStudyResumes: a tiled study cancelled in its third tile of the
// fp64 lane, then resumed (StudyOptions.Prior: what it completed), reports
// what the untiled study does, combo for combo, parity included; the
// resumed run computes only the combos the first left.
func TestTiledStudyResumes(t *testing.T) {
	ctx := context.Background()
	s := tiledStudy(t)
	s.Blocks = 0 // a resumed study has none
	whole, err := engine.RunStudy(ctx, s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(engine.SeriesBudgetEnv, "480000")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := 0
	first, err := engine.RunStudy(cctx, s, engine.StudyOptions{Sink: func(p engine.Precision, rs []engine.ComboResult) error {
		if seen += len(rs); seen >= 80 {
			cancel()
		}
		return nil
	}})
	if err == nil || first == nil || first.Run(engine.FP64) == nil || first.Run(engine.FP64).Complete() || first.Run(engine.FP32) != nil {
		t.Fatalf("cancelled study: %v; want the fp64 lane cancelled part way and no fp32 lane", err)
	}
	done := first.Run(engine.FP64).Count()
	if done < 80 || done >= s.Grid.Len() || first.Run(engine.FP64).Status != engine.StatusCancelled {
		t.Fatalf("cancelled fp64 lane: %d combos, %s", done, first.Run(engine.FP64).Status)
	}
	computed := 0
	resumed, err := engine.RunStudy(ctx, s, engine.StudyOptions{Prior: map[engine.Precision]*engine.Run{engine.FP64: first.Run(engine.FP64)},
		Sink: func(p engine.Precision, rs []engine.ComboResult) error {
			computed += len(rs)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*s.Grid.Len() - done; computed != want {
		t.Errorf("the resumed study computed %d combos, want %d (both lanes less the %d done)", computed, want, done)
	}
	for i, wr := range whole.Runs {
		rr := resumed.Runs[i]
		if !rr.Complete() || !reflect.DeepEqual(rr.Results, wr.Results) {
			t.Errorf("%s: resumed %s, %d results; want complete and the untiled study's %d", wr.Precision, rr.Status, len(rr.Results), len(wr.Results))
		}
	}
	conformance.SameParity(t, "resumed tiled", resumed.Parity, whole.Parity, 0)
}

// sizeRecorder is the reference backend that records, for each job it
// prepares, the size a backend picks its method by (Job.Combos).
type sizeRecorder struct {
	engine.Backend
	mu    sync.Mutex
	sizes map[int]int // Job.Combos() -> jobs
}

func (r *sizeRecorder) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	r.mu.Lock()
	r.sizes[job.Combos()]++
	r.mu.Unlock()
	return r.Backend.Prepare(ctx, job)
}

// TestTiledJobsCarryTheStudySize: every job of a tiled study tells the
// backend the whole study's size (Job.StudyCombos: 203 combos here), so
// that a backend which picks its kernel by the grid's size (CUDA's
// bar-parallel kernel below 8,192 combos) computes each tile's combos as
// the untiled study does; an untiled study's jobs give their own grid's.
func TestTiledJobsCarryTheStudySize(t *testing.T) {
	for _, c := range []struct {
		budget string
		want   int
	}{{"", 105}, {fmt.Sprint(10 * 48000), 105}} {
		t.Setenv(engine.SeriesBudgetEnv, c.budget)
		s := tiledStudy(t)
		rec := &sizeRecorder{Backend: s.Backend, sizes: map[int]int{}}
		s.Backend = rec
		rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tiled := strings.Contains(rep.Note, "run in 6 tiles")
		if tiled != (c.budget != "") {
			t.Fatalf("budget %q: note %q", c.budget, rep.Note)
		}
		if len(rec.sizes) != 1 || rec.sizes[c.want] == 0 {
			t.Errorf("budget %q: jobs by size %v, want every job to say %d", c.budget, rec.sizes, c.want)
		}
		if tiled && rec.sizes[c.want] < 12 {
			t.Errorf("budget %q: %d jobs, want one per tile and lane (12) or more", c.budget, rec.sizes[c.want])
		}
	}
}

// TestShardJobsCarryTheStudySize: a shard's rectangles (RunSlice) tell the
// backend the whole study's size too (the 105 distinct combos), alone and
// tiled under a series budget, so that a GPU computes a shard's combos
// with the single run's kernel (found on the H200: shards of 320 x 320
// under 8,192 combos took the bar-parallel kernel and their fp32 sums
// differed in the last bits).
func TestShardJobsCarryTheStudySize(t *testing.T) {
	for _, budget := range []string{"", fmt.Sprint(10 * 48000)} {
		t.Setenv(engine.SeriesBudgetEnv, budget)
		s := tiledStudy(t)
		rec := &sizeRecorder{Backend: s.Backend, sizes: map[int]int{}}
		s.Backend = rec
		if _, err := shard.RunSlice(context.Background(), s, 40, 150, nil); err != nil {
			t.Fatal(err)
		}
		if len(rec.sizes) != 1 || rec.sizes[105] == 0 {
			t.Errorf("budget %q: jobs by size %v, want every job to say 105", budget, rec.sizes)
		}
	}
}
