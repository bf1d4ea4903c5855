package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync/atomic"

	"sweepbench/engine/text"
)

// Parity thresholds (SPEC "Parity").
const (
	// DefaultBorderline is the margin |h3-h|/close under which a flip is
	// explained by rounding.
	DefaultBorderline = 1e-5
	// MaxDPnLpp: a |dPnL| above this many percentage points is a collapse.
	MaxDPnLpp = 5.0
	// MaxIndicatorRel: a relative indicator error above this is a collapse.
	MaxIndicatorRel = 1e-4
	// MaxFlipsListed bounds Parity.Flips; FlipCount holds the total.
	MaxFlipsListed = 1000
)

// Verdict is the parity report's judgement (SPEC "Parity").
type Verdict string

const (
	VerdictPass     Verdict = "pass"     // no collapse condition fired
	VerdictCollapse Verdict = "collapse" // at least one did: Parity.Reasons names each
)

// ComboParity compares one combo between the two runs.
type ComboParity struct {
	Index int
	Combo
	Trades64        int
	Trades32        int
	Dn              int     // trades32 - trades64
	RelDn           float64 // |dn|/trades64 (fraction); 0 when both are 0, +Inf when only trades64 is 0
	DPnLpp          float64 // 100*(total_return32 - total_return64), percentage points
	RelDPnL         float64 // |total_return32 - total_return64| / |total_return64| (fraction)
	Flips           int     // bars where the held positions differ
	NonBorderline   int     // flips whose margin is >= the tolerance
	MaxFlipMargin   float64 // largest margin among its flips (0 when none)
	DnLimitBreached bool    // |dn| > max(1% of trades64, 2)
	// Name is a strategy combo's label (Grid.Label): "fast ema 20, slow
	// sma 100"; "" for hull, whose Combo names it.
	Name string `json:"name,omitempty"`
	// ret64 and ret32 are the two runs' total returns (fractions), which
	// the dPnL condition quotes (Returns). Unexported: neither the sessions
	// store (which keeps dPnL; Open fills them from the runs, SetReturns)
	// nor a shard file (whose format they would change) carries them.
	ret64, ret32 float64
}

// Returns are the combo's total returns (fractions) in the fp64 run and
// the run under test; 0 in a row read back without its runs.
func (c *ComboParity) Returns() (ret64, ret32 float64) { return c.ret64, c.ret32 }

// NewComboParity is the row of one combo from its fp64 result a and its
// result b under test (flips are the caller's), as Compare builds it.
func NewComboParity(a, b *ComboResult) ComboParity { return comboParity(a, b) }

// ParityWorst names the combos behind the sweep's maxima: the row of the
// combo each maximum comes from (the first in grid order on a tie; the
// zero row, Index -1, when no combo was compared), and the combos that
// breach the per-combo trade limit.
type ParityWorst struct {
	Dn, RelDn, DPnL, RelDPnL ComboParity // behind MaxAbsDn, MaxRelDn, MaxAbsDPnLpp, MaxRelDPnL
	DnLimit                  ComboParity // the breaching combo with the largest |dn| (Index -1 when none)
	Breached                 int         // combos with DnLimitBreached
}

// NewParityWorst is the ParityWorst of no combo.
func NewParityWorst() ParityWorst {
	none := ComboParity{Index: -1}
	return ParityWorst{Dn: none, RelDn: none, DPnL: none, RelDPnL: none, DnLimit: none}
}

// Add takes combo c into the maxima, by the rules of Parity's (NaN is
// larger than everything; a tie keeps the combo added first).
func (w *ParityWorst) Add(c *ComboParity) {
	if w.Dn.Index < 0 || abs(c.Dn) > abs(w.Dn.Dn) {
		w.Dn = *c
	}
	if w.RelDn.Index < 0 || gtNaN(c.RelDn, w.RelDn.RelDn) {
		w.RelDn = *c
	}
	if w.DPnL.Index < 0 || gtNaN(math.Abs(c.DPnLpp), math.Abs(w.DPnL.DPnLpp)) {
		w.DPnL = *c
	}
	if w.RelDPnL.Index < 0 || gtNaN(c.RelDPnL, w.RelDPnL.RelDPnL) {
		w.RelDPnL = *c
	}
	if c.DnLimitBreached {
		w.Breached++
		if w.DnLimit.Index < 0 || abs(c.Dn) > abs(w.DnLimit.Dn) {
			w.DnLimit = *c
		}
	}
}

// Label names combo c as the reports do: "hma 355, hma3 312".
func (c Combo) Label() string { return fmt.Sprintf("hma %d, hma3 %d", c.HMA, c.HMA3) }

// Label names the combo: its Name when set (a strategy combo, Grid.Label),
// else its hma and hma3.
func (c *ComboParity) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Combo.Label()
}

// Label names the flip's combo, as ComboParity.Label.
func (f *Flip) Label() string {
	if f.Name != "" {
		return f.Name
	}
	return f.Combo.Label()
}

