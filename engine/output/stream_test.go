package output

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
)

// streamStudy runs s with options opt and a RowWriter of format f on a
// file, and returns the report and the file's bytes; opt.Sink, when set,
// sees each chunk before the writer (the chain cmd_run builds, the
// sessions store's sink first).
//
// opt.Results, when set, stands for the writer's own (RowWriter.Results:
// the writer hands the lanes back the chunks it has written).
//
// It also says whether the file was written as the study ran (not
// rewritten from the report by Close) and whether chunks came out of grid
// order.
func streamStudy(t *testing.T, ctx context.Context, s *engine.Study, f RowFormat, opt engine.StudyOptions) (rep *engine.Report, file []byte, streamed, shuffled bool) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out."+string(f))
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	rw, err := NewRowWriter(out, f, s)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Results != nil {
		opt.Results = rw.Results
	}
	var mu sync.Mutex // the lanes' chunks may come at once
	last := map[engine.Precision]int{engine.FP64: -1, engine.FP32: -1}
	tap := opt.Sink
	opt.Sink = func(p engine.Precision, rs []engine.ComboResult) error {
		mu.Lock()
		if rs[0].Index < last[p] {
			shuffled = true
		}
		last[p] = rs[0].Index
		mu.Unlock()
		if tap != nil {
			if err := tap(p, rs); err != nil {
				return err
			}
		}
		return rw.Sink(p, rs)
	}
	rep, runErr := engine.RunStudy(ctx, s, opt)
	if rep == nil {
		t.Fatalf("no report: %v", runErr)
	}
	if err := rw.Close(rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("%d files left beside the output, want none", len(ents)-1)
	}
	return rep, b, rw.streamed(rep), shuffled
}

// shuffledBackend is the fake backend on many lanes with small chunks,
// each chunk taking a random few hundred microseconds: chunks complete
// far out of grid order.
func shuffledBackend(seed uint64, stop func(p engine.Precision, first int) error) *fakeBackend {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var prec sync.Map
	b := &fakeBackend{lanes: 7, chunk: 3}
	b.prepare = func(_ context.Context, job *engine.Job) error { prec.Store("p", job.Precision); return nil }
	b.compute = func(ctx context.Context, lane, first int, out []engine.Metrics) error {
		mu.Lock()
		d := time.Duration(rng.IntN(400)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
		p, _ := prec.Load("p")
		if stop != nil {
			if err := stop(p.(engine.Precision), first); err != nil {
				return err
			}
		}
		for i := range out {
			v := float64(first+i) / 7
			if p.(engine.Precision) == engine.FP32 {
				v += 1e-7
			}
			out[i] = engine.Metrics{TotalReturn: v, Sharpe: -v, Omega: v * 3, TotalTrades: first + i, LongBars: 2 * (first + i)}
		}
		return nil
	}
	return b
}

// TestRowWriterStreamsTheReport: rows written while the study runs, from
// chunks that complete out of grid order on seven lanes, give the file
// Report.WriteRows gives from the finished report: byte for byte for CSV
// and JSON lines, row for row for Parquet. Also when the study stops
// early (a cancel in the fp32 lane, a failure in the fp64 lane): the
// status column then says so, as the report does.
func TestRowWriterStreamsTheReport(t *testing.T) {
	errLost := errors.New("device lost")
	cases := []struct {
		name string
		stop func(cancel func()) func(p engine.Precision, first int) error
	}{
		{"complete", nil},
		{"cancelled in fp32", func(cancel func()) func(engine.Precision, int) error {
			return func(p engine.Precision, first int) error {
				if p == engine.FP32 && first >= 40 {
					cancel()
					return context.Canceled
				}
				return nil
			}
		}},
		{"failed in fp64", func(func()) func(engine.Precision, int) error {
			return func(p engine.Precision, first int) error {
				if p == engine.FP64 && first >= 61 {
					return errLost
				}
				return nil
			}
		}},
	}
	for _, c := range cases {
		for _, f := range RowFormats {
			t.Run(c.name+"/"+string(f), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var stop func(engine.Precision, int) error
				if c.stop != nil {
					stop = c.stop(cancel)
				}
				rep, got, streamed, shuffled := streamStudy(t, ctx, fakeStudy(shuffledBackend(11, stop)), f, engine.StudyOptions{})
				if !shuffled {
					t.Error("every chunk came in grid order: the reorder buffer was not exercised")
				}
				// Streamed when the study completed; rewritten from the
				// report by Close when it stopped early.
				if streamed != (c.stop == nil) {
					t.Errorf("streamed %v (written as the study ran, not rewritten by Close)", streamed)
				}
				var want bytes.Buffer
				if err := WriteRows(&want, rep, f); err != nil {
					t.Fatal(err)
				}
				if c.stop == nil && !rep.Complete() {
					t.Fatal("the study did not complete")
				}
				if c.stop != nil && rep.Complete() {
					t.Fatal("the study completed")
				}
				if f == RowsParquet {
					g, w := readParquet(t, got), readParquet(t, want.Bytes())
					if len(w) == 0 || !reflect.DeepEqual(g, w) {
						t.Errorf("streamed Parquet: %d rows, from the report %d; differ", len(g), len(w))
					}
					return
				}
				if len(got) == 0 || !bytes.Equal(got, want.Bytes()) {
					t.Errorf("streamed %s (%d bytes) differs from the report's (%d bytes)", f, len(got), want.Len())
				}
			})
		}
	}
}

