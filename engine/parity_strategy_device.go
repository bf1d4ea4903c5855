package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"time"
)

// StrategyParityDevice is implemented by backends that count the
// divergences of SPEC Part 2 "Parity for families with memory" (a
// memoryless family's flip bars, each its own root) on their device for a grid they ran from Pairs (PairStrategy, PairRunner): from
// both precisions' series they run both machines and return, per combo,
// what the report's rows hold. The worst divergences (the report's list,
// with their trades and PnL) are then recomputed on the CPU for the few
// combos that can hold them (CompareStrategyOnDevice).
type StrategyParityDevice interface {
	// StrategyParity counts every combo of job's grid (job: the fp64
	// reference's, Direct) against the test precision and formulation,
	// tol the borderline margin (> 0). It returns ErrNoStrategyParity for
	// a grid it has no kernel for (stops, a test precision other than
	// fp32).
	StrategyParity(ctx context.Context, job *Job, test Precision, testWMA Formulation, tol float64) (*StrategyDeviceParity, error)
}

// ErrNoStrategyParity: the device has no parity kernel for the grid.
var ErrNoStrategyParity = errors.New("no device parity for this grid")

// StrategyDeviceParity is what a StrategyParityDevice found, per grid index
// (each of length Grid.Len()): the bars over which the positions differ
// (ComboParity.Flips), the divergences whose root margin is not below tol
// (NonBorderline), the largest root margin (MaxFlipMargin: 0 when none, a
// NaN skipped) and the roots whose margin is NaN.
type StrategyDeviceParity struct {
	Bars, NonBorderline, NaNRoots []int32
	MaxMargin                     []float64
	Device                        string
	Elapsed                       time.Duration
}

// CompareStrategyOnDevice is compareStrategy (the parity report of a
// strategy grid with memory) with dev counting every combo's divergences:
// the same report, field for field. The rows come from the device; the
// worst divergences (MaxFlipsListed) from Strategy.Compare on the CPU, run
// only for the combos whose worst root can be among them: ordered as
// worse orders their worst flip (non-borderline first, then the larger
// margin), the first MaxFlipsListed, every combo tied with the last, and
// every combo with a NaN root. A combo left out has MaxFlipsListed combos
// each holding a flip worse than its worst, so none of its flips is
// listed.
func CompareStrategyOnDevice(ctx context.Context, dev StrategyParityDevice, job *Job, ref, test *Run, tol float64) (*Parity, error) {
	n := job.Grid.Len()
	if !ref.Complete() || !test.Complete() || ref.Count() != n || test.Count() != n {
		return nil, ErrParityIncomplete
	}
	st := job.Grid.Strategy
	p := newParity(ref, test, tol)
	tol = p.Tolerance
	p.memory = st.Memory()
	df, err := dev.StrategyParity(ctx, job, test.Precision, test.WMA, tol)
	if err != nil {
		return nil, err
	}
	if len(df.Bars) != n || len(df.NonBorderline) != n || len(df.MaxMargin) != n || len(df.NaNRoots) != n {
		return nil, fmt.Errorf("parity on %s: %d/%d/%d/%d per-combo counts for a grid of %d combos",
			df.Device, len(df.Bars), len(df.NonBorderline), len(df.MaxMargin), len(df.NaNRoots), n)
	}
	var cand []int // positions in p.Combos
	for k := range p.Combos {
		cp := &p.Combos[k]
		i := cp.Index
		cp.Name = job.Grid.Label(i)
		cp.Flips, cp.NonBorderline, cp.MaxFlipMargin = int(df.Bars[i]), int(df.NonBorderline[i]), df.MaxMargin[i]
		if cp.Flips > 0 {
			cand = append(cand, k)
		}
	}
	// worstOf is the combo's worst root as worse orders it: borderline,
	// then margin (the NaN roots are taken whatever their rank).
	key := func(k int) (bool, float64) {
		cp := &p.Combos[k]
		return cp.NonBorderline == 0, cp.MaxFlipMargin
	}
	sort.SliceStable(cand, func(x, y int) bool {
		bx, mx := key(cand[x])
		by, my := key(cand[y])
		if bx != by {
			return !bx
		}
		return mx > my
	})
	keep := len(cand)
	if keep > MaxFlipsListed {
		keep = MaxFlipsListed
		bl, ml := key(cand[keep-1])
		for keep < len(cand) {
			b, m := key(cand[keep])
			if b != bl || m != ml {
				break
			}
			keep++
		}
	}
	for _, k := range cand[keep:] {
		if df.NaNRoots[p.Combos[k].Index] > 0 {
			cand[keep] = k
			keep++
		}
	}
	cand = cand[:keep]
	workers := max(1, min(runtime.GOMAXPROCS(0), len(cand)))
	heaps := make([]flipHeap, workers)
	errs := make([]error, workers)
	err = Parallel(ctx, len(cand), workers, func(w, x int) {
		if errs[w] != nil {
			return
		}
		cp := &p.Combos[cand[x]]
		fs, err := st.Compare(ctx, job, test.Precision, test.WMA, cp.Index, tol)
		if err != nil {
			errs[w] = err
			return
		}
		bars, nb, mx := offerStrategyFlips(&heaps[w], job, cp, fs)
		if bars != cp.Flips || nb != cp.NonBorderline || mx != cp.MaxFlipMargin {
			errs[w] = fmt.Errorf("parity on %s: combo %d (%s): the device counts %d bars apart, %d non-borderline, max margin %g; the CPU %d, %d, %g",
				df.Device, cp.Index, cp.Name, cp.Flips, cp.NonBorderline, cp.MaxFlipMargin, bars, nb, mx)
		}
	})
	if err == nil {
		err = errors.Join(errs...)
	}
	if err != nil {
		return nil, err
	}
	t := newParityTally(p.memory)
	for k := range p.Combos {
		t.add(&p.Combos[k])
	}
	if err := finishStrategy(ctx, p, &t, job, test, heaps, "", ""); err != nil {
		return nil, err
	}
	p.Device = df.Device
	return p, nil
}