// Flip is one bar where the fp32 and fp64 positions differ.
type Flip struct {
	Index int // combo index
	Combo
	Bar        int   // bar i whose position pos[i] is held over bar i+1
	Time       int64 // bar i's open time, Unix nanoseconds
	Pos64      int8
	Pos32      int8
	Margin     float64 // |h3-h|/close at bar i in fp64 (fraction)
	Borderline bool    // Margin < tolerance
	Name       string  `json:"name,omitempty"` // a strategy combo's label, as ComboParity.Name
	// A strategy family with memory lists one Flip per divergence (SPEC
	// Part 2): Bars is its length (1 for hull and cross), Trades and
	// DPnLpp what it moved (StrategyFlip). 0 for hull.
	Bars   int     `json:"bars,omitempty"`
	Trades int     `json:"trades,omitempty"`
	DPnLpp float64 `json:"dpnl_pp,omitempty"`
}

// SeriesError is the max relative error of one fp32 indicator series.
type SeriesError struct {
	Series string  // "h" (HMA) or "h3" (HMA3)
	Length int     // the HMA or HMA3 length
	MaxRel float64 // max over defined bars of |x32-x64|/|x64|
	Bar    int     // where it occurs
}

// Parity is the report of SPEC "Parity": fp32 (or any second run) against
// the fp64 reference, per combo and over the sweep.
type Parity struct {
	Verdict Verdict  // VerdictPass or VerdictCollapse
	Reasons []string // the conditions that fired (empty on pass)
	// Explanation, when set, reads a collapse for the user: e.g. that every
	// flip is borderline and only SPEC's per-combo trade limit fired.
	Explanation          string
	Tolerance            float64 // borderline margin tolerance
	Incomplete           bool    // one run did not complete: only common combos compared
	CombosCompared       int
	TotalTrades64        int
	TotalTrades32        int
	ShiftedTrades        int     // sum |dn|
	ShiftedShare         float64 // ShiftedTrades / TotalTrades64 (fraction)
	MaxAbsDn             int
	MaxRelDn             float64
	MaxAbsDPnLpp         float64
	MaxRelDPnL           float64
	CombosDiffering      int // combos with dn != 0 or dPnL != 0 (shown, not a health figure)
	FlipCount            int
	NonBorderlineFlips   int
	MaxRelIndicatorError float64
	IndicatorErrors      []SeriesError // one per series, worst first
	// worst names the combo behind each maximum above (Worst; Explain
	// sets it again from Combos when they are held). Unexported, so that a
	// shard file's format does not carry it: it is derived.
	worst  ParityWorst
	Combos []ComboParity // grid order
	Flips  []Flip        // worst MaxFlipsListed: non-borderline first, then by margin, descending
	// Sensitive counts, for a family with memory (SPEC Part 2 "Parity for
	// families with memory"), the combos whose trade count or return moved
	// past Part 1's limits only through borderline divergences: they do not
	// make the verdict a collapse. SensitiveWorst is the one with the
	// largest |dPnL| among them (nil when none). Omitted from JSON when
	// none, so a hull report's layout (shard files) is unchanged.
	Sensitive      int          `json:",omitempty"`
	SensitiveWorst *ComboParity `json:",omitempty"`
	// memory: the grid's family has memory (Strategy.Memory), so the
	// per-combo limits are judged only on combos with a non-borderline
	// divergence.
	memory bool
	// Device names where the flips and indicator errors were found when
	// not on the CPU ("NVIDIA H200 (GPU 0)": CompareOnDevice); "" for the
	// CPU and for a report read back from the sessions store.
	Device string
}

// ParityInput names what Compare compares: two runs of one job's grid and
// the indicator series both precisions used.
type ParityInput[A, B Float] struct {
	Bars      *Bars
	Grid      Grid
	Params    Params
	Ref       *Run // the fp64 reference
	Test      *Run // the run under test (usually fp32)
	RefInd    *Indicators[A]
	TestInd   *Indicators[B]
	Tolerance float64 // 0 = DefaultBorderline
	// Progress, when set, is told how many combos have been compared so
	// far, every parityProgressEvery combos, from the comparing
	// goroutines (it must not block).
	Progress func(done int)
	// RefLabel and TestLabel name the two sides in the collapse reasons
	// ("return -23.10% A, -92.63% B"): "" = "fp64" and "fp32", a study's
	// own parity; a sessions diff passes "A" and "B".
	RefLabel, TestLabel string
	// NoRows leaves the report's per-combo rows out (Combos nil): they
	// are built a block at a time and folded into its figures, so that
	// its memory does not grow with the grid (StudyOptions.NoParityRows).
	NoRows bool
}

// parityProgressEvery is how often Compare reports its progress, combos.
const parityProgressEvery = 4096

// CompareRuns builds the parity report of test (fp32) against ref (fp64)
// for job, taking the indicator series from the registered Arithmetic
// through job.Cache (computed there once; ErrNoArithmetic without one). The
// fp32 series are the CPU float32 path's, which SPEC makes bit-identical on
// every backend; trade counts and PnL come from the runs.
func CompareRuns(ctx context.Context, job *Job, ref, test *Run, tol float64, progress func(done int)) (*Parity, error) {
	return compareRuns(ctx, job, ref, test, tol, progress, true)
}

