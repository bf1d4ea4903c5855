//go:build darwin

package metal

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// kernel is a prepared fp32 job on the Metal device: the indicator series
// (bar-major, resident in shared buffers) and the sweep's scratch; with
// job.Blocks, the block edges and block_stats_f32's outputs.
type kernel struct {
	d        *device
	job      *engine.Job
	n        int
	nh, n3   int
	keep     float32 // 1-f rounded as reference.Backtest rounds it
	keep2    float32
	longOnly int32
	kth      int
	cap      int
	chunk    int
	bins     kernels.Bins[float32]

	H, H3, R     *buffer
	warmH, warm3 *buffer
	thr          *buffer
	maxLaunch    int
	buf, oF, oI  *buffer
	scratchFor   int
	S            int     // blocks (0: the job asks for none)
	bounds       *buffer // S+1 block edges
	blk          blockBuffers
	indTime      time.Duration
	sweepTime    time.Duration
}

func prepare(ctx context.Context, d *device, job *engine.Job) (_ engine.Kernel, err error) {
	bars := job.Bars
	n := bars.Len()
	hma, hma3 := job.Grid.HMA.Values(), job.Grid.HMA3.Values()
	if err := checkSeriesFits(n, len(hma), len(hma3), d.maxBuf); err != nil {
		return nil, err
	}
	keep := engine.Keep[float32](job.Params) // (1-f)(1-q): slippage runs on the GPU (SPEC Part 2)
	k := &kernel{
		d: d, job: job, n: n, nh: len(hma), n3: len(hma3),
		keep: keep, keep2: keep * keep,
		kth:   kernels.KthIndex(n - 1),
		cap:   kernels.SelectCap(n),
		chunk: chunkSize(job.Grid.Len()),
		bins:  kernels.BinsFromCloses[float32](bars.Close),
	}
	if job.Params.Mode == engine.LongOnly {
		k.longOnly = 1
	}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()
	if err := k.buildIndicators(job.Params.Source, hma, hma3, job.WMA == engine.Prefix); err != nil {
		return nil, err
	}
	warmH, warm3 := kernels.Warmups(hma, hma3)
	if k.warmH, err = upload(d, warmH, "HMA warm-ups"); err != nil {
		return nil, err
	}
	if k.warm3, err = upload(d, warm3, "HMA3 warm-ups"); err != nil {
		return nil, err
	}
	if k.thr, err = upload(d, k.bins.Edges, "VaR bin edges"); err != nil {
		return nil, err
	}
	if job.Blocks != nil {
		k.S = len(job.Blocks) - 1
		if k.bounds, err = upload(d, toInt32(job.Blocks), "block edges"); err != nil {
			return nil, err
		}
	}
	k.maxLaunch = launchCombos(d.budget, d.maxBuf, k.cap, k.S, k.chunk)
	if k.maxLaunch == 0 {
		return nil, fmt.Errorf("out of GPU memory on %s: a dispatch of %d combos needs %d MiB of scratch",
			d.info.Name, kernels.MinLaunch, uint64(kernels.MinLaunch)*scratchFor(1, k.cap, k.S).total()>>20)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return k, nil
}

// buildIndicators runs indicators.metal's pipeline in one command buffer:
// [prefix scans], stage 1 of HMA and HMA3, [prefix scans of the stage-1
// series], the final WMAs into bar-major H and H3. The source series, the
// closes and the returns are rounded to float32 on the host
// (kernels.SourceSeries, kernels.BarReturns), as the fp32 path defines them.
func (k *kernel) buildIndicators(src engine.Source, hma, hma3 []int, prefix bool) error {
	d, n, nh, n3 := k.d, k.n, len(hma), len(hma3)
	bars := k.job.Bars
	var tmp []*buffer
	defer func() {
		for _, b := range tmp {
			b.free()
		}
	}()
	keepTmp := func(b *buffer, err error) (*buffer, error) {
		if b != nil {
			tmp = append(tmp, b)
		}
		return b, err
	}
	cl := kernels.SourceSeries[float32](bars, engine.SourceClose)
	dcl, err := keepTmp(upload(d, cl, "closes"))
	if err != nil {
		return err
	}
	dx := dcl
	if src != engine.SourceClose {
		if dx, err = keepTmp(upload(d, kernels.SourceSeries[float32](bars, src), "source series")); err != nil {
			return err
		}
	}
	if k.R, err = upload(d, kernels.BarReturns[float32](bars), "bar returns"); err != nil {
		return err
	}
	q, sH := make([]int32, nh), make([]int32, nh)
	for j, L := range hma {
		q[j], sH[j] = int32(engine.HMASqrtLen(L)), int32(min(L-1, n))
	}
	p3, s3 := make([]int32, n3), make([]int32, n3)
	for j, L := range hma3 {
		p3[j], s3[j] = int32(L/2), int32(min(L/2-1, n))
	}
	ints := map[string][]int32{"Lh": toInt32(hma), "L3": toInt32(hma3), "q": q, "sH": sH, "p3": p3, "s3": s3, "zero": {0}}
	ib := map[string]*buffer{}
	for name, v := range ints {
		if ib[name], err = keepTmp(upload(d, v, "indicator lengths")); err != nil {
			return err
		}
	}
	alloc := func(size uint64, what string) (*buffer, error) { return keepTmp(d.newBuffer(size, what)) }
	dummy, err := alloc(4, "placeholder")
	if err != nil {
		return err
	}
	pre := int32(0)
	if prefix {
		pre = 1
	}
	var steps []step
	// scan appends a prefix_scan of ns series of src from starts; without
	// the prefix formulation the kernels read no prefix sums (a placeholder
	// is bound).
	scan := func(src, starts *buffer, ns int) (*buffer, *buffer, error) {
		if !prefix {
			return dummy, dummy, nil
		}
		s1, err := alloc(prefixBytes(n, ns), "prefix sums")
		if err != nil {
			return nil, nil, err
		}
		s2, err := alloc(prefixBytes(n, ns), "prefix sums")
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, step{fnPrefixScan, []arg{{buf: src}, {buf: starts}, {bytes: indParams{N: int32(n), NS: int32(ns)}.bytes()}, {buf: s1}, {buf: s2}}, scanDispatch(ns)})
		return s1, s2, nil
	}
	s1x, s2x, err := scan(dx, ib["zero"], 1)
	if err != nil {
		return err
	}
	s1c, s2c, err := scan(dcl, ib["zero"], 1)
	if err != nil {
		return err
	}
	dH, err := alloc(seriesBytes(n, nh), "HMA stage-1 series")
	if err != nil {
		return err
	}
	dH3, err := alloc(seriesBytes(n, n3), "HMA3 stage-1 series")
	if err != nil {
		return err
	}
	steps = append(steps,
		step{fnHMAStage1, []arg{{buf: dx}, {buf: s1x}, {buf: s2x}, {buf: ib["Lh"]}, {bytes: indParams{N: int32(n), NS: int32(nh), Prefix: pre}.bytes()}, {buf: dH}}, indDispatch(n, nh)},
		step{fnHMA3Stage1, []arg{{buf: dcl}, {buf: s1c}, {buf: s2c}, {buf: ib["L3"]}, {bytes: indParams{N: int32(n), NS: int32(n3), Prefix: pre}.bytes()}, {buf: dH3}}, indDispatch(n, n3)},
	)
	s1h, s2h, err := scan(dH, ib["sH"], nh)
	if err != nil {
		return err
	}
	s13, s23, err := scan(dH3, ib["s3"], n3)
	if err != nil {
		return err
	}
	if k.H, err = d.newBuffer(seriesBytes(n, nh), "HMA series"); err != nil {
		return err
	}
	if k.H3, err = d.newBuffer(seriesBytes(n, n3), "HMA3 series"); err != nil {
		return err
	}
	steps = append(steps,
		step{fnWMASeries, []arg{{buf: dH}, {buf: s1h}, {buf: s2h}, {buf: ib["q"]}, {buf: ib["sH"]}, {bytes: indParams{N: int32(n), NS: int32(nh), Prefix: pre, SI: int32(nh), SJ: 1}.bytes()}, {buf: k.H}}, indDispatch(n, nh)},
		step{fnWMASeries, []arg{{buf: dH3}, {buf: s13}, {buf: s23}, {buf: ib["p3"]}, {buf: ib["s3"]}, {bytes: indParams{N: int32(n), NS: int32(n3), Prefix: pre, SI: int32(n3), SJ: 1}.bytes()}, {buf: k.H3}}, indDispatch(n, n3)},
	)
	k.indTime, err = d.run("Metal indicator kernels", steps)
	return err
}

