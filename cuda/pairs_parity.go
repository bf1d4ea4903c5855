package cuda

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"sweepbench/engine"
)

// memFamily is parity_mem's fam argument for a family with memory that
// runs from engine.Pairs (kernels/parity.cu).
var memFamily = map[string]int32{"zscore": 0, "rsi": 1, "breakout": 2, "cross": 3}

// StrategyParity counts the divergences of SPEC Part 2 "Parity for
// families with memory" (and cross's flip bars, memoryless) on the first
// GPU (engine.StrategyParityDevice) for a zscore, rsi, breakout or cross
// grid the sweep ran from its Pairs, fp32 under test: both precisions' series (the strategy's own, the lanes' bits) are
// uploaded bar-major, and parity_mem runs both machines per combo and
// returns its rows (bars apart, non-borderline divergences, the largest
// root margin, NaN roots). Outputs are poisoned before the kernel and
// checked after. engine.ErrNoStrategyParity for any other grid.
func (b *Backend) StrategyParity(ctx context.Context, job *engine.Job, test engine.Precision, form engine.Formulation, tol float64) (*engine.StrategyDeviceParity, error) {
	ps, ok := job.Grid.Strategy.(engine.PairStrategy)
	fam, known := memFamily[job.Grid.Family()]
	if !ok || !known || test != engine.FP32 || !ps.PairsOK(job.Params) {
		return nil, engine.ErrNoStrategyParity
	}
	if err := b.init(); err != nil {
		return nil, err
	}
	p64, err := ps.Pairs64(ctx, job)
	if err != nil {
		return nil, err
	}
	jt := *job
	jt.Precision, jt.WMA = engine.FP32, form
	p32, err := ps.Pairs32(ctx, &jt)
	if err != nil {
		return nil, err
	}
	out, err := strategyParity(ctx, b.devs[0], job, fam, p64, p32, tol)
	if err != nil {
		return nil, fmt.Errorf("cuda: parity: %w", err)
	}
	return out, nil
}