// compareRuns is CompareRuns, the per-combo rows kept in the report or,
// rows false, left out (ParityInput.NoRows).
func compareRuns(ctx context.Context, job *Job, ref, test *Run, tol float64, progress func(done int), rows bool) (*Parity, error) {
	if job.Grid.Strategy != nil {
		return compareStrategy(ctx, job, ref, test, tol, progress, "", "", rows)
	}
	j64 := *job
	j64.Precision, j64.WMA = FP64, Direct
	ind64, err := IndicatorsOf[float64](ctx, &j64)
	if err != nil {
		return nil, err
	}
	jt := *job
	jt.Precision, jt.WMA = test.Precision, test.WMA
	if test.Precision == FP32 {
		ind32, err := IndicatorsOf[float32](ctx, &jt)
		if err != nil {
			return nil, err
		}
		return Compare(ctx, ParityInput[float64, float32]{job.Bars, job.Grid, job.Params, ref, test, ind64, ind32, tol, progress, "", "", !rows})
	}
	indT, err := IndicatorsOf[float64](ctx, &jt)
	if err != nil {
		return nil, err
	}
	return Compare(ctx, ParityInput[float64, float64]{job.Bars, job.Grid, job.Params, ref, test, ind64, indT, tol, progress, "", "", !rows})
}

// Compare builds the parity report (SPEC "Parity"). Combos present in both
// runs are compared; when either run is incomplete the report says so.
func Compare[A, B Float](ctx context.Context, in ParityInput[A, B]) (*Parity, error) {
	cpu, err := CPU() // the positions compared are the reference's state machine
	if err != nil {
		return nil, err
	}
	p := startParity(in.Ref, in.Test, in.Tolerance)
	tol := p.Tolerance

	// Indicator errors, per series, on every core: the HMA series in grid
	// order, then the HMA3 series (a ParityDevice lists them the same way).
	type series struct {
		name string
		L    int
		ref  []A
		test []B
	}
	var ss []series
	for _, L := range in.Grid.HMA.Values() {
		if in.RefInd.H[L] != nil && in.TestInd.H[L] != nil {
			ss = append(ss, series{"h", L, in.RefInd.H[L], in.TestInd.H[L]})
		}
	}
	for _, L := range in.Grid.HMA3.Values() {
		if in.RefInd.H3[L] != nil && in.TestInd.H3[L] != nil {
			ss = append(ss, series{"h3", L, in.RefInd.H3[L], in.TestInd.H3[L]})
		}
	}
	errs := make([]SeriesError, len(ss))
	if err := Parallel(ctx, len(ss), min(runtime.GOMAXPROCS(0), max(len(ss), 1)), func(_, i int) {
		errs[i] = seriesError(ss[i].name, ss[i].L, ss[i].ref, ss[i].test)
	}); err != nil {
		return nil, err
	}
	p.setIndicatorErrors(errs)

	// Flips: the bars where the held positions differ, combo by combo on
	// every core (grid order, HMA-major: consecutive combos share h), a
	// block of rows at a time (Parity.build).
	workers := max(1, runtime.GOMAXPROCS(0))
	heaps := make([]flipHeap, workers)
	pos := make([][2][]int8, workers) // each worker's fp64 and fp32 positions
	close := in.Bars.Close
	held := len(close) - 1 // pos[n-1] is never held
	var compared atomic.Int64
	flips := func(rows []ComboParity) error {
		return Parallel(ctx, len(rows), workers, func(w, k int) {
			if in.Progress != nil {
				if n := compared.Add(1); n%parityProgressEvery == 0 {
					in.Progress(int(n))
				}
			}
			if k > 0 && hma3Twins(in, &rows[k-1], &rows[k]) {
				return // its twin, combo k-1, gives it its flips
			}
			cp := &rows[k]
			c := cp.Combo
			h64, h364 := in.RefInd.H[c.HMA], in.RefInd.H3[c.HMA3]
			h32, h332 := in.TestInd.H[c.HMA], in.TestInd.H3[c.HMA3]
			if h64 == nil || h364 == nil || h32 == nil || h332 == nil {
				return
			}
			// An HMA3 twin (the next combo: same h, same h3 slices, same
			// warm-up) has the same positions, so the same flips, re-labelled.
			var twin *ComboParity
			if k+1 < len(rows) && hma3Twins(in, cp, &rows[k+1]) {
				twin = &rows[k+1]
			}
			warm := ComboWarmup(c)
			onFlip := func(b int, p64, p32 int8) {
				m := math.Abs(float64(h364[b])-float64(h64[b])) / close[b]
				f := Flip{Index: cp.Index, Combo: c, Bar: b, Time: in.Bars.Time[b],
					Pos64: p64, Pos32: p32, Margin: m, Borderline: m < tol}
				cp.Flips++
				if !f.Borderline {
					cp.NonBorderline++
				}
				cp.MaxFlipMargin = math.Max(cp.MaxFlipMargin, m)
				heaps[w].offer(f)
				if twin != nil {
					f.Index, f.Combo = twin.Index, twin.Combo
					heaps[w].offer(f)
				}
			}
			// fp64 against fp32 (parity's case) in one pass; any other pair
			// of precisions through the two position arrays.
			r64, ok64 := any(h64).([]float64)
			r32, ok32 := any(h32).([]float32)
			if ok64 && ok32 {
				cpu.PositionFlips(r64, any(h364).([]float64), r32, any(h332).([]float32), warm, held, in.Params.Mode, onFlip)
			} else {
				if pos[w][0] == nil {
					pos[w] = [2][]int8{make([]int8, len(close)), make([]int8, len(close))}
				}
				pos64, pos32 := pos[w][0], pos[w][1]
				positions(cpu, h64, h364, warm, in.Params.Mode, 0, pos64)
				positions(cpu, h32, h332, warm, in.Params.Mode, 0, pos32)
				for b := warm; b < held; b++ {
					if pos64[b] != pos32[b] {
						onFlip(b, pos64[b], pos32[b])
					}
				}
			}
			if twin != nil {
				twin.Flips, twin.NonBorderline, twin.MaxFlipMargin = cp.Flips, cp.NonBorderline, cp.MaxFlipMargin
			}
		})
	}
	t, err := p.build(ctx, in.Ref, in.Test, in.Grid.HMA3.Len(), !in.NoRows, flips)
	if err != nil {
		return nil, err
	}
	var all []Flip
	for _, h := range heaps {
		all = append(all, h...)
	}
	p.finishTally(&t, all, in.RefLabel, in.TestLabel)
	return p, nil
}