func (k *kernel) Lanes() int     { return 1 }
func (k *kernel) ChunkSize() int { return k.chunk }
func (k *kernel) Device() string { return k.d.info.Name + " (Metal)" }

// IndicatorTime is the GPU time of the indicator command buffer
// (GPUEndTime - GPUStartTime), for engine.IndicatorTimer.
func (k *kernel) IndicatorTime() time.Duration { return k.indTime }

// Close releases every buffer the kernel owns.
func (k *kernel) Close() error {
	for _, b := range []*buffer{k.H, k.H3, k.R, k.warmH, k.warm3, k.thr, k.buf, k.oF, k.oI, k.bounds} {
		b.free()
	}
	k.blk.free()
	k.H, k.H3, k.R, k.warmH, k.warm3, k.thr, k.buf, k.oF, k.oI, k.bounds = nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
	k.scratchFor = 0
	return nil
}

// Compute sweeps combos [first, first+len(out)) in dispatches of at most
// maxLaunch combos, checking ctx between dispatches.
func (k *kernel) Compute(ctx context.Context, lane, first int, out []engine.Metrics) error {
	return k.ComputeBlocks(ctx, lane, first, out, nil)
}

// ComputeBlocks is Compute that also fills bs (when not nil) with each
// combo's per-block statistics (engine.BlockKernel): each dispatch of
// sweep_f32 is followed, in the same command buffer, by block_stats_f32
// over the same combos (the job was prepared with its Blocks).
func (k *kernel) ComputeBlocks(ctx context.Context, _, first int, out []engine.Metrics, bs *engine.BlockStats) error {
	if bs != nil && (k.S == 0 || bs.Blocks != k.S || bs.Combos != len(out)) {
		return fmt.Errorf("internal error: %d combos x %d blocks of statistics asked of a kernel prepared for %d blocks and called for %d combos", bs.Combos, bs.Blocks, k.S, len(out))
	}
	for a := 0; a < len(out); {
		if err := ctx.Err(); err != nil {
			return err
		}
		cnt := min(len(out)-a, k.maxLaunch)
		if err := k.launch(first+a, cnt, out[a:a+cnt], bs, a); err != nil {
			return err
		}
		a += cnt
	}
	return nil
}

