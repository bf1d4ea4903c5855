package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/output"
	"sweepbench/sessions"
)

// randBackend fills each combo's metrics at random from a few values (ties
// in every metric), with NaN and ±Inf among them, seeded by the combo and
// the precision: a study whose every ranking meets ties and NaNs. Its
// lanes complete chunks side by side, so the saved batches overlap.
type randBackend struct{ lanes, chunk int }

var _ engine.Backend = (*randBackend)(nil)

func (*randBackend) Name() string                      { return "rand" }
func (*randBackend) Available() error                  { return nil }
func (*randBackend) Devices() ([]engine.Device, error) { return []engine.Device{{Name: "rand"}}, nil }
func (b *randBackend) Prepare(_ context.Context, j *engine.Job) (engine.Kernel, error) {
	return randKernel{b, uint64(j.Precision) + 1, &atomic.Int32{}, &atomic.Bool{}}, nil
}

type randKernel struct {
	b    *randBackend
	prec uint64
	// Lane 0 holds its first chunk until the other lanes have completed
	// 10 more (140 combos, or a second passed): a batch then holds
	// chunks far apart.
	others *atomic.Int32
	first  *atomic.Bool
}

func (k randKernel) Lanes() int     { return k.b.lanes }
func (k randKernel) ChunkSize() int { return k.b.chunk }
func (k randKernel) Device() string { return "rand" }
func (k randKernel) Close() error   { return nil }

func (k randKernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	if lane != 0 {
		k.others.Add(1)
	} else if k.first.CompareAndSwap(false, true) {
		for target, t0 := k.others.Load()+10, time.Now(); k.others.Load() < target && time.Since(t0) < time.Second; {
			time.Sleep(100 * time.Microsecond)
		}
	}
	for i := range out {
		r := rand.New(rand.NewPCG(uint64(first+i), k.prec))
		v := func() float64 {
			switch n := r.IntN(40); {
			case n == 0:
				return math.NaN()
			case n == 1:
				return math.Inf(1)
			case n == 2:
				return math.Inf(-1)
			default:
				return float64(n%9-4) / 4
			}
		}
		out[i] = engine.Metrics{TotalReturn: v(), CAGR: v(), Sharpe: v(), Sortino: v(), MaxDrawdown: math.Abs(v()), Calmar: v(),
			WinRate: r.Float64(), TotalTrades: r.IntN(6), VaR95: v(), CVaR95: v(), Omega: v(),
			LongBars: r.IntN(4), ShortBars: r.IntN(3), FlatBars: r.IntN(5)}
	}
	return ctx.Err()
}

// savedRandomStudy saves a 20 x 30 study of randBackend, both precisions,
// in batches of 50 rows (about 12 a run), and returns the store, the
// session and its report read back whole (Open).
func savedRandomStudy(t *testing.T) (*sessions.Store, int64, *engine.Report) {
	t.Helper()
	s := openStore(t, "")
	st := newStudy(t, btcusdt(t, 2000), "10:29:1", "12:41:1")
	st.Backend = &randBackend{lanes: 2, chunk: 7}
	ctx := context.Background()
	w, err := begin(ctx, s, st, origin(2000), "")
	if err != nil {
		t.Fatal(err)
	}
	w.BatchRows = 50
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{Sink: w.Sink(func(err error) { t.Errorf("save: %v", err) })})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	full, err := s.Open(ctx, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	db := rawSQL(t, s.Path())
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		bs := readBatches(t, db, runID(t, db, w.ID(), p))
		overlaps := 0
		for i := 1; i < len(bs); i++ {
			if bs[i].first <= bs[i-1].last {
				overlaps++
			}
		}
		if len(bs) < 5 || overlaps == 0 {
			t.Fatalf("%s saved in %d batches, %d overlapping the one before: want several, some overlapping", p, len(bs), overlaps)
		}
		if len(full.Run(p).Results) != 600 {
			t.Fatalf("%s: %d results saved", p, len(full.Run(p).Results))
		}
	}
	return s, w.ID(), full
}

// rankedBy is an independent top n of rs (in grid order) by metric under
// keep: a stable sort of all of them, larger values first (smaller when
// minimise), NaN last, ties left in grid order.
func rankedBy(rs []engine.ComboResult, metric string, minimise bool, keep func(*engine.ComboResult) bool, n int) []engine.ComboResult {
	var out []engine.ComboResult
	for i := range rs {
		if keep(&rs[i]) {
			out = append(out, rs[i])
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, _ := out[a].Metrics.Value(metric)
		y, _ := out[b].Metrics.Value(metric)
		if math.IsNaN(x) || math.IsNaN(y) {
			return !math.IsNaN(x) && math.IsNaN(y)
		}
		return x != y && (x > y) != minimise
	})
	return out[:min(n, len(out))]
}