// compareStrategy is CompareRuns for a strategy grid (SPEC Part 2 "Parity
// for families with memory"): each combo's divergences from its family's
// arithmetic (Strategy.Compare), one Flip per divergence at its root bar
// with the root's fp64 margin, the combo's Flips the bars that differ and
// NonBorderline its non-borderline divergences; then the indicator
// errors of every series the combos read.
// refLabel and testLabel name the sides in the reasons ("": fp64, fp32);
// rows false leaves the per-combo rows out (ParityInput.NoRows).
func compareStrategy(ctx context.Context, job *Job, ref, test *Run, tol float64, progress func(done int), refLabel, testLabel string, rows bool) (*Parity, error) {
	p := startParity(ref, test, tol)
	tol = p.Tolerance
	st := job.Grid.Strategy
	p.memory = st.Memory()
	workers := max(1, runtime.GOMAXPROCS(0))
	heaps := make([]flipHeap, workers)
	errs := make([]error, workers)
	var compared atomic.Int64
	divergences := func(combos []ComboParity) error {
		err := Parallel(ctx, len(combos), workers, func(w, k int) {
			if progress != nil {
				if n := compared.Add(1); n%parityProgressEvery == 0 {
					progress(int(n))
				}
			}
			if errs[w] != nil {
				return
			}
			cp := &combos[k]
			cp.Name = job.Grid.Label(cp.Index)
			fs, err := st.Compare(ctx, job, test.Precision, test.WMA, cp.Index, tol)
			if err != nil {
				errs[w] = err
				return
			}
			cp.Flips, cp.NonBorderline, cp.MaxFlipMargin = offerStrategyFlips(&heaps[w], job, cp, fs)
		})
		if err == nil {
			err = errors.Join(errs...)
		}
		return err
	}
	t, err := p.build(ctx, ref, test, 1, rows, divergences)
	if err != nil {
		return nil, err
	}
	return p, finishStrategy(ctx, p, &t, job, test, heaps, refLabel, testLabel)
}

// offerStrategyFlips offers combo cp's divergences fs to h and returns
// what its report row counts of them: the bars apart, the divergences not
// borderline, the largest margin (NaN skipped).
func offerStrategyFlips(h *flipHeap, job *Job, cp *ComboParity, fs []StrategyFlip) (bars, nonBorderline int, maxMargin float64) {
	for _, d := range fs {
		bars += d.Bars
		if !d.Borderline {
			nonBorderline++
		}
		if !math.IsNaN(d.Margin) {
			maxMargin = math.Max(maxMargin, d.Margin)
		}
		h.offer(Flip{Index: cp.Index, Name: cp.Name, Bar: d.Root, Time: job.Bars.Time[d.Root],
			Pos64: d.Pos64, Pos32: d.Pos32, Margin: d.Margin, Borderline: d.Borderline, Bars: d.Bars, Trades: d.Trades, DPnLpp: d.DPnLpp})
	}
	return bars, nonBorderline, maxMargin
}