// launch runs one dispatch of cnt combos from first into out and, when bs
// is not nil, rows row.. of bs.
func (k *kernel) launch(first, cnt int, out []engine.Metrics, bs *engine.BlockStats, row int) error {
	sc := scratchFor(cnt, k.cap, k.S)
	if k.scratchFor < cnt {
		for _, b := range []*buffer{k.buf, k.oF, k.oI} {
			b.free()
		}
		k.blk.free()
		k.scratchFor = 0
		var err error
		if k.buf, err = k.d.newBuffer(sc.buf, "VaR selection buffer"); err != nil {
			return err
		}
		if k.oF, err = k.d.newBuffer(sc.outF, "sweep outputs"); err != nil {
			return err
		}
		if k.oI, err = k.d.newBuffer(sc.outI, "sweep outputs"); err != nil {
			return err
		}
		if k.S > 0 {
			if err := k.blk.alloc(k.d, sc.blocks); err != nil {
				return err
			}
		}
		k.scratchFor = cnt
	}
	// Poison the int outputs (-1) so an unwritten combo is caught.
	poison(k.oI.bytes()[:sc.outI])
	p := sweepParams{
		N: int32(k.n), NH: int32(k.nh), N3: int32(k.n3), Count: int32(cnt), ComboFirst: int64(first),
		Keep: k.keep, Keep2: k.keep2, LongOnly: k.longOnly, Kth: int32(k.kth),
		K0: k.bins.K0, Shift: k.bins.Shift, Cap: int32(k.cap), RF: float32(k.job.Params.RiskFreePerBar()),
	}
	steps := []step{{
		fn: fnSweep,
		args: []arg{{buf: k.H}, {buf: k.H3}, {buf: k.R}, {buf: k.warmH}, {buf: k.warm3}, {buf: k.thr},
			{bytes: p.bytes()}, {buf: k.buf}, {buf: k.oF}, {buf: k.oI}},
		d: sweepDispatch(cnt),
	}}
	what := fmt.Sprintf("Metal kernel %s, combos %d..%d", fnSweep, first, first+cnt-1)
	if bs != nil {
		k.blk.poison(sc.blocks)
		args := []arg{{buf: k.H}, {buf: k.H3}, {buf: k.R}, {buf: k.warmH}, {buf: k.warm3}, {buf: k.bounds},
			{bytes: blockParamsFor(p, k.S).bytes()}}
		for _, b := range k.blk {
			args = append(args, arg{buf: b})
		}
		steps = append(steps, step{fn: fnBlockStats, args: args, d: sweepDispatch(cnt)})
		what = fmt.Sprintf("Metal kernels %s and %s, combos %d..%d", fnSweep, fnBlockStats, first, first+cnt-1)
	}
	t, err := k.d.run(what, steps)
	if err != nil {
		return err
	}
	k.sweepTime += t
	o := kernels.Outputs[float32]{F: unsafe.Slice((*float32)(k.oF.ptr), kernels.NF*cnt),
		I: unsafe.Slice((*int32)(k.oI.ptr), kernels.NI*cnt), Count: cnt, First: first, Kernel: fnSweep}
	if _, err := o.Finish(k.n, k.job.Params, out, 1); err != nil {
		return err
	}
	if bs == nil {
		return nil
	}
	bo := k.blk.outputs(cnt, k.S)
	return bo.finish(bs, row, first)
}