// TestRowWriterRecyclesResults: with the writer handing the lanes back the
// chunks it has written (StudyOptions.Results: RowWriter.Results), the
// file streamed from chunks that complete out of grid order on seven
// lanes, not kept (Discard), is the one a study that keeps every result
// writes: byte for byte for CSV and JSON lines, row for row for Parquet;
// and the lanes labelled chunks into slices handed back.
func TestRowWriterRecyclesResults(t *testing.T) {
	for _, f := range RowFormats {
		t.Run(string(f), func(t *testing.T) {
			ctx := context.Background()
			rep, want, _, _ := streamStudy(t, ctx, fakeStudy(shuffledBackend(11, nil)), f, engine.StudyOptions{})
			var seen sync.Map
			var reused atomic.Int64
			tap := func(_ engine.Precision, rs []engine.ComboResult) error {
				// seen holds every first element: no slice is collected, so an
				// address seen again is a slice handed back.
				if _, again := seen.LoadOrStore(&rs[:1][0], true); again {
					reused.Add(1)
				}
				return nil
			}
			kept, got, streamed, shuffled := streamStudy(t, ctx, fakeStudy(shuffledBackend(11, nil)), f,
				engine.StudyOptions{Discard: true, Keep: 3, Sink: tap, Results: func(int) []engine.ComboResult { return nil }})
			if !rep.Complete() || !kept.Complete() || !streamed || !shuffled {
				t.Fatalf("complete %v and %v, streamed %v, out of grid order %v: want all", rep.Complete(), kept.Complete(), streamed, shuffled)
			}
			if reused.Load() == 0 {
				t.Error("no chunk was labelled into a slice the writer handed back")
			}
			if f == RowsParquet {
				if g, w := readParquet(t, got), readParquet(t, want); len(w) == 0 || !reflect.DeepEqual(g, w) {
					t.Errorf("recycled Parquet: %d rows, kept %d; differ", len(g), len(w))
				}
				return
			}
			if len(got) == 0 || !bytes.Equal(got, want) {
				t.Errorf("recycled %s (%d bytes) differs from the kept study's (%d bytes)", f, len(got), len(want))
			}
		})
	}
}

