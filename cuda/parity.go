package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Parity pass layout (kernels/parity.cu).
const (
	parityBlock = 128     // PB_BLOCK
	parityShift = 49      // PB_SHIFT: a margin's histogram bin is its float64 bits >> 49
	parityBins  = 1 << 14 // 2^(64-1-49): every non-negative float64, NaN included

	seriesBlock = 128 // SE_BLOCK
	// maxParityFlips bounds the flips pass 2 returns: the worst
	// MaxFlipsListed and those tied with them in one histogram bin (a bin
	// is 1/8 of a binade). More than this (millions of flips of one margin
	// to 3 bits) is refused; RunStudy then runs the pass on the CPU.
	maxParityFlips = 1 << 24
)

// parityLaunch is the most combos one parity launch covers: 64 MiB of
// per-combo outputs (a variable: tests make it small to cover several).
var parityLaunch = 1 << 22

// DeviceParity runs the parity pass of SPEC "Parity" on the first GPU
// (engine.ParityDevice): both precisions' indicator series are computed
// there (bar-major, the kernels the lanes use: the reference's bits), then
// kernels/parity.cu counts every combo's flips, non-borderline flips and
// largest margin and a histogram of the margins (pass 1), and returns the
// flips at or above the histogram edge that holds the worst
// engine.MaxFlipsListed (pass 2), and each series' largest relative error.
// Every output buffer is poisoned before its kernel and checked after.
// Elapsed is the device time (events) from the first indicator kernel to
// the last parity kernel.
func (b *Backend) DeviceParity(ctx context.Context, job *engine.Job, test engine.Precision, form engine.Formulation, tol float64) (*engine.DeviceParity, error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *engine.DeviceParity
	var err error
	if test == engine.FP32 {
		out, err = deviceParity[float32](ctx, b.devs[0], job, form, tol)
	} else {
		out, err = deviceParity[float64](ctx, b.devs[0], job, form, tol)
	}
	if err != nil {
		return nil, fmt.Errorf("cuda: parity: %w", err)
	}
	return out, nil
}

// parityRun is one parity pass on one device (its buffers, its events).
type parityRun[F engine.Float] struct {
	scratch
	job         *engine.Job
	n, nh, n3   int
	total       int
	tol         float64
	start, stop event
}

// get takes a pooled buffer (not poisoned: the pass poisons its outputs
// itself, just before each kernel).
func (r *parityRun[F]) get(bytes uint64) (devPtr, error) { return r.scratch.get(bytes, false) }

func (r *parityRun[F]) release() error {
	return errors.Join(r.scratch.release("parity kernels"), r.d.destroyEvent(r.start), r.d.destroyEvent(r.stop))
}

func deviceParity[F engine.Float](ctx context.Context, d *device, job *engine.Job, form engine.Formulation, tol float64) (*engine.DeviceParity, error) {
	hma, hma3 := job.Grid.HMA.Values(), job.Grid.HMA3.Values()
	r := &parityRun[F]{scratch: scratch{d: d}, job: job, n: job.Bars.Len(), nh: len(hma), n3: len(hma3), total: job.Grid.Len(), tol: tol}
	out := &engine.DeviceParity{Flips: make([]int32, r.total), NonBorderline: make([]int32, r.total),
		MaxMargin: make([]float64, r.total), Device: deviceLabel([]*device{d})}
	err := d.do(func() (err error) {
		defer func() { err = errors.Join(err, r.release()) }()
		if r.start, err = d.newEvent(); err != nil {
			return err
		}
		if r.stop, err = d.newEvent(); err != nil {
			return err
		}
		if err := d.record(r.start); err != nil {
			return err
		}
		src := job.Params.Source
		di64, err := buildIndicatorsBars[float64](d, job.Bars, src, hma, hma3, false, false)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, di64.free(d)) }()
		diT, err := buildIndicatorsBars[F](d, job.Bars, src, hma, hma3, form == engine.Prefix, false)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, diT.free(d)) }()
		if out.IndicatorErrors, err = r.seriesErrors(di64, diT); err != nil {
			return err
		}
		if err := r.flips(ctx, di64, diT, out); err != nil {
			return err
		}
		if err := d.record(r.stop); err != nil {
			return err
		}
		ms, err := elapsedDone(r.start, r.stop)
		out.Elapsed = time.Duration(float64(ms) * float64(time.Millisecond))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// seriesErrors is each series' largest relative error (engine.SeriesError),