// blockBuffers are block_stats_f32's outputs, in its buffer order: sum,
// sumSq, sumDown, mantissa, exponent, trades, wins, sum3, sum4.
type blockBuffers [9]*buffer

func (b *blockBuffers) alloc(d *device, s blockScratch) error {
	for i, size := range b.sizes(s) {
		var err error
		if b[i], err = d.newBuffer(size, "block statistics"); err != nil {
			return err
		}
	}
	return nil
}

func (b *blockBuffers) sizes(s blockScratch) [9]uint64 {
	return [9]uint64{s.f64, s.f64, s.f64, s.f64, s.i32, s.i32, s.i32, s.combo, s.combo}
}

// poison fills the outputs a dispatch of s writes with 0xFF bytes.
func (b *blockBuffers) poison(s blockScratch) {
	for i, size := range b.sizes(s) {
		poison(b[i].bytes()[:size])
	}
}

// outputs views the buffers as a dispatch of cnt combos of S blocks.
func (b *blockBuffers) outputs(cnt, S int) blockOutputs {
	f := func(i, n int) []float64 { return unsafe.Slice((*float64)(b[i].ptr), n) }
	n := func(i int) []int32 { return unsafe.Slice((*int32)(b[i].ptr), cnt*S) }
	return blockOutputs{sum: f(0, cnt*S), sq: f(1, cnt*S), down: f(2, cnt*S), mant: f(3, cnt*S),
		ex: n(4), trades: n(5), wins: n(6), s3: f(7, cnt), s4: f(8, cnt)}
}

func (b *blockBuffers) free() {
	for i := range b {
		b[i].free()
		b[i] = nil
	}
}

// poison fills p with 0xFF bytes: int -1, a float NaN no kernel writes.
func poison(p []byte) {
	for i := range p {
		p[i] = 0xFF
	}
}

var (
	_ engine.Kernel         = (*kernel)(nil)
	_ engine.BlockKernel    = (*kernel)(nil)
	_ engine.IndicatorTimer = (*kernel)(nil)
)