// TestRowWriterWriteErrorDoesNotStopTheStudy: an output that fails stops
// the writing, not the study: the report is complete and Close says why.
func TestRowWriterWriteErrorDoesNotStopTheStudy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	out.Close() // writes now fail
	s := fakeStudy(shuffledBackend(3, nil))
	rw, err := NewRowWriter(out, RowsCSV, s)
	if err != nil {
		t.Fatal(err)
	}
	rep, runErr := engine.RunStudy(context.Background(), s, engine.StudyOptions{Sink: rw.Sink})
	if runErr != nil || !rep.Complete() {
		t.Fatalf("the study stopped: %v", runErr)
	}
	if err := rw.Close(rep); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Close: %v, want the write error", err)
	}
}

// readParquet reads a whole results file back with the module's reader.
func readParquet(t *testing.T, b []byte) []parquetRow {
	t.Helper()
	r := parquet.NewGenericReader[parquetRow](bytes.NewReader(b))
	defer r.Close()
	rows := make([]parquetRow, r.NumRows())
	n, err := r.Read(rows)
	if n != len(rows) || (err != nil && !errors.Is(err, io.EOF)) {
		t.Fatalf("read %d of %d rows: %v", n, len(rows), err)
	}
	return rows
}

// TestParquetColumnsAreTheCSVs: the Parquet schema's columns are
// RowColumns, in order: the CSV's header.
func TestParquetColumnsAreTheCSVs(t *testing.T) {
	var got []string
	for _, f := range parquet.SchemaOf(parquetRow{}).Fields() {
		got = append(got, f.Name())
	}
	if want := RowColumns(); !reflect.DeepEqual(got, want) {
		t.Errorf("Parquet columns %v\nwant (the CSV's) %v", got, want)
	}
}

// TestParquetRowGroupsInOrder: a file of several row groups per lane,
// encoded on several goroutines and spliced in, holds every row of the
// report once, in order (lane by lane, grid order), each lane's rows in
// row groups of its own of at most resultsRowGroup rows.
func TestParquetRowGroupsInOrder(t *testing.T) {
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 151, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 1006, Step: 1}} // 150,150 combos: 3 row groups a lane
	rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "cuda", Created: time.Unix(0, 0)}
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		run := &engine.Run{Backend: "cuda", Precision: p, Grid: g, Status: engine.StatusComplete, Results: make([]engine.ComboResult, g.Len())}
		for i := range run.Results {
			run.Results[i] = engine.ComboResult{Index: i, Combo: g.At(i), Metrics: engine.Metrics{Sharpe: float64(i) + float64(p), TotalTrades: i % 97}}
		}
		rep.Runs = append(rep.Runs, run)
	}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, rep); err != nil {
		t.Fatal(err)
	}
	rows := readParquet(t, buf.Bytes())
	if len(rows) != 2*g.Len() {
		t.Fatalf("%d rows, want %d", len(rows), 2*g.Len())
	}
	for k, r := range rows {
		run := rep.Runs[k/g.Len()]
		want := run.Results[k%g.Len()]
		if r.Precision != run.Precision.String() || r.HMA != int64(want.HMA) || r.HMA3 != int64(want.HMA3) || r.Sharpe != want.Sharpe || r.TotalTrades != int64(want.TotalTrades) {
			t.Fatalf("row %d: %+v, want %s %+v", k, r, run.Precision, want)
		}
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, rg := range f.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	per := (g.Len() + resultsRowGroup - 1) / resultsRowGroup
	if len(sizes) != 2*per || sizes[0] != resultsRowGroup || sizes[per-1] != int64(g.Len()-(per-1)*resultsRowGroup) {
		t.Errorf("row groups %v: want %d per lane of at most %d, the last of each lane shorter", sizes, per, resultsRowGroup)
	}
}

