package engine

import (
	"sort"
	"sync"
	"time"
)

// DefaultKeep is how many best combos by Sharpe a run keeps when its
// results are not kept (StudyOptions.Discard and Keep 0).
const DefaultKeep = 100

// outcomes are what the parity report needs of every combo of a run whose
// results were not kept: trade count and total return, by grid index (12
// bytes a combo), and which indices were evaluated.
type outcomes struct {
	trades []int32
	ret    []float64
	has    indexSet
	// dd, when kept (the lane that emits per-block statistics: the
	// robustness constraints need it), is each combo's max drawdown.
	dd []float64
}

func newOutcomes(n int) *outcomes {
	return &outcomes{trades: make([]int32, n), ret: make([]float64, n), has: make(indexSet, (n+63)/64)}
}

func (o *outcomes) set(r *ComboResult) {
	i := r.Index
	o.trades[i], o.ret[i] = int32(r.TotalTrades), r.TotalReturn
	o.has[i/64] |= 1 << (i % 64)
	if o.dd != nil {
		o.dd[i] = r.MaxDrawdown
	}
}

// keeper receives a run's chunks (from the study's sink, on any lane's
// goroutine) and keeps a bounded selection: the best k selectable by the
// study's objective (Top, as TopBy ranks: by default Sharpe, NaN last,
// ties by grid order), the results of the indices in also (the fp64 run's
// best, for the fp32 side of the table), the outcomes when parity needs
// them, the count, and, when the study asks for summaries
// (StudyOptions.Summary), the run's Summary.
type keeper struct {
	mu       sync.Mutex
	best     *Top // the best k by the study's objective
	also     map[int]bool
	alsoKept []ComboResult
	out      *outcomes
	count    int
	hist     [fewTrades + 1]int
	sum      *summariser   // nil: no summary asked for
	spent    time.Duration // in add: not saving, though Sweep counts it so
}

func (k *keeper) add(rs []ComboResult) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t0 := time.Now()
	defer func() { k.spent += time.Since(t0) }()
	k.count += len(rs)
	for i := range rs {
		r := &rs[i]
		k.hist[min(max(r.TotalTrades, 0), fewTrades)]++
		if k.out != nil {
			k.out.set(r)
		}
		if k.also[r.Index] {
			k.alsoKept = append(k.alsoKept, *r)
		}
		k.best.Offer(r)
		if k.sum != nil {
			k.sum.add(r)
		}
	}
}

// summary is the run's Summary (nil when none was asked for).
func (k *keeper) summary() *Summary {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.sum == nil {
		return nil
	}
	return k.sum.summary(k.best)
}

// keep makes run a kept run: Results the kept selection in grid order
// (each index once), Computed the count, the outcomes attached.
func (k *keeper) keep(run *Run) {
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := map[int]bool{}
	var rs []ComboResult
	for _, set := range [][]ComboResult{k.best.h, k.alsoKept} {
		for _, r := range set {
			if !seen[r.Index] {
				seen[r.Index] = true
				rs = append(rs, r)
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
	run.Results, run.Kept, run.Computed, run.outcomes = rs, true, k.count, k.out
	run.tradeHist = append([]int(nil), k.hist[:]...)
	run.Saving = max(run.Saving-k.spent, 0)
}

// MaxDrawdownOf is combo index's max drawdown in run (a fraction), and
// whether run has it: from its results, or from a kept run's outcomes
// when it kept drawdowns (the lane with per-block statistics).
func (r *Run) MaxDrawdownOf(index int) (float64, bool) {
	if o := r.outcomes; o != nil && o.dd != nil {
		if index < 0 || index >= len(o.dd) || !o.has.has(index) {
			return 0, false
		}
		return o.dd[index], true
	}
	if c := r.Lookup(index); c != nil {
		return c.MaxDrawdown, true
	}
	return 0, false
}

// each calls f with every combo of run the report has an outcome for: the
// results, or a kept run's outcomes (only TotalTrades, TotalReturn and
// Index set then), in grid order.
func (r *Run) each(f func(*ComboResult)) {
	if r.outcomes == nil {
		for i := range r.Results {
			f(&r.Results[i])
		}
		return
	}
	o := r.outcomes
	var c ComboResult
	for i := range o.trades {
		if !o.has.has(i) {
			continue
		}
		c.Index, c.TotalTrades, c.TotalReturn = i, int(o.trades[i]), o.ret[i]
		f(&c)
	}
}

// Keep shrinks a report whose runs hold every result to what its table
// needs, as a study run with StudyOptions.Discard keeps it: each run's
// best k by the report's objective (0: DefaultKeep) and, in the fp32 run,
// the fp64 run's best, with the count of every combo and the trade counts
// the note needs. The parity report and the per-block statistics stay;
// compute what needs every result (the robustness statistics, the rows
// and the JSON report, which a kept report refuses: ErrNotKept) before.
// A merge of many datasets keeps each dataset's report this way once it
// is saved, so that its memory holds one dataset's results at a time.
func (r *Report) Keep(k int) {
	if k <= 0 {
		k = DefaultKeep
	}
	var also map[int]bool
	for _, run := range r.Runs {
		if run.Kept {
			continue
		}
		kp := &keeper{best: NewTop(r.Objective, k), also: also}
		kp.add(run.Results)
		if run.Precision == FP64 {
			also = map[int]bool{}
			for _, c := range kp.best.Sorted() {
				also[c.Index] = true
			}
		}
		saving := run.Saving
		kp.keep(run)
		run.Saving, run.outcomes = saving, nil
	}
}
