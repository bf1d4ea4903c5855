package engine_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data/datatest"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// parityFixture is a one-combo grid (hma 2, hma3 6: warm-up max(1, 4) = 4)
// over n bars whose fp64 h is the close and whose h3 sits a clear margin
// (0.1% to 1% of the close) above or below it, switching side every 5 to
// 30 bars. The fp32 series are the fp64 ones rounded to float32: rounding
// (~6e-8) cannot move a 1e-3 margin, so fp32 and fp64 positions agree until
// a test perturbs one.
type parityFixture struct {
	bars           *engine.Bars
	grid           engine.Grid
	params         engine.Params
	h64, h364      []float64
	h32, h332      []float32
	ref, test      *engine.Run
	refInd, tstInd *engine.Indicators[float64]
}

const fixWarm = 4 // max(HMAWarmup(2), HMA3Warmup(6))

func newParityFixture(n int, seed uint64) *parityFixture {
	rng := rand.New(rand.NewPCG(seed, 61))
	close := datatest.Closes(rng, n, 100, 0.005)
	f := &parityFixture{
		bars:   datatest.CloseBars(close),
		grid:   engine.Grid{HMA: engine.Range{Start: 2, Stop: 2, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 6, Step: 1}},
		params: engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, BarsPerYear: 525600},
		h64:    make([]float64, n), h364: make([]float64, n),
	}
	side, left := 1.0, 0
	for i := range close {
		if left == 0 {
			side, left = -side, 5+rng.IntN(26)
		}
		left--
		f.h64[i] = close[i]
		f.h364[i] = close[i] * (1 + side*(0.001+0.009*rng.Float64()))
	}
	f.h32, f.h332 = narrow(f.h64), narrow(f.h364)
	return f
}

// runs builds both runs from the fixture's series through Backtest, as a
// backend would.
func (f *parityFixture) runs() {
	r64 := kernels.BarReturns[float64](f.bars)
	r32 := kernels.BarReturns[float32](f.bars)
	c := f.grid.At(0)
	m64 := reference.Backtest(f.h64, f.h364, r64, fixWarm, f.params, new(reference.Scratch[float64]))
	m32 := reference.Backtest(f.h32, f.h332, r32, fixWarm, f.params, new(reference.Scratch[float32]))
	f.ref = &engine.Run{Precision: engine.FP64, Grid: f.grid, Status: engine.StatusComplete, Results: []engine.ComboResult{{Index: 0, Combo: c, Metrics: m64}}}
	f.test = &engine.Run{Precision: engine.FP32, Grid: f.grid, Status: engine.StatusComplete, Results: []engine.ComboResult{{Index: 0, Combo: c, Metrics: m32}}}
}