// TestRowWriterRelabelsDiscarded: a study that keeps no results
// (StudyOptions.Discard, what run --out streams) and stops part way — the
// user's cancel, an interrupt (SIGTERM), a failure, in either lane — leaves
// a file whose rows carry the run's final status, not the "complete" they
// were streamed with: the file is what `sessions export` writes of the
// same session (Report.WriteRowsFrom handing over, in grid order, every
// result the sink saw: what the store saved), byte for byte for CSV and
// JSON lines, row for row and metadata for Parquet.
func TestRowWriterRelabelsDiscarded(t *testing.T) {
	errLost := errors.New("device lost")
	type stopper func(cancel context.CancelCauseFunc) func(p engine.Precision, first int) error
	at := func(prec engine.Precision, n int, cause, ret error) stopper {
		return func(cancel context.CancelCauseFunc) func(engine.Precision, int) error {
			return func(p engine.Precision, first int) error {
				if p == prec && first >= n {
					if cause != nil {
						cancel(cause)
					}
					return ret
				}
				return nil
			}
		}
	}
	cases := []struct {
		name   string
		stop   stopper
		status engine.Status // the stopped lane's rows
	}{
		{"complete", nil, engine.StatusComplete},
		{"cancelled in fp64", at(engine.FP64, 50, context.Canceled, context.Canceled), engine.StatusCancelled},
		{"cancelled in fp32", at(engine.FP32, 40, context.Canceled, context.Canceled), engine.StatusCancelled},
		{"interrupted in fp32", at(engine.FP32, 40, &engine.Interrupted{Signal: "terminated"}, context.Canceled), engine.StatusInterrupted},
		{"failed in fp64", at(engine.FP64, 61, nil, errLost), engine.StatusFailed},
	}
	for _, c := range cases {
		for _, f := range RowFormats {
			t.Run(c.name+"/"+string(f), func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				var stop func(engine.Precision, int) error
				if c.stop != nil {
					stop = c.stop(cancel)
				}
				var mu sync.Mutex
				saved := map[engine.Precision][]engine.ComboResult{}
				save := func(p engine.Precision, rs []engine.ComboResult) error {
					mu.Lock()
					saved[p] = append(saved[p], rs...)
					mu.Unlock()
					return nil
				}
				rep, got, _, _ := streamStudy(t, ctx, fakeStudy(shuffledBackend(11, stop)), f, engine.StudyOptions{Discard: true, Keep: 3, Sink: save})
				if rep.Complete() != (c.stop == nil) {
					t.Fatalf("complete %v", rep.Complete())
				}
				var shown []engine.Status
				for _, run := range rep.Runs {
					shown = append(shown, run.Shown())
				}
				if c.stop != nil && !slicesContains(shown, c.status) {
					t.Fatalf("runs %v: none %s", shown, c.status)
				}
				// What sessions export writes: the saved results in grid order.
				var want bytes.Buffer
				err := WriteRowsFrom(&want, rep, f, func(run *engine.Run, rows func([]engine.ComboResult) error) error {
					rs := saved[run.Precision]
					sort.Slice(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
					return rows(rs)
				})
				if err != nil {
					t.Fatal(err)
				}
				if f == RowsParquet {
					g, w := readParquet(t, got), readParquet(t, want.Bytes())
					if len(w) == 0 || !reflect.DeepEqual(g, w) {
						t.Errorf("streamed Parquet: %d rows, export %d; differ", len(g), len(w))
					}
					statuses := map[string]bool{}
					for _, r := range g {
						statuses[r.Status] = true
					}
					if !statuses[string(c.status)] {
						t.Errorf("no row says %s: %v", c.status, statuses)
					}
					if gm, wm := parquetMeta(t, got), parquetMeta(t, want.Bytes()); !reflect.DeepEqual(gm, wm) {
						t.Errorf("metadata %v\nwant %v", gm, wm)
					}
					return
				}
				if len(got) == 0 || !bytes.Equal(got, want.Bytes()) {
					t.Errorf("streamed %s (%d bytes) differs from the export (%d bytes)", f, len(got), want.Len())
				}
				if !bytes.Contains(got, []byte(string(c.status))) {
					t.Errorf("no row says %s", c.status)
				}
			})
		}
	}
}

func slicesContains(ss []engine.Status, s engine.Status) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// parquetMeta is a Parquet file's key/value metadata.
func parquetMeta(t *testing.T, b []byte) map[string]string {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		m[kv.Key] = kv.Value
	}
	return m
}