// the HMA series in grid order then the HMA3 series: series_err over
// chunks of bars, the chunks joined here in bar order by the rule of
// engine's seriesError (the first bar of the largest error).
func (r *parityRun[F]) seriesErrors(di64, diT *deviceIndicators) ([]engine.SeriesError, error) {
	var out []engine.SeriesError
	for _, s := range []struct {
		name      string
		lens      []int
		ref, test devPtr
	}{{"h", di64.hma, di64.H, diT.H}, {"h3", di64.hma3, di64.H3, diT.H3}} {
		ns := len(s.lens)
		if ns == 0 {
			continue
		}
		// About 128k threads: enough to fill the device, each over a
		// stretch of bars long enough to amortise its start.
		chunks := max(1, min((131072+ns-1)/ns, (r.n+511)/512))
		span := (r.n + chunks - 1) / chunks
		chunks = (r.n + span - 1) / span
		parts := uint64(chunks) * uint64(ns)
		dRel, err := r.get(parts * 8)
		if err != nil {
			return nil, err
		}
		dBar, err := r.get(parts * 4)
		if err != nil {
			return nil, err
		}
		if err := errors.Join(r.d.poison(dRel, parts*8), r.d.poison(dBar, parts*4)); err != nil {
			return nil, err
		}
		g := [3]uint32{uint32((ns + seriesBlock - 1) / seriesBlock), uint32(chunks), 1}
		if err := r.d.launch("series_err_"+suffix[F](), g, [3]uint32{seriesBlock, 1, 1}, 0,
			s.ref, s.test, int32(r.n), int32(ns), int32(span), dRel, dBar); err != nil {
			return nil, err
		}
		rel := make([]float64, parts)
		bar := make([]int32, parts)
		if err := errors.Join(r.d.sync("series_err"), download(rel, dRel), download(bar, dBar)); err != nil {
			return nil, err
		}
		for j, L := range s.lens {
			e := engine.SeriesError{Series: s.name, Length: L, Bar: -1}
			for c := 0; c < chunks; c++ {
				k := c*ns + j
				lo := c * span
				if math.Float64bits(rel[k]) == math.MaxUint64 || bar[k] < -1 || int(bar[k]) >= min(lo+span, r.n) || (bar[k] >= 0 && int(bar[k]) < lo) {
					return nil, fmt.Errorf("series_err: %s(%d), bars %d..: bar %d was not written", s.name, L, lo, bar[k])
				}
				if bar[k] >= 0 && (e.Bar < 0 || rel[k] > e.MaxRel) {
					e.MaxRel, e.Bar = rel[k], int(bar[k])
				}
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// flips runs both parity passes over the grid in launches of at most
// parityLaunch combos, filling out's per-combo counts and Worst.
func (r *parityRun[F]) flips(ctx context.Context, di64, diT *deviceIndicators, out *engine.DeviceParity) error {
	d := r.d
	warmH, warm3 := kernels.Warmups(di64.hma, di64.hma3)
	per := min(r.total, parityLaunch)
	dClose, err := r.get(uint64(r.n) * 8)
	if err != nil {
		return err
	}
	dWarmH, err := r.get(uint64(len(warmH)) * 4)
	if err != nil {
		return err
	}
	dWarm3, err := r.get(uint64(len(warm3)) * 4)
	if err != nil {
		return err
	}
	if err := errors.Join(upload(dClose, r.job.Bars.Close), upload(dWarmH, warmH), upload(dWarm3, warm3)); err != nil {
		return err
	}
	dFlips, err := r.get(uint64(per) * 4)
	if err != nil {
		return err
	}
	dNB, err := r.get(uint64(per) * 4)
	if err != nil {
		return err
	}
	dMax, err := r.get(uint64(per) * 8)
	if err != nil {
		return err
	}
	dHist, err := r.get(parityBins * 8)
	if err != nil {
		return err
	}
	dCount, err := r.get(8)
	if err != nil {
		return err
	}
	if err := errors.Join(check("cuMemsetD8", drv.cuMemsetD8(uint64(dHist), 0, parityBins*8)),
		check("cuMemsetD8", drv.cuMemsetD8(uint64(dCount), 0, 8))); err != nil {
		return err
	}
	longOnly := int32(0)
	if r.job.Params.Mode == engine.LongOnly {
		longOnly = 1
	}
	launch := func(pass int32, first, cnt int, edge uint64, fl [4]devPtr, fcap uint64) error {
		g := [3]uint32{uint32((cnt + parityBlock - 1) / parityBlock), 1, 1}
		return d.launch("parity_flips_"+suffix[F](), g, [3]uint32{parityBlock, 1, 1}, 0,
			di64.H, di64.H3, diT.H, diT.H3, dClose, int32(r.n), int32(r.nh), int32(r.n3), dWarmH, dWarm3,
			int64(first), int32(cnt), longOnly, r.tol, pass, dMax, int64(edge), dFlips, dNB, dMax, dHist,
			fl[0], fl[1], fl[2], fl[3], dCount, int64(fcap))
	}
	// Pass 1: counts and the margin histogram.
	for first := 0; first < r.total; first += per {
		if err := ctx.Err(); err != nil {
			return err
		}
		cnt := min(per, r.total-first)
		if err := errors.Join(d.poison(dFlips, uint64(cnt)*4), d.poison(dNB, uint64(cnt)*4), d.poison(dMax, uint64(cnt)*8)); err != nil {
			return err
		}
		if err := launch(1, first, cnt, 0, [4]devPtr{}, 0); err != nil {
			return fmt.Errorf("combos %d..%d: %w", first, first+cnt-1, err)
		}
		fl, nb, mx := out.Flips[first:first+cnt], out.NonBorderline[first:first+cnt], out.MaxMargin[first:first+cnt]
		if err := errors.Join(d.sync(fmt.Sprintf("parity pass 1, combos %d..%d", first, first+cnt-1)),
			download(fl, dFlips), download(nb, dNB), download(mx, dMax)); err != nil {
			return err
		}
		for i := range fl {
			if fl[i] < 0 || nb[i] < 0 || nb[i] > fl[i] || math.Float64bits(mx[i]) == math.MaxUint64 {
				return fmt.Errorf("parity pass 1: combo %d was not written (flips %d, non-borderline %d)", first+i, fl[i], nb[i])
			}
		}
	}
	hist := make([]uint64, parityBins)
	if err := download(hist, dHist); err != nil {
		return err
	}
	edgeBin, need := worstEdge(hist, engine.MaxFlipsListed)
	if need == 0 {
		return nil
	}
	if need > maxParityFlips {
		return fmt.Errorf("%d flips tie with the worst %d within one margin bin (more than %d)", need, engine.MaxFlipsListed, maxParityFlips)
	}
	edge := uint64(edgeBin) << parityShift
	// Pass 2: the flips at or above the edge, for the combos that have one.
	var fl [4]devPtr
	for i, size := range []uint64{8, 4, 8, 4} { // combo, bar, margin, positions
		if fl[i], err = r.get(need * size); err != nil {
			return err
		}
		if err := d.poison(fl[i], need*size); err != nil {
			return err
		}
	}
	for first := 0; first < r.total; first += per {
		if err := ctx.Err(); err != nil {
			return err
		}
		cnt := min(per, r.total-first)
		if err := upload(dMax, out.MaxMargin[first:first+cnt]); err != nil {
			return err
		}
		if err := launch(2, first, cnt, edge, fl, need); err != nil {
			return fmt.Errorf("combos %d..%d: %w", first, first+cnt-1, err)
		}
	}
	count := make([]uint64, 1)
	combo := make([]int64, need)
	bar := make([]int32, need)
	margin := make([]float64, need)
	pos := make([]int32, need)
	if err := errors.Join(d.sync("parity pass 2"), download(count, dCount), download(combo, fl[0]), download(bar, fl[1]),
		download(margin, fl[2]), download(pos, fl[3])); err != nil {
		return err
	}
	if count[0] != need {
		return fmt.Errorf("parity pass 2 found %d flips at or above the edge, pass 1 counted %d", count[0], need)
	}
	out.Worst = make([]engine.Flip, need)
	for i := range out.Worst {
		p64, pT := pos[i]&3, (pos[i]>>2)&3
		if combo[i] < 0 || combo[i] >= int64(r.total) || bar[i] < 0 || pos[i] < 0 || p64 > 2 || pT > 2 {
			return fmt.Errorf("parity pass 2: flip %d was not written (combo %d, bar %d)", i, combo[i], bar[i])
		}
		out.Worst[i] = engine.Flip{Index: int(combo[i]), Bar: int(bar[i]), Pos64: int8(p64 - 1), Pos32: int8(pT - 1), Margin: margin[i]}
	}
	return nil
}

// worstEdge is the highest histogram bin at or above which at least k
// values lie (the lowest non-empty bin when fewer than k do), and how many
// lie there: the flips pass 2 returns.
func worstEdge(hist []uint64, k int) (bin int, count uint64) {
	bin = 0
	for b := len(hist) - 1; b >= 0; b-- {
		if hist[b] == 0 {
			continue
		}
		count += hist[b]
		bin = b
		if count >= uint64(k) {
			break
		}
	}
	return bin, count
}

var _ engine.ParityDevice = (*Backend)(nil)