func (f *parityFixture) compare(t *testing.T, tol float64) *engine.Parity {
	t.Helper()
	ind64 := &engine.Indicators[float64]{H: map[int][]float64{2: f.h64}, H3: map[int][]float64{6: f.h364}}
	ind32 := &engine.Indicators[float32]{H: map[int][]float32{2: f.h32}, H3: map[int][]float32{6: f.h332}}
	p, err := engine.Compare(context.Background(), engine.ParityInput[float64, float32]{
		Bars: f.bars, Grid: f.grid, Params: f.params, Ref: f.ref, Test: f.test,
		RefInd: ind64, TestInd: ind32, Tolerance: tol,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParityBaselinePasses: with fp32 = fp64 rounded, nothing flips, the
// indicator error is float32 rounding, and the verdict is pass.
func TestParityBaselinePasses(t *testing.T) {
	f := newParityFixture(3000, 1)
	f.runs()
	p := f.compare(t, 0)
	if p.Verdict != engine.VerdictPass || len(p.Reasons) != 0 {
		t.Errorf("verdict %q reasons %q, want pass", p.Verdict, p.Reasons)
	}
	if p.FlipCount != 0 || p.Combos[0].Dn != 0 {
		t.Errorf("flips %d dn %d, want 0 and 0", p.FlipCount, p.Combos[0].Dn)
	}
	if p.MaxRelIndicatorError <= 0 || p.MaxRelIndicatorError > 0x1p-24 {
		t.Errorf("MaxRelIndicatorError = %g, want float32 rounding (0, 2^-24]", p.MaxRelIndicatorError)
	}
	if p.Tolerance != engine.DefaultBorderline {
		t.Errorf("Tolerance = %g, want the default %g", p.Tolerance, engine.DefaultBorderline)
	}
	if p.CombosCompared != 1 || p.Incomplete {
		t.Errorf("CombosCompared %d Incomplete %v, want 1 and false", p.CombosCompared, p.Incomplete)
	}
}

// TestParityForcedFlip makes one bar nearly a tie in fp64 (h3 3e-7 above h)
// and puts the fp32 h3 3e-7 below: the fp32 position at that bar flips from
// +1 to -1 and nothing else does. Compare must report exactly that flip, at
// that bar, with margin |h3-h|/close in fp64, borderline under the default
// tolerance 1e-5 and non-borderline under a tolerance of 1e-7.
func TestParityForcedFlip(t *testing.T) {
	f := newParityFixture(3000, 2)
	// A bar inside a long streak, with its neighbours long too.
	b := -1
	for i := 100; i < 2900; i++ {
		if f.h364[i-1] > f.h64[i-1] && f.h364[i] > f.h64[i] && f.h364[i+1] > f.h64[i+1] {
			b = i
			break
		}
	}
	if b < 0 {
		t.Fatal("fixture has no long streak")
	}
	f.h364[b] = f.h64[b] * (1 + 3e-7)
	f.h332[b] = float32(f.h64[b] * (1 - 3e-7))
	f.runs()
	margin := math.Abs(f.h364[b]-f.h64[b]) / f.bars.Close[b] // computed here, in fp64
	t.Logf("forced flip at bar %d, margin %.3g", b, margin)

	// Held one bar short instead of long: the fp32 run has the long split
	// around a one-bar short, so two more trades (dn = +2, within the limit
	// max(1% of trades64, 2)).
	for _, c := range []struct {
		tol        float64
		borderline bool
		verdict    engine.Verdict
	}{{0, true, engine.VerdictPass}, {1e-7, false, engine.VerdictCollapse}} {
		p := f.compare(t, c.tol)
		if p.FlipCount != 1 || len(p.Flips) != 1 {
			t.Fatalf("tol %g: FlipCount %d, %d listed, want 1", c.tol, p.FlipCount, len(p.Flips))
		}
		fl := p.Flips[0]
		want := engine.Flip{Index: 0, Combo: engine.Combo{HMA: 2, HMA3: 6}, Bar: b, Time: f.bars.Time[b], Pos64: 1, Pos32: -1, Margin: margin, Borderline: c.borderline}
		if fl != want {
			t.Errorf("tol %g: flip %+v, want %+v", c.tol, fl, want)
		}
		cp := p.Combos[0]
		if cp.Flips != 1 || cp.MaxFlipMargin != margin || cp.Dn != 2 || cp.DnLimitBreached {
			t.Errorf("tol %g: combo parity %+v, want 1 flip, max margin %g, dn +2 not breached", c.tol, cp, margin)
		}
		if cp.Trades32 != f.test.Results[0].TotalTrades || cp.Trades64 != f.ref.Results[0].TotalTrades {
			t.Errorf("tol %g: trades %d/%d, runs say %d/%d", c.tol, cp.Trades64, cp.Trades32, f.ref.Results[0].TotalTrades, f.test.Results[0].TotalTrades)
		}
		wantDPnL := 100 * (f.test.Results[0].TotalReturn - f.ref.Results[0].TotalReturn)
		if cp.DPnLpp != wantDPnL || p.MaxAbsDPnLpp != math.Abs(wantDPnL) {
			t.Errorf("tol %g: dPnL %v pp (max %v), want %v", c.tol, cp.DPnLpp, p.MaxAbsDPnLpp, wantDPnL)
		}
		if p.Verdict != c.verdict {
			t.Errorf("tol %g: verdict %q (reasons %q), want %q", c.tol, p.Verdict, p.Reasons, c.verdict)
		}
		if c.verdict == engine.VerdictCollapse && (len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "non-borderline")) {
			t.Errorf("tol %g: reasons %q, want one naming the non-borderline flip", c.tol, p.Reasons)
		}
		if nb := map[bool]int{true: 0, false: 1}[c.borderline]; p.NonBorderlineFlips != nb || cp.NonBorderline != nb {
			t.Errorf("tol %g: non-borderline flips %d/%d, want %d", c.tol, p.NonBorderlineFlips, cp.NonBorderline, nb)
		}
	}
}

// TestParityVerdictRules: each of SPEC's four collapse conditions fires on
// its own, names itself in Reasons, and the boundaries hold (5 pp, and
// |dn| > max(1% of trades64, 2) strictly).
func TestParityVerdictRules(t *testing.T) {
	type mod func(f *parityFixture)
	setRuns := func(tr64, tr32 int, ret64, ret32 float64) mod {
		return func(f *parityFixture) {
			f.ref.Results[0].TotalTrades, f.test.Results[0].TotalTrades = tr64, tr32
			f.ref.Results[0].TotalReturn, f.test.Results[0].TotalReturn = ret64, ret32
		}
	}
	// bend moves one fp32 value by rel without changing any position (the
	// fixture's margins are >= 1e-3).
	bend := func(h3 bool, rel float64) mod {
		return func(f *parityFixture) {
			if h3 {
				f.h332[500] = float32(f.h364[500] * (1 + rel))
			} else {
				f.h32[500] = float32(f.h64[500] * (1 + rel))
			}
		}
	}
	// flipAt makes bar 700 a clear fp64 decision (margin 2e-5 >= 1e-5) that
	// fp32 takes the other way: h3 moves by only ~4e-5 relative, under the
	// 1e-4 indicator limit, so only the flip condition fires.
	flipAt := func(f *parityFixture) {
		side := math.Copysign(1, f.h364[700]-f.h64[700])
		f.h364[700] = f.h64[700] * (1 + side*2e-5)
		f.h332[700] = float32(f.h64[700] * (1 - side*2e-5))
	}
	cases := []struct {
		name   string
		mods   []mod
		reason []string // substrings, one per expected reason, in order
	}{
		{"pass", []mod{setRuns(100, 100, 0.10, 0.10)}, nil},
		{"dPnL above 5 pp", []mod{setRuns(100, 100, 0.10, 0.16)}, []string{"max |dPnL| 6"}},
		{"dPnL at 4.9 pp", []mod{setRuns(100, 100, 0.10, 0.149)}, nil},
		{"negative dPnL above 5 pp", []mod{setRuns(100, 100, 0.10, 0.04)}, []string{"max |dPnL|"}},
		{"dn 3 of 100", []mod{setRuns(100, 103, 0.1, 0.1)}, []string{"1 combo with |dn| > max(1% of fp64 trades, 2); worst (hma 2, hma3 6): dn +3 of 100"}},
		{"dn 2 of 100 is allowed", []mod{setRuns(100, 98, 0.1, 0.1)}, nil},
		{"dn 10 of 1000 is allowed", []mod{setRuns(1000, 1010, 0.1, 0.1)}, nil},
		{"dn 11 of 1000", []mod{setRuns(1000, 989, 0.1, 0.1)}, []string{"dn -11 of 1,000"}},
		{"indicator error in h", []mod{bend(false, 2e-4)}, []string{"max relative indicator error 0.0002"}},
		{"indicator error in h3", []mod{bend(true, -3e-4)}, []string{"max relative indicator error 0.0003"}},
		{"indicator error 5e-5 is allowed", []mod{bend(true, 5e-5)}, nil},
		{"non-borderline flip", []mod{flipAt}, []string{"1 non-borderline flips"}},
		{"all four", []mod{setRuns(100, 110, 0.1, 0.2), bend(false, 1e-3), flipAt},
			[]string{"dPnL", "|dn|", "indicator error", "non-borderline"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newParityFixture(2000, 3)
			f.runs()
			setRuns(100, 100, 0.1, 0.1)(f) // neutral runs unless a case says otherwise
			for _, m := range c.mods {
				m(f)
			}
			p := f.compare(t, 0)
			wantVerdict := engine.VerdictPass
			if len(c.reason) > 0 {
				wantVerdict = engine.VerdictCollapse
			}
			if p.Verdict != wantVerdict || len(p.Reasons) != len(c.reason) {
				t.Fatalf("verdict %q reasons %q, want %q with %d reasons", p.Verdict, p.Reasons, wantVerdict, len(c.reason))
			}
			for i, r := range c.reason {
				if !strings.Contains(p.Reasons[i], r) {
					t.Errorf("reason %d = %q, want it to contain %q", i, p.Reasons[i], r)
				}
			}
		})
	}
	// The indicator error names the series and the bar.
	f := newParityFixture(2000, 3)
	f.runs()
	bend(true, 2e-4)(f)
	p := f.compare(t, 0)
	if e := p.IndicatorErrors[0]; e.Series != "h3" || e.Length != 6 || e.Bar != 500 || math.Abs(e.MaxRel-2e-4) > 1e-3*2e-4 {
		t.Errorf("worst indicator error %+v, want h3 length 6 at bar 500, ~2e-4", e)
	}
}

// TestParityRelativeConventions: rel dn and rel dPnL are 0 when nothing
// differs and +Inf when only the fp64 base is 0 (SPEC "Parity details").
func TestParityRelativeConventions(t *testing.T) {
	for _, c := range []struct {
		tr64, tr32     int
		ret64, ret32   float64
		relDn, relDPnL float64
	}{
		{0, 0, 0, 0, 0, 0},
		{0, 2, 0, 0.01, math.Inf(1), math.Inf(1)},
		{200, 202, 0.5, 0.25, 0.01, 0.5},
	} {
		f := newParityFixture(500, 4)
		f.runs()
		f.ref.Results[0].TotalTrades, f.test.Results[0].TotalTrades = c.tr64, c.tr32
		f.ref.Results[0].TotalReturn, f.test.Results[0].TotalReturn = c.ret64, c.ret32
		cp := f.compare(t, 0).Combos[0]
		if cp.RelDn != c.relDn || cp.RelDPnL != c.relDPnL {
			t.Errorf("trades %d/%d returns %v/%v: rel dn %v rel dPnL %v, want %v %v",
				c.tr64, c.tr32, c.ret64, c.ret32, cp.RelDn, cp.RelDPnL, c.relDn, c.relDPnL)
		}
	}
}

// TestParityFlipsWorstFirstCapped: two combos whose fp32 position is the
// opposite of fp64 on every held bar after the warm-up, with margins
// spread over 1e-7..1e-3: FlipCount is the total, Flips holds the
// MaxFlipsListed worst, non-borderline first, then by margin descending,
// exactly the list a full sort of every flip gives.
func TestParityFlipsWorstFirstCapped(t *testing.T) {
	const n = 1500
	rng := rand.New(rand.NewPCG(5, 6))
	close := datatest.Closes(rng, n, 100, 0.005)
	bars := datatest.CloseBars(close)
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 3, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 6, Step: 1}} // combos (2,6) and (3,6)
	ind64 := &engine.Indicators[float64]{H: map[int][]float64{}, H3: map[int][]float64{}}
	ind32 := &engine.Indicators[float32]{H: map[int][]float32{}, H3: map[int][]float32{}}
	h3 := make([]float64, n)
	for i := range h3 {
		h3[i] = close[i] * 1.5 // far above: fp64 long throughout
	}
	ind64.H3[6] = h3
	ind32.H3[6] = narrow(h3)
	type flip struct {
		index, bar int
		margin     float64
	}
	var all []flip
	for k, L := range []int{2, 3} {
		h := make([]float64, n)
		h32 := make([]float32, n)
		for i := range h {
			m := math.Pow(10, -7+4*rng.Float64()) // margin 1e-7 .. 1e-3
			h[i] = h3[i] - m*close[i]             // fp64: h3 > h, long
			h32[i] = float32(h3[i] * 1.01)        // fp32: h3 < h, short
			if i >= max(engine.HMAWarmup(L), engine.HMA3Warmup(6)) && i < n-1 {
				all = append(all, flip{k, i, math.Abs(h3[i]-h[i]) / close[i]})
			}
		}
		ind64.H[L], ind32.H[L] = h, h32
	}
	res := []engine.ComboResult{{Index: 0, Combo: g.At(0)}, {Index: 1, Combo: g.At(1)}}
	run := func(p engine.Precision) *engine.Run {
		return &engine.Run{Precision: p, Grid: g, Status: engine.StatusComplete, Results: res}
	}
	p, err := engine.Compare(context.Background(), engine.ParityInput[float64, float32]{Bars: bars, Grid: g,
		Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Ref: run(engine.FP64), Test: run(engine.FP32), RefInd: ind64, TestInd: ind32})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(all, func(i, j int) bool {
		bi, bj := all[i].margin < engine.DefaultBorderline, all[j].margin < engine.DefaultBorderline
		if bi != bj {
			return !bi
		}
		if all[i].margin != all[j].margin {
			return all[i].margin > all[j].margin
		}
		return all[i].index < all[j].index || (all[i].index == all[j].index && all[i].bar < all[j].bar)
	})
	nonBorder := 0
	for _, f := range all {
		if f.margin >= engine.DefaultBorderline {
			nonBorder++
		}
	}
	if p.FlipCount != len(all) || p.NonBorderlineFlips != nonBorder {
		t.Errorf("FlipCount %d NonBorderlineFlips %d, want %d and %d", p.FlipCount, p.NonBorderlineFlips, len(all), nonBorder)
	}
	if len(all) <= engine.MaxFlipsListed || len(p.Flips) != engine.MaxFlipsListed {
		t.Fatalf("%d flips listed of %d, want the cap %d", len(p.Flips), len(all), engine.MaxFlipsListed)
	}
	for i, f := range p.Flips {
		w := all[i]
		if f.Index != w.index || f.Bar != w.bar || f.Margin != w.margin || f.Borderline != (w.margin < engine.DefaultBorderline) ||
			f.Pos64 != 1 || f.Pos32 != -1 {
			t.Fatalf("Flips[%d] = %+v, want combo %d bar %d margin %g", i, f, w.index, w.bar, w.margin)
		}
	}
	if !strings.Contains(fmt.Sprint(p.Reasons), "non-borderline") {
		t.Errorf("reasons %q do not name the non-borderline flips", p.Reasons)
	}
}