// same compares results, a NaN metric equal to a NaN.
func same(a, b []engine.ComboResult) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// TestRunReaderPages: a saved random study read a page at a time gives
// what its whole report holds: the combos of an index set, every window of
// a few shapes, and the top N by every metric in both directions with and
// without a filter and the objective's constraints, each against an
// independent computation over the report's results (ties by grid order,
// NaN last).
func TestRunReaderPages(t *testing.T) {
	s, id, full := savedRandomStudy(t)
	bg := context.Background()
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		all := full.Run(p).Results
		r, err := s.OpenRunReader(bg, id, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Count() != len(all) || r.Grid() != full.Grid {
			t.Fatalf("%s: reader of %d combos over %v", p, r.Count(), r.Grid())
		}
		g := full.Grid
		idx := []int{599, 0, 17, 17, 312, 313, 50, 451}
		got, err := r.Combos(bg, idx)
		if err != nil {
			t.Fatal(err)
		}
		var want []engine.ComboResult
		for _, i := range []int{0, 17, 50, 312, 313, 451, 599} {
			want = append(want, *full.Run(p).Lookup(i))
		}
		if !same(got, want) {
			t.Errorf("%s: combos %v:\n%v\nwant\n%v", p, idx, got, want)
		}
		for _, w := range [][4]int{{0, 20, 0, 30}, {3, 4, 7, 8}, {0, 1, 0, 30}, {5, 12, 22, 30}, {19, 20, 29, 30}, {2, 18, 1, 3}} {
			got, err := r.Window(bg, w[0], w[1], w[2], w[3])
			if err != nil {
				t.Fatal(err)
			}
			var want []engine.ComboResult
			for _, c := range all {
				row, col := c.Index/g.HMA3.Len(), c.Index%g.HMA3.Len()
				if row >= w[0] && row < w[1] && col >= w[2] && col < w[3] {
					want = append(want, c)
				}
			}
			if len(want) != (w[1]-w[0])*(w[3]-w[2]) || !same(got, want) {
				t.Errorf("%s: window %v: %d combos, want %d:\n%v\nwant\n%v", p, w, len(got), len(want), got, want)
			}
		}
		filters := []struct {
			name string
			f    func(*engine.ComboResult) bool
		}{
			{"all", nil},
			{"odd HMA, 2+ trades", func(c *engine.ComboResult) bool { return c.HMA%2 == 1 && c.TotalTrades >= 2 }},
		}
		for _, name := range engine.MetricNames {
			for _, minimise := range []bool{false, true} {
				for _, f := range filters {
					for _, n := range []int{1, 9, 700} {
						keep := func(*engine.ComboResult) bool { return true }
						if f.f != nil {
							keep = f.f
						}
						q := sessions.TopQuery{Objective: engine.Objective{Metric: name, Minimise: minimise}, N: n, Filter: f.f}
						got, err := r.Top(bg, q)
						if err != nil {
							t.Fatal(err)
						}
						if want := rankedBy(all, name, minimise, keep, n); !same(got, want) {
							t.Errorf("%s: top %d by %s (minimise %v, %s): %d combos\n%v\nwant %d\n%v", p, n, name, minimise, f.name, len(got), got, len(want), want)
						}
					}
				}
			}
		}
		// The objective's constraints leave out what they do not allow.
		o := engine.Objective{Metric: "omega", MinTrades: 3, MaxDrawdown: 0.5}
		got, err = r.Top(bg, sessions.TopQuery{Objective: o, N: 20})
		if err != nil {
			t.Fatal(err)
		}
		want = rankedBy(all, "omega", false, func(c *engine.ComboResult) bool { return c.TotalTrades >= 3 && c.MaxDrawdown <= 0.5 }, 20)
		if !same(got, want) {
			t.Errorf("%s: constrained top: %v\nwant %v", p, got, want)
		}
		if _, err := r.Window(bg, 0, 21, 0, 1); err == nil || !strings.Contains(err.Error(), "not in the grid") {
			t.Errorf("a window past the grid: %v", err)
		}
		if _, err := r.Combos(bg, []int{3, 600}); err == nil || !strings.Contains(err.Error(), "outside the grid") {
			t.Errorf("an index past the grid: %v", err)
		}
	}
}