func strategyParity[F engine.Float](ctx context.Context, d *device, job *engine.Job, fam int32, p64 *engine.Pairs[float64], pt *engine.Pairs[F], tol float64) (*engine.StrategyDeviceParity, error) {
	n, total := job.Bars.Len(), job.Grid.Len()
	na, nb := len(p64.A), p64.NB()
	if na*nb != total || len(pt.A) != na || pt.NB() != nb {
		return nil, fmt.Errorf("internal error: %d x %d series (fp32 %d x %d) for %d combos", na, nb, len(pt.A), pt.NB(), total)
	}
	out := &engine.StrategyDeviceParity{Bars: make([]int32, total), NonBorderline: make([]int32, total),
		NaNRoots: make([]int32, total), MaxMargin: make([]float64, total), Device: deviceLabel([]*device{d})}
	t0 := time.Now()
	err := d.do(func() (err error) {
		sc := &scratch{d: d}
		defer func() { err = errors.Join(err, sc.release("parity_mem")) }()
		var z F
		es := uint64(unsafe.Sizeof(z))
		up64 := func(host []float64) (devPtr, error) {
			if len(host) == 0 {
				return 0, nil
			}
			p, err := sc.get(uint64(len(host))*8, false)
			if err != nil {
				return 0, err
			}
			return p, upload(p, host)
		}
		upT := func(host []F) (devPtr, error) {
			if len(host) == 0 {
				return 0, nil
			}
			p, err := sc.get(uint64(len(host))*es, false)
			if err != nil {
				return 0, err
			}
			return p, upload(p, host)
		}
		neg := func(v []F) []F {
			o := make([]F, len(v))
			for i, x := range v {
				o[i] = -x
			}
			return o
		}
		levels64 := func(ls [][4]float64) []float64 {
			o := make([]float64, 0, 4*len(ls))
			for _, l := range ls {
				o = append(o, l[:]...)
			}
			return o
		}
		levelsT := func(ls [][4]F) []F {
			o := make([]F, 0, 4*len(ls))
			for _, l := range ls {
				o = append(o, l[:]...)
			}
			return o
		}
		// Argument order of parity_mem: V64 VT L64 LT K64 D64 S64 C64 CT A64
		// AT A264 A2T B64 BT B264 B2T close; those a family does not read
		// stay null.
		var ptr [18]devPtr
		h64 := map[int][]float64{17: job.Bars.Close}
		hT := map[int][]F{}
		if fam == 3 {
			h64[9], hT[10] = barMajor(p64.A, n, true), barMajor(pt.A, n, true)
			h64[13], hT[14] = barMajor(p64.B, n, true), barMajor(pt.B, n, true)
		} else if fam == 2 {
			c64 := make([]float64, n)
			for i, x := range p64.V {
				c64[i] = -x
			}
			h64[7], hT[8] = c64, neg(pt.V)
			h64[9], hT[10] = barMajor(p64.A, n, true), barMajor(pt.A, n, true)
			h64[11], hT[12] = barMajor(p64.A2, n, true), barMajor(pt.A2, n, true)
			h64[13], hT[14] = barMajor(p64.B, n, true), barMajor(pt.B, n, true)
			h64[15], hT[16] = barMajor(p64.B2, n, true), barMajor(pt.B2, n, true)
		} else {
			h64[0], hT[1] = barMajor(p64.A, n, false), barMajor(pt.A, n, false)
			h64[2], hT[3] = levels64(p64.Levels), levelsT(pt.Levels)
			if fam == 0 {
				k := make([]float64, 0, 2*len(p64.Thresholds))
				for _, t := range p64.Thresholds {
					k = append(k, t[:]...)
				}
				if len(k) != 2*nb || len(p64.D) != na || len(p64.SD) != na {
					return fmt.Errorf("internal error: zscore's margins: %d thresholds, %d and %d series for %d x %d", len(k)/2, len(p64.D), len(p64.SD), na, nb)
				}
				h64[4], h64[5], h64[6] = k, barMajor(p64.D, n, false), barMajor(p64.SD, n, false)
			}
		}
		for k, v := range h64 {
			if ptr[k], err = up64(v); err != nil {
				return err
			}
		}
		for k, v := range hT {
			if ptr[k], err = upT(v); err != nil {
				return err
			}
		}
		wh, err := upInt32(sc, toInt32(p64.FirstA))
		if err != nil {
			return err
		}
		w3, err := upInt32(sc, toInt32(p64.FirstB))
		if err != nil {
			return err
		}
		longOnly := int32(0)
		if job.Params.Mode == engine.LongOnly {
			longOnly = 1
		}
		for first := 0; first < total; first += parityLaunch {
			if err := ctx.Err(); err != nil {
				return err
			}
			cnt := min(parityLaunch, total-first)
			o, err := sc.getAll(true, uint64(cnt)*4, uint64(cnt)*4, uint64(cnt)*8, uint64(cnt)*4)
			if err != nil {
				return err
			}
			g := [3]uint32{uint32((cnt + parityBlock - 1) / parityBlock), 1, 1}
			args := []any{fam}
			for _, q := range ptr {
				args = append(args, q)
			}
			args = append(args, int32(n), int32(na), int32(nb), wh, w3, int64(first), int32(cnt), longOnly, tol, o[0], o[1], o[2], o[3])
			if err := d.launch("parity_mem_"+suffix[F](), g, [3]uint32{parityBlock, 1, 1}, 0, args...); err != nil {
				return err
			}
			if err := d.sync(fmt.Sprintf("parity_mem, combos %d..%d", first, first+cnt-1)); err != nil {
				return err
			}
			if err := errors.Join(download(out.Bars[first:first+cnt], o[0]), download(out.NonBorderline[first:first+cnt], o[1]),
				download(out.MaxMargin[first:first+cnt], o[2]), download(out.NaNRoots[first:first+cnt], o[3])); err != nil {
				return err
			}
			for k := first; k < first+cnt; k++ {
				// Poisoned (0xFF) int32 outputs read -1: a combo not written.
				if out.Bars[k] < 0 || out.NonBorderline[k] < 0 || out.NaNRoots[k] < 0 || out.NonBorderline[k] > out.Bars[k] {
					return fmt.Errorf("parity_mem left combo %d unwritten or inconsistent (bars %d, non-borderline %d)", k, out.Bars[k], out.NonBorderline[k])
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Elapsed = time.Since(t0)
	return out, nil
}

// upInt32 uploads v into a buffer of sc.
func upInt32(sc *scratch, v []int32) (devPtr, error) {
	p, err := sc.get(uint64(max(len(v), 1))*4, false)
	if err != nil {
		return 0, err
	}
	return p, upload(p, v)
}

var _ engine.StrategyParityDevice = (*Backend)(nil)