// TestParityIncomplete: when one run stopped early, only the combos in both
// are compared and the report says so.
func TestParityIncomplete(t *testing.T) {
	f := newParityFixture(500, 7)
	f.grid = engine.Grid{HMA: engine.Range{Start: 2, Stop: 2, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 8, Step: 1}} // 3 combos: (2,6) (2,7) (2,8)
	f.runs()
	r := f.ref.Results[0]
	f.ref.Results = []engine.ComboResult{r, {Index: 1, Combo: engine.Combo{HMA: 2, HMA3: 7}, Metrics: r.Metrics}, {Index: 2, Combo: engine.Combo{HMA: 2, HMA3: 8}, Metrics: r.Metrics}}
	f.ref.Grid = f.grid
	f.test.Results = []engine.ComboResult{{Index: 1, Combo: engine.Combo{HMA: 2, HMA3: 7}, Metrics: r.Metrics}}
	f.test.Status = engine.StatusCancelled
	p := f.compare(t, 0)
	if !p.Incomplete || p.CombosCompared != 1 || len(p.Combos) != 1 || p.Combos[0].Index != 1 {
		t.Errorf("Incomplete %v CombosCompared %d combos %+v, want true, 1, index 1", p.Incomplete, p.CombosCompared, p.Combos)
	}
}

