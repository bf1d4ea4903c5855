package engine

import (
	"context"
	"math"
)

// The parity report's per-combo rows (Parity.Combos) are what its figures
// are folded from: totals, maxima and the combos behind them, the
// sensitive combos of a family with memory. A study that keeps them (the
// JSON report, the sessions store, the TUI) builds them all, one
// ComboParity (136 bytes) a combo; one that prints or writes only the
// figures (StudyOptions.NoParityRows: the table, a streamed rows file, no
// session) builds them parityBlock combos at a time, folds each block
// into a parityTally in grid order, and lets it go, so that the report's
// memory does not grow with the grid. The figures are the same either
// way: the tally adds the rows in the order finish adds them.

// parityBlock is how many combos of the grid (rounded up to whole HMA
// rows, so that an HMA3 twin pair is never split) a report without rows
// builds and compares at a time: 64 Ki rows of 136 bytes, 9 MB. A variable
// so that tests run reports of many blocks on small grids.
var parityBlock = 1 << 16

// parityTally is the fold of a report's rows, taken in grid order, into
// what finish needs of them (finishTally).
type parityTally struct {
	memory                                 bool // the family has memory: judged apart (Parity.memory)
	trades64, trades32, shifted, differing int
	flips, nonBorderline                   int
	worst, judged                          ParityWorst // of every row; of the rows judged (memory)
	sensitive                              int
	sensitiveWorst                         *ComboParity
}

func newParityTally(memory bool) parityTally {
	return parityTally{memory: memory, worst: NewParityWorst(), judged: NewParityWorst()}
}

// add folds row c in (rows in grid order: a maximum's tie keeps the first).
func (t *parityTally) add(c *ComboParity) {
	t.trades64 += c.Trades64
	t.trades32 += c.Trades32
	t.shifted += abs(c.Dn)
	t.worst.Add(c)
	if c.Dn != 0 || c.DPnLpp != 0 {
		t.differing++
	}
	t.flips += c.Flips
	t.nonBorderline += c.NonBorderline
	if !t.memory {
		return
	}
	if c.NonBorderline == 0 && (c.DnLimitBreached || !(math.Abs(c.DPnLpp) <= MaxDPnLpp)) {
		t.sensitive++
		if t.sensitiveWorst == nil || gtNaN(math.Abs(c.DPnLpp), math.Abs(t.sensitiveWorst.DPnLpp)) {
			cc := *c
			t.sensitiveWorst = &cc
		}
		return
	}
	t.judged.Add(c)
}

// parityPairs pairs the combos of two runs of one grid into a parity
// report's rows (comboParity: trade counts and PnL), range by range of
// grid indices in ascending order: the combos present in both, in grid
// order. A run either holds its results (Results, in grid order) or,
// kept (StudyOptions.Discard), each combo's outcome.
type parityPairs struct {
	ref, test *Run
	kept      bool // either run is kept: rows are labelled from ref.Grid
	i, j      int  // the next of ref.Results and of test.Results
	next      int  // the next grid index of a kept ref
}

func newParityPairs(ref, test *Run) *parityPairs {
	return &parityPairs{ref: ref, test: test, kept: ref.outcomes != nil || test.outcomes != nil}
}

// rows appends to dst the rows of the combos of grid indices [lo, hi)
// present in both runs (lo: where the last call ended), in grid order.
func (pp *parityPairs) rows(lo, hi int, dst []ComboParity) []ComboParity {
	ref, test := pp.ref, pp.test
	pair := func(a *ComboResult) {
		i := a.Index
		if pp.kept {
			a.Combo = ref.Grid.At(i)
		}
		if o := test.outcomes; o != nil {
			if o.has.has(i) {
				b := ComboResult{Index: i}
				b.TotalTrades, b.TotalReturn = int(o.trades[i]), o.ret[i]
				dst = append(dst, comboParity(a, &b))
			}
			return
		}
		rs := test.Results
		for pp.j < len(rs) && rs[pp.j].Index < i {
			pp.j++
		}
		if pp.j < len(rs) && rs[pp.j].Index == i {
			dst = append(dst, comboParity(a, &rs[pp.j]))
			pp.j++
		}
	}
	if o := ref.outcomes; o != nil {
		var c ComboResult
		for i := max(lo, pp.next); i < min(hi, len(o.trades)); i++ {
			if o.has.has(i) {
				c.Index, c.TotalTrades, c.TotalReturn = i, int(o.trades[i]), o.ret[i]
				pair(&c)
			}
		}
		pp.next = max(pp.next, min(hi, len(o.trades)))
		return dst
	}
	for rs := ref.Results; pp.i < len(rs) && rs[pp.i].Index < hi; pp.i++ {
		pair(&rs[pp.i])
	}
	return dst
}

// build makes p's rows of the combos both runs hold and folds them into
// its figures (finishSides does the rest). fill finds the flips of a
// block of rows (their Flips, NonBorderline, MaxFlipMargin; nil: none).
// With keep, the rows are built at once into p.Combos, one block; else
// parityBlock combos at a time (a multiple of unit, the combos of an
// HMA row: a twin pair stays in one block) and dropped once folded.
func (p *Parity) build(ctx context.Context, ref, test *Run, unit int, keep bool, fill func(rows []ComboParity) error) (parityTally, error) {
	t := newParityTally(p.memory)
	pp := newParityPairs(ref, test)
	n := ref.Grid.Len()
	step := math.MaxInt
	if !keep {
		unit = max(unit, 1)
		step = max(parityBlock/unit, 1) * unit
	}
	rows := make([]ComboParity, 0, min(ref.Count(), test.Count(), step))
	compared := 0
	for lo := 0; ; lo += step {
		hi := math.MaxInt // the last block takes whatever is left
		if step < math.MaxInt && lo+step < n {
			hi = lo + step
		}
		rows = pp.rows(lo, hi, rows[:0])
		if fill != nil && len(rows) > 0 {
			if err := fill(rows); err != nil {
				return t, err
			}
		}
		for k := range rows {
			t.add(&rows[k])
		}
		compared += len(rows)
		if hi == math.MaxInt {
			break
		}
		if err := ctx.Err(); err != nil {
			return t, err
		}
	}
	p.CombosCompared = compared
	if keep {
		p.Combos = rows
	}
	return t, nil
}