// finishStrategy completes a strategy grid's report p from the fold of its
// rows (t) and the workers' heaps of worst divergences: the series'
// errors, the verdict, the listed flips.
func finishStrategy(ctx context.Context, p *Parity, t *parityTally, job *Job, test *Run, heaps []flipHeap, refLabel, testLabel string) error {
	se, err := job.Grid.Strategy.SeriesErrors(ctx, job, test.Precision, test.WMA)
	if err != nil {
		return err
	}
	p.setIndicatorErrors(se)
	var all []Flip
	for _, h := range heaps {
		all = append(all, h...)
	}
	p.finishTally(t, all, refLabel, testLabel)
	return nil
}

// newParity starts the report of test against ref (startParity) with
// one ComboParity per combo present in both runs (grid order) with its
// trade counts and PnL; flips are left to the caller.
func newParity(ref, test *Run, tol float64) *Parity {
	p := startParity(ref, test, tol)
	_, _ = p.build(context.Background(), ref, test, 1, true, nil) // no fill, no error
	return p
}

// startParity starts the report of test against ref, no row yet: the
// tolerance (0 means DefaultBorderline) and whether either run is
// incomplete.
func startParity(ref, test *Run, tol float64) *Parity {
	if tol <= 0 {
		tol = DefaultBorderline
	}
	return &Parity{Tolerance: tol, Incomplete: !ref.Complete() || !test.Complete()}
}

// ComboParityOf is comboParity, for package shard, which joins the rows
// of a shard's parity report from its two lanes.
func ComboParityOf(a, b *ComboResult) ComboParity { return comboParity(a, b) }

// comboParity is one combo's row of the report from its fp64 result a and
// its result b under test: trade counts and PnL (flips are the caller's).
func comboParity(a, b *ComboResult) ComboParity {
	cp := ComboParity{Index: a.Index, Combo: a.Combo, Trades64: a.TotalTrades, Trades32: b.TotalTrades}
	cp.Dn = cp.Trades32 - cp.Trades64
	cp.RelDn = relInt(cp.Dn, cp.Trades64)
	d := b.TotalReturn - a.TotalReturn
	cp.DPnLpp = 100 * d
	cp.RelDPnL = relFloat(d, a.TotalReturn)
	cp.DnLimitBreached = float64(abs(cp.Dn)) > math.Max(0.01*float64(cp.Trades64), 2)
	cp.ret64, cp.ret32 = a.TotalReturn, b.TotalReturn
	return cp
}

// setIndicatorErrors sets the per-series errors, worst first (a stable
// sort: ties keep the order given, HMA series in grid order then HMA3),
// and their maximum.
func (p *Parity) setIndicatorErrors(errs []SeriesError) {
	p.IndicatorErrors = nil
	if len(errs) > 0 {
		p.IndicatorErrors = errs
	}
	sort.SliceStable(p.IndicatorErrors, func(i, j int) bool {
		return gtNaN(p.IndicatorErrors[i].MaxRel, p.IndicatorErrors[j].MaxRel)
	})
	p.MaxRelIndicatorError = 0
	if len(p.IndicatorErrors) > 0 {
		p.MaxRelIndicatorError = p.IndicatorErrors[0].MaxRel
	}
}

// finish completes a report whose Combos hold their flip counts: the
// totals over the sweep, the worst MaxFlipsListed of flips (which must
// hold at least those: any order, any number), the verdict and its
// explanation.
func (p *Parity) finish(flips []Flip) { p.finishSides(flips, "", "") }

// finishSides is finish with the two sides named ref and test in the
// collapse reasons ("" = "fp64" and "fp32": a study's own parity; a
// sessions diff names them "A" and "B").
func (p *Parity) finishSides(flips []Flip, ref, test string) {
	t := newParityTally(p.memory)
	for k := range p.Combos {
		t.add(&p.Combos[k])
	}
	p.finishTally(&t, flips, ref, test)
}