// narrow rounds a series to float32, as the fixture's fp32 side.
func narrow(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// TestParityFlipsAgainstNaive: on fresh random bars longer than several of
// Compare's blocks, with fp32 through prefix sums (many flips, borderline
// and not) and a run missing some combos, every combo's flip count,
// non-borderline count and largest margin, and the worst-flips list,
// equal a naive recomputation: each combo's whole positions in fp64 and
// fp32 (reference.Positions), compared bar by bar.
func TestParityFlipsAgainstNaive(t *testing.T) {
	rng := datatest.Rand(t)
	bars := datatest.RandomWalk(rng, 3*4096+1234, 100, 0.002)
	grid := engine.Grid{HMA: engine.Range{Start: 4, Stop: 40, Step: 9}, HMA3: engine.Range{Start: 6, Stop: 60, Step: 13}}
	params := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongOnly, BarsPerYear: 525600}
	ctx := context.Background()
	ind64, err := reference.BuildIndicators[float64](ctx, bars, grid, engine.SourceClose, engine.Direct)
	if err != nil {
		t.Fatal(err)
	}
	ind32, err := reference.BuildIndicators[float32](ctx, bars, grid, engine.SourceClose, engine.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	run := func(p engine.Precision, skip func(int) bool) *engine.Run {
		r := &engine.Run{Precision: p, Grid: grid, Status: engine.StatusComplete}
		for i := 0; i < grid.Len(); i++ {
			if skip(i) {
				r.Status = engine.StatusCancelled
				continue
			}
			r.Results = append(r.Results, engine.ComboResult{Index: i, Combo: grid.At(i), Metrics: engine.Metrics{TotalTrades: 10}})
		}
		return r
	}
	ref := run(engine.FP64, func(int) bool { return false })
	test := run(engine.FP32, func(i int) bool { return i%7 == 3 })
	const tol = 1e-4
	p, err := engine.Compare(ctx, engine.ParityInput[float64, float32]{Bars: bars, Grid: grid, Params: params,
		Ref: ref, Test: test, RefInd: ind64, TestInd: ind32, Tolerance: tol})
	if err != nil {
		t.Fatal(err)
	}
	n := bars.Len()
	pos64, pos32 := make([]int8, n), make([]int8, n)
	var all []engine.Flip
	k := 0
	for i := 0; i < grid.Len(); i++ {
		if i%7 == 3 {
			continue
		}
		c := grid.At(i)
		warm := engine.ComboWarmup(c)
		reference.Positions(ind64.H[c.HMA], ind64.H3[c.HMA3], warm, params.Mode, 0, pos64)
		reference.Positions(ind32.H[c.HMA], ind32.H3[c.HMA3], warm, params.Mode, 0, pos32)
		var flips, nb int
		maxM := 0.0
		for b := warm; b < n-1; b++ {
			if pos64[b] == pos32[b] {
				continue
			}
			m := math.Abs(ind64.H3[c.HMA3][b]-ind64.H[c.HMA][b]) / bars.Close[b]
			flips++
			if m >= tol {
				nb++
			}
			maxM = math.Max(maxM, m)
			all = append(all, engine.Flip{Index: i, Combo: c, Bar: b, Time: bars.Time[b], Pos64: pos64[b], Pos32: pos32[b], Margin: m, Borderline: m < tol})
		}
		got := p.Combos[k]
		if got.Index != i || got.Flips != flips || got.NonBorderline != nb || got.MaxFlipMargin != maxM {
			t.Errorf("combo %d %+v: flips %d, non-borderline %d, max margin %g; naive %d, %d, %g", i, c, got.Flips, got.NonBorderline, got.MaxFlipMargin, flips, nb, maxM)
		}
		k++
	}
	if p.CombosCompared != k || len(all) < 2*engine.MaxFlipsListed || p.NonBorderlineFlips == 0 || p.NonBorderlineFlips == p.FlipCount {
		t.Fatalf("%d combos compared (want %d), %d flips naive, %d non-borderline of %d: want many of both kinds", p.CombosCompared, k, len(all), p.NonBorderlineFlips, p.FlipCount)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Borderline != b.Borderline {
			return !a.Borderline
		}
		if a.Margin != b.Margin {
			return a.Margin > b.Margin
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Bar < b.Bar
	})
	if p.FlipCount != len(all) || len(p.Flips) != engine.MaxFlipsListed {
		t.Fatalf("flip count %d (naive %d), %d listed", p.FlipCount, len(all), len(p.Flips))
	}
	for i := range p.Flips {
		if p.Flips[i] != all[i] {
			t.Fatalf("worst flip %d: %+v, naive %+v", i, p.Flips[i], all[i])
		}
	}
}

// BenchmarkCompare: the parity pass of a 40 x 40 grid on the first
// 150,000 FIL bars (fp64 direct vs fp32 direct series, computed once
// outside the timing): flips, counts, indicator errors.
func BenchmarkCompare(b *testing.B) {
	bars := datatest.FIL(b, 150000)
	grid := engine.Grid{HMA: engine.Range{Start: 10, Stop: 49, Step: 1}, HMA3: engine.Range{Start: 12, Stop: 51, Step: 1}}
	params := engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, BarsPerYear: 525600}
	ctx := context.Background()
	ind64, err := reference.BuildIndicators[float64](ctx, bars, grid, engine.SourceClose, engine.Direct)
	if err != nil {
		b.Fatal(err)
	}
	ind32, err := reference.BuildIndicators[float32](ctx, bars, grid, engine.SourceClose, engine.Direct)
	if err != nil {
		b.Fatal(err)
	}
	run := &engine.Run{Grid: grid, Status: engine.StatusComplete}
	for i := 0; i < grid.Len(); i++ {
		run.Results = append(run.Results, engine.ComboResult{Index: i, Combo: grid.At(i)})
	}
	in := engine.ParityInput[float64, float32]{Bars: bars, Grid: grid, Params: params, Ref: run, Test: run, RefInd: ind64, TestInd: ind32}
	b.ResetTimer()
	for range b.N {
		if _, err := engine.Compare(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(grid.Len())*float64(b.N)/b.Elapsed().Seconds(), "combos/s")
}