// TestRunReaderRefusesAChangedBatch: a batch changed in the file after the
// run was opened and verified (a metric's bit) is refused when a page
// needs it, by *BatchError naming the session, run and batch, and pages
// that do not need it are still served; a batch deleted likewise.
func TestRunReaderRefusesAChangedBatch(t *testing.T) {
	s, id, full := savedRandomStudy(t)
	bg := context.Background()
	r, err := s.OpenRunReader(bg, id, engine.FP32)
	if err != nil {
		t.Fatal(err)
	}
	db := rawSQL(t, s.Path())
	rid := runID(t, db, id, engine.FP32)
	batches := readBatches(t, db, rid)
	b := batches[len(batches)/2]
	sharpe := metricCol("sharpe")
	rewriteBatch(t, db, rid, b.first, func(rs []storedRow) []storedRow { rs[0].vals[sharpe] ^= 1; return rs })
	var be *sessions.BatchError
	_, err = r.Combos(bg, []int{b.first})
	if !errors.As(err, &be) || be.ID != id || be.Precision != engine.FP32 || be.First != b.first || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("a changed batch: %v, want a *BatchError for session %d, fp32, batch %d", err, id, b.first)
	}
	_, err = r.Top(bg, sessions.TopQuery{Objective: engine.Objective{}, N: 3})
	if !errors.As(err, &be) || be.First != b.first {
		t.Errorf("a scan over a changed batch: %v", err)
	}
	// A combo of another batch (one that does not span b's first) is served.
	var other int = -1
	for _, c := range batches {
		if c.first != b.first && (c.last < b.first || c.first > b.last) {
			other = c.first
			break
		}
	}
	if other < 0 {
		t.Fatal("no batch apart from the changed one")
	}
	got, err := r.Combos(bg, []int{other})
	if err != nil || len(got) != 1 || got[0] != *full.Run(engine.FP32).Lookup(other) {
		t.Errorf("combo %d of an unchanged batch: %v, %v", other, got, err)
	}
	mustExec(t, db, `DELETE FROM result_batches WHERE run_id = ? AND first_idx = ?`, rid, b.first)
	if _, err := r.Combos(bg, []int{b.first}); !errors.As(err, &be) || !strings.Contains(err.Error(), "no longer in the database") {
		t.Errorf("a deleted batch: %v", err)
	}
	if err := r.Scan(bg, func([]engine.ComboResult) error { return nil }); !errors.As(err, &be) || be.First != b.first {
		t.Errorf("a scan over a deleted batch: %v", err)
	}
}

// TestOpenSummary: a saved study opened as its summary prints the table
// the whole report prints (the best by the objective in both lanes, the
// parity report and its explanation), holds kept runs of the best few with
// every combo counted, the parity report without its rows per combo, and
// per run the summary an engine.Summariser builds from the whole run;
// its top lists agree with an independent ranking of the saved results.
func TestOpenSummary(t *testing.T) {
	s, id, full := savedRandomStudy(t)
	bg := context.Background()
	opt := engine.SummaryOptions{K: 6, MaxRows: 7, MaxCols: 8}
	sum, err := s.OpenSummary(bg, id, opt)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := output.WriteTable(&a, full, 5); err != nil {
		t.Fatal(err)
	}
	if err := output.WriteTable(&b, sum, 5); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the summary's table:\n%s\nthe whole report's:\n%s", b.String(), a.String())
	}
	if sum.Note != full.Note {
		t.Errorf("note %q, want %q", sum.Note, full.Note)
	}
	if sum.Parity == nil || sum.Parity.Combos != nil || sum.Parity.FlipCount != full.Parity.FlipCount ||
		sum.Parity.Explanation != full.Parity.Explanation || len(sum.Parity.Flips) != len(full.Parity.Flips) {
		t.Errorf("parity counts: %+v", sum.Parity)
	}
	for _, run := range sum.Runs {
		fr := full.Run(run.Precision)
		if !run.Kept || run.Computed != 600 || len(run.Results) > 12 || run.Summary == nil || run.Status != fr.Status {
			t.Fatalf("%s: kept %v, computed %d, %d results, status %s", run.Precision, run.Kept, run.Computed, len(run.Results), run.Status)
		}
		sm := engine.NewSummariser(full.Grid, run.Precision, full.Objective, opt, nil)
		sm.Add(fr.Results)
		want := &engine.Run{Grid: full.Grid}
		sm.Keep(want)
		ws, gs := want.Summary, run.Summary
		if gs.Count != 600 || fmt.Sprint(gs.Lists) != fmt.Sprint(ws.Lists) || fmt.Sprint(gs.Best) != fmt.Sprint(ws.Best) {
			t.Errorf("%s: top lists differ from the whole run's", run.Precision)
		}
		for _, name := range engine.MetricNames {
			hg, hw := gs.Heatmap(name), ws.Heatmap(name)
			if hg.Rows != 7 || hg.Cols != 8 || hg.BlockRows != 3 || hg.BlockCols != 4 {
				t.Fatalf("%s: %d x %d cells of %d x %d", name, hg.Rows, hg.Cols, hg.BlockRows, hg.BlockCols)
			}
			for r := 0; r < hg.Rows; r++ {
				for c := 0; c < hg.Cols; c++ {
					x, y := hg.Cell(r, c), hw.Cell(r, c)
					if x.N != y.N || fmt.Sprint(x.Max, x.Min) != fmt.Sprint(y.Max, y.Min) || math.Abs(x.Mean-y.Mean) > 1e-12*math.Abs(y.Mean) && !(math.IsNaN(x.Mean) && math.IsNaN(y.Mean)) && x.Mean != y.Mean {
						t.Errorf("%s %s cell (%d, %d): %+v, want %+v", run.Precision, name, r, c, x, y)
					}
				}
			}
		}
		for _, name := range []string{"sharpe", "max_drawdown", "total_trades"} {
			minimise := name == "max_drawdown"
			got, _ := gs.Top(name, minimise)
			if want := rankedBy(fr.Results, name, minimise, func(*engine.ComboResult) bool { return true }, 6); !same(got, want) {
				t.Errorf("%s: top %s: %v\nwant %v", run.Precision, name, got, want)
			}
		}
	}
}