// finishTally is finishSides from the fold of the report's rows (t, in
// grid order), whether or not the report holds them (Parity.build).
func (p *Parity) finishTally(t *parityTally, flips []Flip, ref, test string) {
	if ref == "" {
		ref = "fp64"
	}
	if test == "" {
		test = "fp32"
	}
	p.TotalTrades64 += t.trades64
	p.TotalTrades32 += t.trades32
	p.ShiftedTrades += t.shifted
	p.CombosDiffering += t.differing
	p.FlipCount += t.flips
	p.NonBorderlineFlips += t.nonBorderline
	p.worst = t.worst
	w := &p.worst
	judged := w
	p.Sensitive, p.SensitiveWorst = 0, nil
	if p.memory {
		p.Sensitive, p.SensitiveWorst = t.sensitive, t.sensitiveWorst
		judged = &t.judged
	}
	p.MaxAbsDn, p.MaxRelDn = abs(w.Dn.Dn), w.RelDn.RelDn
	p.MaxAbsDPnLpp, p.MaxRelDPnL = math.Abs(w.DPnL.DPnLpp), w.RelDPnL.RelDPnL
	if p.TotalTrades64 > 0 {
		p.ShiftedShare = float64(p.ShiftedTrades) / float64(p.TotalTrades64)
	}
	sort.Slice(flips, func(i, j int) bool { return worse(flips[i], flips[j]) })
	p.Flips = nil
	if k := min(len(flips), MaxFlipsListed); k > 0 {
		p.Flips = flips[:k:k]
	}

	// Verdict (SPEC "Parity"): every condition that fires is named, with
	// the combo (or series) behind it.
	tol := p.Tolerance
	if !(math.Abs(judged.DPnL.DPnLpp) <= MaxDPnLpp) {
		c := &judged.DPnL
		trades := text.Thousands(c.Trades64) + " trades in both"
		if c.Trades32 != c.Trades64 {
			trades = fmt.Sprintf("trades %s %s, %s %s", text.Thousands(c.Trades64), ref, text.Thousands(c.Trades32), test)
		}
		p.Reasons = append(p.Reasons, fmt.Sprintf("max |dPnL| %s pp > %g pp on (%s): return %.2f%% %s, %.2f%% %s; %s",
			text.TrimFloat(p.MaxAbsDPnLpp, 4), MaxDPnLpp, c.Label(), 100*c.ret64, ref, 100*c.ret32, test, trades))
	}
	if judged.Breached > 0 {
		c := &judged.DnLimit
		p.Reasons = append(p.Reasons, fmt.Sprintf("%s with |dn| > max(1%% of %s trades, 2); worst (%s): dn %+d of %s",
			text.Plural(judged.Breached, "combo"), ref, c.Label(), c.Dn, text.Thousands(c.Trades64)))
	}
	if !(p.MaxRelIndicatorError <= MaxIndicatorRel) {
		r := fmt.Sprintf("max relative indicator error %.3g > %g", p.MaxRelIndicatorError, MaxIndicatorRel)
		if math.IsInf(p.MaxRelIndicatorError, 1) {
			r = fmt.Sprintf("max relative indicator error inf > %g", MaxIndicatorRel)
		}
		if len(p.IndicatorErrors) > 0 {
			e := p.IndicatorErrors[0]
			undefined := ""
			if math.IsInf(e.MaxRel, 1) {
				undefined = ", undefined in " + test + " where " + ref + " is defined"
			}
			switch e.Series {
			case "h", "h3":
				r += fmt.Sprintf(" (series %s %d at bar %d%s: the combos with %s %d)", e.Series, e.Length, e.Bar, undefined, seriesParam(e.Series), e.Length)
			default: // a strategy's series: named by its kind or indicator and length
				r += fmt.Sprintf(" (series %s %d at bar %d%s: the combos reading it)", e.Series, e.Length, e.Bar, undefined)
			}
		}
		p.Reasons = append(p.Reasons, r)
	}
	if p.NonBorderlineFlips > 0 {
		r := fmt.Sprintf("%s non-borderline flips (margin >= %g)", text.Thousands(p.NonBorderlineFlips), tol)
		if len(p.Flips) > 0 && !p.Flips[0].Borderline { // the worst is listed first
			f := p.Flips[0]
			r += fmt.Sprintf("; worst (%s) at bar %d, margin %.3g", f.Label(), f.Bar, f.Margin)
		}
		p.Reasons = append(p.Reasons, r)
	}
	p.Verdict = VerdictPass
	if len(p.Reasons) > 0 {
		p.Verdict = VerdictCollapse
	}
	p.explain()
}

// Worst names the combos behind the report's maxima (ParityWorst): set by
// Compare and Explain; a reader that holds no Combos (the sessions store's
// summary) fills it row by row (ParityWorst.Add) and then calls Explain.
func (p *Parity) Worst() *ParityWorst { return &p.worst }

// seriesParam is the grid parameter of an indicator series: "hma" for
// "h", "hma3" for "h3".
func seriesParam(series string) string {
	switch series {
	case "h3":
		return "hma3"
	case "h":
		return "hma"
	}
	return series // a strategy's series is named by its kind or indicator
}

// MaxFigures are the sweep's maxima, each with the combo it comes from:
// "max |dn| 18 (hma 355, hma3 312); max relative |dn| 0.41% (hma 60,
// hma3 24)" and "max |dPnL| 5.4088 pp (hma 355, hma3 312); max relative
// 8.47e-02 (hma 355, hma3 312)". A maximum of 0 names no combo.
func (p *Parity) MaxFigures() (dn, dpnl string) {
	at := func(v float64, c *ComboParity) string {
		if v == 0 || c.Index < 0 {
			return ""
		}
		return " (" + c.Label() + ")"
	}
	w := &p.worst
	dn = fmt.Sprintf("max |dn| %s%s; max relative |dn| %s%%%s", text.Thousands(p.MaxAbsDn), at(float64(p.MaxAbsDn), &w.Dn),
		text.TrimFloat(100*p.MaxRelDn, 3), at(p.MaxRelDn, &w.RelDn))
	dpnl = fmt.Sprintf("max |dPnL| %s pp%s; max relative %s%s", text.TrimFloat(p.MaxAbsDPnLpp, 4), at(p.MaxAbsDPnLpp, &w.DPnL),
		text.Sci(p.MaxRelDPnL), at(p.MaxRelDPnL, &w.RelDPnL))
	return dn, dpnl
}

