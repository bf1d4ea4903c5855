package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference"
)

// testParity: a backend that runs the parity pass on its device
// (engine.ParityDevice) gives the report the CPU's engine.Compare gives on
// the same runs, field by field (SameParity), on every case, the prefix
// one with thousands of flips (more than engine.MaxFlipsListed: the worst
// list is a selection) among them.
func testParity(t *testing.T, b engine.Backend, cs []suiteCase) {
	dev, ok := b.(engine.ParityDevice)
	if !ok {
		t.Skipf("%s does not run the parity pass on a device (engine.ParityDevice)", b.Name())
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			want, job, ref, test := cpuParity(t, c)
			got, err := engine.CompareOnDevice(context.Background(), dev, job, ref, test, want.Tolerance)
			if err != nil {
				t.Fatal(err)
			}
			if got.Device == "" {
				t.Error("the device report does not name its device")
			}
			SameParity(t, b.Name(), got, want, 1e-12)
			t.Logf("%s: %d flips (%d non-borderline), %d listed, max indicator error %.3g",
				c.name, want.FlipCount, want.NonBorderlineFlips, len(want.Flips), want.MaxRelIndicatorError)
		})
	}
}

// cpuParity is the reference's parity report of case c (fp32 in c's
// formulation against fp64 direct, the tolerance 1e-4 so that both kinds
// of flip occur), with the job and the two runs it compared.
func cpuParity(t testing.TB, c suiteCase) (*engine.Parity, *engine.Job, *engine.Run, *engine.Run) {
	t.Helper()
	job := c.job(engine.FP64)
	job.WMA = engine.Direct
	run := func(p engine.Precision, form engine.Formulation) *engine.Run {
		j := c.job(p)
		j.WMA = form
		ms := Reference(t, j)
		r := &engine.Run{Precision: p, WMA: form, Grid: c.grid, Status: engine.StatusComplete, Results: make([]engine.ComboResult, len(ms))}
		for i, m := range ms {
			r.Results[i] = engine.ComboResult{Index: i, Combo: c.grid.At(i), Metrics: m}
		}
		return r
	}
	ref, test := run(engine.FP64, engine.Direct), run(engine.FP32, c.form)
	h64, h364, _ := Series[float64](t, job)
	j32 := c.job(engine.FP32)
	h32, h332, _ := Series[float32](t, j32)
	want, err := engine.Compare(context.Background(), engine.ParityInput[float64, float32]{Bars: c.bars, Grid: c.grid, Params: c.params,
		Ref: ref, Test: test, RefInd: &engine.Indicators[float64]{H: h64, H3: h364}, TestInd: &engine.Indicators[float32]{H: h32, H3: h332},
		Tolerance: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	return want, job, ref, test
}

// SameParity fails t unless got and want are the same parity report:
// verdict, reasons, explanation, every count and per-combo field, the
// worst flips (combo, bar, time, positions, borderline) and the indicator
// errors (series, length, bar) equal; margins and relative errors within
// rel of each other (0: the same bits; NaN matches NaN).
func SameParity(t testing.TB, label string, got, want *engine.Parity, rel float64) {
	t.Helper()
	near := func(a, b float64) bool {
		return a == b || (math.IsNaN(a) && math.IsNaN(b)) || (rel > 0 && Near(a, b, rel, 0))
	}
	head := func(p *engine.Parity) string {
		return fmt.Sprintf("verdict %s reasons %q explanation %q tol %g incomplete %v compared %d trades %d/%d shifted %d (%g) max dn %d (%g) max dPnL %g pp (%g) differing %d flips %d non-borderline %d",
			p.Verdict, p.Reasons, p.Explanation, p.Tolerance, p.Incomplete, p.CombosCompared, p.TotalTrades64, p.TotalTrades32,
			p.ShiftedTrades, p.ShiftedShare, p.MaxAbsDn, p.MaxRelDn, p.MaxAbsDPnLpp, p.MaxRelDPnL, p.CombosDiffering, p.FlipCount, p.NonBorderlineFlips)
	}
	if g, w := head(got), head(want); g != w {
		t.Errorf("%s parity:\n got %s\nwant %s", label, g, w)
	}
	if !near(got.MaxRelIndicatorError, want.MaxRelIndicatorError) {
		t.Errorf("%s parity: max relative indicator error %g, want %g", label, got.MaxRelIndicatorError, want.MaxRelIndicatorError)
	}
	if len(got.Combos) != len(want.Combos) {
		t.Fatalf("%s parity: %d combos, want %d", label, len(got.Combos), len(want.Combos))
	}
	bad := 0
	for k := range want.Combos {
		g, w := got.Combos[k], want.Combos[k]
		gm, wm := g.MaxFlipMargin, w.MaxFlipMargin
		g.MaxFlipMargin, w.MaxFlipMargin = 0, 0
		if g != w || !near(gm, wm) {
			if bad++; bad <= 5 {
				t.Errorf("%s parity: combo %d: got %+v (max margin %g), want %+v (max margin %g)", label, k, g, gm, w, wm)
			}
		}
	}
	if len(got.Flips) != len(want.Flips) {
		t.Fatalf("%s parity: %d flips listed, want %d", label, len(got.Flips), len(want.Flips))
	}
	for i := range want.Flips {
		g, w := got.Flips[i], want.Flips[i]
		gm, wm := g.Margin, w.Margin
		g.Margin, w.Margin = 0, 0
		if g != w || !near(gm, wm) {
			if bad++; bad <= 10 {
				t.Errorf("%s parity: worst flip %d: got %+v (margin %g), want %+v (margin %g)", label, i, g, gm, w, wm)
			}
		}
	}
	if len(got.IndicatorErrors) != len(want.IndicatorErrors) {
		t.Fatalf("%s parity: %d indicator errors, want %d", label, len(got.IndicatorErrors), len(want.IndicatorErrors))
	}
	for i := range want.IndicatorErrors {
		g, w := got.IndicatorErrors[i], want.IndicatorErrors[i]
		if g.Series != w.Series || g.Length != w.Length || g.Bar != w.Bar || !near(g.MaxRel, w.MaxRel) {
			if bad++; bad <= 15 {
				t.Errorf("%s parity: indicator error %d: got %+v, want %+v", label, i, g, w)
			}
		}
	}
}

// NaiveParity wraps b as a backend that also runs the parity pass
// (engine.ParityDevice), on the CPU and naively: every combo's positions
// in both precisions from the reference's per-length series
// (reference.Positions), compared bar by bar; every flip returned, in a
// shuffled order (engine.CompareOnDevice must select and order the worst).
// It is what a device's pass must equal, for tests of the code around one.
func NaiveParity(b engine.Backend) engine.Backend { return naiveParity{b} }

type naiveParity struct{ engine.Backend }

var _ engine.ParityDevice = naiveParity{}

func (naiveParity) DeviceParity(ctx context.Context, job *engine.Job, test engine.Precision, form engine.Formulation, tol float64) (*engine.DeviceParity, error) {
	if test == engine.FP32 {
		return naive[float32](ctx, job, form, tol)
	}
	return naive[float64](ctx, job, form, tol)
}

func naive[F engine.Float](ctx context.Context, job *engine.Job, form engine.Formulation, tol float64) (*engine.DeviceParity, error) {
	ind64, err := reference.BuildIndicators[float64](ctx, job.Bars, job.Grid, job.Params.Source, engine.Direct)
	if err != nil {
		return nil, err
	}
	indT, err := reference.BuildIndicators[F](ctx, job.Bars, job.Grid, job.Params.Source, form)
	if err != nil {
		return nil, err
	}
	n, total := job.Bars.Len(), job.Grid.Len()
	out := &engine.DeviceParity{Flips: make([]int32, total), NonBorderline: make([]int32, total), MaxMargin: make([]float64, total), Device: "naive CPU"}
	pos64, posT := make([]int8, n), make([]int8, n)
	for i := 0; i < total; i++ {
		c := job.Grid.At(i)
		reference.Positions(ind64.H[c.HMA], ind64.H3[c.HMA3], 0, job.Params.Mode, 0, pos64)
		reference.Positions(indT.H[c.HMA], indT.H3[c.HMA3], 0, job.Params.Mode, 0, posT)
		for b := 0; b < n-1; b++ {
			if pos64[b] == posT[b] {
				continue
			}
			m := math.Abs(ind64.H3[c.HMA3][b]-ind64.H[c.HMA][b]) / job.Bars.Close[b]
			out.Flips[i]++
			if !(m < tol) {
				out.NonBorderline[i]++
			}
			out.MaxMargin[i] = math.Max(out.MaxMargin[i], m)
			out.Worst = append(out.Worst, engine.Flip{Index: i, Bar: b, Pos64: pos64[b], Pos32: posT[b], Margin: m})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(total), uint64(n)))
	rng.Shuffle(len(out.Worst), func(i, j int) { out.Worst[i], out.Worst[j] = out.Worst[j], out.Worst[i] })
	errOf := func(name string, L int, r []float64, x []F) engine.SeriesError {
		e := engine.SeriesError{Series: name, Length: L, Bar: -1}
		for i := range r {
			if math.IsNaN(r[i]) {
				continue
			}
			t := float64(x[i])
			rel := math.Abs(t-r[i]) / math.Abs(r[i])
			if math.IsNaN(t) || math.IsInf(t, 0) || (r[i] == 0 && t != 0) {
				rel = math.Inf(1)
			} else if r[i] == 0 {
				rel = 0
			}
			if e.Bar < 0 || rel > e.MaxRel {
				e.MaxRel, e.Bar = rel, i
			}
		}
		return e
	}
	for _, L := range job.Grid.HMA.Values() {
		out.IndicatorErrors = append(out.IndicatorErrors, errOf("h", L, ind64.H[L], indT.H[L]))
	}
	for _, L := range job.Grid.HMA3.Values() {
		out.IndicatorErrors = append(out.IndicatorErrors, errOf("h3", L, ind64.H3[L], indT.H3[L]))
	}
	return out, nil
}

// testBlocks: a backend whose kernels emit per-block statistics
// (engine.BlockKernel) gives the reference's (reference.BacktestBlocks)
// through engine.Sweep, in every precision it computes, HMA3 twins
// included: counts exactly, sums within 1e-12 relative.
func testBlocks(t *testing.T, b engine.Backend, cs []suiteCase, precs []engine.Precision) {
	for _, c := range []suiteCase{cs[0], aliasCase(cs)} {
		for _, p := range precs {
			job := c.job(p)
			bounds, err := engine.BlockBounds(c.bars.Len(), 5)
			if err != nil {
				t.Fatal(err)
			}
			job.Blocks = bounds
			got := engine.NewBlockStats(c.grid.Len(), bounds)
			if _, err := engine.Sweep(context.Background(), b, job, engine.SweepOptions{Blocks: got}); err != nil {
				if errors.Is(err, engine.ErrNoBlocks) {
					t.Skipf("%s: %v", b.Name(), err)
				}
				t.Fatal(err)
			}
			want := engine.NewBlockStats(c.grid.Len(), bounds)
			if _, err := engine.Sweep(context.Background(), reference.New(), job, engine.SweepOptions{Blocks: want}); err != nil {
				t.Fatal(err)
			}
			SameBlocks(t, fmt.Sprintf("%s %s %s", b.Name(), c.name, p), got, want, 1e-12)
		}
	}
}

// SameBlocks fails t unless got and want hold the same per-block
// statistics: bar, trade and win counts exactly, every sum within rel of
// the other (NaN matching NaN, equal infinities equal).
func SameBlocks(t testing.TB, label string, got, want *engine.BlockStats, rel float64) {
	t.Helper()
	if got.Combos != want.Combos || got.Blocks != want.Blocks {
		t.Fatalf("%s: %d combos x %d blocks, want %d x %d", label, got.Combos, got.Blocks, want.Combos, want.Blocks)
	}
	near := func(a, b float64) bool {
		return a == b || (math.IsNaN(a) && math.IsNaN(b)) || Near(a, b, rel, 1e-300)
	}
	bad, trades := 0, 0
	for i := range want.Sum {
		trades += int(want.Trades[i])
		if got.Bars[i] != want.Bars[i] || got.Trades[i] != want.Trades[i] || got.Wins[i] != want.Wins[i] || !near(got.Sum[i], want.Sum[i]) ||
			!near(got.SumSq[i], want.SumSq[i]) || !near(got.SumDown[i], want.SumDown[i]) || !near(got.SumLog[i], want.SumLog[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%s: combo %d block %d: got bars %d trades %d wins %d sum %.17g sq %.17g down %.17g log %.17g; want %d %d %d %.17g %.17g %.17g %.17g",
					label, i/want.Blocks, i%want.Blocks, got.Bars[i], got.Trades[i], got.Wins[i], got.Sum[i], got.SumSq[i], got.SumDown[i], got.SumLog[i],
					want.Bars[i], want.Trades[i], want.Wins[i], want.Sum[i], want.SumSq[i], want.SumDown[i], want.SumLog[i])
			}
		}
	}
	for c := range want.Sum3 {
		if !near(got.Sum3[c], want.Sum3[c]) || !near(got.Sum4[c], want.Sum4[c]) {
			if bad++; bad <= 10 {
				t.Errorf("%s: combo %d: sum rs^3 %.17g, rs^4 %.17g; want %.17g, %.17g", label, c, got.Sum3[c], got.Sum4[c], want.Sum3[c], want.Sum4[c])
			}
		}
	}
	if trades == 0 {
		t.Fatalf("%s: no trade in any block: the case proves nothing", label)
	}
}