// SetReturns fills the per-combo total returns (Returns) from
// the two runs compared, ref (fp64) and test, for a report read back
// without them (the sessions store keeps dPnL only), then explains it
// again (Explain). A combo missing from either run keeps 0.
func (p *Parity) SetReturns(ref, test *Run) {
	for k := range p.Combos {
		c := &p.Combos[k]
		if a, b := ref.Lookup(c.Index), test.Lookup(c.Index); a != nil && b != nil {
			c.ret64, c.ret32 = a.TotalReturn, b.TotalReturn
		}
	}
	p.Explain()
}

// Explain sets p.worst from p.Combos when it holds them, then
// p.Explanation from the report's own fields. Compare calls it; a report
// read back from the sessions store is explained again the same way (its
// Worst rebuilt from the saved rows when it holds no Combos), so show
// prints what run printed.
func (p *Parity) Explain() {
	if p.Combos != nil {
		p.worst = NewParityWorst()
		for k := range p.Combos {
			p.worst.Add(&p.Combos[k])
		}
	}
	p.explain()
}

// explain reads a collapse that one condition alone fired, from p.worst
// and the sweep's figures: only the per-combo trade limit (every flip
// borderline, the indicators within their limit); or only max |dPnL|, on
// a combo whose trades moved within the limit and none of whose flips is
// non-borderline, which says whether its positions differ on some bars or
// on none (the gap is then fp32's arithmetic alone).
func (p *Parity) explain() {
	p.Explanation = ""
	if p.Sensitive > 0 {
		c := p.SensitiveWorst
		p.Explanation = fmt.Sprintf("%s sensitive (SPEC Part 2): %s moved past the per-combo limits only through borderline divergences "+
			"(one decision rounding took the other way, whose position then held for a whole trade), which is not a defect of the method; "+
			"the largest move is on (%s): dn %+d of %s trades, dPnL %s pp, over %s of its bars",
			combosAre(p.Sensitive), pluralIt(p.Sensitive), c.Label(), c.Dn, text.Thousands(c.Trades64),
			text.TrimFloat(c.DPnLpp, 4), text.Thousands(c.Flips))
		return
	}
	if len(p.Reasons) != 1 {
		return
	}
	w := &p.worst
	switch {
	case w.Breached > 0:
		p.Explanation = fmt.Sprintf("only the per-combo trade limit fired: every flip is borderline (margin < %g) and the indicators agree "+
			"to %.2g, but on combos with few trades a few borderline flips move more than max(1%% of the trades, 2); SPEC counts "+
			"that as a collapse, so look at those combos' flips before trusting their fp32 numbers", p.Tolerance, p.MaxRelIndicatorError)
	case !(p.MaxAbsDPnLpp <= MaxDPnLpp) && w.DPnL.Index >= 0:
		c := &w.DPnL
		var trades string
		if c.Dn == 0 {
			trades = fmt.Sprintf("both precisions made its %s trades", text.Thousands(c.Trades64))
		} else {
			trades = fmt.Sprintf("its trades moved by %+d of %s, within the per-combo limit", c.Dn, text.Thousands(c.Trades64))
		}
		head := fmt.Sprintf("only max |dPnL| fired, on (%s) (%s pp): %s, the indicators agree to %.2g and there is no non-borderline flip in the sweep",
			c.Label(), text.TrimFloat(math.Abs(c.DPnLpp), 4), trades, p.MaxRelIndicatorError)
		if c.Flips == 0 {
			p.Explanation = head + "; there is no flip on it either (the same position on every bar), so the gap is fp32's " +
				"rounding of its bar returns, compounded through its equity over the whole history: a small relative error of the final " +
				"equity is many pp on a long history. SPEC counts it as a collapse: read that combo's return from fp64"
		} else {
			p.Explanation = head + fmt.Sprintf("; but fp32 held another position than fp64 on %s of its bars (every flip is borderline, "+
				"margin < %g: crossovers that rounding decided the other way), so its trades were held over other bars and its "+
				"return moved by those bars' moves, compounded over the rest of the history. SPEC counts it as a collapse: "+
				"look at that combo's flips before trusting its fp32 return", text.Thousands(c.Flips), p.Tolerance)
		}
	}
}

// combosAre is "1 combo is" or "N combos are".
func combosAre(n int) string {
	if n == 1 {
		return "1 combo is"
	}
	return text.Plural(n, "combo") + " are"
}

// pluralIt is "its trades or return" for one combo, "their ..." for more.
func pluralIt(n int) string {
	if n == 1 {
		return "its trade count or return"
	}
	return "their trade counts or returns"
}

// hma3Twins reports whether combos a and b (a compared just before b) are
// HMA3 twins whose flips are one computation: consecutive in the grid, one
// HMA length, HMA3 lengths of one p = floor(L/2) (so one warm-up), and in
// both precisions one h3 series under both lengths (the same slice, as
// the Arithmetic shares it).
func hma3Twins[A, B Float](in ParityInput[A, B], a, b *ComboParity) bool {
	return b.Index == a.Index+1 && b.HMA == a.HMA && HMA3Twin(a.HMA3) == b.HMA3 &&
		sameSlice(in.RefInd.H3[a.HMA3], in.RefInd.H3[b.HMA3]) && sameSlice(in.TestInd.H3[a.HMA3], in.TestInd.H3[b.HMA3])
}

// sameSlice reports whether a and b are one non-empty series.
func sameSlice[F Float](a, b []F) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// positions writes the held positions of series h and h3 into pos through
// the CPU arithmetic's SPEC state machine (Arithmetic.Positions64/32),
// from state prev, and returns the state after the last bar.
func positions[F Float](a Arithmetic, h, h3 []F, first int, mode Mode, prev int8, pos []int8) int8 {
	switch hh := any(h).(type) {
	case []float64:
		return a.Positions64(hh, any(h3).([]float64), first, mode, prev, pos)
	case []float32:
		return a.Positions32(hh, any(h3).([]float32), first, mode, prev, pos)
	}
	return prev
}

func seriesError[A, B Float](name string, L int, ref []A, test []B) SeriesError {
	e := SeriesError{Series: name, Length: L, Bar: -1}
	for i := range ref {
		r := float64(ref[i])
		if math.IsNaN(r) {
			continue
		}
		var rel float64
		t := float64(test[i])
		switch {
		case math.IsNaN(t) || math.IsInf(t, 0):
			rel = math.Inf(1)
		case r == 0:
			if t != 0 {
				rel = math.Inf(1)
			}
		default:
			rel = math.Abs(t-r) / math.Abs(r)
		}
		if e.Bar < 0 || rel > e.MaxRel {
			e.MaxRel, e.Bar = rel, i
		}
	}
	return e
}

func relInt(d, base int) float64 {
	switch {
	case d == 0:
		return 0
	case base == 0:
		return math.Inf(1)
	}
	return math.Abs(float64(d)) / float64(base)
}

func relFloat(d, base float64) float64 {
	switch {
	case d == 0:
		return 0
	case base == 0:
		return math.Inf(1)
	}
	return math.Abs(d) / math.Abs(base)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// gtNaN is a > b where NaN counts as larger than everything.
func gtNaN(a, b float64) bool {
	if math.IsNaN(a) {
		return !math.IsNaN(b)
	}
	return a > b
}

// worse orders flips worst first: non-borderline before borderline, then
// larger margin, then grid order and bar for a stable report.
func worse(a, b Flip) bool {
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
}

// flipHeap keeps the MaxFlipsListed worst flips: a min-heap on worse, so
// the root is the mildest kept and is evicted first.
type flipHeap []Flip

func (h flipHeap) Len() int           { return len(h) }
func (h flipHeap) Less(i, j int) bool { return worse(h[j], h[i]) }
func (h flipHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *flipHeap) Push(x any)        { *h = append(*h, x.(Flip)) }
func (h *flipHeap) Pop() any {
	old := *h
	f := old[len(old)-1]
	*h = old[:len(old)-1]
	return f
}

func (h *flipHeap) offer(f Flip) {
	if len(*h) < MaxFlipsListed {
		heap.Push(h, f)
		return
	}
	if worse(f, (*h)[0]) {
		(*h)[0] = f
		heap.Fix(h, 0)
	}
}

// MergeParity joins parity reports of disjoint parts of the same
// comparison (a study's shards, or the datasets of a suite for an overall
// figure) into one: the per-combo rows, the totals, the worst flips, each
// indicator series' error once, and the verdict recomputed over them as
// Compare does. The parts' combo indices must be the whole grid's. nil
// when parts is empty.
func MergeParity(parts []*Parity) *Parity {
	var ps []*Parity
	incomplete := false
	for _, p := range parts {
		if p != nil {
			ps = append(ps, p)
			incomplete = incomplete || p.Incomplete
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return mergeParity(ps, incomplete)
}

// OverallParity is a suite's parity over every dataset: the per-combo rows
// of every dataset (one per combo and dataset), the totals, the worst flips
// and the largest indicator errors of them all, and the verdict recomputed
// over them (a collapse on any dataset is a collapse overall). Reports
// that are nil (a dataset with one precision) are left out; nil when none
// is left.
func OverallParity(perDataset []*Parity) *Parity {
	var out *Parity
	var flips []Flip
	var errs []SeriesError
	for _, p := range perDataset {
		if p == nil {
			continue
		}
		if out == nil {
			out = &Parity{Tolerance: p.Tolerance}
		}
		out.Incomplete = out.Incomplete || p.Incomplete
		out.memory = out.memory || p.memory // a strategy family with memory, judged as each dataset was
		out.Combos = append(out.Combos, p.Combos...)
		flips = append(flips, p.Flips...)
		errs = append(errs, p.IndicatorErrors...)
	}
	if out == nil {
		return nil
	}
	out.CombosCompared = len(out.Combos)
	out.setIndicatorErrors(errs)
	out.finish(flips)
	return out
}
